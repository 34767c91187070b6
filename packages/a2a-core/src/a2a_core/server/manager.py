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

The manager keeps the registry of runs; its helpers each have a module:
``run`` (a run's lifecycle), ``writers`` (how a run's events are saved),
``cancel`` (a cancel here, elsewhere or with no run), ``run_leases`` (the
runs' leases and the orphans of dead instances), ``status_writer`` (a status
written to a task no run has), ``observers`` (who else hears of events) and
``config`` (``ManagerConfig``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Sequence
from typing import Any

from .. import telemetry as _telemetry
from ..contracts.channel import TaskChannel
from ..contracts.task_store import ConcurrentUpdateError, TaskStore
from ..errors import (
    InvalidParamsError,
    ServerBusyError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from ..stores.cluster import TaskLeases
from ..types import (
    Message,
    SendMessageConfiguration,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    new_id,
)
from ..types._base import built, changed
from .cancel import Cancels
from .cancellation import CancellationToken
from .config import ManagerConfig
from .context import ServerCallContext
from .earlier import EarlierTurns
from .events import EventBus, MemoryEventBus, Subscription
from .executor import AgentExecutor, RequestContext
from .files import FileStore
from .leases import new_instance_id
from .memory_channel import channel_for
from .observers import PushIntake, TaskObserver, TaskObservers
from .run import RESULT_ARTIFACT, SAFE_FAILURE_TEXT, TaskRun
from .run_leases import RunLeases
from .status_writer import StatusWriter
from .task_state import continue_task
from .writers import SAVE_ATTEMPTS, StoreAbilities, publish_logged

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
        self.observing = TaskObservers(observers)
        """Who hears of every applied event besides the streams (the service adds push)."""
        # The store as given, not the timing wrapper: a wrapper per service would
        # otherwise hide the store's channel (or give each service its own).
        self.channel: TaskChannel = channel_for(self.backend)
        """How this instance shares events and cancels with the others on the store."""
        self.abilities = StoreAbilities.of(self.backend, self.channel)
        """What the store and channel do: which writer each run gets."""
        self._channel_started = False
        self._active: dict[str, TaskRun] = {}
        self._closing = False
        writer = StatusWriter(
            store,
            self.channel,
            self.bus,
            self.config,
            self.observing.notify,
            functools.partial(publish_logged, self.channel),
        )
        self.cancels = Cancels(self.active_run, store, self.channel, executor, self.config, writer)
        """Cancels tasks here or elsewhere; hears the other instances' cancel requests."""
        self.channel.attach(self.cancels)
        self.instance_id = self.config.instance_id or new_instance_id()
        """This instance's name in leases (and in messages about orphaned tasks)."""
        self.leases: RunLeases[TaskRun] | None = None
        """The runs' leases, when the store keeps leases (several instances, or restarts)."""
        if isinstance(self.backend, TaskLeases):
            self.leases = RunLeases(
                store, self.backend, self.instance_id, self.config, writer.write_status
            )

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

    def _unregister(self, run: TaskRun) -> None:
        """Free the slot and the lease of a run that ended or never started."""
        if self._active.get(run.task_id) is run:
            del self._active[run.task_id]
        if self.leases is not None:
            self.leases.release(run)

    def finished(self, run: TaskRun) -> None:
        """A run ended: free its slot, drop its lease and end its streams."""
        self._unregister(run)
        run.settled.set()
        run.done.set()
        self.bus.end(run.task_id)

    def start_background(self) -> None:
        """Start renewing leases and sweeping for orphans (idempotent; at app startup)."""
        if self.leases is not None and not self._closing:
            self.leases.start()

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
                if self.leases is not None:
                    await self.leases.acquire(run)
            except BaseException:
                self._unregister(run)
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
        for _ in range(SAVE_ATTEMPTS):
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
            if (
                self.leases is not None
                and task_id not in self._active  # a run here: refused when it registers
                and await self.leases.refuse_orphan(stored)
            ):
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
                if self.leases is not None:
                    await self.leases.acquire(run, paused=task.status.state.is_interrupted)
                await run.begin_continuation(continued)
            except ConcurrentUpdateError:
                self._unregister(run)
                continue  # changed since we read it: read it again
            except BaseException:
                self._unregister(run)
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
        if run.previous is not None and self.observing:
            task = run.task
            status = TaskStatusUpdateEvent(
                task_id=task.id, context_id=task.context_id, status=task.status
            )
            previous = run.previous.task.status.state
            self.observing.notify(task, status, previous, run.version, run.span)

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

    async def cancel(self, task_id: str, call: ServerCallContext) -> Task:
        """Cancel a task: terminal at once; then the agent is told and interrupted."""
        return await self.cancels.cancel(task_id, call)

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
            self.leases.stop()
        runs = list(self._active.values())
        await asyncio.gather(*(self.cancels.stop(run) for run in runs))
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
        self.channel.detach(self.cancels)
        if self.leases is not None:
            await self.leases.aclose()


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
