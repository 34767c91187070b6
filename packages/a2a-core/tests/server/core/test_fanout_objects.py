"""Fan-out to many subscribers: what one event costs each of them, in objects.

At 10,000 subscribers of one task, every object an event leaves per subscriber until
that subscriber reads it outlives the young GC generations and is paid for again by
full collections over the whole heap (``benchmarks/scale_streams.py``). These tests
bound those objects: they count, they do not time.
"""

from __future__ import annotations

import asyncio
import gc

from a2a_core.server import RequestContext, TaskUpdater
from a2a_core.server.events import MemoryEventBus
from a2a_core.server.task_stream import TaskStream
from a2a_core.types import (
    SubscribeToTaskRequest,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_core.wire.operations import Operation
from server_core_support import CALL, ServiceFactory, send

SUBSCRIBERS = 200


def _status(state: TaskState) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(task_id="t", context_id="c", status=TaskStatus(state=state))


def test_one_publish_leaves_one_item_however_many_subscribe() -> None:
    bus = MemoryEventBus(replay_events=0)
    subscriptions = [bus.subscribe("t") for _ in range(SUBSCRIBERS)]
    event = _status(TaskState.WORKING)
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        bus.publish("t", event, 1)
        grown = len(gc.get_objects()) - before
    finally:
        gc.enable()
    # One (id, event, JSON) for all of them; a tuple each would be SUBSCRIBERS more.
    assert grown < SUBSCRIBERS // 4
    for subscription in subscriptions:
        assert subscription.take_ready() is event
        assert subscription.event_id == 1
        assert subscription.encoded is not None


async def test_a_waiting_reader_awaits_the_subscription_future() -> None:
    bus = MemoryEventBus(replay_events=0)
    subscription = bus.subscribe("t")
    waiter = subscription.waiter()
    assert waiter is not None
    assert not waiter.done()
    assert subscription.waiter() is waiter  # the same one while nothing came
    event = _status(TaskState.WORKING)
    bus.publish("t", event, 1)
    assert waiter.done()
    assert subscription.waiter() is None  # an event is next: no waiting
    assert subscription.take_ready() is event
    bus.end("t")
    assert subscription.waiter() is None  # the end is next
    assert subscription.take_ready() is None
    assert [e async for e in subscription] == []
    assert bus.subscriber_count() == 0


async def test_subscribe_to_task_reads_the_subscription_itself(
    make_service: ServiceFactory,
) -> None:
    """A SubscribeToTask stream follows its subscription directly (no generator between,
    no coroutine of its own per event) and knows which event is its last."""
    gate = asyncio.Event()
    working = asyncio.Event()

    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        working.set()
        await gate.wait()
        await updater.add_artifact("out")
        await updater.complete()

    service = make_service(agent)
    task = await service.send_message(send(immediate=True), CALL)
    assert isinstance(task, Task)
    await asyncio.wait_for(working.wait(), 5)
    stream = await service.open_stream(
        Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id=task.id), CALL
    )
    assert isinstance(stream, TaskStream)
    first = await anext(stream)
    assert isinstance(first, Task)
    assert not stream.ends()
    gate.set()
    seen = []
    async for event in stream:
        seen.append(type(event).__name__)
        if stream.ends():
            break
    assert seen == ["TaskArtifactUpdateEvent", "TaskStatusUpdateEvent"]
    assert stream.ends()  # the completed status ends the response in its own write
    assert service.manager.bus.subscriber_count() == 0


async def test_a_reader_far_behind_reads_every_event_in_order() -> None:
    """The subscription's queue lets read events go while more arrive (no event lost,
    none twice), however far behind its reader is."""
    bus = MemoryEventBus(replay_events=0)
    subscription = bus.subscribe("t")
    events = [_status(TaskState.WORKING) for _ in range(400)]
    read: list[int] = []
    for event_id, event in enumerate(events[:300]):
        bus.publish("t", event, event_id)
    for _ in range(200):
        assert subscription.take_ready() is not None
        read.append(subscription.event_id or 0)
    assert subscription.pending == 100
    for event_id, event in enumerate(events[300:], start=300):
        bus.publish("t", event, event_id)
    assert subscription.pending == 200
    while subscription.take_ready() is not None:
        read.append(subscription.event_id or 0)
    assert read == list(range(400))
    assert subscription.pending == 0
    assert subscription.waiter() is not None  # nothing next: a reader would wait
    subscription.close()
