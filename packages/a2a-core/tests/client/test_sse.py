"""The incremental SSE parser: any chunking gives the same events, as the format defines them."""

from __future__ import annotations

import pytest
from a2a_core import InvalidAgentResponseError
from a2a_core.client.transports._sse import SSEEvent, SSEParser
from hypothesis import given
from hypothesis import strategies as st

STREAM = (
    "\ufeff: a comment, then a ping\r\n"
    "\n"
    "data: first\n"
    "\n"
    "event: update\r\n"
    "id: 7\r"
    "data: line one\r\n"
    "data:line two\n"
    "data: \u00e9\u4e2d\U0001f600\n"
    "\n"
    "retry: 250\n"
    "data\n"
    "\n"
    'data: {"a": 1}\n'
    "\n"
    "data: unfinished at the end"
).encode()

EXPECTED = [
    SSEEvent("first"),
    SSEEvent("line one\nline two\n\u00e9\u4e2d\U0001f600", "update", "7"),
    SSEEvent("", "message", "7", 250),
    SSEEvent('{"a": 1}', "message", "7"),
]


def parse_in(chunks: list[bytes]) -> list[SSEEvent]:
    parser = SSEParser()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    return events


def test_whole_stream() -> None:
    assert parse_in([STREAM]) == EXPECTED


def test_byte_by_byte() -> None:
    """Splits inside CRLF pairs and inside multi-byte characters change nothing."""
    assert parse_in([STREAM[i : i + 1] for i in range(len(STREAM))]) == EXPECTED


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_chunking(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    chunks = [STREAM[a:b] for a, b in zip([0, *points], [*points, len(STREAM)], strict=True)]
    assert parse_in(chunks) == EXPECTED


def test_cr_at_chunk_end_then_lf_is_one_line_break() -> None:
    assert parse_in([b"data: x\r", b"\ndata: y\r", b"\n\r", b"\n"]) == [SSEEvent("x\ny")]


def test_lone_cr_ends_lines() -> None:
    assert parse_in([b"data: a\rdata: b\r\r"]) == [SSEEvent("a\nb")]


def test_space_after_colon_is_removed_once() -> None:
    assert parse_in([b"data:  two spaces\n\n"]) == [SSEEvent(" two spaces")]


def test_unknown_fields_and_comments_are_ignored() -> None:
    assert parse_in([b"foo: bar\n:comment\ndata: ok\n\n"]) == [SSEEvent("ok")]


def test_event_without_data_is_not_dispatched() -> None:
    assert parse_in([b"event: ping\n\ndata: real\n\n"]) == [SSEEvent("real")]


def test_event_size_is_bounded() -> None:
    parser = SSEParser(max_event_bytes=64)
    assert parser.feed(b"data: " + b"x" * 20 + b"\n" + b"data: " + b"x" * 20 + b"\n") == []
    with pytest.raises(InvalidAgentResponseError):
        parser.feed(b"data: " + b"x" * 30 + b"\n")


def test_line_size_is_bounded_without_newlines() -> None:
    parser = SSEParser(max_event_bytes=64)
    with pytest.raises(InvalidAgentResponseError):
        parser.feed(b"data: " + b"y" * 100)


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    assert parse_in([b"data: \xff\xfe ok\n\n"]) == [SSEEvent("\ufffd\ufffd ok")]
