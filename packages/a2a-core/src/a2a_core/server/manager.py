"""The task manager: starts runs, tracks the active ones, cancels them, shuts them down.

A ``TaskRun`` (``run``) is one execution of the agent for one task. It is
registered here (taking a capacity slot and marking the task busy) before
anything is awaited, so "is there room?" and "is this task already running?"
are decided without a race; ``start`` then launches it, and ``abandon`` undoes
it when the launch cannot go ahead. A run that cannot answer with a bare
message is a task from its start: ``prepare`` writes it before the agent runs.

Each event's id is the task version its save produced. When the store's
channel is shared (several instances, see ``channel``), an event goes to
the channel first and then to this instance's bus, so a follower anywhere,
and a resubscribe that replays from the channel, sees every event once. A
cancel for a task that runs on another instance is sent through the channel
to every instance; the one running it cancels the run (the agent is told and
interrupted, its slot freed). If nobody reacts within ``remote_cancel_timeout``
(the owner died), the canceling instance writes CANCELED itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import telemetry as _telemetry
from ..contracts.channel import TaskChannel
from ..contracts.task_store import ConcurrentUpdateError, StoredTask, TaskStore
from ..errors import (
    A2AError,
    InvalidParamsError,
    ServerBusyError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from ..stores.cluster import Lease, TaskLeases
from ..types import (
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    new_id,
)
from ..types._base import built, changed
from .cancellation import CancellationToken
from .context import ServerCallContext
from .earlier import EarlierTurns
from .events import EventBus, EventsLost, MemoryEventBus, Subscription
from .executor import AgentExecutor, RequestContext
from .files import FileStore
from .leases import LeaseKeeper, LeaseSettings, new_instance_id
from .memory_channel import channel_for
from .observers import PushIntake, TaskObserver, TaskObservers
from .run import RESULT_ARTIFACT, SAFE_FAILURE_TEXT, TaskRun
from .task_state import IllegalTransitionError, apply_artifacts, apply_status, continue_task
from .writers import SAVE_ATTEMPTS as _SAVE_ATTEMPTS
from .writers import publish_logged

__all__ = [
    "RESULT_ARTIFACT",
    "SAFE_FAILURE_TEXT",
    "ManagerConfig",
    "PushIntake",
    "TaskManager",
    "TaskObserver",
    "TaskRun",
]

logger = logging.getLogger("a2a_core.server")

SHUTDOWN_TEXT = "The server shut down before the task finished."
_CATCH_UP_ATTEMPTS = 20


@dataclass(frozen=True, slots=True)
class ManagerConfig:
    """Bounds and policies of the task manager."""

    max_background_tasks: int = 512
    """Agents running at once; past it, sends fail with a retryable ServerBusyError."""
    max_history: int = 1000
    """Messages kept per task (oldest dropped first)."""
    cancel_grace_seconds: float = 5.0
    """How long an agent's own ``cancel`` may take before the run is interrupted."""
    shutdown_grace_seconds: float = 10.0
    """How long shutdown waits for agents to stop cooperatively."""
    expose_agent_errors: bool = False
    """Put an agent exception's text in the failed status (off: never leak internals)."""
    remote_cancel_timeout: float = 2.0
    """How long a cancel waits for the instance running the task before writing CANCELED itself."""
    lease_seconds: float = 30.0
    """How long a run's lease lasts unrenewed: a task whose instance died is settled (FAILED)
    this long after its last renewal (stores that keep leases: sqlite, redis, postgresql)."""
    lease_renew_seconds: float = 10.0
    """How often an instance renews the leases of the tasks it runs."""
    orphan_sweep_seconds: float = 10.0
    """How often an instance looks for expired leases to settle."""
    send_retention_seconds: float = 0.0
    """Idempotent sends: for this long, a retried SendMessage (the same message, messageId
    included, from the same principal) returns the task the first one started instead of
    running the agent again, on every instance sharing the store. 0 (the default): off;
    e.g. 3600 turns it on for an hour."""
    instance_id: str | None = None
    """This instance's name in leases and messages (default: host-pid-random)."""
    store_coalesce_seconds: float = 0.005
    """Streamed artifact chunks are saved together at most this often per task, not one
    save per chunk, on stores that number saves (``SavesAtVersion``: memory, sqlite, redis,
    postgresql). Streams and subscribers still get every event at once (on a shared store
    each chunk is published to the channel at once); any status change, and the end of the
    run, saves at once. A crash loses at most the chunks of the last interval on sqlite
    (the task then reads as it was before them); on redis and postgresql the survivor that
    settles the task applies them from the channel first. 0: save every event."""

    whole_answers: bool = True
    """Peers that read only part of a stream still get the whole answer: a streamed
    artifact ends with an update carrying all of it (``append: false``, ``lastChunk``),
    and a task that completes without a status message gets one repeating the text and
    data of its ``result`` artifact. False: a stream ends with an empty appended part
    and the completed status stays bare (see docs/server.md, "How a streamed answer
    ends")."""

    def __post_init__(self) -> None:
        if self.max_background_tasks <= 0:
            raise ValueError("max_background_tasks must be > 0")
        if self.remote_cancel_timeout <= 0:
            raise ValueError("remote_cancel_timeout must be > 0")
        if self.max_history <= 0:
            raise ValueError("max_history must be > 0")
        if self.send_retention_seconds < 0:
            raise ValueError("send_retention_seconds must be >= 0")
        if self.store_coalesce_seconds < 0:
            raise ValueError("store_coalesce_seconds must be >= 0")
        LeaseSettings(self.lease_seconds, self.lease_renew_seconds, self.orphan_sweep_seconds)


