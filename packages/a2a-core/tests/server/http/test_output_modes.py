"""Accepted output modes: answered by default, refused only by a strict server (real sockets).

The first test sends exactly what CrewAI's built-in A2A client (crewai 1.15,
``crewai.a2a``) sends by default. That client runs on the official SDK's 0.3
client, which cannot be imported next to the a2a-sdk 1.3 this repository
tests with, so the request is reproduced byte for byte with httpx: the 0.3
card fetch, then ``message/stream`` with ``acceptedOutputModes:
["application/json"]`` and ``blocking: true`` (``ClientConfig(streaming=True,
polling=False)``), no ``A2A-Version`` header, the SSE headers httpx-sse adds.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
from a2a_core.compose.serve import running_server
from a2a_core.server import RequestContext
from a2a_http_support import parse_sse


async def text_agent(context: RequestContext) -> str:
    """A plain text agent that says which modes the client accepted."""
    return (
        f"Paris is the capital of France. (you accept {', '.join(context.accepted_output_modes)})"
    )


def crewai_default_request(text: str) -> dict[str, Any]:
    """The JSON-RPC body a2a-sdk 0.3's client posts for CrewAI (``model_dump(exclude_none)``)."""
    return {
        "id": str(uuid.uuid4()),
        "jsonrpc": "2.0",
        "method": "message/stream",
        "params": {
            "configuration": {"acceptedOutputModes": ["application/json"], "blocking": True},
            "message": {
                "kind": "message",
                "messageId": str(uuid.uuid4()),
                "parts": [{"kind": "text", "text": text}],
                "role": "user",
            },
        },
    }


SSE_HEADERS = {"Accept": "text/event-stream", "Cache-Control": "no-store"}


async def crewai_exchange(base: str) -> tuple[int, str]:
    """Fetch the card as CrewAI does, then stream the default request to its url."""
    async with httpx.AsyncClient(timeout=10) as client:
        card = (await client.get(f"{base}/.well-known/agent-card.json")).json()
        assert card["capabilities"]["streaming"] is True  # so the 0.3 client streams
        url = card["url"].replace("localhost", "127.0.0.1")
        body = crewai_default_request("What is the capital of France?")
        response = await client.post(url, json=body, headers=SSE_HEADERS)
        return response.status_code, response.text


async def test_crewais_default_request_gets_a_text_agents_answer() -> None:
    async with running_server(text_agent) as srv:
        status, text = await crewai_exchange(srv.url)
    assert status == 200
    events = [e["result"] for e in parse_sse(text)]
    assert events[0]["kind"] == "task"
    # What CrewAI's streaming handler keeps: the text of each artifact update.
    answer = "".join(
        p["text"]
        for e in events
        if e["kind"] == "artifact-update"
        for p in e["artifact"]["parts"]
        if p["kind"] == "text"
    )
    assert answer == ("Paris is the capital of France. (you accept application/json)")
    assert events[-1]["kind"] == "status-update"
    assert events[-1]["status"]["state"] == "completed"
    assert events[-1]["final"] is True


async def test_a_strict_server_refuses_it_with_content_type_not_supported() -> None:
    async with running_server(text_agent, strict_output_modes=True) as srv:
        status, text = await crewai_exchange(srv.url)
    assert status == 200
    body = parse_sse(text)[0] if text.startswith(("data:", "event:", "id:")) else json.loads(text)
    assert body["error"]["code"] == -32005
    assert "application/json" in body["error"]["message"]


async def test_blocking_sends_in_both_versions_answer_any_accepted_modes() -> None:
    message_03 = crewai_default_request("hi")["params"]["message"]
    message_10 = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    config = {"acceptedOutputModes": ["image/png"]}
    async with (
        running_server(text_agent) as srv,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}", timeout=10) as client,
    ):
        v03 = await client.post(
            "/",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "message/send",
                "params": {"message": message_03, "configuration": config},
            },
        )
        v10 = await client.post(
            "/message:send",
            json={"message": message_10, "configuration": config},
            headers={"A2A-Version": "1.0"},
        )
    assert v03.json()["result"]["status"]["state"] == "completed"
    assert v03.json()["result"]["artifacts"][0]["parts"][0]["text"].endswith("image/png)")
    assert v10.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
