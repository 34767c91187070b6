"""The replay buffer of a finished stream: kept as bytes the GC skips, replayed exactly."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest
from a2a_core.server import (
    A2AService,
    MemoryEventBus,
    RequestContext,
    ServerCallContext,
    TaskUpdater,
)
from a2a_core.server.events import EventsLost
from a2a_core.types import (
    Artifact,
    Part,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_core.types._json import event_json
from a2a_core.wire.operations import Operation
from server_core_support import CALL, ServiceFactory, eventually, send

CHUNKS = 50


def _tracked_under(root: object) -> int:
    """How many GC-tracked objects ``root`` reaches (itself included; classes not)."""
    gc.collect()  # untracks the tuples (and dicts) that hold only atoms
    seen: set[int] = set()
    todo = [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or not gc.is_tracked(obj) or isinstance(obj, type):
            continue
        seen.add(id(obj))
        todo.extend(gc.get_referents(obj))
    return len(seen)


def _visits_under(root: object) -> int:
    """How many references a full collection follows from the tracked objects under
    ``root`` (each is an object it touches, tracked or not)."""
    gc.collect()
    seen: set[int] = set()
    todo = [root]
    visits = 0
    while todo:
        obj = todo.pop()
        if id(obj) in seen or not gc.is_tracked(obj) or isinstance(obj, type):
            continue
        seen.add(id(obj))
        referents = gc.get_referents(obj)
        visits += len(referents)
        todo.extend(referents)
    return visits


async def _chunky(context: RequestContext, updater: TaskUpdater) -> None:
    for i in range(CHUNKS):
        await updater.add_artifact(
            f"c{i};", artifact_id="a", append=i > 0, last_chunk=i == CHUNKS - 1
        )
    await updater.complete("done")


async def _read(stream: Any) -> list[tuple[int | None, StreamEvent]]:
    """The stream's events with their ids (``_Stream.event_id``)."""
    return [(stream.event_id, event) async for event in stream]


async def _stream(
    service: A2AService, call: ServerCallContext
) -> list[tuple[int | None, StreamEvent]]:
    return await _read(await service.stream_message(send(), call))


async def test_a_finished_stream_leaves_a_few_tracked_objects_not_one_per_event(
    make_service: ServiceFactory,
) -> None:
    service = make_service(_chunky)
    bus = service.manager.bus
    assert isinstance(bus, MemoryEventBus)
    for _ in range(4):
        events = await _stream(service, CALL)
        assert len(events) == CHUNKS + 2
    await eventually(lambda: service.manager.active_count == 0)  # the runs ended (packed)
    # Held as objects, each event of a finished stream kept about ten alive: 2,000 here.
    assert _tracked_under(bus._rings) < 20  # pyright: ignore[reportPrivateUsage]
    # Nor one reference per event for the collector to follow: as (id, bytes) tuples in
    # a deque, the 208 events held here were 208 objects touched by every full collection
    # (a ring is about a dozen, whatever it holds).
    rings = bus._rings  # pyright: ignore[reportPrivateUsage]
    assert _visits_under(rings) < 20 * len(rings)


async def test_a_resubscribe_to_a_finished_task_replays_the_rest_as_sent(
    make_service: ServiceFactory,
) -> None:
    service = make_service(_chunky)
    events = await _stream(service, CALL)
    task = events[0][1]
    assert isinstance(task, Task)
    for middle in (1, CHUNKS // 2, CHUNKS):
        last = events[middle][0]
        assert last is not None
        call = ServerCallContext(version="1.0", headers={"last-event-id": str(last)})
        stream = await service.open_stream(
            Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id=task.id), call
        )
        replayed = await _read(stream)
        assert replayed == events[middle + 1 :]
        assert [event_json(e) for _, e in replayed] == [
            event_json(e) for _, e in events[middle + 1 :]
        ]


