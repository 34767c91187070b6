"""CancelTask: terminal, forwarded to the agent, owner-scoped, and free for paused tasks."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time

import pytest
from a2a_core.errors import ServerBusyError, TaskNotCancelableError, TaskNotFoundError
from a2a_core.server import (
    A2AService,
    AgentExecutor,
    ManagerConfig,
    Principal,
    RequestContext,
    ServerCallContext,
    TaskUpdater,
)
from a2a_core.server.task_state import IllegalTransitionError
from a2a_core.types import CancelTaskRequest, GetTaskRequest, Task, TaskState
from server_core_support import CALL, ServiceFactory, eventually, send

ALICE = ServerCallContext(version="1.0", principal=Principal("alice"))
BOB = ServerCallContext(version="1.0", principal=Principal("bob"))


class Sleeper(AgentExecutor):
    """Works until canceled; records what cancellation looked like from inside."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.interrupted = asyncio.Event()
        self.cancel_calls: list[bool] = []  # token state when cancel() ran

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        self.started.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.interrupted.set()
            raise

    async def cancel(self, context: RequestContext, updater: TaskUpdater) -> None:
        self.cancel_calls.append(context.cancellation.cancelled)


async def _start(agent: Sleeper, service: A2AService, call: ServerCallContext = CALL) -> Task:
    task = await service.send_message(send(immediate=True), call)
    assert isinstance(task, Task)
    await asyncio.wait_for(agent.started.wait(), 5)
    return task


async def test_cancel_is_forwarded_to_the_running_agent(make_service: ServiceFactory) -> None:
    agent = Sleeper()
    service = make_service(agent)
    task = await _start(agent, service)
    canceled = await service.cancel_task(CancelTaskRequest(id=task.id), CALL)
    assert canceled.status.state is TaskState.CANCELED
    assert agent.cancel_calls == [True]  # cancel() ran, with the token already set
    await asyncio.wait_for(agent.interrupted.wait(), 5)  # the awaited sleep was interrupted
    await eventually(lambda: service.manager.active_count == 0)
    stored = await service.get_task(GetTaskRequest(id=task.id), CALL)
    assert stored.status.state is TaskState.CANCELED


async def test_a_late_completion_after_cancel_is_rejected(make_service: ServiceFactory) -> None:
    rejected: list[Exception] = []
    started = asyncio.Event()
    finished = asyncio.Event()

    class Stubborn(AgentExecutor):
        async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
            await updater.start_work()
            started.set()
            with contextlib.suppress(asyncio.CancelledError):  # ignores the cancel, carries on
                await asyncio.sleep(3600)
            for attempt in (updater.add_artifact("late"), updater.complete("done anyway")):
                try:
                    await attempt
                except IllegalTransitionError as exc:
                    rejected.append(exc)
            finished.set()

    service = make_service(Stubborn())
    task = await service.send_message(send(immediate=True), CALL)
    assert isinstance(task, Task)
    await asyncio.wait_for(started.wait(), 5)
    canceled = await service.cancel_task(CancelTaskRequest(id=task.id), CALL)
    assert canceled.status.state is TaskState.CANCELED
    await asyncio.wait_for(finished.wait(), 5)
    assert len(rejected) == 2
    stored = await service.get_task(GetTaskRequest(id=task.id), CALL)
    assert stored.status.state is TaskState.CANCELED
    assert stored.artifacts == []


