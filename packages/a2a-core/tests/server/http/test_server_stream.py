"""``ServerStream`` is the whole agreement between a stream and its writers.

The SSE writer and the access log take any object with its methods: ids, the bus's
bytes, ready batches and the end come from the protocol, never from looking for
attributes.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncGenerator, MutableMapping
from typing import Any

from a2a_core.server.asgi.access import AccessRecord, RecordedEvents
from a2a_core.server.asgi.sse import KeepAlive, stream_sse
from a2a_core.server.stream import ServerStream, plain_stream
from a2a_core.types import (
    Artifact,
    Part,
    StreamEvent,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)


def _chunk(text: str) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id="t", context_id="c", artifact=Artifact(artifact_id="a", parts=[Part(text=text)])
    )


class Scripted:
    """A hand-written ``ServerStream``: events with ids and bytes, all ready at once.

    It is not the service's stream, nor a subclass of anything: only the protocol.
    """

    def __init__(self, items: list[tuple[int, StreamEvent, bytes]]) -> None:
        self.items = list(items)
        self.index = -1
        self.closed = False
        self.ready_calls = 0

    def __aiter__(self) -> Scripted:
        return self

    async def __anext__(self) -> StreamEvent:
        if self.index + 1 >= len(self.items):
            raise StopAsyncIteration
        self.index += 1
        return self.items[self.index][1]

    @property
    def event_id(self) -> int | None:
        return self.items[self.index][0]

    @property
    def encoded(self) -> bytes | None:
        return self.items[self.index][2]

    def next_ready(self) -> StreamEvent | None:
        self.ready_calls += 1
        if self.index + 1 >= len(self.items):
            return None
        self.index += 1
        return self.items[self.index][1]

    def ends(self) -> bool:
        return self.index == len(self.items) - 1

    async def aclose(self) -> None:
        self.closed = True


def _items() -> list[tuple[int, StreamEvent, bytes]]:
    final = TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=TaskStatus(state=TaskState.COMPLETED)
    )
    return [(7, _chunk("a"), b"A"), (8, _chunk("b"), b"B"), (9, final, b"F")]


class Connection:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> MutableMapping[str, Any]:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def send(self, message: MutableMapping[str, Any]) -> None:
        self.sent.append(dict(message))


def _frame(event: StreamEvent, encoded: bytes | None) -> bytes:
    assert encoded is not None  # the stream's bytes, handed to the frame as they are
    return b"data: " + encoded + b"\n\n"


async def _write(stream: ServerStream) -> Connection:
    conn = Connection()
    await stream_sse(conn.receive, conn.send, stream, _frame, lambda e: b"", [], KeepAlive())
    return conn


async def test_the_sse_writer_takes_any_server_stream() -> None:
    stream = Scripted(_items())
    conn = await _write(stream)
    bodies = [m["body"] for m in conn.sent if m["type"] == "http.response.body"]
    # One write for the ready batch; the stream's end ends the response in it.
    assert bodies == [b"id: 7\ndata: A\n\nid: 8\ndata: B\n\nid: 9\ndata: F\n\n"]
    assert conn.sent[-1]["more_body"] is False
    assert stream.closed


async def test_the_access_log_passes_any_server_stream_through_and_notes_its_events() -> None:
    stream = Scripted(_items())
    record = AccessRecord()
    recorded: ServerStream = RecordedEvents(stream, record)
    conn = await _write(recorded)
    bodies = [m["body"] for m in conn.sent if m["type"] == "http.response.body"]
    assert bodies == [b"id: 7\ndata: A\n\nid: 8\ndata: B\n\nid: 9\ndata: F\n\n"]
    assert stream.ready_calls >= 2  # the batch was read through the log's stream
    assert (record.task_id, record.state) == ("t", "completed")
    assert stream.closed


async def test_a_plain_generator_is_a_stream_with_no_ids_nor_bytes() -> None:
    async def events() -> AsyncGenerator[StreamEvent]:
        yield _chunk("a")

    stream = plain_stream(events())
    assert [e async for e in stream] == [_chunk("a")]
    assert (stream.event_id, stream.encoded, stream.next_ready(), stream.ends()) == (
        None,
        None,
        None,
        False,
    )
    await stream.aclose()


async def test_a_waiting_stream_keeps_no_frame_it_sent() -> None:
    """Between events a stream keeps nothing of the frame it wrote last (a frame may be
    large, and thousands of streams may wait)."""
    freed: list[int] = []

    class Frame(bytes):
        def __del__(self) -> None:
            freed.append(len(self))

    gate = asyncio.Event()

    async def events() -> AsyncGenerator[StreamEvent]:
        yield _chunk("a")
        await gate.wait()

    lengths: list[int] = []
    written = asyncio.Event()

    async def send(message: MutableMapping[str, Any]) -> None:
        if message.get("body"):
            lengths.append(len(message["body"]))  # not the frame itself
            written.set()

    def frame(event: StreamEvent, encoded: bytes | None) -> bytes:
        return Frame(b"data: " + b"x" * 65000 + b"\n\n")

    conn = Connection()
    pump = asyncio.ensure_future(
        stream_sse(
            conn.receive, send, plain_stream(events()), frame, lambda e: b"", [], KeepAlive()
        )
    )
    await asyncio.wait_for(written.wait(), 5)
    await asyncio.sleep(0)  # the pump is back waiting for the next event
    gc.collect()
    assert freed == lengths == [65008]
    gate.set()
    await asyncio.wait_for(pump, 5)
