"""Bounded background work, launches that fail cleanly, and cooperative shutdown."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from a2a_core.errors import A2AError, InternalError, ServerBusyError
from a2a_core.server import A2AService, ManagerConfig, RequestContext, TaskUpdater
from a2a_core.stores import MemoryTaskStore, StoredTask, TaskQuery
from a2a_core.types import CancelTaskRequest, GetTaskRequest, Task, TaskState
from server_core_support import CALL, ServiceFactory, eventually, send


@pytest.mark.parametrize("bad", [0, -1])
def test_capacity_must_be_positive(bad: int) -> None:
    with pytest.raises(ValueError, match="max_background_tasks"):
        ManagerConfig(max_background_tasks=bad)


async def _all_tasks(store: MemoryTaskStore) -> list[Task]:
    return (await store.list(TaskQuery(page_size=1000), None)).tasks


async def test_full_capacity_is_a_retryable_structured_error(make_service: ServiceFactory) -> None:
    gate = asyncio.Event()

    async def agent(context: RequestContext) -> str:
        await gate.wait()
        return "ok"

    store = MemoryTaskStore()
    service = make_service(agent, store=store, config=ManagerConfig(max_background_tasks=3))
    for _ in range(3):
        await service.send_message(send(immediate=True), CALL)
    for attempt in (
        service.send_message(send(immediate=True), CALL),
        service.send_message(send(), CALL),
        service.stream_message(send(), CALL),
    ):
        with pytest.raises(ServerBusyError) as caught:
            await attempt
        assert caught.value.data == {
            "reason": "background_capacity_exhausted",
            "retryable": True,
            "max_background_tasks": 3,
        }
    assert len(await _all_tasks(store)) == 3  # refused sends left nothing behind
    gate.set()
    await eventually(lambda: service.manager.active_count == 0)
    task = await service.send_message(send(), CALL)
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED


async def test_a_cancel_right_after_a_non_blocking_send_frees_the_slot(
    make_service: ServiceFactory,
) -> None:
    """The agent's task may not have started when the cancel reaches it (no yield between).

    Python 3.12's ``wait_for`` runs the agent's ``cancel`` without yielding, so the run
    was canceled before its first step, skipped its cleanup and held its slot for good:
    every later send was refused as busy.
    """
    entered: list[str] = []

    async def agent(context: RequestContext) -> str:
        entered.append(context.text)
        await asyncio.sleep(30)
        return "late"

    service = make_service(agent, config=ManagerConfig(max_background_tasks=1))
    for _ in range(3):
        task = await service.send_message(send(immediate=True), CALL)
        assert isinstance(task, Task)
        canceled = await service.cancel_task(CancelTaskRequest(id=task.id), CALL)
        assert canceled.status.state is TaskState.CANCELED
        await eventually(lambda: service.manager.active_count == 0)
        stored = await service.get_task(GetTaskRequest(id=task.id), CALL)
        assert stored.status.state is TaskState.CANCELED


class SlowStore(MemoryTaskStore):
    """A store whose writes yield to the loop, as a networked store's would."""

    async def create(self, task: Task, owner: str | None) -> StoredTask:
        await asyncio.sleep(0.001)
        return await super().create(task, owner)


async def test_concurrent_sends_never_exceed_capacity(make_service: ServiceFactory) -> None:
    gate = asyncio.Event()
    running = 0
    peak = 0

    async def agent(context: RequestContext) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await gate.wait()
        running -= 1
        return "ok"

    store = SlowStore()
    service = make_service(agent, store=store, config=ManagerConfig(max_background_tasks=5))
    results = await asyncio.gather(
        *(service.send_message(send(immediate=True), CALL) for _ in range(20)),
        return_exceptions=True,
    )
    accepted = [r for r in results if isinstance(r, Task)]
    refused = [r for r in results if isinstance(r, ServerBusyError)]
    assert len(accepted) == 5
    assert len(refused) == 15
    assert {t.id for t in await _all_tasks(store)} == {t.id for t in accepted}
    await eventually(lambda: running == 5)
    gate.set()
    await eventually(lambda: service.manager.active_count == 0)
    assert peak == 5


class FailingStore(MemoryTaskStore):
    """Refuses to create tasks (a database that is down)."""

    def __init__(self) -> None:
        super().__init__()
        self.attempts = 0

    async def create(self, task: Task, owner: str | None) -> StoredTask:
        self.attempts += 1
        raise OSError("database unavailable")


@pytest.mark.parametrize("immediate", [True, False])
async def test_a_store_failure_at_launch_is_a_typed_error_and_leaves_nothing(
    make_service: ServiceFactory, immediate: bool
) -> None:
    async def agent(context: RequestContext) -> str:
        return "never stored"

    store = FailingStore()
    service = make_service(agent, store=store)
    with pytest.raises(InternalError) as caught:
        await service.send_message(send(immediate=immediate), CALL)
    assert "database unavailable" not in caught.value.message
    assert store.attempts >= 1
    await eventually(lambda: service.manager.active_count == 0)
    assert await _all_tasks(store) == []


