"""Streamed answers are whole everywhere but in streams, and whole artifacts say so.

Real sockets (``running_server`` on 127.0.0.1) and raw HTTP, in both protocol
versions and both bindings: an agent that streams its answer token by token
is answered by a blocking send, GetTask and ListTasks with one text part,
while its streams still carry every chunk (``append``), then the whole answer
(``lastChunk``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from a2a_core.compose.serve import running_server
from a2a_core.server import RequestContext
from a2a_core.types import Part
from a2a_http_support import V10, parse_sse, rpc, v03_message, v03_rest_message, v10_message

TOKENS = ["Hel", "lo", ", ", "wor", "ld", "!"]
ANSWER = "".join(TOKENS)


async def token_agent(context: RequestContext) -> AsyncIterator[str]:
    """Streams a fixed answer token by token, as a chat model would."""
    for token in TOKENS:
        await asyncio.sleep(0)
        yield token


async def mixed_agent(context: RequestContext) -> AsyncIterator[Any]:
    """Text, a data part, more text: only the adjacent text chunks join."""
    yield "a"
    yield Part(data={"n": 1})
    yield "b"
    yield "c"


async def whole_agent(context: RequestContext) -> str:
    """Answers in one piece."""
    return "in one piece"


def texts(task: dict[str, Any]) -> list[list[Any]]:
    """Each artifact's parts, as text (or the data for a data part), any wire shape."""
    out: list[list[Any]] = []
    for artifact in task.get("artifacts", []):
        parts = artifact.get("parts", artifact.get("content", []))
        out.append([p["text"] if "text" in p else p.get("data") for p in parts])
    return out


async def blocking_send(client: httpx.AsyncClient, shape: str) -> dict[str, Any]:
    """A blocking send in one of the four version x binding shapes; returns the task."""
    if shape == "1.0 JSON-RPC":
        r = await client.post("/", json=rpc("SendMessage", {"message": v10_message()}), headers=V10)
        return r.json()["result"]["task"]
    if shape == "0.3 JSON-RPC":
        r = await client.post("/", json=rpc("message/send", {"message": v03_message()}))
        return r.json()["result"]
    if shape == "1.0 HTTP+JSON":
        r = await client.post("/message:send", json={"message": v10_message()}, headers=V10)
        return r.json()["task"]
    r = await client.post("/v1/message:send", json={"message": v03_rest_message()})
    body = r.json()
    return body.get("task", body)


SHAPES = ["1.0 JSON-RPC", "0.3 JSON-RPC", "1.0 HTTP+JSON", "0.3 HTTP+JSON"]


async def test_blocking_sends_get_and_list_hold_the_whole_text() -> None:
    async with (
        running_server(token_agent) as srv,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}", timeout=10) as client,
    ):
        ids: list[str] = []
        for shape in SHAPES:
            task = await blocking_send(client, shape)
            assert texts(task) == [[ANSWER]], shape
            ids.append(task["id"])
        for task_id in ids:
            got = await client.post("/", json=rpc("GetTask", {"id": task_id}), headers=V10)
            assert texts(got.json()["result"]) == [[ANSWER]]
            got03 = await client.post("/", json=rpc("tasks/get", {"id": task_id}))
            assert texts(got03.json()["result"]) == [[ANSWER]]
            rest = await client.get(f"/tasks/{task_id}", headers=V10)
            assert texts(rest.json()) == [[ANSWER]]
        listed = await client.post(
            "/", json=rpc("ListTasks", {"includeArtifacts": True}), headers=V10
        )
        tasks = listed.json()["result"]["tasks"]
        assert len(tasks) == len(SHAPES)
        assert all(texts(t) == [[ANSWER]] for t in tasks)


async def test_streams_still_carry_every_chunk_as_produced() -> None:
    async with (
        running_server(token_agent) as srv,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}", timeout=10) as client,
    ):
        body = rpc("SendStreamingMessage", {"message": v10_message()})
        r = await client.post("/", json=body, headers=V10)
        events = [e["result"] for e in parse_sse(r.text)]
        chunks = [e["artifactUpdate"] for e in events if "artifactUpdate" in e]
        # Every token as it came, then the end: the whole answer replacing them.
        assert [c["artifact"]["parts"] for c in chunks] == [[{"text": t}] for t in TOKENS] + [
            [{"text": ANSWER}]
        ]
        assert [c.get("append", False) for c in chunks] == [False] + [True] * (len(TOKENS) - 1) + [
            False
        ]
        assert [c.get("lastChunk", False) for c in chunks] == [False] * len(TOKENS) + [True]
        task_id = chunks[0]["taskId"]
        stored = await client.post("/", json=rpc("GetTask", {"id": task_id}), headers=V10)
        assert texts(stored.json()["result"]) == [[ANSWER]]


async def test_only_adjacent_text_chunks_join_data_parts_stay_apart() -> None:
    async with (
        running_server(mixed_agent) as srv,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}", timeout=10) as client,
    ):
        task = await blocking_send(client, "1.0 JSON-RPC")
    assert texts(task) == [["a", {"n": 1}, "bc"]]


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_a_function_agents_single_artifact_is_marked_last_chunk(version: str) -> None:
    method = "SendStreamingMessage" if version == "1.0" else "message/stream"
    message = v10_message() if version == "1.0" else v03_message()
    headers = V10 if version == "1.0" else {}
    async with (
        running_server(whole_agent) as srv,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}", timeout=10) as client,
    ):
        r = await client.post("/", json=rpc(method, {"message": message}), headers=headers)
    events = [e["result"] for e in parse_sse(r.text)]
    if version == "1.0":
        [update] = [e["artifactUpdate"] for e in events if "artifactUpdate" in e]
    else:
        [update] = [e for e in events if e.get("kind") == "artifact-update"]
    assert update["lastChunk"] is True
    assert json.dumps(update).count("in one piece") == 1
