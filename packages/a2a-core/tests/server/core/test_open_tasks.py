"""Tasks left open on purpose, following idle tasks, and streams dropped unread."""

from __future__ import annotations

import asyncio

from a2a_core.server import AgentExecutor, RequestContext, TaskUpdater
from a2a_core.types import (
    GetTaskRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
    TaskStatusUpdateEvent,
)

from .server_core_support import CALL, ServiceFactory, send


class FireAndForget(AgentExecutor):
    """Starts work and returns; a later message with the taskId finishes it."""

    leaves_task_open = True

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        if context.is_continuation and context.text == "finish":
            await updater.complete("finished")
        else:
            await updater.start_work()


class ForgetsToFinish(AgentExecutor):
    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work()


async def test_returning_completes_a_working_task_by_default(make_service: ServiceFactory) -> None:
    service = make_service(ForgetsToFinish())
    task = await service.send_message(send(), CALL)
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED


async def test_leaves_task_open_keeps_it_working(make_service: ServiceFactory) -> None:
    service = make_service(FireAndForget())
    task = await service.send_message(send(), CALL)
    assert isinstance(task, Task)
    assert task.status.state is TaskState.WORKING
    stored = await service.get_task(GetTaskRequest(id=task.id), CALL)
    assert stored.status.state is TaskState.WORKING
    assert service.manager.active_count == 0


async def test_subscribe_to_idle_open_task_follows_it_to_the_end(
    make_service: ServiceFactory,
) -> None:
    service = make_service(FireAndForget())
    task = await service.send_message(send(), CALL)
    assert isinstance(task, Task)
    stream = await service.subscribe(SubscribeToTaskRequest(id=task.id), CALL)
    events: list[object] = []

    async def consume() -> None:
        async for event in stream:
            events.append(event)

    consumer = asyncio.create_task(consume())
    await asyncio.sleep(0.01)
    assert len(events) == 1
    assert isinstance(events[0], Task)
    await service.send_message(send("finish", task_id=task.id), CALL)
    await asyncio.wait_for(consumer, 5)
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.status.state is TaskState.COMPLETED
    assert service.manager.bus.subscriber_count() == 0


async def test_stream_dropped_before_iteration_releases_its_subscription(
    make_service: ServiceFactory,
) -> None:
    service = make_service(FireAndForget())
    task = await service.send_message(send(), CALL)
    assert isinstance(task, Task)
    stream = await service.subscribe(SubscribeToTaskRequest(id=task.id), CALL)
    assert service.manager.bus.subscriber_count(task.id) == 1
    await stream.aclose()  # type: ignore[attr-defined]
    assert service.manager.bus.subscriber_count() == 0


class Asks(AgentExecutor):
    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        if context.is_continuation:
            await updater.complete("thanks")
        else:
            await updater.require_input("which one?")


async def test_subscribe_to_paused_task_stays_open_until_it_ends(
    make_service: ServiceFactory,
) -> None:
    service = make_service(Asks())
    task = await service.send_message(send(), CALL)
    assert isinstance(task, Task)
    assert task.status.state is TaskState.INPUT_REQUIRED
    stream = await service.subscribe(SubscribeToTaskRequest(id=task.id), CALL)
    first = await anext(stream)
    assert isinstance(first, Task)
    assert first.status.state is TaskState.INPUT_REQUIRED
    await service.send_message(send("the blue one", task_id=task.id), CALL)
    rest = [event async for event in stream]
    last = rest[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.status.state is TaskState.COMPLETED
    assert service.manager.bus.subscriber_count() == 0


class AsksThenTidiesUp(AgentExecutor):
    """Pauses for input, then takes a moment to return (cleanup after the question)."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        if context.is_continuation:
            await updater.complete("thanks")
            return
        await updater.require_input("which one?")
        await asyncio.sleep(0.2)


async def test_answer_while_the_paused_agent_is_still_returning(
    make_service: ServiceFactory,
) -> None:
    """The client answers as soon as it sees the question; the answer waits for the run."""
    service = make_service(AsksThenTidiesUp())
    stream = await service.stream_message(send(), CALL)
    events = [event async for event in stream]
    task = events[0]
    assert isinstance(task, Task)
    assert service.manager.active_run(task.id) is not None  # still unwinding
    answer = await service.send_message(send("the blue one", task_id=task.id), CALL)
    assert isinstance(answer, Task)
    assert answer.status.state is TaskState.COMPLETED
