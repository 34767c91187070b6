"""Run leases and the orphan sweeper: no task stays WORKING after the instance running it died.

Every instance serving a store that keeps leases (``sqlite://``, ``redis://``,
``postgresql://``; see ``a2a_core.stores.cluster``) takes a lease on each
task before its agent starts, renews each of its leases every
``lease_renew_seconds``, and drops it when the run ends (``RunLeases`` does
that for the task manager's runs). Each instance also
sweeps every ``orphan_sweep_seconds``: a lease past its expiry belongs to an
instance that stopped renewing (killed, frozen, cut off from the store), so
the sweeper that takes it settles the task FAILED with a message that says
so, and publishes that final status so every stream and waiting client ends.
The lease stays taken while it does (handed over, never deleted first), so a
message continuing the task in that moment waits for the FAILED status
instead of finding the task free and running its agent again.
A single-instance store (``sqlite://``) settles every lease of a previous
life at startup instead of waiting for it to expire.

An instance that finds one of its own leases taken by a sweeper (it was
frozen too long) stops that run: the task has been settled elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from ..contracts.task_store import ConcurrentUpdateError, StoredTask, TaskStore
from ..stores.cluster import Lease, TaskLeases
from .task_state import IllegalTransitionError

__all__ = ["LeaseKeeper", "LeaseSettings", "new_instance_id", "orphan_text"]

logger = logging.getLogger("a2a_core.server")

_SWEEP_BATCH = 100
_SETTLE_ATTEMPTS = 3


def new_instance_id() -> str:
    """A readable id unique to this service instance: host, process id and a random tag."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


def orphan_text(instance: str) -> str:
    """The status message of a task settled because its instance stopped renewing its lease."""
    return (
        f"The server instance running this task ({instance}) stopped (it crashed, was "
        "killed or lost its store connection) before the task finished; the task was "
        "settled as failed. Send the request again as a new task."
    )


@dataclass(frozen=True, slots=True)
class LeaseSettings:
    """How long leases last, how often they are renewed, how often orphans are looked for."""

    lease_seconds: float = 30.0
    renew_seconds: float = 10.0
    sweep_seconds: float = 10.0

    def __post_init__(self) -> None:
        if self.lease_seconds <= 0 or self.renew_seconds <= 0 or self.sweep_seconds <= 0:
            raise ValueError("lease, renew and sweep periods must be > 0")
        if self.renew_seconds >= self.lease_seconds:
            raise ValueError("leases must be renewed more often than they expire")


