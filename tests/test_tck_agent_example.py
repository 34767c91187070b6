"""examples/tck_agent.py runs and answers the conformance kit's triggers (over real sockets)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.timeout(90)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def send(base: str, message_id: str) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": "hi"}]}
        },
    }
    response = httpx.post(base + "/", json=body, headers={"A2A-Version": "1.0"}, timeout=20)
    return response.json()["result"]


async def send_over_grpc(address: str, message_id: str) -> Any:
    from a2a_core import Message, Part, Role
    from a2a_core.client import A2AClient

    async with A2AClient.for_endpoint(address, binding="GRPC", timeout=20) as client:
        message = Message(message_id=message_id, role=Role.USER, parts=[Part(text="hi")])
        return await client.send(message)


def test_tck_agent_answers_the_kits_triggers() -> None:
    port, grpc_port = free_port(), free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "examples" / "tck_agent.py"),
            "--port",
            str(port),
            "--grpc-port",
            str(grpc_port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                card = httpx.get(base + "/.well-known/agent-card.json", timeout=2).json()
                break
            except httpx.HTTPError:
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                assert time.monotonic() < deadline, "the example did not start"
                time.sleep(0.2)
        assert card["capabilities"] == {"streaming": True, "pushNotifications": True}
        assert "127.0.0.1" not in str(card)

        done = send(base, "tck-complete-task-1")["task"]
        assert done["status"]["state"] == "TASK_STATE_COMPLETED"
        assert done["status"]["message"]["parts"] == [{"text": "Hello from TCK"}]
        assert "message" in send(base, "tck-message-response-1")
        asked = send(base, "tck-input-required-1")["task"]
        assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        chunked = send(base, "tck-stream-artifact-chunked-1")["task"]
        # Streams carry the two chunks; the answer holds them joined into one text.
        assert chunked["artifacts"][0]["parts"] == [{"text": "chunk-1 chunk-2"}]
        left_open = send(base, "anything-else")["task"]
        assert left_open["status"]["state"] == "TASK_STATE_WORKING"  # fire and forget
        # --grpc-port: the card lists gRPC, which answers the same triggers.
        grpc_ifaces = [i for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC"]
        assert [i["url"] for i in grpc_ifaces] == [f"localhost:{grpc_port}"]
        over_grpc = asyncio.run(send_over_grpc(f"127.0.0.1:{grpc_port}", "tck-complete-task-2"))
        assert over_grpc.state is not None
        assert over_grpc.state.value == "TASK_STATE_COMPLETED"
        assert over_grpc.text == "Hello from TCK"
    finally:
        process.terminate()
        process.wait(timeout=20)