class TaskManager:
    """Starts runs, tracks the active ones, cancels them, and shuts them all down."""

    def __init__(
        self,
        executor: AgentExecutor,
        store: TaskStore,
        bus: EventBus | None = None,
        config: ManagerConfig | None = None,
        observers: Sequence[TaskObserver] = (),
        files: FileStore | None = None,
    ) -> None:
        self.executor = executor
        self.files = files
        """Where large outgoing files go to be served by URL (None: always inline)."""
        if files is not None:
            files.attach(store)
        self.backend = store
        """The store as given (``store`` may wrap it, e.g. to time its calls)."""
        hooks = _telemetry.active
        if hooks is not None:
            from .._otel.store import TimedStore

            store = TimedStore(store, hooks)
        self.store = store
        self.bus: EventBus = bus if bus is not None else MemoryEventBus()
        self.config = config or ManagerConfig()
        self.told = TaskObservers(observers)
        """Who hears of every applied event besides the streams (observers, push)."""
        self.push_recovery: Callable[[StoredTask], Awaitable[object]] | None = None
        """Delivers what a dead owner's push lanes still held (set by the service); called
        before an orphan is settled."""
        # The store as given, not the timing wrapper: a wrapper per service would
        # otherwise hide the store's channel (or give each service its own).
        self.channel: TaskChannel = channel_for(self.backend)
        """How this instance shares events and cancels with the others on the store."""
        self.channel.attach(self)
        self._channel_started = False
        self._active: dict[str, TaskRun] = {}
        self._closing = False
        cfg = self.config
        backend = self.backend
        self.instance_id = cfg.instance_id or new_instance_id()
        """This instance's name in leases (and in messages about orphaned tasks)."""
        self.leases: LeaseKeeper | None = None
        """The lease keeper, when the store keeps leases (several instances, or restarts)."""
        if isinstance(backend, TaskLeases):
            settings = LeaseSettings(
                cfg.lease_seconds, cfg.lease_renew_seconds, cfg.orphan_sweep_seconds
            )
            self.leases = LeaseKeeper(
                store,
                backend,
                self.instance_id,
                settings,
                active=self._leased_task_ids,
                write_failed=self._settle_orphan,
                on_lost=self._lease_lost,
            )

    async def send_to_channel(
        self, task_id: str, event_id: int, event: StreamEvent, previous: int | None
    ) -> bool | None:
        """Publish to the shared channel; a failure is logged (the task itself is saved).

        False when the channel dropped the event as not above its last (a late writer).
        """
        return await publish_logged(self.channel, task_id, event_id, event, previous)

    async def start_channel(self) -> None:
        """Connect to the channel (once), so cancel requests from other instances arrive."""
        if not self._channel_started:
            await self.channel.start()
            self._channel_started = True

    # -- bookkeeping ----------------------------------------------------------
    @property
    def closing(self) -> bool:
        """Whether the manager is stopping (draining): new work is refused."""
        return self._closing

    @property
    def active_count(self) -> int:
        """Runs holding a capacity slot right now."""
        return len(self._active)

    def active_run(self, task_id: str) -> TaskRun | None:
        """The run executing ``task_id``, if any."""
        return self._active.get(task_id)

    def notify(
        self,
        task: Task,
        event: StreamEvent,
        previous: TaskState | None,
        event_id: int | None = None,
    ) -> None:
        """``TaskObservers.notify``, on the span of the task's run here, if any."""
        run = self._active.get(task.id)
        self.told.notify(task, event, previous, event_id, run.span if run is not None else None)

    def _register(self, run: TaskRun) -> None:
        """Take a slot for ``run`` (synchronous: nothing can slip in between check and claim)."""
        if self._closing:
            raise ServerBusyError(
                "The server is shutting down", data={"reason": "shutting_down", "retryable": True}
            )
        if run.task_id in self._active:
            raise UnsupportedOperationError(
                f"Task {run.task_id} is still running; wait for it to pause or cancel it"
            )
        limit = self.config.max_background_tasks
        if len(self._active) >= limit:
            raise ServerBusyError(
                f"All {limit} agent slots are busy; retry later",
                data={
                    "reason": "background_capacity_exhausted",
                    "retryable": True,
                    "max_background_tasks": limit,
                },
            )
        self._active[run.task_id] = run

    def _release(self, run: TaskRun) -> None:
        if self._active.get(run.task_id) is run:
            del self._active[run.task_id]

    def _unhold(self, run: TaskRun) -> None:
        """Free the slot and the lease of a run that never started."""
        self._release(run)
        if self.leases is not None and run.leased:
            run.leased = False
            self.leases.release(run.task_id)

    def finished(self, run: TaskRun) -> None:
        """A run ended: free its slot, drop its lease and end its streams."""
        self._release(run)
        if self.leases is not None and run.leased:
            run.leased = False
            self.leases.release(run.task_id)
        run.settled.set()
        run.done.set()
        self.bus.end(run.task_id)

    # -- leases -------------------------------------------------------------------
    async def let_go(self, run: TaskRun) -> None:
        """A run that paused drops its lease before the pause is announced.

        The answer may come through another instance as soon as the client sees the
        question; a lease still held by this (returning) run would refuse it there.
        """
        if self.leases is not None and run.leased:
            run.leased = False
            await self.leases.release_now(run.task_id)

    def start_background(self) -> None:
        """Start renewing leases and sweeping for orphans (idempotent; at app startup)."""
        if self.leases is not None and not self._closing:
            self.leases.start()

    async def _hold(self, run: TaskRun, *, paused: bool = False) -> None:
        """Take the run's lease before its agent starts (refused: another instance runs it).

        ``paused``: the task waits for input, so a holder elsewhere is a run that has just
        paused and is letting go (its followers may hear of the pause first): wait for it.
        """
        if self.leases is None:
            return
        holder = await self.leases.acquire(run.task_id, run.owner)
        if holder is not None and paused:
            holder = await self._acquire_when_let_go(run)
        if holder is not None:
            raise UnsupportedOperationError(
                f"Task {run.task_id} is running on instance {holder.instance}; "
                "wait for it to pause or cancel it"
            )
        run.leased_at = time.monotonic()
        run.leased = True

    async def _acquire_when_let_go(self, run: TaskRun) -> Lease | None:
        """Retry a refused lease for up to ``cancel_grace_seconds``; the holder when it stays."""
        keeper = self.leases
        assert keeper is not None
        holder: Lease | None = None

        async def taken() -> bool:
            nonlocal holder
            holder = await keeper.acquire(run.task_id, run.owner)
            return holder is None

        await self._within_grace(taken)
        return holder

    async def _within_grace(self, done: Callable[[], Awaitable[bool]]) -> bool:
        """Ask ``done()`` after 10 ms, then at doubling pauses up to 200 ms, until it says
        True or ``cancel_grace_seconds`` have passed; whether it said True.

        How a request waits for another instance to let go of a task (a run that has
        just paused, an orphan's settler): the time a holder has to stop cooperatively.
        """
        deadline = time.monotonic() + self.config.cancel_grace_seconds
        delay = 0.01
        while True:
            await asyncio.sleep(delay)
            if await done():
                return True
            if time.monotonic() >= deadline:
                return False
            delay = min(delay * 2, 0.2)

    def _leased_task_ids(self) -> list[str]:
        """The runs whose lease this instance holds: only those are renewed.

        A run still taking its lease is left out, or the renewal racing it would
        find no lease and stop the run as if another instance had taken it.
        """
        return [task_id for task_id, run in self._active.items() if run.leased]

    async def _refuse_orphan(self, stored: StoredTask) -> bool:
        """A task whose run's instance died (expired lease): settle it now and refuse the message.

        Restarting the agent silently would run it twice if the first run still
        holds side effects; the client is told what happened instead. True when
        another settler holds the lease: it has let go now, so read the task again
        (FAILED, unless it had ended before).
        """
        keeper = self.leases
        task = stored.task
        if keeper is None or task.status.state.is_interrupted or task.id in self._active:
            return False
        lease = await keeper.leases.lease_of(task.id)
        if lease is None:
            return False  # no run anywhere holds it: an open task (``leaves_task_open``) goes on
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
        keeper = self.leases
        assert keeper is not None
        lease: Lease | None = None

        async def let_go() -> bool:
            nonlocal lease
            lease = await keeper.leases.lease_of(task_id)
            return lease is None or lease.settler is None or lease.expires_at <= time.time()

        if await let_go() or await self._within_grace(let_go):
            return
        assert lease is not None  # let_go said False
        raise UnsupportedOperationError(
            f"Task {task_id} was left running by a server instance that stopped "
            f"({lease.ran_on}); instance {lease.settler} is settling it as failed, "
            "so it cannot be continued. Start a new task in the same context"
        )

    async def _settle_orphan(self, stored: StoredTask, text: str) -> None:
        """The sweeper fails an orphaned task: saved, published to every instance's streams.

        Push deliveries the dead instance still held are queued again first.
        """
        if self.push_recovery is not None:
            await self.push_recovery(stored)
        await self.write_status(stored, TaskState.FAILED, text)

    def _lease_lost(self, task_id: str, renewal_began: float) -> None:
        """Another instance took this run's lease (we were frozen): the task is settled there.

        ``renewal_began`` guards a later run of the same task (continued after
        input-required): a renewal older than its lease says nothing about it.
        """
        run = self._active.get(task_id)
        if run is None or not run.leased or run.leased_at >= renewal_began:
            return
        run.leased = False
        run.token.cancel()
        run.interrupt()

    # -- starting work --------------------------------------------------------
    async def prepare(
        self,
        message: Message,
        call: ServerCallContext,
        configuration: SendMessageConfiguration | None,
        request_metadata: dict[str, Any] | None,
        allow_reply: bool,
        *,
        recorded: bool = False,
    ) -> TaskRun:
        """Register a run for ``message`` (a new task, or a continuation), not yet started.

        A run is written now, so ListTasks and a retried send find it while its agent
        works, unless it may answer with a bare message (``allow_reply``) and nobody looks
        for it by id: that one is written with its first event. ``recorded``: its send
        is recorded (idempotent sends), so a retry may look for it. The caller must then
        ``start`` the run or ``abandon`` it.
        """
        if not self._channel_started:
            await self.start_channel()
        if message.task_id:
            run = await self._continuation(
                message.task_id, message, call, configuration, request_metadata
            )
        else:
            task, message = _new_task(message)
            context = _request_context(task, message, call, configuration, request_metadata)
            context.earlier = EarlierTurns(self.store, call.owner, task.context_id, task.id)
            run = TaskRun(self, task, call.owner, context, allow_reply=allow_reply)
            self._register(run)
            try:
                self.executor.admit(context)
                await self._hold(run)
            except BaseException:
                self._unhold(run)
                raise
        if not allow_reply or recorded:
            try:
                await run.persist()
            except BaseException:
                await self.abandon(run)
                raise
        return run

    async def _let_paused_run_finish(self, task_id: str) -> None:
        """An agent that just paused may still be returning: give it a moment.

        A client can answer an input-required task as soon as it sees the
        question, while the agent's ``execute`` is still unwinding.
        """
        run = self._active.get(task_id)
        if run is not None and run.state.is_interrupted:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(run.done.wait(), self.config.cancel_grace_seconds)

    async def _continuation(
        self,
        task_id: str,
        message: Message,
        call: ServerCallContext,
        configuration: SendMessageConfiguration | None,
        request_metadata: dict[str, Any] | None,
    ) -> TaskRun:
        for _ in range(_SAVE_ATTEMPTS):
            await self._let_paused_run_finish(task_id)
            stored = await self.store.get(task_id, call.owner)
            if stored is None:
                raise TaskNotFoundError.for_task(task_id)
            task = stored.task
            if message.context_id and message.context_id != task.context_id:
                raise InvalidParamsError(
                    f"contextId {message.context_id!r} does not match the context of task {task_id}"
                )
            if task.status.state.is_terminal:
                raise UnsupportedOperationError(
                    f"Task {task_id} is {task.status.state.value} and cannot be continued; "
                    "start a new task in the same context"
                )
            if await self._refuse_orphan(stored):
                continue  # another instance was settling it: read what it left
            if message.context_id != task.context_id:
                message = changed(message, {"context_id": task.context_id})
            continued = continue_task(task, message, self.config.max_history)
            context = _request_context(
                continued, message, call, configuration, request_metadata, is_continuation=True
            )
            context.earlier = EarlierTurns(self.store, stored.owner, task.context_id, task.id)
            run = TaskRun(self, task, stored.owner, context, allow_reply=False, previous=stored)
            self._register(run)
            try:
                self.executor.admit(context)
                await self._hold(run, paused=task.status.state.is_interrupted)
                await run.begin_continuation(continued)
            except ConcurrentUpdateError:
                self._unhold(run)
                continue  # changed since we read it: read it again
            except BaseException:
                self._unhold(run)
                raise
            return run
        raise UnsupportedOperationError(f"Task {task_id} kept changing; retry the message")

    def start(self, run: TaskRun) -> None:
        """Launch a prepared run in the background (``abandon`` it if this raises)."""
        if run.token.cancelled:  # canceled before it could start
            self.finished(run)
            return
        run.handle = asyncio.get_running_loop().create_task(
            run.run(self.executor), name=f"a2a-task-{run.task_id}"
        )
        if run.previous is not None and self.told:
            task = run.task
            status = TaskStatusUpdateEvent(
                task_id=task.id, context_id=task.context_id, status=task.status
            )
            self.notify(task, status, run.previous.task.status.state, run.version)

    async def abandon(self, run: TaskRun) -> None:
        """Undo a run that will not start: free its slot, restore or remove its task."""
        self.finished(run)
        try:
            previous = run.previous
            if previous is not None:
                if run.version != previous.version:
                    await self.store.save(previous.task, run.owner, run.version)
            elif run.version:
                await self.store.delete(run.task_id, run.owner)
                if self.files is not None:
                    await self.files.drop_task(run.task_id)
        except Exception:
            logger.exception("task %s: could not roll back a failed launch", run.task_id)

    # -- cancel -------------------------------------------------------------------
    async def cancel(self, task_id: str, call: ServerCallContext) -> Task:
        """Cancel a task: terminal at once; then the agent is told and interrupted."""
        owner = call.owner
        asked_others = False
        for _ in range(_SAVE_ATTEMPTS):
            run = self._active.get(task_id)
            if run is not None and run.owner == owner:
                return await self._cancel_run(run)
            stored = await self.store.get(task_id, owner)
            if stored is None:
                raise TaskNotFoundError.for_task(task_id)
            state = stored.task.status.state
            if state.is_terminal:
                if asked_others and state is TaskState.CANCELED:
                    return stored.task  # the instance running it canceled it
                raise TaskNotCancelableError(f"Task {task_id} is already {state.value}")
            if task_id in self._active:
                continue  # a run took it while we read it
            if not asked_others and not state.is_interrupted and self.channel.shared:
                # An agent may be running it on another instance: let that one cancel it.
                asked_others = True
                done = await self._cancel_elsewhere(stored)
                if done is not None:
                    return done
                continue
            # Paused, left over, or its instance did not answer: no agent here to stop.
            try:
                return await self.write_status(stored, TaskState.CANCELED)
            except ConcurrentUpdateError:
                continue
        raise TaskNotCancelableError(f"Task {task_id} kept changing; retry the cancel")

    async def _cancel_elsewhere(self, stored: StoredTask) -> Task | None:
        """Ask the instance running the task to cancel it; its final task, or None if nobody did."""
        task_id = stored.task.id
        follower = self.channel.follow(task_id, stored.version, stored.version)
        try:
            waiting = asyncio.ensure_future(_final_state(follower))
            try:
                await self.channel.request_cancel(task_id)
                final = await asyncio.wait_for(
                    asyncio.shield(waiting), self.config.remote_cancel_timeout
                )
            except TimeoutError:
                return None
            finally:
                if not waiting.done():
                    waiting.cancel()
                    with contextlib.suppress(BaseException):
                        await waiting
        finally:
            aclose = getattr(follower, "aclose", None)
            if aclose is not None:
                await aclose()
        if final is None:
            return None
        if final is not TaskState.CANCELED:
            raise TaskNotCancelableError(f"Task {task_id} is already {final.value}")
        now = await self.store.get(task_id, stored.owner)
        return now.task if now is not None else None

    async def cancel_requested(self, task_id: str) -> None:
        """Another instance asks to cancel ``task_id`` (``ChannelListener``): stop it if here.

        The asking instance checked the caller may cancel the task.
        """
        run = self._active.get(task_id)
        if run is None:
            return
        try:
            await self._cancel_run(run)
        except A2AError:
            if run.state is TaskState.CANCELED:  # the asking instance canceled it already
                await self._interrupt(run)

    async def write_status(
        self, stored: StoredTask, state: TaskState, text: str | None = None
    ) -> Task:
        """Move a task no run holds to ``state``: save, publish everywhere, tell the observers.

        For a paused task, a task whose instance is gone (settling orphans), a cancel
        nobody answered. Raises ``ConcurrentUpdateError`` when the task changed meanwhile.
        """
        task = stored.task
        message = None
        if text is not None:
            message = Message(
                message_id=new_id(),
                role=Role.AGENT,
                parts=[Part(text=text)],
                task_id=task.id,
                context_id=task.context_id,
            )
        event = TaskStatusUpdateEvent(
            task_id=task.id, context_id=task.context_id, status=TaskStatus.now(state, message)
        )
        channel = self.channel
        if channel.shared and channel.write_behind:
            # The channel may hold chunks past the stored version (published by a run that
            # saves behind, maybe on an instance that died): followers saw them, so the
            # task gets them too, and this status comes after them.
            new_task, saved = await self._write_after(stored, event)
        else:
            new_task = apply_status(task, event, self.config.max_history)
            saved = await self.store.save(new_task, stored.owner, stored.version)
            if channel.shared:
                await self.send_to_channel(task.id, saved.version, event, stored.version)
        self.bus.publish(task.id, event, saved.version)
        if state.is_terminal or state.is_interrupted:
            self.bus.end(task.id)
        self.notify(new_task, event, task.status.state, saved.version)
        return new_task

    async def _write_after(
        self, stored: StoredTask, event: TaskStatusUpdateEvent
    ) -> tuple[Task, StoredTask]:
        """``event`` applied after the channel's events past ``stored`` and saved after them.

        A run still publishing behind (its instance stopped renewing but runs on) can move
        the channel between the read and the write: read it again, while the task itself
        stays at ``stored.version`` (else ``ConcurrentUpdateError`` for the caller).
        """
        channel = self.channel
        task_id = stored.task.id
        for _ in range(_CATCH_UP_ATTEMPTS):
            events, head = await channel.since(task_id, stored.version)
            task = _caught_up(stored.task, events or ())
            new_task = apply_status(task, event, self.config.max_history)
            try:
                saved = await channel.save_after(
                    new_task, stored.owner, stored.version, head, event
                )
            except ConcurrentUpdateError:
                fresh = await self.store.get(task_id, stored.owner)
                if fresh is None or fresh.version != stored.version:
                    raise
                continue  # only the channel moved
            return new_task, saved
        raise ConcurrentUpdateError(f"task {task_id}: its channel kept moving")

    async def _cancel_run(self, run: TaskRun, text: str | None = None) -> Task:
        """CANCELED first (so nothing the agent does later can win), then stop the agent."""
        if not await run.server_status(TaskState.CANCELED, text):
            if run.error is not None:
                raise run.error
            raise TaskNotCancelableError(f"Task {run.task_id} is already {run.state.value}")
        await self._interrupt(run)
        return run.task

    async def _interrupt(self, run: TaskRun) -> None:
        """Tell the agent to stop, give its ``cancel`` the grace period, then interrupt it."""
        run.token.cancel()
        handle = run.handle
        if handle is not None:
            try:
                await asyncio.wait_for(
                    self.executor.cancel(run.context, run.new_updater()),
                    self.config.cancel_grace_seconds,
                )
            except (TimeoutError, IllegalTransitionError):
                pass
            except Exception:
                logger.exception("task %s: the agent's cancel raised", run.task_id)
            run.interrupt()  # whatever it awaits; its cleanup still runs

    async def _stop(self, run: TaskRun) -> None:
        try:
            await self._cancel_run(run, SHUTDOWN_TEXT)
        except A2AError:
            run.token.cancel()  # already final: ask the agent to wrap up within the grace

    # -- subscriptions ------------------------------------------------------------
    def subscribe(
        self, task_id: str, *, after: int | None = None, current: int | None = None
    ) -> Subscription:
        """Receive the task's events from now on (or replayed from after ``after``).

        ``current`` is the task's version now (starts its replay record); raises
        ``EventsLost`` when the events after ``after`` are not all retained here.
        """
        return self.bus.subscribe(task_id, after=after, current=current)

    # -- shutdown -----------------------------------------------------------------
    async def aclose(self) -> None:
        """Cancel every running task, wait for the agents to stop, then close the store."""
        await self.stop()
        await self.store.aclose()

    async def stop(self) -> None:
        """Refuse new work, cancel every running task, wait for the agents, end all streams.

        Idempotent. The HTTP server calls it before draining connections, so
        waiting requests and open streams finish at once instead of holding
        the shutdown for its whole grace period.
        """
        self._closing = True
        if self.leases is not None:
            self.leases.stop_renewing()
        runs = list(self._active.values())
        await asyncio.gather(*(self._stop(run) for run in runs))
        handles = [run.handle for run in runs if run.handle is not None]
        if handles:
            grace = self.config.shutdown_grace_seconds
            _, pending = await asyncio.wait(handles, timeout=grace)
            if pending:
                logger.warning("%d agents did not stop within %.1fs", len(pending), grace)
                for handle in pending:
                    handle.cancel()
                await asyncio.wait(pending, timeout=grace)
        self.bus.end_all()
        self.channel.detach(self)
        if self.leases is not None:
            await self.leases.aclose()


