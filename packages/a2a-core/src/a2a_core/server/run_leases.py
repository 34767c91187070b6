"""The leases of this instance's runs: the task manager's one way to leases and orphans.

On a store that keeps leases (``TaskLeases``), a run takes its task's lease
before its agent starts (``acquire``), lets it go before a pause is announced
(``let_go``) and releases it when it ends (``release``); meanwhile the
``LeaseKeeper`` renews it. A refused lease means another instance runs the
task: the request is refused, unless the task is paused and that instance is
letting go, which is waited for. A run whose lease another instance took (this
one was frozen past the expiry and a survivor settled the task) is stopped
(``lost``). A message continuing a task whose instance died settles it and is
refused (``refuse_orphan``): running the agent again could repeat its side
effects.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Generic, Protocol, TypeVar

from ..contracts.task_store import StoredTask, TaskStore
from ..errors import UnsupportedOperationError
from ..stores.cluster import Lease, TaskLeases
from ..types import Task, TaskState
from .cancellation import CancellationToken
from .config import ManagerConfig
from .leases import LeaseKeeper, LeaseSettings

__all__ = ["LeasedRun", "PushRecovery", "RunLeases", "WriteStatus"]


class LeasedRun(Protocol):
    """What a lease needs of a run: its task and a way to stop it."""

    @property
    def task_id(self) -> str: ...

    @property
    def owner(self) -> str | None: ...

    @property
    def token(self) -> CancellationToken: ...

    def interrupt(self) -> None:
        """Stop the run's agent (it was told through ``token`` first)."""
        ...


PushRecovery = Callable[[StoredTask], Awaitable[object]]
"""Queues again the push deliveries a dead instance had not made for a task."""

WriteStatus = Callable[[StoredTask, TaskState, str | None], Awaitable[Task]]
"""Saves a status for a task no run has and publishes it everywhere (``StatusWriter``)."""

R = TypeVar("R", bound=LeasedRun)