async def test_a_paused_task_replays_across_its_pause_and_continuation(
    make_service: ServiceFactory,
) -> None:
    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        await updater.add_artifact("before", artifact_id="a")
        if not context.is_continuation:
            await updater.require_input("more?")
            return
        await updater.add_artifact("after", artifact_id="b")
        await updater.complete()

    service = make_service(agent)
    first = await _stream(service, CALL)
    task = first[0][1]
    assert isinstance(task, Task)
    assert task.status.state is TaskState.SUBMITTED
    stream = await service.stream_message(send("answer", task_id=task.id), CALL)
    second = await _read(stream)
    # The ring holds the first run's events packed at the pause, then the continuation's
    # (packed when it completed); a replay of a finished task stops where a run settled.
    for events in (first, second):
        last = events[0][0]
        call = ServerCallContext(version="1.0", headers={"last-event-id": str(last)})
        again = await service.open_stream(
            Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id=task.id), call
        )
        replayed = await _read(again)
        assert replayed == events[1:]
        assert len(replayed) >= 2


async def test_the_bus_replays_packed_and_live_events_in_order() -> None:
    bus = MemoryEventBus(replay_events=3)
    bus.record("t", 0)
    status = TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=TaskStatus(state=TaskState.INPUT_REQUIRED)
    )

    def chunk(text: str) -> TaskArtifactUpdateEvent:
        return TaskArtifactUpdateEvent(
            task_id="t", context_id="c", artifact=Artifact(artifact_id="a", parts=[Part(text=text)])
        )

    bus.publish("t", chunk("x"), 1)
    bus.publish("t", status, 2)
    bus.end("t")
    bus.publish("t", chunk("y"), 3)
    sub = bus.subscribe("t", after=1)
    got: list[tuple[int | None, StreamEvent]] = []
    for _ in range(2):
        event = await asyncio.wait_for(anext(sub), 1)
        got.append((sub.event_id, event))
    assert got == [(2, status), (3, chunk("y"))]
    sub.close()
    bus.publish("t", chunk("z"), 4)  # the ring (3 events) now starts after 1
    with pytest.raises(EventsLost):
        bus.subscribe("t", after=0)


def _chunk(text: str) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id="t", context_id="c", artifact=Artifact(artifact_id="a", parts=[Part(text=text)])
    )


def _held(bus: MemoryEventBus, task_id: str) -> list[type]:
    ring = bus._rings[task_id]  # pyright: ignore[reportPrivateUsage]
    return [type(event) for _, event in ring.held()]


async def test_a_buffer_is_packed_when_its_last_reading_stream_lets_go() -> None:
    bus = MemoryEventBus()
    bus.record("t", 0)
    slow, fast = bus.subscribe("t"), bus.subscribe("t")
    bus.publish("t", _chunk("x"), 1)
    bus.publish("t", _chunk("y"), 2)
    bus.end("t")  # the run ended; both streams still have its events to send
    assert _held(bus, "t") == [TaskArtifactUpdateEvent] * 2
    assert [e async for e in fast] == [_chunk("x"), _chunk("y")]
    assert _held(bus, "t") == [TaskArtifactUpdateEvent] * 2  # the slow one still reads
    slow.close()
    assert _held(bus, "t") == [bytes, bytes]
    assert bus._draining == {}  # pyright: ignore[reportPrivateUsage]


async def test_sent_frames_are_kept_as_their_bytes_while_the_task_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bus = MemoryEventBus(replay_events=4)
    bus.record("t", 0)
    sub = bus.subscribe("t")
    chunks = [_chunk(text) for text in "abcdef"]
    for event_id, chunk in enumerate(chunks[:4], 1):
        bus.publish("t", chunk, event_id)
    sent = [(event_id, event_json(await anext(sub))) for event_id in range(1, 4)]
    encoded: list[object] = []
    monkeypatch.setattr(
        "a2a_core.server.events.event_json",
        lambda event: encoded.append(event) or event_json(event),
    )
    sub.sent(sent)  # type: ignore[arg-type]  # frames of ids 1-3 written, with their bytes
    assert _held(bus, "t") == [bytes, bytes, bytes, TaskArtifactUpdateEvent]
    ring = bus._rings["t"]  # pyright: ignore[reportPrivateUsage]
    assert [data for _, data in ring.held()[:3]] == [d for _, d in sent]
    sub.sent(sent)  # type: ignore[arg-type]  # sent again (another stream): packed already
    bus.publish("t", chunks[4], 5)  # the ring is full: the oldest (packed) goes
    bus.publish("t", chunks[5], 6)
    assert _held(bus, "t") == [bytes] + [TaskArtifactUpdateEvent] * 3
    assert encoded == []  # nothing encoded: the bytes came with the frames
    monkeypatch.undo()
    replayed = bus.subscribe("t", after=2)
    assert [await anext(replayed) for _ in range(4)] == chunks[2:]  # bytes and objects alike
    replayed.close()
    sub.sent([(6, event_json(chunks[5]) or b"")])  # not at the front (4 is): passed over
    assert _held(bus, "t") == [bytes] + [TaskArtifactUpdateEvent] * 3
    sub.close()
    bus.end("t")
    assert _held(bus, "t") == [bytes] * 4  # the rest encoded now


