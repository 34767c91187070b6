"""The run's lock (every agent event takes it): one holder at a time, first come first
served, and a cancelled waiter never keeps the lock nor loses it for the others."""

from __future__ import annotations

import asyncio

import pytest
from a2a_core.server import RequestContext, TaskUpdater
from a2a_core.server.run import _RunLock  # pyright: ignore[reportPrivateUsage]
from a2a_core.server.task_state import IllegalTransitionError
from a2a_core.types import Task, TaskState
from server_core_support import CALL, ServiceFactory, eventually, send


async def _take(lock: _RunLock, name: str, order: list[str], hold: asyncio.Event) -> None:
    async with lock:
        order.append(name)
        await hold.wait()


async def test_one_holder_at_a_time_in_arrival_order() -> None:
    lock = _RunLock()
    order: list[str] = []
    holders = 0
    most = 0

    async def worker(name: str) -> None:
        nonlocal holders, most
        async with lock:
            holders += 1
            most = max(most, holders)
            order.append(name)
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            holders -= 1

    await asyncio.gather(*(worker(str(n)) for n in range(20)))
    assert most == 1
    assert order == [str(n) for n in range(20)]
    async with lock:  # free again
        pass


async def test_a_waiter_cancelled_while_queued_is_skipped() -> None:
    lock = _RunLock()
    order: list[str] = []
    release = asyncio.Event()
    first = asyncio.create_task(_take(lock, "a", order, release))
    await asyncio.sleep(0)
    second = asyncio.create_task(_take(lock, "b", order, release))
    third = asyncio.create_task(_take(lock, "c", order, release))
    await asyncio.sleep(0)
    release.set()  # "a" releases the lock before the cancelled waiter runs again
    second.cancel()
    await first
    with pytest.raises(asyncio.CancelledError):
        await second
    await third
    assert order == ["a", "c"]
    async with lock:
        pass


async def test_a_waiter_cancelled_after_being_handed_the_lock_passes_it_on() -> None:
    lock = _RunLock()
    order: list[str] = []
    await lock.__aenter__()
    never = asyncio.Event()
    second = asyncio.create_task(_take(lock, "b", order, never))
    third = asyncio.create_task(_take(lock, "c", order, asyncio.Event()))
    await asyncio.sleep(0)
    await lock.__aexit__(None, None, None)  # hands the lock to "b"
    second.cancel()  # before "b" runs again
    with pytest.raises(asyncio.CancelledError):
        await second
    await asyncio.sleep(0)
    assert order == ["c"]  # "c" holds it now
    third.cancel()
    with pytest.raises(asyncio.CancelledError):
        await third
    async with lock:  # "c" released it when cancelled inside
        pass


async def test_an_agent_event_waits_for_the_run_lock_and_releases_it_even_when_refused(
    make_service: ServiceFactory,
) -> None:
    """``emit`` takes a free lock without a coroutine, else queues; it always lets go."""
    go = asyncio.Event()
    outcome: list[str] = []

    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        await go.wait()
        await updater.add_artifact("while locked", artifact_id="a")
        outcome.append("applied")
        await updater.complete()
        try:
            await updater.add_artifact("too late", artifact_id="b")
        except IllegalTransitionError:
            outcome.append("refused")

    service = make_service(agent)
    task = await service.send_message(send(immediate=True), CALL)
    assert isinstance(task, Task)
    await eventually(
        lambda: (
            (run := service.manager.active_run(task.id)) is not None
            and run.state is TaskState.WORKING
        )
    )
    run = service.manager.active_run(task.id)
    assert run is not None
    async with run._lock:  # pyright: ignore[reportPrivateUsage]  # a flush holding it
        go.set()
        for _ in range(5):
            await asyncio.sleep(0)
        assert outcome == []  # the event waits for the lock
    await eventually(lambda: outcome == ["applied", "refused"])
    assert run._lock.take()  # pyright: ignore[reportPrivateUsage]  # free after the refusal
