"""Streams: one Message or Task-then-events, subscribe, early exits and back-pressure."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from a2a_core.errors import ServerBusyError, TaskNotFoundError, UnsupportedOperationError
from a2a_core.server import (
    MemoryEventBus,
    Principal,
    RequestContext,
    ServerCallContext,
    TaskUpdater,
)
from a2a_core.types import (
    GetTaskRequest,
    Message,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a_core.wire.operations import Operation
from minimal_bus import BUS_IDS, BUSES
from server_core_support import CALL, CALL_03, ServiceFactory, eventually, send


@pytest.fixture(params=BUSES, ids=BUS_IDS)
def make_service(request: pytest.FixtureRequest, make_service: ServiceFactory) -> ServiceFactory:
    """Every stream test runs on ``MemoryEventBus`` and on a second bus written from the
    ``EventBus`` contract alone (a test may still pass its own)."""

    def factory(agent: Any, **options: Any) -> Any:
        options.setdefault("bus", request.param())
        return make_service(agent, **options)

    return factory


def _describe(event: StreamEvent) -> str:
    if isinstance(event, Task):
        return f"task:{event.status.state.name}"
    if isinstance(event, Message):
        return "message"
    if isinstance(event, TaskStatusUpdateEvent):
        return f"status:{event.status.state.name}"
    return f"artifact:{event.artifact.parts[0].text}"


async def test_a_replying_agent_streams_exactly_one_message(make_service: ServiceFactory) -> None:
    async def agent(context: RequestContext) -> Message:
        return Message.agent("hi back")

    service = make_service(agent)
    stream = await service.open_stream(Operation.SEND_STREAMING_MESSAGE, send(), CALL)
    events = [e async for e in stream]
    assert [_describe(e) for e in events] == ["message"]
    assert service.manager.bus.subscriber_count() == 0


async def test_a_task_streams_the_task_first_then_its_events_in_order(
    make_service: ServiceFactory,
) -> None:
    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        for i in range(3):
            await updater.add_artifact(f"chunk{i}", artifact_id="a", append=i > 0)
        await updater.complete()

    service = make_service(agent)
    stream = await service.stream_message(send(), CALL)
    events = [e async for e in stream]
    assert [_describe(e) for e in events] == [
        "task:SUBMITTED",
        "status:WORKING",
        "artifact:chunk0",
        "artifact:chunk1",
        "artifact:chunk2",
        "status:COMPLETED",
    ]
    task = events[0]
    assert isinstance(task, Task)
    assert task.history[0].text == "hello"
    assert all(
        e.task_id == task.id and e.context_id == task.context_id  # type: ignore[union-attr]
        for e in events[1:]
    )


@pytest.mark.parametrize("pause", [TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED])
async def test_streams_end_at_interrupted_states(
    make_service: ServiceFactory, pause: TaskState
) -> None:
    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        await updater.update_status(pause, "need something")

    service = make_service(agent)
    events = [e async for e in await service.stream_message(send(), CALL)]
    assert [_describe(e) for e in events] == ["task:SUBMITTED", f"status:{pause.name}"]


async def test_a_continuation_stream_sends_the_task_before_the_agent_speaks(
    make_service: ServiceFactory,
) -> None:
    gate = asyncio.Event()

    async def agent(context: RequestContext, updater: TaskUpdater) -> str | None:
        if not context.is_continuation:
            await updater.require_input("?")
            return None
        await gate.wait()
        return "thanks"

    service = make_service(agent)
    paused = await service.send_message(send(), CALL)
    assert isinstance(paused, Task)
    stream = await service.stream_message(send("answer", task_id=paused.id), CALL)
    first = await asyncio.wait_for(anext(stream), 5)
    assert isinstance(first, Task)
    assert first.status.state is TaskState.WORKING
    assert first.history[-1].text == "answer"
    gate.set()
    rest = [_describe(e) async for e in stream]
    assert rest == ["artifact:thanks", "status:COMPLETED"]


@pytest.mark.parametrize("state", [TaskState.COMPLETED, TaskState.INPUT_REQUIRED])
async def test_the_run_ends_before_its_stream_hears_the_event_that_settles_it(
    make_service: ServiceFactory, state: TaskState
) -> None:
    """No yield to the streams after the settling event: the run's own end comes first, so
    a client that hears the task is done (or paused) finds it let go."""

    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        await updater.add_artifact("partial", artifact_id="a", last_chunk=False)
        await updater.update_status(state, "over to you" if state.is_interrupted else None)

    service = make_service(agent)
    stream = await service.open_stream(Operation.SEND_STREAMING_MESSAGE, send(), CALL)
    runs_seen: list[object] = []
    async for event in stream:
        task_id = event.task_id if not isinstance(event, Task) else event.id
        assert task_id is not None
        runs_seen.append(service.manager.active_run(task_id))
    assert runs_seen[0] is not None  # the task, while the agent works
    assert runs_seen[-1] is None  # the final status: the run has ended


async def test_subscribe_sends_the_current_task_then_follows(make_service: ServiceFactory) -> None:
    gate = asyncio.Event()
    working = asyncio.Event()

    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work("step 1")
        working.set()
        await gate.wait()
        await updater.add_artifact("out")
        await updater.complete()

    service = make_service(agent)
    task = await service.send_message(send(immediate=True), CALL)
    assert isinstance(task, Task)
    await asyncio.wait_for(working.wait(), 5)
    streams = [
        await service.open_stream(
            Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id=task.id), CALL
        )
        for _ in range(3)
    ]
    firsts = [await anext(s) for s in streams]
    for first in firsts:
        assert isinstance(first, Task)
        assert first.status.state is TaskState.WORKING
    gate.set()
    for stream in streams:
        assert [_describe(e) async for e in stream] == ["artifact:out", "status:COMPLETED"]
    assert service.manager.bus.subscriber_count() == 0


async def test_subscribe_to_a_terminal_task_depends_on_the_version(
    make_service: ServiceFactory,
) -> None:
    async def agent(context: RequestContext) -> str:
        return "done"

    service = make_service(agent)
    task = await service.send_message(send(), CALL)
    assert isinstance(task, Task)
    request = SubscribeToTaskRequest(id=task.id)
    with pytest.raises(UnsupportedOperationError):
        await service.open_stream(Operation.SUBSCRIBE_TO_TASK, request, CALL)
    events = [
        e async for e in await service.open_stream(Operation.SUBSCRIBE_TO_TASK, request, CALL_03)
    ]
    assert [_describe(e) for e in events] == ["task:COMPLETED"]


async def test_subscribe_is_owner_scoped(make_service: ServiceFactory) -> None:
    gate = asyncio.Event()

    async def agent(context: RequestContext) -> str:
        await gate.wait()
        return "x"

    service = make_service(agent)
    alice = ServerCallContext(principal=Principal("alice"))
    task = await service.send_message(send(immediate=True), alice)
    assert isinstance(task, Task)
    with pytest.raises(TaskNotFoundError):
        await service.subscribe(SubscribeToTaskRequest(id=task.id), CALL)
    gate.set()


async def test_leaving_a_stream_early_unsubscribes_and_the_agent_finishes(
    make_service: ServiceFactory,
) -> None:
    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        for i in range(20):
            await updater.add_artifact(f"c{i}", artifact_id="a", append=i > 0)
            await asyncio.sleep(0.001)
        await updater.complete()

    service = make_service(agent)
    stream = await service.stream_message(send(), CALL)
    first = await anext(stream)
    second = await anext(stream)
    assert isinstance(first, Task)
    assert isinstance(second, TaskStatusUpdateEvent)
    assert service.manager.bus.subscriber_count() == 1
    await stream.aclose()  # type: ignore[attr-defined]
    assert service.manager.bus.subscriber_count() == 0
    await eventually(lambda: service.manager.active_count == 0)
    final = await service.get_task(GetTaskRequest(id=first.id), CALL)
    assert final.status.state is TaskState.COMPLETED
    assert final.artifacts[0].parts[0].text == "".join(f"c{i}" for i in range(20))


async def test_a_consumer_that_falls_too_far_behind_is_told(make_service: ServiceFactory) -> None:
    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        for i in range(50):
            await updater.add_artifact(f"c{i}", artifact_id=f"a{i}")
        await updater.complete()

    service = make_service(agent, bus=MemoryEventBus(max_pending=10))
    stream = await service.stream_message(send(), CALL)
    await eventually(lambda: service.manager.active_count == 0)  # ran ahead of the reader

    async def drain() -> list[StreamEvent]:
        return [event async for event in stream]

    with pytest.raises(ServerBusyError):
        await drain()
    assert service.manager.bus.subscriber_count() == 0


async def test_many_concurrent_streams_are_isolated(make_service: ServiceFactory) -> None:
    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        for i in range(5):
            await updater.add_artifact(f"{context.text}-{i}", artifact_id="a", append=i > 0)
            await asyncio.sleep(0)
        await updater.complete()

    service = make_service(agent)

    async def consume(n: int) -> list[StreamEvent]:
        return [e async for e in await service.stream_message(send(f"s{n}"), CALL)]

    results = await asyncio.gather(*(consume(n) for n in range(100)))
    task_ids = set()
    for n, events in enumerate(results):
        task = events[0]
        assert isinstance(task, Task)
        task_ids.add(task.id)
        chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
        assert [c.artifact.parts[0].text for c in chunks] == [f"s{n}-{i}" for i in range(5)]
        assert {e.task_id for e in events[1:]} == {task.id}  # type: ignore[union-attr]
        assert _describe(events[-1]) == "status:COMPLETED"
    assert len(task_ids) == 100
    assert service.manager.bus.subscriber_count() == 0
