"""A served crew over real sockets: our client, the official a2a-sdk client, the CLI."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a_core.client import A2AClient, SyncA2AClient
from a2a_core.types import TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent
from a2a_crewai import running_server
from crewai_fakes import echo_crew, report_crew, ticking_crew
from crewai_servers import free_port, subprocess_env

pytestmark = pytest.mark.timeout(90)

ROOT = Path(__file__).resolve().parents[3]


async def test_our_client_streams_and_cancels_over_http_json() -> None:
    crew, _ = report_crew(stream=True)
    ticking, tool = ticking_crew("socket-ticker")
    async with running_server(crew) as report, running_server(ticking) as ticker:
        async with await A2AClient.connect(report.url, preferred_bindings=["HTTP+JSON"]) as client:
            assert client.binding == "HTTP+JSON"
            card = client.card
            assert card is not None
            assert card.name == "Reporting crew"
            assert card.capabilities.streaming
            assert card.skills[0].input_modes == ["text/plain", "application/json"]
            events = []
            async with client.stream("revenue") as stream:
                async for event in stream:
                    events.append(event)
                result = await stream.result()
        assert result.state is TaskState.COMPLETED
        assert result.text.endswith("Report on revenue: The sum is 5.")
        assert any(isinstance(e, TaskArtifactUpdateEvent) and e.append for e in events)
        async with await A2AClient.connect(ticker.url) as client:
            seen: list[str] = []
            async with client.stream("go") as stream:
                async for event in stream:
                    if isinstance(event, TaskStatusUpdateEvent) and event.status.message:
                        seen.append(event.status.message.text)
                        if "is using the tool tick" in seen[-1]:
                            break
                task_id = stream.task.id if stream.task else ""
            canceled = await client.cancel(task_id)
            assert canceled.status.state is TaskState.CANCELED
            ticks = tool.count
            await asyncio.sleep(0.3)
            assert tool.count <= ticks + 1


def test_sync_client_in_a_thread_of_a_running_server() -> None:
    async def main() -> str:
        async with running_server(echo_crew()) as server:
            return await asyncio.to_thread(_ask_sync, server.url)

    assert asyncio.run(main()) == "echo: from a thread"


def _ask_sync(url: str) -> str:
    with SyncA2AClient.connect(url) as client:
        return client.send_text("from a thread")


async def test_official_sdk_client_streams_and_cancels() -> None:
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types import CancelTaskRequest, Message, Part, Role, SendMessageRequest
    from a2a.types import TaskState as SdkState

    def request(text: str) -> Any:
        return SendMessageRequest(
            message=Message(
                role=Role.ROLE_USER, message_id=f"m-{time.monotonic_ns()}", parts=[Part(text=text)]
            )
        )

    crew, _ = report_crew(stream=True)
    ticking, tool = ticking_crew("sdk-ticker")
    async with (
        running_server(crew) as report,
        running_server(ticking) as ticker,
        httpx.AsyncClient(timeout=30) as http,
    ):
        factory = ClientFactory(ClientConfig(streaming=True, httpx_client=http))
        client = await factory.create_from_url(report.url)
        kinds: list[str] = []
        final_state = None
        artifacts: dict[str, str] = {}
        async for response in client.send_message(request("profits")):
            kind = response.WhichOneof("payload")
            kinds.append(kind or "")
            if kind == "artifact_update":
                chunk = response.artifact_update
                text = "".join(p.text for p in chunk.artifact.parts)
                key = chunk.artifact.artifact_id
                artifacts[key] = artifacts.get(key, "") + text if chunk.append else text
            elif kind == "status_update":
                final_state = response.status_update.status.state
        assert kinds[0] == "task"
        assert final_state == SdkState.TASK_STATE_COMPLETED
        assert artifacts == {
            "task-1": "The sum is 5.",
            "result": "Report on profits: The sum is 5.",
        }

        slow = await factory.create_from_url(ticker.url)
        task_id = ""
        states = []
        async for response in slow.send_message(request("forever")):
            kind = response.WhichOneof("payload")
            if kind == "task":
                task_id = response.task.id
            elif kind == "status_update":
                states.append(response.status_update.status.state)
                message = response.status_update.status.message
                if any("is using the tool tick" in p.text for p in message.parts):
                    canceled = await slow.cancel_task(CancelTaskRequest(id=task_id))
                    assert canceled.status.state == SdkState.TASK_STATE_CANCELED
        assert states[-1] == SdkState.TASK_STATE_CANCELED
        ticks = tool.count
        await asyncio.sleep(0.3)
        assert tool.count <= ticks + 1
        await client.close()
        await slow.close()


def test_a2a_serve_finds_a_crew_through_the_plugin() -> None:
    """``a2a serve file.py:crew`` in a subprocess, asked over HTTP, stopped with Ctrl+C."""
    port = free_port()
    env = subprocess_env(PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "a2a_core.cli",
            "serve",
            str(ROOT / "examples" / "crewai_crew.py") + ":crew",
            "--port",
            str(port),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        card = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                card = httpx.get(url + "/.well-known/agent-card.json", timeout=1).json()
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        if card is None:
            _, stderr = proc.communicate(timeout=5) if proc.poll() is not None else ("", "")
            pytest.fail(f"a2a serve did not publish a card: {stderr}")
        assert card["name"] == "Trip planner"
        with SyncA2AClient.connect(url) as client:
            result = client.send("Lisbon")
        assert result.state is TaskState.COMPLETED
        assert "Lisbon" in result.text
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert proc.returncode in (0, -signal.SIGINT, 130)