async def test_a_worker_thread_that_ignores_the_token_cannot_overwrite_cancel(
    make_service: ServiceFactory,
) -> None:
    started = threading.Event()
    release = threading.Event()
    outcome: list[str] = []

    async def agent(context: RequestContext, updater: TaskUpdater) -> str:
        def work() -> str:
            started.set()
            release.wait(5)
            return "computed"

        future = asyncio.ensure_future(asyncio.to_thread(work))
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            result = await future  # ignores the cancel: finishes and returns anyway
            outcome.append("returned")
            return result

    service = make_service(agent)
    task = await service.send_message(send(immediate=True), CALL)
    assert isinstance(task, Task)
    await asyncio.to_thread(started.wait, 5)
    await service.cancel_task(CancelTaskRequest(id=task.id), CALL)
    release.set()
    await eventually(lambda: service.manager.active_count == 0)
    assert outcome == ["returned"]
    stored = await service.get_task(GetTaskRequest(id=task.id), CALL)
    assert stored.status.state is TaskState.CANCELED
    assert stored.artifacts == []


async def test_cancel_of_a_terminal_task_is_not_cancelable(make_service: ServiceFactory) -> None:
    async def agent(context: RequestContext) -> str:
        return "done"

    service = make_service(agent)
    task = await service.send_message(send(), CALL)
    assert isinstance(task, Task)
    with pytest.raises(TaskNotCancelableError):
        await service.cancel_task(CancelTaskRequest(id=task.id), CALL)

    sleeper = Sleeper()
    service = make_service(sleeper)
    task = await _start(sleeper, service)
    await service.cancel_task(CancelTaskRequest(id=task.id), CALL)
    with pytest.raises(TaskNotCancelableError):  # a second cancel: already CANCELED
        await service.cancel_task(CancelTaskRequest(id=task.id), CALL)


async def test_cancel_of_an_unknown_task_is_not_found(make_service: ServiceFactory) -> None:
    service = make_service(Sleeper())
    with pytest.raises(TaskNotFoundError):
        await service.cancel_task(CancelTaskRequest(id="no-such-task"), CALL)


async def test_cancel_of_someone_elses_task_is_not_found(make_service: ServiceFactory) -> None:
    agent = Sleeper()
    service = make_service(agent)
    task = await _start(agent, service, ALICE)  # still running: the active-run path
    for intruder in (BOB, CALL):
        with pytest.raises(TaskNotFoundError):
            await service.cancel_task(CancelTaskRequest(id=task.id), intruder)
    assert agent.cancel_calls == []

    async def pauser(context: RequestContext, updater: TaskUpdater) -> None:
        await updater.require_input("more?")

    service = make_service(pauser)
    paused = await service.send_message(send(), ALICE)  # stored only: the store path
    assert isinstance(paused, Task)
    with pytest.raises(TaskNotFoundError):
        await service.cancel_task(CancelTaskRequest(id=paused.id), BOB)
    canceled = await service.cancel_task(CancelTaskRequest(id=paused.id), ALICE)
    assert canceled.status.state is TaskState.CANCELED


@pytest.mark.parametrize("pause", [TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED])
async def test_paused_tasks_cancel_without_a_capacity_slot(
    make_service: ServiceFactory, pause: TaskState
) -> None:
    gate = asyncio.Event()

    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        if context.text == "pause":
            await updater.update_status(pause, "waiting for you")
            return
        await gate.wait()

    service = make_service(agent, config=ManagerConfig(max_background_tasks=2))
    paused = await service.send_message(send("pause"), CALL)
    assert isinstance(paused, Task)
    assert paused.status.state is pause
    for _ in range(2):
        await service.send_message(send("slow", immediate=True), CALL)
    with pytest.raises(ServerBusyError):
        await service.send_message(send("slow", immediate=True), CALL)
    canceled = await service.cancel_task(CancelTaskRequest(id=paused.id), CALL)
    assert canceled.status.state is TaskState.CANCELED
    assert service.manager.active_count == 2
    stored = await service.get_task(GetTaskRequest(id=paused.id), CALL)
    assert stored.status.state is TaskState.CANCELED
    gate.set()