def _caught_up(task: Task, events: Sequence[tuple[int, StreamEvent | None]]) -> Task:
    """``task`` with the channel's events past its stored version applied (held chunks)."""
    chunks = [e for _, e in events if isinstance(e, TaskArtifactUpdateEvent)]
    return apply_artifacts(task, chunks) if chunks else task


async def _final_state(follower: Any) -> TaskState | None:
    """The first terminal state a follower sees (None: its run ended unsettled, or it paused)."""
    try:
        async for _, event in follower:
            if event is None:
                return None
            if isinstance(event, TaskStatusUpdateEvent):
                state = event.status.state
                if state.is_terminal:
                    return state
                if state.is_interrupted:
                    return None
    except EventsLost:
        return None
    return None


def _new_task(message: Message) -> tuple[Task, Message]:
    """A new task for ``message`` (SUBMITTED), and the message addressed to it."""
    context_id = message.context_id or new_id()
    task_id = new_id()
    message = changed(message, {"task_id": task_id, "context_id": context_id})
    # Values made here, and a message validated on the way in: nothing to check.
    task = built(
        Task,
        {
            "id": task_id,
            "context_id": context_id,
            "status": TaskStatus.now(TaskState.SUBMITTED),
            "artifacts": [],
            "history": [message],
            "metadata": None,
        },
    )
    return task, message


def _request_context(
    task: Task,
    message: Message,
    call: ServerCallContext,
    configuration: SendMessageConfiguration | None,
    request_metadata: dict[str, Any] | None,
    is_continuation: bool = False,
) -> RequestContext:
    metadata = {**(message.metadata or {}), **(request_metadata or {})}
    return RequestContext(
        task_id=task.id,
        context_id=task.context_id,
        message=message,
        task=task,
        metadata=metadata,
        cancellation=CancellationToken(),
        configuration=configuration,
        call=call,
        is_continuation=is_continuation,
    )
