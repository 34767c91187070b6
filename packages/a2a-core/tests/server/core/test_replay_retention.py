"""Replay: a task's events recorded as the bytes published (the GC skips them), replayed
exactly, on ``MemoryEventBus`` and on a second bus written from the contract alone."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable
from typing import Any

import pytest
from a2a_core.server import (
    A2AService,
    MemoryEventBus,
    RequestContext,
    ServerCallContext,
    TaskUpdater,
)
from a2a_core.server.events import NO_ID, EventBus, EventsLost
from a2a_core.types import (
    Artifact,
    Message,
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
from minimal_bus import BUS_IDS, BUSES
from server_core_support import CALL, ServiceFactory, eventually, send

CHUNKS = 50


@pytest.fixture(params=BUSES, ids=BUS_IDS)
def make_service(request: pytest.FixtureRequest, make_service: ServiceFactory) -> ServiceFactory:
    """The service tests below run on each bus (a test may still pass its own)."""

    def factory(agent: Any, **options: Any) -> Any:
        options.setdefault("bus", request.param())
        return make_service(agent, **options)

    return factory


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
    """The stream's events with their ids (``TaskStream.event_id``)."""
    return [(stream.event_id, event) async for event in stream]


async def _stream(
    service: A2AService, call: ServerCallContext
) -> list[tuple[int | None, StreamEvent]]:
    return await _read(await service.stream_message(send(), call))


async def test_a_finished_stream_leaves_a_few_tracked_objects_not_one_per_event(
    make_service: ServiceFactory,
) -> None:
    bus = MemoryEventBus()
    service = make_service(_chunky, bus=bus)
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


@pytest.mark.parametrize("bus_class", BUSES)
async def test_the_bus_replays_recorded_and_live_events_in_order(
    bus_class: Callable[[], EventBus],
) -> None:
    bus = bus_class()
    bus.subscribe("t", current=0).close()  # starts the task's record
    status = TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=TaskStatus(state=TaskState.INPUT_REQUIRED)
    )
    bus.publish("t", _chunk("x"), 1)
    bus.publish("t", status, 2)
    bus.end("t")
    bus.publish("t", _chunk("y"), 3)
    sub = bus.subscribe("t", after=1)
    got: list[tuple[int | None, StreamEvent, bytes | None]] = []
    for _ in range(2):
        event = await asyncio.wait_for(anext(sub), 1)
        got.append((sub.event_id, event, sub.encoded))
    assert got == [(2, status, event_json(status)), (3, _chunk("y"), event_json(_chunk("y")))]
    bus.publish("t", _chunk("z"), 4)  # live now
    assert await asyncio.wait_for(anext(sub), 1) == _chunk("z")
    assert (sub.event_id, sub.encoded) == (4, event_json(_chunk("z")))
    sub.close()
    assert bus.subscriber_count() == 0
    with pytest.raises(EventsLost):
        bus.subscribe("u", after=0)  # never recorded


@pytest.mark.parametrize("bus_class", BUSES)
async def test_every_subscription_reads_each_event_once_in_order_until_the_end(
    bus_class: Callable[[], EventBus],
) -> None:
    bus = bus_class()
    first, second = bus.subscribe("t"), bus.subscribe("t")
    other = bus.subscribe("u")
    assert (bus.subscriber_count("t"), bus.subscriber_count()) == (2, 3)
    for event_id, text in enumerate("abc", 1):
        bus.publish("t", _chunk(text), event_id)
    reply = Message.agent("hi")
    bus.publish("t", reply)  # a direct reply: no id of its own
    bus.end("t")
    for sub in (first, second):
        assert [e async for e in sub] == [_chunk("a"), _chunk("b"), _chunk("c"), reply]
        assert sub.event_id == NO_ID
    assert bus.subscriber_count() == 1
    assert other.pending == 0  # another task's events never reach it
    bus.end_all()
    assert [e async for e in other] == []
    assert bus.subscriber_count() == 0


@pytest.mark.parametrize("bus_class", BUSES)
async def test_a_closed_subscription_hears_nothing_more(bus_class: Callable[[], EventBus]) -> None:
    bus = bus_class()
    sub = bus.subscribe("t")
    bus.publish("t", _chunk("a"), 1)
    assert sub.take_ready() == _chunk("a")
    assert sub.take_ready() is None
    sub.close()
    bus.publish("t", _chunk("b"), 2)
    assert sub.pending == 0
    assert bus.subscriber_count("t") == 0


def _chunk(text: str) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id="t", context_id="c", artifact=Artifact(artifact_id="a", parts=[Part(text=text)])
    )


def _ring(bus: MemoryEventBus, task_id: str) -> Any:
    return bus._rings[task_id]  # pyright: ignore[reportPrivateUsage]


async def test_a_record_holds_bytes_from_the_start_and_no_event_object() -> None:
    bus = MemoryEventBus()
    sub = bus.subscribe("t", current=0)
    bus.publish("t", _chunk("x"), 1)
    bus.publish("t", _chunk("y"), 2)
    ring = _ring(bus, "t")
    assert len(ring) == 2
    assert ring._objects is None
    tracked = _tracked_under(ring)
    for event_id in range(3, 103):
        bus.publish("t", _chunk(str(event_id)), event_id)
    assert len(ring) == 102
    assert _tracked_under(ring) == tracked < 5  # not one object per event
    sub.close()


async def test_a_long_stream_replays_only_what_it_retains() -> None:
    bus = MemoryEventBus(replay_events=100)
    sub = bus.subscribe("t", current=0)
    chunks = [_chunk(str(i)) for i in range(1, 301)]
    for event_id, chunk in enumerate(chunks, 1):
        bus.publish("t", chunk, event_id)
    assert len(_ring(bus, "t")) == 100  # the 200 oldest let go
    with pytest.raises(EventsLost):
        bus.subscribe("t", after=199)
    for after in (200, 250, 299):
        replayed = bus.subscribe("t", after=after)
        assert [await anext(replayed) for _ in range(300 - after)] == chunks[after:]
        assert [event_json(e) for e in chunks[after:]] == [
            data for _, _, data in _ring(bus, "t").after(after)
        ]
        replayed.close()
    sub.close()


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
    replayed = _ring(bus, "t").after(0)
    assert [event for _, event, _ in replayed] == published
    assert [data is None for _, _, data in replayed] == [False, True, True, False]
    assert replayed[1][1] is custom
    assert replayed[2][1] is end_mark
    for event_id, text in enumerate("defg", 5):  # the oldest go, the kept objects with them
        bus.publish("t", _chunk(text), event_id)
    assert _ring(bus, "t")._objects == {}


async def test_the_least_recently_active_record_goes_first() -> None:
    bus = MemoryEventBus(replay_tasks=1)
    bus.record("t", 0)
    bus.publish("t", _chunk("x"), 1)
    bus.record("u", 0)  # evicts t's record
    with pytest.raises(EventsLost):
        bus.subscribe("t", after=0)
    unbuffered = MemoryEventBus(replay_tasks=0)
    unbuffered.subscribe("t", current=0).close()
    with pytest.raises(EventsLost):
        unbuffered.subscribe("t", after=0)