class RunLeases(Generic[R]):
    """This instance's runs' leases, renewed by a ``LeaseKeeper``, and the orphans they reveal."""

    def __init__(
        self,
        store: TaskStore,
        backend: TaskLeases,
        instance: str,
        config: ManagerConfig,
        write_status: WriteStatus,
    ) -> None:
        settings = LeaseSettings(
            config.lease_seconds, config.lease_renew_seconds, config.orphan_sweep_seconds
        )
        self.keeper = LeaseKeeper(
            store,
            backend,
            instance,
            settings,
            active=self._renewable,
            write_failed=self._settle,
            on_lost=self.lost,
        )
        """Takes, renews and releases the leases in the store; sweeps for expired ones."""
        self.push_recovery: PushRecovery | None = None
        """Delivers what a dead instance's push lanes still had (set by the service);
        called before its orphan is settled."""
        self._grace = config.cancel_grace_seconds
        self._write_status = write_status
        self._leased: dict[str, tuple[R, float]] = {}
        """Task id -> the run whose lease this instance has, and when (``time.monotonic()``)
        it was taken: a renewal that began earlier cannot speak for it."""

    # -- a run's lease ---------------------------------------------------------------
    async def acquire(self, run: R, *, paused: bool = False) -> None:
        """Take the run's lease before its agent starts; ``UnsupportedOperationError``
        when another instance runs the task.

        ``paused``: the task waits for input, so a live lease elsewhere is a run that
        has just paused and is letting go (its followers may hear of the pause first):
        wait for it, up to ``cancel_grace_seconds``.
        """
        live = await self.keeper.acquire(run.task_id, run.owner)
        if live is not None and paused:
            live = await self._acquire_when_let_go(run)
        if live is not None:
            raise UnsupportedOperationError(
                f"Task {run.task_id} is running on instance {live.instance}; "
                "wait for it to pause or cancel it"
            )
        self._leased[run.task_id] = (run, time.monotonic())

    async def _acquire_when_let_go(self, run: R) -> Lease | None:
        """Retry a refused lease within the grace; the live lease when it stays."""
        keeper = self.keeper
        live: Lease | None = None

        async def taken() -> bool:
            nonlocal live
            live = await keeper.acquire(run.task_id, run.owner)
            return live is None

        await _within_grace(self._grace, taken)
        return live

    def release(self, run: R) -> None:
        """Drop the lease of a run that ended or never started (in the background)."""
        if self._forget(run):
            self.keeper.release(run.task_id)

    async def let_go(self, run: R) -> None:
        """A run that paused drops its lease before the pause is announced.

        The answer may come through another instance as soon as the client sees the
        question; a lease this (returning) run still had would refuse it there.
        """
        if self._forget(run):
            await self.keeper.release_now(run.task_id)

    def leased(self, run: R) -> bool:
        """Whether this instance has ``run``'s lease."""
        entry = self._leased.get(run.task_id)
        return entry is not None and entry[0] is run

    def _forget(self, run: R) -> bool:
        if not self.leased(run):
            return False
        del self._leased[run.task_id]
        return True

    def lost(self, task_id: str, renewal_began: float) -> None:
        """Another instance took a run's lease (this one was frozen): the task was settled
        there, so the run stops.

        ``renewal_began`` (``time.monotonic()``) guards a later run of the same task
        (continued after input-required): a renewal older than its lease says nothing
        about it.
        """
        entry = self._leased.get(task_id)
        if entry is None or entry[1] >= renewal_began:
            return
        del self._leased[task_id]
        run = entry[0]
        run.token.cancel()
        run.interrupt()

    def _renewable(self) -> list[str]:
        """The tasks whose lease this instance has: only those are renewed.

        A run still taking its lease is left out, or the renewal racing it would
        find no lease and stop the run as if another instance had taken it.
        """
        return list(self._leased)

    # -- the keeper's upkeep -----------------------------------------------------------
    def start(self) -> None:
        """Start renewing and sweeping (idempotent; needs a running loop)."""
        self.keeper.start()

    def stop(self) -> None:
        """Stop renewing and sweeping (shutdown: the runs are being stopped)."""
        self.keeper.stop_renewing()

    async def aclose(self) -> None:
        """Stop the upkeep and wait for the releases under way."""
        await self.keeper.aclose()

    # -- orphans -----------------------------------------------------------------------
    async def refuse_orphan(self, stored: StoredTask) -> bool:
        """A task no run of this instance has, whose instance died (expired lease): settle
        it now and refuse the message (``UnsupportedOperationError``).

        Restarting the agent silently would run it twice if the first run still
        has side effects under way; the client is told what happened instead. True when
        another instance was settling it: it has let go now, so read the task again
        (FAILED, unless it had ended before).
        """
        task = stored.task
        if task.status.state.is_interrupted:
            return False
        keeper = self.keeper
        lease = await keeper.leases.lease_of(task.id)
        if lease is None:
            return False  # no run anywhere has it: an open task (``leaves_task_open``) goes on
        now = time.time()
        if lease.expires_at <= now:
            if await keeper.settle(lease, now):
                raise UnsupportedOperationError(
                    f"Task {task.id} was left {task.status.state.value} by a server instance "
                    "that stopped before it finished; it cannot be continued. Start a new "
                    "task in the same context"
                )
            # Renewed after all, or another settler took it first (or the task had ended).
        elif lease.settler is None:
            raise UnsupportedOperationError(
                f"Task {task.id} is running on instance {lease.instance}; "
                "wait for it to pause or cancel it"
            )
        await self._wait_for_settler(task.id)
        return True

    async def _wait_for_settler(self, task_id: str) -> None:
        """Wait up to ``cancel_grace_seconds`` for the instance settling the task to let go.

        It lets go once the FAILED status is saved and published, so the refusal
        that follows never reaches a client while the task still reads WORKING.
        """
        keeper = self.keeper
        lease: Lease | None = None

        async def let_go() -> bool:
            nonlocal lease
            lease = await keeper.leases.lease_of(task_id)
            return lease is None or lease.settler is None or lease.expires_at <= time.time()

        if await let_go() or await _within_grace(self._grace, let_go):
            return
        assert lease is not None  # let_go said False
        raise UnsupportedOperationError(
            f"Task {task_id} was left running by a server instance that stopped "
            f"({lease.ran_on}); instance {lease.settler} is settling it as failed, "
            "so it cannot be continued. Start a new task in the same context"
        )

    async def _settle(self, stored: StoredTask, text: str) -> None:
        """The sweeper fails an orphaned task: saved, published to every instance's streams.

        Push deliveries the dead instance still had are queued again first.
        """
        if self.push_recovery is not None:
            await self.push_recovery(stored)
        await self._write_status(stored, TaskState.FAILED, text)


async def _within_grace(grace: float, done: Callable[[], Awaitable[bool]]) -> bool:
    """Ask ``done()`` after 10 ms, then at doubling pauses up to 200 ms, until it says
    True or ``grace`` seconds have passed; whether it said True.

    How a request waits for another instance to let go of a task (a run that has
    just paused, an orphan's settler): the time that instance has to stop cooperatively.
    """
    deadline = time.monotonic() + grace
    delay = 0.01
    while True:
        await asyncio.sleep(delay)
        if await done():
            return True
        if time.monotonic() >= deadline:
            return False
        delay = min(delay * 2, 0.2)