@pytest.mark.parametrize("mode", ["immediate", "blocking", "stream"])
async def test_a_failed_task_launch_is_rolled_back(
    make_service: ServiceFactory, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    calls: list[str] = []

    async def agent(context: RequestContext) -> str:
        calls.append(context.text)
        return "ran"

    store = MemoryTaskStore()
    service = make_service(agent, store=store)
    loop = asyncio.get_running_loop()
    original = loop.create_task

    def failing_create_task(coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        if kwargs.get("name", "").startswith("a2a-task-"):
            coro.close()
            raise RuntimeError("no more tasks")
        return original(coro, **kwargs)

    monkeypatch.setattr(loop, "create_task", failing_create_task)
    attempt = (
        service.stream_message(send(), CALL)
        if mode == "stream"
        else service.send_message(send(immediate=mode == "immediate"), CALL)
    )
    with pytest.raises(A2AError) as caught:
        await attempt
    assert isinstance(caught.value, InternalError)
    assert service.manager.active_count == 0
    assert service.manager.bus.subscriber_count() == 0
    assert await _all_tasks(store) == []
    monkeypatch.undo()
    task = await service.send_message(send("again"), CALL)
    assert isinstance(task, Task)
    assert calls == ["again"]


async def test_a_failed_continuation_launch_restores_the_paused_task(
    make_service: ServiceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        await updater.require_input("name?")

    service = make_service(agent)
    paused = await service.send_message(send(), CALL)
    assert isinstance(paused, Task)
    loop = asyncio.get_running_loop()
    original = loop.create_task

    def failing_create_task(coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        if kwargs.get("name", "").startswith("a2a-task-"):
            coro.close()
            raise RuntimeError("no more tasks")
        return original(coro, **kwargs)

    monkeypatch.setattr(loop, "create_task", failing_create_task)
    with pytest.raises(InternalError):
        await service.send_message(send("Ada", task_id=paused.id), CALL)
    monkeypatch.undo()
    stored = await service.get_task(GetTaskRequest(id=paused.id), CALL)
    assert stored.status.state is TaskState.INPUT_REQUIRED
    assert [m.text for m in stored.history] == [m.text for m in paused.history]
    assert service.manager.active_count == 0


# -- shutdown -----------------------------------------------------------------------------


class WatchedStore(MemoryTaskStore):
    """Records whether it was closed while an agent was still running."""

    def __init__(self) -> None:
        super().__init__()
        self.running = 0
        self.closed_while_running: bool | None = None

    async def aclose(self) -> None:
        self.closed_while_running = self.running > 0


async def test_shutdown_cancels_and_waits_for_agents_before_closing_the_store() -> None:
    from server_core_support import make_card

    store = WatchedStore()
    cleaned: list[str] = []
    started = 0

    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        nonlocal started
        store.running += 1
        started += 1
        try:
            await updater.start_work()
            await asyncio.sleep(3600)
        finally:
            await asyncio.sleep(0.05)  # cleanup that takes a while (and awaits)
            cleaned.append(context.task_id)
            store.running -= 1

    service = A2AService(agent, make_card(), store=store)
    ids = []
    for _ in range(3):
        task = await service.send_message(send(immediate=True), CALL)
        assert isinstance(task, Task)
        ids.append(task.id)
    await eventually(lambda: started == 3)
    await asyncio.wait_for(service.aclose(), 5)
    assert store.closed_while_running is False
    assert sorted(cleaned) == sorted(ids)
    for task_id in ids:
        stored = await store.get(task_id, None)
        assert stored is not None
        assert stored.task.status.state is TaskState.CANCELED
    with pytest.raises(ServerBusyError) as caught:
        await service.send_message(send(), CALL)
    assert caught.value.data is not None
    assert caught.value.data["retryable"] is True


async def test_shutdown_waits_for_threads_run_through_the_context() -> None:
    from server_core_support import make_card

    store = WatchedStore()
    started = threading.Event()

    async def agent(context: RequestContext) -> str:
        def work() -> str:
            store.running += 1
            started.set()
            while not context.cancelled:
                time.sleep(0.005)
            time.sleep(0.05)
            store.running -= 1
            return "stopped"

        return await context.to_thread(work)

    service = A2AService(agent, make_card(), store=store)
    await service.send_message(send(immediate=True), CALL)
    await asyncio.to_thread(started.wait, 5)
    await asyncio.wait_for(service.aclose(), 5)
    assert store.closed_while_running is False


async def test_shutdown_is_bounded_when_an_agent_will_not_stop() -> None:
    from server_core_support import make_card

    store = WatchedStore()
    started = asyncio.Event()
    stubborn = True

    async def agent(context: RequestContext) -> str:
        store.running += 1
        started.set()
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                if not stubborn:
                    raise

    service = A2AService(
        agent, make_card(), store=store, config=ManagerConfig(shutdown_grace_seconds=0.1)
    )
    task = await service.send_message(send(immediate=True), CALL)
    assert isinstance(task, Task)
    await asyncio.wait_for(started.wait(), 5)
    run = service.manager.active_run(task.id)
    assert run is not None
    assert run.handle is not None
    await asyncio.wait_for(service.aclose(), 5)  # two graces, then it gives up
    assert store.closed_while_running is True
    stubborn = False
    run.handle.cancel()
    await asyncio.wait([run.handle], timeout=5)
    assert run.handle.done()
