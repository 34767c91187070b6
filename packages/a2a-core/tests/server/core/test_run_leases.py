"""``RunLeases``, the task manager's interface to leases, over a store kept in memory.

A fake ``TaskLeases`` backend stands in for sqlite, redis and postgresql (their
contract is tested against the real stores in ``tests/stores/test_leases.py``):
a run acquires its lease, a lease refused names the instance running the task,
a run whose lease another instance took is stopped (and only that run), and a
message continuing an orphan settles it and is refused.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass, field

import pytest
from a2a_core.errors import UnsupportedOperationError
from a2a_core.server import A2AService, AgentExecutor, RequestContext, TaskUpdater
from a2a_core.server.cancellation import CancellationToken
from a2a_core.server.config import ManagerConfig
from a2a_core.server.run_leases import RunLeases
from a2a_core.stores import MemoryTaskStore, StoredTask
from a2a_core.stores.cluster import Lease, TaskLeases
from a2a_core.testing.fakes import make_task
from a2a_core.types import Task, TaskState
from server_core_support import CALL, ServiceFactory, eventually, send

CONFIG = ManagerConfig(
    instance_id="A",
    lease_seconds=60.0,
    lease_renew_seconds=30.0,
    orphan_sweep_seconds=30.0,
    cancel_grace_seconds=1.0,
)
"""Slow upkeep: the tests renew and settle when they choose."""


class FakeLeases(TaskLeases):
    """The ``TaskLeases`` contract in a dict; ``renew_leases`` can be paused midway."""

    def __init__(self) -> None:
        self.leases: dict[str, Lease] = {}
        self.renewing = asyncio.Event()
        """Set when a renewal reached its first gate."""
        self.before_check: asyncio.Event | None = None
        self.after_check: asyncio.Event | None = None

    async def acquire_lease(
        self, task_id: str, owner: str | None, instance: str, until: float, now: float
    ) -> Lease | None:
        live = self.leases.get(task_id)
        if live is not None and live.instance != instance and live.expires_at > now:
            return live
        self.leases[task_id] = Lease(task_id, owner, instance, until)
        return None

    async def renew_leases(self, instance: str, task_ids: list[str], until: float) -> list[str]:
        if self.before_check is not None:
            self.renewing.set()
            await self.before_check.wait()
        lost: list[str] = []
        for task_id in task_ids:
            lease = self.leases.get(task_id)
            if lease is None or lease.instance != instance:
                lost.append(task_id)
            else:
                self.leases[task_id] = dataclasses.replace(lease, expires_at=until)
        if self.after_check is not None:
            await self.after_check.wait()
        return lost

    async def release_lease(self, task_id: str, instance: str) -> None:
        lease = self.leases.get(task_id)
        if lease is not None and lease.instance == instance:
            del self.leases[task_id]

    async def expired_leases(self, now: float, limit: int) -> list[Lease]:
        expired = [lease for lease in self.leases.values() if lease.expires_at <= now]
        return sorted(expired, key=lambda lease: lease.expires_at)[:limit]

    async def take_expired_lease(self, lease: Lease, now: float, holder: str, until: float) -> bool:
        current = self.leases.get(lease.task_id)
        if current is None or current.instance != lease.instance or current.expires_at > now:
            return False
        self.leases[lease.task_id] = Lease(lease.task_id, lease.owner, holder, until)
        return True

    async def lease_of(self, task_id: str) -> Lease | None:
        return self.leases.get(task_id)


class LeasingMemoryStore(MemoryTaskStore, FakeLeases):
    """A memory store that also keeps leases, as a store shared by several instances does."""

    def __init__(self) -> None:
        MemoryTaskStore.__init__(self)
        FakeLeases.__init__(self)


@dataclass
class FakeRun:
    """What a lease needs of a run (``LeasedRun``)."""

    task_id: str
    owner: str | None = None
    token: CancellationToken = field(default_factory=CancellationToken)
    interrupted: bool = False

    def interrupt(self) -> None:
        self.interrupted = True


@dataclass
class Written:
    """What the settler was asked to write, in order."""

    calls: list[tuple[str, str, TaskState | None, str | None]] = field(default_factory=lambda: [])

    async def write_status(self, stored: StoredTask, state: TaskState, text: str | None) -> Task:
        self.calls.append(("status", stored.task.id, state, text))
        return stored.task

    async def recover(self, stored: StoredTask) -> None:
        self.calls.append(("push", stored.task.id, None, None))


def run_leases(backend: FakeLeases, written: Written | None = None) -> RunLeases[FakeRun]:
    written = written or Written()
    return RunLeases(MemoryTaskStore(), backend, "A", CONFIG, written.write_status)


async def test_a_run_acquires_its_lease_and_releases_it_when_it_ends() -> None:
    backend = FakeLeases()
    leases = run_leases(backend)
    run = FakeRun("t1")
    try:
        await leases.acquire(run)
        assert leases.leased(run)
        assert (await backend.lease_of("t1")) is not None
        leases.release(run)
        assert not leases.leased(run)
        await eventually(lambda: "t1" not in backend.leases)
    finally:
        await leases.aclose()


async def test_a_lease_live_elsewhere_refuses_the_run_unless_a_pause_lets_it_go() -> None:
    backend = FakeLeases()
    now = time.time()
    await backend.acquire_lease("t1", None, "B", now + 60, now)
    leases = run_leases(backend)
    try:
        with pytest.raises(UnsupportedOperationError, match="running on instance B"):
            await leases.acquire(FakeRun("t1"))

        async def let_go() -> None:
            await asyncio.sleep(0.1)
            await backend.release_lease("t1", "B")

        letting_go = asyncio.create_task(let_go())
        paused = FakeRun("t1")
        await leases.acquire(paused, paused=True)  # B just paused: waited for
        await letting_go
        assert leases.leased(paused)
    finally:
        await leases.aclose()


async def test_a_run_whose_lease_another_instance_took_is_stopped() -> None:
    backend = FakeLeases()
    leases = run_leases(backend)
    run = FakeRun("t1")
    try:
        await leases.acquire(run)
        await asyncio.sleep(0.05)  # the keeper's first upkeep, at its start, is done
        # A froze; B settled the task and has its lease now.
        backend.leases["t1"] = Lease("t1", None, "A#settling-by:B", time.time() + 60)
        await leases.keeper.renew()
        assert run.token.cancelled
        assert run.interrupted
        assert not leases.leased(run)
        leases.release(run)  # the run ends: B's lease stays B's
        await asyncio.sleep(0.05)
        assert backend.leases["t1"].settler == "B"
    finally:
        await leases.aclose()


async def test_a_renewal_older_than_a_lease_does_not_stop_its_run() -> None:
    """A paused run lets go; the answer's run takes the lease while a renewal that listed
    the first run is under way: the renewal finds the first lease gone, which says
    nothing about the second run."""
    backend = FakeLeases()
    leases = run_leases(backend)
    first, second = FakeRun("t1"), FakeRun("t1")
    try:
        await leases.acquire(first)
        await asyncio.sleep(0.05)  # the keeper's first upkeep, at its start, is done
        backend.before_check, backend.after_check = asyncio.Event(), asyncio.Event()
        renewal = asyncio.create_task(leases.keeper.renew())
        await asyncio.wait_for(backend.renewing.wait(), 5)  # it listed t1
        await leases.let_go(first)
        backend.before_check.set()  # the store finds t1 not A's...
        await asyncio.sleep(0.01)
        await leases.acquire(second)  # ...and the answer's run takes it
        backend.after_check.set()
        await renewal
        assert leases.leased(second)
        assert not second.token.cancelled
        assert not second.interrupted
        assert not first.token.cancelled  # it let go: nothing to stop
    finally:
        await leases.aclose()


async def test_a_message_to_an_orphan_settles_it_and_is_refused() -> None:
    store = LeasingMemoryStore()
    written = Written()
    leases: RunLeases[FakeRun] = RunLeases(store, store, "A", CONFIG, written.write_status)
    leases.push_recovery = written.recover
    await store.create(make_task("orphan"), None)
    now = time.time()
    await store.acquire_lease("orphan", None, "B", now - 1, now - 60)  # B died
    stored = await store.get("orphan", None)
    assert stored is not None
    try:
        with pytest.raises(UnsupportedOperationError, match="cannot be continued"):
            await leases.refuse_orphan(stored)
        assert [call[:3] for call in written.calls] == [
            ("push", "orphan", None),  # what B's push lanes still had goes out first
            ("status", "orphan", TaskState.FAILED),
        ]
        assert "(B) stopped" in (written.calls[1][3] or "")
        assert await store.lease_of("orphan") is None  # the settler let go
        assert leases.keeper.settled_count == 1
    finally:
        await leases.aclose()


class CountingLeases(LeasingMemoryStore):
    """Counts the store calls a sweep makes."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    async def expired_leases(self, now: float, limit: int) -> list[Lease]:
        self.reads += 1
        return await super().expired_leases(now, limit)


