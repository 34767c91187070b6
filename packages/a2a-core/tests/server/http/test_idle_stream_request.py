"""An open stream lets its request go: the parsed JSON and the decoded request model are
not kept by the handler for as long as the stream stays open (the run keeps what it
needs). ``benchmarks/scale_streams.py`` holds thousands of idle streams (issue #40).
Driven over ASGI directly: a stream is read while it is open, not once it ended."""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import MutableMapping
from typing import Any

import pytest
from a2a_core.server import A2AService
from a2a_core.server.asgi import create_app
from a2a_core.types import Message, SendMessageRequest
from a2a_http_support import WaitingAgent, rpc, v10_message

STREAMS = 5


class _Open:
    """One streamed POST in flight: its messages sent so far; ``leave`` disconnects."""

    def __init__(self, app: Any, path: str, body: bytes) -> None:
        self.sent: asyncio.Queue[MutableMapping[str, Any]] = asyncio.Queue()
        self.gone = asyncio.get_running_loop().create_future()
        self._body: bytes | None = body
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": [
                (b"host", b"agent.test"),
                (b"content-type", b"application/json"),
                (b"a2a-version", b"1.0"),
            ],
            "server": ("agent.test", 80),
            "client": ("127.0.0.1", 1),
        }
        self.task = asyncio.ensure_future(app(scope, self._receive, self._send))

    async def _receive(self) -> MutableMapping[str, Any]:
        if self._body is not None:
            body, self._body = self._body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self.gone
        return {"type": "http.disconnect"}

    async def _send(self, message: MutableMapping[str, Any]) -> None:
        await self.sent.put(message)

    async def until(self, needle: bytes) -> None:
        seen = b""
        while needle not in seen:
            message = await asyncio.wait_for(self.sent.get(), 5)
            seen += message.get("body", b"")


def _alive(kind: type) -> int:
    gc.collect()
    return sum(1 for obj in gc.get_objects() if type(obj) is kind)


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_an_open_stream_keeps_no_request_model(
    waiting: tuple[A2AService, WaitingAgent], binding: str
) -> None:
    service, agent = waiting
    app = create_app(service)
    requests, messages = _alive(SendMessageRequest), _alive(Message)
    opened = []
    for i in range(STREAMS):
        message = {"message": v10_message(message_id=f"m-{i}")}
        if binding == "JSONRPC":
            path, body = "/", rpc("SendStreamingMessage", message)
        else:
            path, body = "/message:stream", message
        stream = _Open(app, path, json.dumps(body).encode())
        await stream.until(b"TASK_STATE_WORKING")
        opened.append(stream)
    assert _alive(SendMessageRequest) - requests == 0
    # Two messages each (the task's, which the agent reads, and its ``working`` status
    # text), not the request's too.
    assert _alive(Message) - messages == 2 * STREAMS
    agent.release.set()
    for stream in opened:
        await stream.until(b"TASK_STATE_COMPLETED")
        await asyncio.wait_for(stream.task, 5)