async def test_a_thread_agent_polling_the_token_stops(make_service: ServiceFactory) -> None:
    started = threading.Event()
    stopped = threading.Event()
    steps: list[int] = []

    async def agent(context: RequestContext) -> str:
        def loop() -> str:
            started.set()
            while not context.cancellation.cancelled:
                steps.append(1)
                time.sleep(0.005)
            stopped.set()
            return "stopped"

        return await asyncio.to_thread(loop)

    service = make_service(agent)
    task = await service.send_message(send(immediate=True), CALL)
    assert isinstance(task, Task)
    await asyncio.to_thread(started.wait, 5)
    await service.cancel_task(CancelTaskRequest(id=task.id), CALL)
    assert await asyncio.to_thread(stopped.wait, 5)
    count = len(steps)
    await asyncio.sleep(0.05)
    assert len(steps) == count  # the loop really ended


async def test_context_to_thread_waits_for_the_thread_to_stop(
    make_service: ServiceFactory,
) -> None:
    started = threading.Event()
    thread_done = threading.Event()

    async def agent(context: RequestContext) -> str:
        def loop() -> str:
            started.set()
            while not context.cancelled:
                time.sleep(0.005)
            time.sleep(0.05)  # some cleanup after noticing
            thread_done.set()
            return "stopped"

        return await context.to_thread(loop)

    service = make_service(agent)
    task = await service.send_message(send(immediate=True), CALL)
    assert isinstance(task, Task)
    await asyncio.to_thread(started.wait, 5)
    run = service.manager.active_run(task.id)
    assert run is not None
    await service.cancel_task(CancelTaskRequest(id=task.id), CALL)
    await asyncio.wait_for(run.done.wait(), 5)
    assert thread_done.is_set()  # the run ended only after its thread did


async def test_raise_if_cancelled_ends_the_run_quietly(
    make_service: ServiceFactory, caplog: pytest.LogCaptureFixture
) -> None:
    started = asyncio.Event()

    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        started.set()
        while True:
            context.cancellation.raise_if_cancelled()
            await asyncio.shield(asyncio.sleep(0.005))

    service = make_service(agent)
    task = await service.send_message(send(immediate=True), CALL)
    assert isinstance(task, Task)
    await asyncio.wait_for(started.wait(), 5)
    with caplog.at_level(logging.WARNING, logger="a2a_core"):
        await service.cancel_task(CancelTaskRequest(id=task.id), CALL)
        await eventually(lambda: service.manager.active_count == 0)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    stored = await service.get_task(GetTaskRequest(id=task.id), CALL)
    assert stored.status.state is TaskState.CANCELED


async def test_slow_or_failing_agent_cancel_hooks_do_not_block_cancel(
    make_service: ServiceFactory,
) -> None:
    class SlowCancel(Sleeper):
        async def cancel(self, context: RequestContext, updater: TaskUpdater) -> None:
            await asyncio.sleep(3600)

    class BadCancel(Sleeper):
        async def cancel(self, context: RequestContext, updater: TaskUpdater) -> None:
            raise RuntimeError("cleanup failed")

    for agent in (SlowCancel(), BadCancel()):
        service = make_service(agent, config=ManagerConfig(cancel_grace_seconds=0.05))
        task = await _start(agent, service)
        canceled = await asyncio.wait_for(
            service.cancel_task(CancelTaskRequest(id=task.id), CALL), 5
        )
        assert canceled.status.state is TaskState.CANCELED
        await asyncio.wait_for(agent.interrupted.wait(), 5)


async def test_an_agent_confirming_the_cancel_is_not_an_error(
    make_service: ServiceFactory, caplog: pytest.LogCaptureFixture
) -> None:
    class Polite(Sleeper):
        async def cancel(self, context: RequestContext, updater: TaskUpdater) -> None:
            await updater.cancel("ok, stopping")  # the official SDK's convention

    agent = Polite()
    service = make_service(agent)
    task = await _start(agent, service)
    with caplog.at_level(logging.WARNING, logger="a2a_core"):
        canceled = await service.cancel_task(CancelTaskRequest(id=task.id), CALL)
    assert canceled.status.state is TaskState.CANCELED
    assert not caplog.records