async def test_one_sweep_settles_every_orphan_of_a_dead_instance() -> None:
    """250 orphans (more than a sweep reads at once) are all settled by one sweep, so a
    dead instance's tasks settle within a sweep period, not one period per hundred."""
    store = CountingLeases()
    written = Written()
    leases: RunLeases[FakeRun] = RunLeases(store, store, "A", CONFIG, written.write_status)
    now = time.time()
    ids = [f"orphan-{i:03}" for i in range(250)]
    for task_id in ids:
        await store.create(make_task(task_id), None)
        await store.acquire_lease(task_id, None, "B", now - 1, now - 60)  # B died
    try:
        assert await leases.keeper.sweep(previous_lives=False) == 250
        assert sorted(call[1] for call in written.calls) == ids
        assert {call[2] for call in written.calls} == {TaskState.FAILED}
        assert await store.expired_leases(time.time(), 1000) == []
        assert [task_id for task_id in ids if await store.lease_of(task_id)] == []  # let go
        assert store.reads <= 4  # 100 at a time, then one read that finds nothing new
    finally:
        await leases.aclose()


class Working(AgentExecutor):
    """Works until stopped."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.stopped = asyncio.Event()

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        self.started.set()
        try:
            await asyncio.sleep(3600)
        finally:
            self.stopped.set()


async def test_a_lease_lost_mid_run_stops_the_run_and_keeps_the_settled_status(
    make_service: ServiceFactory,
) -> None:
    """Through the manager: another instance settled the task FAILED and took its lease
    while this one was frozen. The next renewal stops the run and frees its slot; the
    FAILED status stays, not overwritten with CANCELED."""
    store = LeasingMemoryStore()
    agent = Working()
    service: A2AService = make_service(agent, store=store, config=CONFIG)
    manager = service.manager
    leases = manager.leases
    assert leases is not None
    task = await service.send_message(send(immediate=True), CALL)
    assert isinstance(task, Task)
    await asyncio.wait_for(agent.started.wait(), 5)
    run = manager.active_run(task.id)
    assert run is not None
    assert leases.leased(run)
    stored = await store.get(task.id, None)
    assert stored is not None
    # Instance B settles the task: its lease, then the FAILED status.
    store.leases[task.id] = Lease(task.id, None, "A#settling-by:B", time.time() + 60)
    failed = stored.task.model_copy(
        update={"status": stored.task.status.model_copy(update={"state": TaskState.FAILED})}
    )
    await store.save(failed, None, stored.version)
    await leases.keeper.renew()
    await asyncio.wait_for(agent.stopped.wait(), 5)
    await eventually(lambda: manager.active_count == 0)
    assert run.token.cancelled
    assert not leases.leased(run)
    after = await store.get(task.id, None)
    assert after is not None
    assert after.task.status.state is TaskState.FAILED
    assert store.leases[task.id].settler == "B"  # the run's end did not release B's lease
