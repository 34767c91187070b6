"""Request-head bounds over real sockets: oversized or too many headers get 431, early."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
import uvicorn
from a2a_core.compose.serve import running_server
from a2a_core.server import A2AService
from a2a_core.server.asgi import create_app
from a2a_core.server.head_limits import head_too_large
from a2a_http_support import echo, make_card

pytestmark = pytest.mark.timeout(60)

CARD_GET = b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\n"


async def exchange(port: int, head: bytes, *, finish: bool = True) -> bytes:
    """Send ``head`` (then the blank line when ``finish``), return what comes back."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head + (b"\r\n" if finish else b""))
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        return await asyncio.wait_for(reader.read(65536), timeout=10)
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


def status_of(response: bytes) -> int:
    return int(response.split(b" ", 2)[1])


def big_header(size: int) -> bytes:
    return b"X-Big: " + b"a" * size + b"\r\n"


def many_headers(count: int) -> bytes:
    return b"".join(b"X-H%d: v\r\n" % i for i in range(count))


def long_target(kib: int) -> bytes:
    """A GET whose request target alone is ``kib`` KiB (the headers stay tiny)."""
    path = b"/" + b"p" * (kib * 1024 - 1)
    return b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n"


async def test_serve_refuses_a_100_kb_header_with_431() -> None:
    async with running_server(echo, card=make_card()) as srv:
        response = await exchange(srv.port, CARD_GET + big_header(100_000))
        assert status_of(response) == 431
        assert b"Request header fields too large" in response


async def test_serve_stops_reading_an_oversized_head_before_it_ends() -> None:
    """The head never completes: only the protocol-level bound can answer."""
    async with running_server(echo, card=make_card()) as srv:
        response = await exchange(srv.port, CARD_GET + big_header(100_000), finish=False)
        assert status_of(response) == 431


async def test_serve_refuses_too_many_headers() -> None:
    async with running_server(echo, card=make_card()) as srv:
        assert status_of(await exchange(srv.port, CARD_GET + many_headers(150))) == 431
        assert status_of(await exchange(srv.port, CARD_GET + many_headers(90))) == 200


@pytest.mark.parametrize("kib", [17, 32, 64])
async def test_serve_refuses_a_long_request_target_with_431(kib: int) -> None:
    """The 16 KiB bound covers the request line too, however the head arrives."""
    async with running_server(echo, card=make_card()) as srv:
        assert status_of(await exchange(srv.port, long_target(kib))) == 431
        assert status_of(await exchange(srv.port, long_target(kib), finish=False)) == 431
        assert status_of(await exchange(srv.port, long_target(15))) == 404


async def test_ordinary_large_headers_still_pass() -> None:
    async with running_server(echo, card=make_card()) as srv:
        token = b"Authorization: Bearer " + b"t" * 8000 + b"\r\n"
        assert status_of(await exchange(srv.port, CARD_GET + token)) == 200


async def test_the_limits_are_options() -> None:
    async with running_server(echo, card=make_card(), max_header_bytes=200_000) as srv:
        assert status_of(await exchange(srv.port, CARD_GET + big_header(100_000))) == 200
    async with running_server(echo, card=make_card(), max_header_count=5) as srv:
        assert status_of(await exchange(srv.port, CARD_GET + many_headers(10))) == 431


@contextlib.asynccontextmanager
async def plain_uvicorn(http: str) -> AsyncIterator[int]:
    """Our app under a uvicorn we did not configure (as a host deployment would)."""
    service = A2AService(echo, make_card())
    config = uvicorn.Config(
        create_app(service),
        host="127.0.0.1",
        port=0,
        http=http,  # type: ignore[arg-type]
        h11_max_incomplete_event_size=1_000_000,
        log_level="warning",
        lifespan="off",
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        for _ in range(1000):
            if server.started:
                break
            await asyncio.sleep(0.01)
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        await task
        await service.aclose()


@pytest.mark.parametrize("http", ["h11", "httptools"])
async def test_the_app_itself_answers_431_under_any_server(http: str) -> None:
    async with plain_uvicorn(http) as port:
        assert status_of(await exchange(port, CARD_GET + big_header(100_000))) == 431
        assert status_of(await exchange(port, CARD_GET + many_headers(150))) == 431
        assert status_of(await exchange(port, long_target(17))) == 431
        assert status_of(await exchange(port, CARD_GET)) == 200


def test_head_too_large_counts_fields_and_bytes() -> None:
    assert not head_too_large([(b"a", b"b")] * 10, 1000, 10)
    assert head_too_large([(b"a", b"b")] * 11, 1000, 10)
    assert head_too_large([(b"a", b"b" * 1000)], 1000, 10)
