"""Oversized bodies over real sockets: the 413 reaches the client, it is not reset mid-upload.

The server answers early but drains (reads and discards) the rest of a refused
body within a bound, so a client still uploading reads the answer instead of a
connection reset. httpx streams its bodies from a generator (bounded memory);
A2AClient sends real messages over both bindings.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from a2a_core import A2AClient, PayloadTooLargeError
from a2a_core.compose.serve import running_server
from a2a_core.server.asgi.http import drain_body
from a2a_http_support import V10, echo, make_card

pytestmark = pytest.mark.timeout(120)

MiB = 1024 * 1024
LIMIT = 10 * MiB
SIZES = [LIMIT + 1, 20 * MiB, 100 * MiB]
PATHS = {"JSONRPC": "/", "HTTP+JSON": "/message:send"}


async def chunks(size: int, chunk: int = 256 * 1024) -> AsyncIterator[bytes]:
    block = b"x" * chunk
    sent = 0
    while sent < size:
        piece = block[: min(chunk, size - sent)]
        sent += len(piece)
        yield piece


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("size", SIZES, ids=["10MiB+1", "20MiB", "100MiB"])
@pytest.mark.parametrize("binding", list(PATHS))
@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
async def test_httpx_reads_the_413(size: int, binding: str, declared: bool) -> None:
    async with running_server(echo, card=make_card()) as srv:
        headers = {"content-type": "application/json", **V10}
        if declared:
            headers["content-length"] = str(size)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}", timeout=60) as c:
            r = await c.post(PATHS[binding], content=chunks(size), headers=headers)
            assert r.status_code == 413
            if binding == "JSONRPC":
                assert r.json()["error"]["code"] == -32600
            else:
                assert r.json()["error"]["status"] == "RESOURCE_EXHAUSTED"
            # The body ended: the same connection still serves the next request.
            ok = await c.get("/.well-known/agent-card.json")
            assert ok.status_code == 200


@pytest.mark.parametrize("size", SIZES, ids=["10MiB+1", "20MiB", "100MiB"])
@pytest.mark.parametrize("binding", list(PATHS))
@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_a2a_client_reports_payload_too_large(size: int, binding: str, version: str) -> None:
    text = "y" * size
    async with running_server(echo, card=make_card()) as srv:
        client = A2AClient.for_endpoint(srv.url, binding=binding, version=version)
        async with client:
            with pytest.raises(PayloadTooLargeError):
                await client.send(text)
            # ...and the client and server are fine afterwards.
            result = await client.send("small")
            assert result.task is not None


async def test_drain_is_bounded_in_bytes_and_time() -> None:
    async def endless() -> dict[str, object]:
        return {"type": "http.request", "body": b"z" * 1000, "more_body": True}

    assert not await drain_body(endless, max_bytes=10_000, max_seconds=5)

    async def silent() -> dict[str, object]:
        await asyncio.sleep(30)
        return {"type": "http.request", "body": b"", "more_body": False}

    assert not await drain_body(silent, max_bytes=10_000, max_seconds=0.05)

    parts = iter([b"a", b"b"])

    async def short() -> dict[str, object]:
        body = next(parts)
        return {"type": "http.request", "body": body, "more_body": body == b"a"}

    assert await drain_body(short)