class LeaseKeeper:
    """Takes, renews and releases this instance's leases; sweeps the store for expired ones.

    ``active`` lists the task ids this instance has a lease on (renewed each
    period); ``write_failed(stored, text)`` saves an orphan as FAILED and
    publishes that final status everywhere (``StatusWriter.write_status``);
    ``on_lost(task_id, renewal_began)`` stops a local run whose lease another
    instance took (``renewal_began``: ``time.monotonic()`` when that renewal
    read the leased runs, so a run leased since is not stopped).
    """

    def __init__(
        self,
        store: TaskStore,
        leases: TaskLeases,
        instance: str,
        settings: LeaseSettings,
        *,
        active: Callable[[], Iterable[str]],
        write_failed: Callable[[StoredTask, str], Awaitable[object]],
        on_lost: Callable[[str, float], None],
    ) -> None:
        self.store = store
        self.leases = leases
        self.instance = instance
        self.settings = settings
        self._active = active
        self._write_failed = write_failed
        self._on_lost = on_lost
        self._loop_task: asyncio.Task[None] | None = None
        self._pending: set[asyncio.Task[None]] = set()
        self._renewing = True
        self._closed = False
        self.settled_count = 0
        """Tasks this instance settled (for tests and metrics)."""

    # -- one task ---------------------------------------------------------------------
    async def acquire(self, task_id: str, owner: str | None) -> Lease | None:
        """Take the lease before the agent starts; None, or the live lease that refused it."""
        self.start()
        now = time.time()
        until = now + self.settings.lease_seconds
        return await self.leases.acquire_lease(task_id, owner, self.instance, until, now)

    def release(self, task_id: str) -> None:
        """Drop the lease of a run that ended (in the background; the sweeper forgives misses)."""
        if self._closed:
            return
        with contextlib.suppress(RuntimeError):  # no running loop: nothing to release with
            job = asyncio.get_running_loop().create_task(self._release(task_id))
            self._pending.add(job)
            job.add_done_callback(self._pending.discard)

    async def release_now(self, task_id: str) -> None:
        """Drop a lease and wait until it is gone (a run that paused, before anyone hears of it)."""
        if not self._closed:
            await self._release(task_id)

    async def _release(self, task_id: str, instance: str | None = None) -> None:
        try:
            await self.leases.release_lease(task_id, instance or self.instance)
        except Exception:
            logger.warning("task %s: could not release its lease", task_id, exc_info=True)

    # -- the background loop ---------------------------------------------------------
    def start(self) -> None:
        """Start renewing and sweeping (idempotent; needs a running loop)."""
        if self._loop_task is None and not self._closed:
            self._loop_task = asyncio.get_running_loop().create_task(
                self._loop(), name=f"a2a-leases-{self.instance}"
            )

    def stop_renewing(self) -> None:
        """Stop renewing and sweeping, as a frozen or killed instance would (tests, drills)."""
        self._renewing = False
        if self._loop_task is not None:
            self._loop_task.cancel()

    def resume_renewing(self) -> None:
        """Renew and sweep again after ``stop_renewing``: a frozen instance waking up (drills).

        Its first renewal finds the leases another instance took meanwhile and
        stops those runs (``on_lost``); their tasks keep the status they were settled with.
        """
        if self._closed:
            return
        self._renewing = True
        stale, self._loop_task = self._loop_task, None
        if stale is not None:
            stale.cancel()
        self.start()

    async def aclose(self) -> None:
        """Stop the loop and wait for pending releases."""
        self._closed = True
        loop_task, self._loop_task = self._loop_task, None
        if loop_task is not None:
            loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await loop_task
        if self._pending:
            await asyncio.wait(list(self._pending), timeout=5.0)

    async def _loop(self) -> None:
        s = self.settings
        next_renew = next_sweep = time.monotonic()
        first = True
        while True:
            now = time.monotonic()
            if now >= next_renew:
                await self._guard(self.renew())
                next_renew = now + s.renew_seconds
            if now >= next_sweep:
                startup = first and self.leases.settles_at_startup
                await self._guard(self.sweep(previous_lives=startup))
                first = False
                # Jitter: instances started together do not sweep in lockstep.
                next_sweep = now + s.sweep_seconds * random.uniform(0.8, 1.0)
            await asyncio.sleep(max(0.0, min(next_renew, next_sweep) - time.monotonic()))

    async def _guard(self, work: Awaitable[object]) -> None:
        try:
            await work
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.warning("lease upkeep failed (retried next period)", exc_info=True)

    async def renew(self) -> None:
        """Extend every lease of this instance; stop the runs whose lease was taken."""
        if not self._renewing:
            return
        began = time.monotonic()
        task_ids = list(self._active())
        if not task_ids:
            return
        until = time.time() + self.settings.lease_seconds
        for lost in await self.leases.renew_leases(self.instance, task_ids, until):
            logger.warning("task %s: another instance took its lease; stopping the run", lost)
            self._on_lost(lost, began)

    async def sweep(self, *, previous_lives: bool = False) -> int:
        """Settle tasks whose lease expired; ``previous_lives``: every other instance's too.

        Reads the expired leases ``_SWEEP_BATCH`` at a time until none is left to try,
        so the orphans of a dead instance are all settled in this sweep, however many
        it ran: not one batch per ``sweep_seconds``. A lease tried once (taken, or found
        renewed or taken by another sweeper) is not tried again in the same sweep.
        """
        now = time.time()
        horizon = float("inf") if previous_lives else now
        local = set(self._active())
        tried: set[str] = set()
        settled = 0
        while True:
            batch = await self.leases.expired_leases(horizon, _SWEEP_BATCH)
            due = [
                lease
                for lease in batch
                if lease.task_id not in tried and self._orphaned(lease, local, now, previous_lives)
            ]
            for lease in due:
                tried.add(lease.task_id)
                if await self.settle(lease, horizon):
                    settled += 1
            if len(batch) < _SWEEP_BATCH or not due:
                return settled

    def _orphaned(self, lease: Lease, local: set[str], now: float, previous_lives: bool) -> bool:
        """Whether an expired lease is an orphan's for this sweep to settle."""
        if lease.instance == self.instance and (previous_lives or lease.task_id in local):
            # Ours and alive: the next renewal extends it. At startup every lease of this
            # instance id is a run of this process (one may still be taking its lease).
            return False
        # A lease this process is settling (a message to the orphan, at startup) is left.
        return not (lease.settler == self.instance and lease.expires_at > now)

    async def settle(self, lease: Lease, now: float | None = None) -> bool:
        """Take an expired lease and fail its task; True if this call settled a task.

        The lease stays taken (as ``lease.settling_by(instance)``) until the FAILED status
        is written: a message continuing the task meanwhile finds it taken and waits,
        instead of finding it free and starting the agent again.
        """
        when = time.time() if now is None else now
        settling = lease.settling_by(self.instance)
        until = time.time() + self.settings.lease_seconds
        if not await self.leases.take_expired_lease(lease, when, settling, until):
            return False  # renewed meanwhile, or another sweeper got it
        try:
            return await self._fail(lease)
        finally:
            await self._release(lease.task_id, settling)

    async def _fail(self, lease: Lease) -> bool:
        for _ in range(_SETTLE_ATTEMPTS):
            stored = await self.store.get(lease.task_id, lease.owner)
            if stored is None:
                return False  # never stored (died before the first event), or deleted
            task = stored.task
            previous = task.status.state
            if previous.is_terminal or previous.is_interrupted:
                return False  # the run ended; only the release was lost
            try:
                await self._write_failed(stored, orphan_text(lease.ran_on))
            except ConcurrentUpdateError:
                continue
            except IllegalTransitionError:
                return False
            self.settled_count += 1
            logger.warning(
                "task %s: settled as failed (instance %s stopped renewing its lease)",
                task.id,
                lease.ran_on,
            )
            return True
        return False
