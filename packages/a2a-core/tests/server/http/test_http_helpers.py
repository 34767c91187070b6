"""The small request helpers: version negotiation, headers, query, bounded body reads."""

from __future__ import annotations

from typing import Any

import pytest
from a2a_core.errors import PayloadTooLargeError, VersionNotSupportedError
from a2a_core.server.asgi.http import (
    DRAIN_MAX_BYTES,
    ClientGone,
    accepts_event_stream,
    header_map,
    is_json_media,
    negotiate_version,
    query_map,
    read_body,
    requested_version,
)


@pytest.mark.parametrize(
    ("raw", "version"),
    [
        (None, "0.3"),
        ("", "0.3"),
        ("  ", "0.3"),
        ("1.0", "1.0"),
        ("1", "1.0"),
        ("1.0.7", "1.0"),
        ("0.3", "0.3"),
        ("0.3.0", "0.3"),
        ("01.00", "1.0"),
    ],
)
def test_negotiate_version(raw: str | None, version: str) -> None:
    assert negotiate_version(raw) == version


@pytest.mark.parametrize(
    "raw",
    [
        "99.0",
        "2.0",
        "1.1",
        "0.2",
        "0",
        "1.0.0.0",
        "v1.0",
        "1.0-rc",
        "\u0661.\u0660",
        "1,0",
        "x" * 100,
    ],
)
def test_negotiate_version_refuses(raw: str) -> None:
    with pytest.raises(VersionNotSupportedError) as info:
        negotiate_version(raw)
    assert len(info.value.message) < 200


def test_header_map_joins_repeated_headers() -> None:
    headers = header_map(
        [(b"a2a-extensions", b"a"), (b"accept", b"*/*"), (b"a2a-extensions", b"b")]
    )
    assert headers == {"a2a-extensions": "a, b", "accept": "*/*"}


def test_requested_version_header_wins_over_query() -> None:
    assert requested_version({"a2a-version": "0.3"}, b"A2A-Version=1.0") == "0.3"
    assert requested_version({}, b"A2A-Version=1.0&x=1") == "1.0"
    assert requested_version({}, b"a2a-version=1.0") == "1.0"
    assert requested_version({}, b"x=1") is None
    assert requested_version({}, b"") is None


def test_query_map() -> None:
    assert query_map(b"a=1&b=&a=2&c=x%20y") == {"a": "2", "b": "", "c": "x y"}
    assert query_map(b"") == {}


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        (None, True),
        ("application/json", True),
        ("Application/JSON; charset=utf-8", True),
        ("application/a2a+json", True),
        ("application/problem+json", True),
        ("text/plain", False),
        ("application/xml", False),
        ("application/jsonx", False),
    ],
)
def test_is_json_media(value: str | None, ok: bool) -> None:
    assert is_json_media(value) is ok


def test_accepts_event_stream() -> None:
    assert accepts_event_stream({"accept": "text/event-stream"})
    assert accepts_event_stream({"accept": "application/json, Text/Event-Stream"})
    assert not accepts_event_stream({"accept": "*/*"})
    assert not accepts_event_stream({})


class Chunks:
    """A fake ``receive`` yielding body chunks, then a disconnect."""

    def __init__(self, chunks: list[bytes], disconnect: bool = False) -> None:
        self.chunks = list(chunks)
        self.disconnect = disconnect
        self.calls = 0

    async def __call__(self) -> dict[str, Any]:
        self.calls += 1
        if not self.chunks:
            return {"type": "http.disconnect"}
        chunk = self.chunks.pop(0)
        more = bool(self.chunks) or self.disconnect
        return {"type": "http.request", "body": chunk, "more_body": more}


async def test_read_body_single_and_many_chunks() -> None:
    assert await read_body(Chunks([b"abc"]), 10, {}) == b"abc"
    assert await read_body(Chunks([b"ab", b"", b"cd"]), 10, {}) == b"abcd"
    assert await read_body(Chunks([b""]), 10, {}) == b""


async def test_read_body_stops_at_the_limit_and_drains_the_rest() -> None:
    """Refused past the limit; the rest is read and discarded so the 413 can arrive."""
    receive = Chunks([b"x" * 6] * 100)
    with pytest.raises(PayloadTooLargeError):
        await read_body(receive, 10, {})
    assert receive.calls == 100
    assert not receive.chunks


async def test_read_body_trusts_a_declared_length_up_front() -> None:
    receive = Chunks([b"x" * 11])
    with pytest.raises(PayloadTooLargeError):
        await read_body(receive, 10, {"content-length": "11"})
    assert receive.calls == 1  # drained, never kept
    # Declared beyond what a drain would read: refused without reading anything.
    receive = Chunks([b"x"])
    with pytest.raises(PayloadTooLargeError):
        await read_body(receive, 10, {"content-length": str(DRAIN_MAX_BYTES + 1)})
    assert receive.calls == 0
    # A bogus Content-Length is ignored; the real size still counts.
    assert await read_body(Chunks([b"ok"]), 10, {"content-length": "nope"}) == b"ok"
    with pytest.raises(PayloadTooLargeError):
        await read_body(Chunks([b"x" * 11]), 10, {})


async def test_read_body_client_gone() -> None:
    with pytest.raises(ClientGone):
        await read_body(Chunks([b"ab"], disconnect=True), 10, {})
    with pytest.raises(ClientGone):
        await read_body(Chunks([]), 10, {})