async def test_a_long_stream_packs_as_it_goes_and_replays_only_what_it_retains() -> None:
    bus = MemoryEventBus(replay_events=100)
    bus.record("t", 0)
    sub = bus.subscribe("t")
    chunks = [_chunk(str(i)) for i in range(1, 301)]
    for start in range(0, 300, 10):  # written ten frames at a time, as a stream does
        for event_id, chunk in enumerate(chunks[start : start + 10], start + 1):
            bus.publish("t", chunk, event_id)
        sent = [
            (sub_id, event_json(await anext(sub)) or b"") for sub_id in range(start + 1, start + 11)
        ]
        sub.sent(sent)
    assert _held(bus, "t") == [bytes] * 100  # the 200 oldest let go, the rest packed
    with pytest.raises(EventsLost):
        bus.subscribe("t", after=199)
    for after in (200, 250, 299):
        replayed = bus.subscribe("t", after=after)
        assert [await anext(replayed) for _ in range(300 - after)] == chunks[after:]
        assert [event_json(e) for e in chunks[after:]] == [
            event_json(e)
            for _, e in bus._rings["t"].after(after)  # pyright: ignore[reportPrivateUsage]
        ]
        replayed.close()
    sub.close()
    bus.end("t")
    assert _held(bus, "t") == [bytes] * 100


async def test_an_event_with_no_json_of_its_own_is_kept_as_itself_among_packed_ones() -> None:
    """A subclass's event (its serializer may differ) or an end mark is held as the object,
    in its place; the events around it are packed all the same."""

    class Custom(TaskArtifactUpdateEvent):
        pass

    end_mark = object()
    bus = MemoryEventBus(replay_events=5)
    bus.record("t", 0)
    custom = Custom(**dict(_chunk("b")))
    published = [_chunk("a"), custom, end_mark, _chunk("c")]
    for event_id, event in enumerate(published, 1):
        bus.publish("t", event, event_id)  # type: ignore[arg-type]
    bus.pack("t")
    assert _held(bus, "t") == [bytes, Custom, object, bytes]
    replayed = bus._rings["t"].after(0)  # pyright: ignore[reportPrivateUsage]
    assert [event for _, event in replayed] == published
    assert replayed[1][1] is custom
    assert replayed[2][1] is end_mark
    for event_id, text in enumerate("defg", 5):  # the oldest go, the kept objects with them
        bus.publish("t", _chunk(text), event_id)
    bus.pack("t")
    assert _held(bus, "t") == [bytes] * 5
    assert bus._rings["t"]._objects == {}  # pyright: ignore[reportPrivateUsage]


async def test_streams_that_never_let_go_are_forgotten_with_their_buffer() -> None:
    bus = MemoryEventBus(replay_tasks=1)
    bus.record("t", 0)
    bus.subscribe("t")  # never read, never closed
    bus.publish("t", _chunk("x"), 1)
    bus.end("t")
    assert set(bus._draining) == {"t"}  # pyright: ignore[reportPrivateUsage]
    bus.record("u", 0)  # evicts t's buffer, and what waited to pack it
    assert bus._draining == {}  # pyright: ignore[reportPrivateUsage]
    unbuffered = MemoryEventBus(replay_tasks=0)
    unbuffered.subscribe("t")
    unbuffered.end("t")
    assert unbuffered._draining == {}  # pyright: ignore[reportPrivateUsage]
