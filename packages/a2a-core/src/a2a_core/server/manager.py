"""The task manager: runs agents, applies their events, enforces the lifecycle.

A ``TaskRun`` is one execution of the agent for one task. It is registered
(taking a capacity slot and marking the task busy) before anything is
awaited, so "is there room?" and "is this task already running?" are decided
without a race; ``start`` then launches it, and ``abandon`` undoes it when
the launch cannot go ahead. Every write to a registered task goes through
its run, under the run's lock: each event is checked against the state
machine, applied copy-on-write, saved (optimistic concurrency, re-applied on
a conflict), then published. Streams therefore see events in order, and once
a task is terminal (canceled, say) nothing can change it again.

Each event's id is the task version its save produced. When the store's
channel is shared (several instances, see ``channel``), an event goes to
the channel first and then to this instance's bus, so a follower anywhere,
and a resubscribe that replays from the channel, sees every event once. A
cancel for a task that runs on another instance is sent through the channel
to every instance; the one running it cancels the run (the agent is told and
interrupted, its slot freed). If nobody reacts within ``remote_cancel_timeout``
(the owner died), the canceling instance writes CANCELED itself.

The manager keeps the registry of runs; its helpers each have a module:
``cancel`` (a cancel here, elsewhere or with no run), ``run_leases`` (the
runs' leases and the orphans of dead instances), ``status_writer`` (a status
written to a task no run has), ``observers`` (who else hears of events) and
``config`` (``ManagerConfig``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from .. import telemetry as _telemetry
from ..errors import (
    A2AError,
    InternalError,
    InvalidParamsError,
    ServerBusyError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from ..stores import ConcurrentUpdateError, StoredTask, TaskStore
from ..stores.base import numbers_creates, saves_behind
from ..stores.cluster import TaskLeases
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
from .cancel import Cancels
from .cancellation import CancellationToken, CancelledByClient
from .channel import TaskChannel, channel_for
from .config import ManagerConfig
from .context import ServerCallContext, owner_principal
from .earlier import EarlierTurns
from .events import NO_ID, EventBus, MemoryEventBus, Subscription
from .executor import AgentExecutor, RequestContext
from .files import FileStore
from .leases import new_instance_id
from .observers import Observers, PushIntake, TaskObserver
from .run_leases import RunLeases
from .status_writer import StatusWriter
from .task_state import (
    REPEATS_KEY,
    IllegalTransitionError,
    apply_artifact,
    apply_artifacts,
    apply_status,
    continue_task,
)
from .updater import TaskUpdater

__all__ = ["ManagerConfig", "PushIntake", "TaskManager", "TaskObserver", "TaskRun"]

logger = logging.getLogger("a2a_core.server")

SAFE_FAILURE_TEXT = "The agent failed while handling this task."
_SAVE_ATTEMPTS = 3
_YIELD_SECONDS = 0.0005
"""How often at most an agent's event lets streams run (an agent that awaits lets them anyway)."""


class _RunLock:
    """A run's lock: first come, first served, like ``asyncio.Lock``, and cheaper to take
    when free (every event of an agent takes it: no coroutine of its own, no wake-up).

    A release hands the lock to the first waiter still waiting (it stays locked); a waiter
    cancelled after being handed it passes it on.
    """

    __slots__ = ("_locked", "_waiters")

    def __init__(self) -> None:
        self._locked = False
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def __aenter__(self) -> None:
        if not self._locked:  # no waiters then: a release with waiters hands the lock over
            self._locked = True
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed the lock, cancelled before taking it: pass it on
            else:  # still queued, unless a release skipped it already
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise

    async def __aexit__(self, *exc: object) -> None:
        self.release()

    def take(self) -> bool:
        """Take the lock if it is free (True), without a coroutine; else ``async with``."""
        if self._locked:
            return False
        self._locked = True
        return True

    def release(self) -> None:
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the lock is its now
                return
        self._locked = False


RESULT_ARTIFACT = "result"
"""The artifact that holds an agent's answer (function agents, generators, the adapters)."""


class TaskRun:
    """One execution of an agent for one task; the ``EventSink`` of its updater."""

    def __init__(
        self,
        manager: TaskManager,
        task: Task,
        owner: str | None,
        context: RequestContext,
        *,
        allow_reply: bool,
        previous: StoredTask | None = None,
    ) -> None:
        self.manager = manager
        self._task = task
        self.initial = task
        """The task as the run began (the first event of a stream)."""
        self.owner = owner
        self.previous = previous
        """The stored task a continuation started from (to roll back to)."""
        self.version = previous.version if previous is not None else 0  # 0: not stored yet
        """The version of ``task``: the id of its last event (saved up to ``stored``)."""
        self.stored = self.version
        """The version the store holds (below ``version`` while chunks wait to be saved)."""
        self._chunks: list[TaskArtifactUpdateEvent] = []
        """Held artifact events not yet applied to ``_task`` (``task`` applies them)."""
        self._unsaved: list[TaskArtifactUpdateEvent] = []
        """Every artifact event held since the last save (re-applied after a conflict)."""
        self._chunks_since = 0.0
        self._flush_timer: asyncio.TimerHandle | None = None
        self._flusher: asyncio.Task[None] | None = None
        self.context = context
        self.token = context.cancellation
        self.allow_reply = allow_reply
        self.reply: Message | None = None
        self.error: A2AError | None = None
        """Why the last save failed (cleared by a later successful save)."""
        self.settled = asyncio.Event()
        """Set when the task is terminal or interrupted, the agent replied, or the run ended."""
        self.done = asyncio.Event()
        """Set when the run has ended."""
        self.handle: asyncio.Task[None] | None = None
        self.started = False
        """Whether the run's task has taken its first step (entered ``run``)."""
        self._interrupt_at_start = False
        self.published = self.version
        """The id of the task's last event this run knows of (what the channel records before
        the run's first event)."""
        self.span: Any = None
        """The run's span while telemetry traces it (events go there)."""
        self.leased = False
        """Whether this instance holds the task's lease (released when the run ends)."""
        self.leased_at = 0.0
        """When (``time.monotonic()``) the lease was taken: a renewal that began earlier
        cannot speak for it."""
        self._lock = _RunLock()
        self._emitted = False
        config = manager.config
        self._hold_delay = config.store_coalesce_seconds if manager.saves_behind else 0.0
        """How long artifact chunks may wait to be saved (0: saved one by one): the
        config and the store's kind, fixed for the run (read once, not per event)."""
        self._channel_behind = manager.channel.write_behind
        """Whether the channel takes chunks before they are saved (when it is shared)."""
        self._files = manager.files if context.call.base_url is not None else None
        """Where large files leave the events for (None: they stay, no URL to serve them)."""
        self._yielded = float("-inf")
        """When (``time.monotonic()``) an event last let the streams run."""

    @property
    def task(self) -> Task:
        """The latest state of the task (saved up to ``stored``, unless ``version`` is 0)."""
        if self._chunks:
            self._task = apply_artifacts(self._task, self._chunks)
            self._chunks = []
        return self._task

    @task.setter
    def task(self, task: Task) -> None:
        self._task = task
        self._chunks = []

    @property
    def state(self) -> TaskState:
        return self._task.status.state  # artifact chunks never change it

    @property
    def whole_answers(self) -> bool:
        """``ManagerConfig.whole_answers`` (what the updater's artifact streams read)."""
        return self.manager.config.whole_answers

    @property
    def task_id(self) -> str:
        return self._task.id

    # -- events ---------------------------------------------------------------
    async def emit(self, event: StreamEvent) -> None:
        """Apply an agent's event (the updater calls this)."""
        lock = self._lock
        if not lock.take():  # free is the rule: no coroutines to enter and leave it then
            await lock.__aenter__()  # queued behind a flush or a cancel
        try:
            if (
                self._task.status.state is TaskState.CANCELED
                and isinstance(event, TaskStatusUpdateEvent)
                and event.status.state is TaskState.CANCELED
            ):
                return  # an agent confirming the cancel the server already made
            try:
                flush_due = self._hold_at_once(event)
                if flush_due is None:
                    await self._apply(event)
                elif flush_due:
                    await self._flush()  # an agent that never yields still gets its chunks saved
            except IllegalTransitionError as exc:
                logger.warning("task %s: rejected an event from the agent: %s", self._task.id, exc)
                if not self.state.is_terminal and self.reply is None:
                    await self._server_status(TaskState.FAILED, SAFE_FAILURE_TEXT)
                raise
        finally:
            lock.release()
        if not self.settled.is_set() and self.manager.bus.subscriber_count(self._task.id):
            # Let streams write what is pending: an agent that never awaits would otherwise
            # produce all its events before the first one reaches the client. At most once
            # per _YIELD_SECONDS (the first event at once): streams then send the events
            # made meanwhile together, instead of one loop turn and one write per event.
            # Not after the event that settles the task: the run ends first (its save,
            # the task's release, its replay buffer packed), so a client that hears the
            # task is done finds it let go, and the next request does not wait behind it.
            now = time.monotonic()
            if now - self._yielded >= _YIELD_SECONDS:
                self._yielded = now
                await asyncio.sleep(0)

    def _hold_at_once(self, event: StreamEvent) -> bool | None:
        """``_apply`` for most streamed chunks, without a coroutine to await: an artifact
        event held in memory on an instance of its own (no shared channel to send it to
        first, no file to offload). Returns whether the held events are due to be saved
        now, or None when the event takes ``_apply``'s way."""
        if type(event) is not TaskArtifactUpdateEvent or self.reply is not None:
            return None
        manager = self.manager
        if (
            manager.channel.shared
            or not self._coalesces(False)
            # Last: an event turned away here has its parts read again by ``_apply``.
            or (self._files is not None and self._files.offloads(event))
        ):
            return None
        task = self._task
        event = _owned(event, task)
        self._check_open()
        flush_due = self._hold(event)
        self._emitted = True
        manager.bus.publish(task.id, event, self.version)
        self._tell(event, task.status.state, changed=False)
        return flush_due

    def _tell(
        self,
        event: StreamEvent,
        previous: TaskState | None,
        changed: bool,
        task: Task | None = None,
    ) -> None:
        """``notify`` the event, or only trace it when nobody observes it: the task (built
        from held chunks when not given) only for someone who needs it."""
        manager = self.manager
        if manager.observed(changed):
            manager.notify(task if task is not None else self.task, event, previous, self.version)
        else:
            manager.trace_event(self._task.id, event, previous)

    async def _apply(self, event: StreamEvent) -> None:
        if self.reply is not None:
            raise IllegalTransitionError("the agent already replied with a message")
        task = self._task  # its id and state: held artifact chunks change neither
        manager = self.manager
        files = self._files  # set only when the call has a base URL to serve files at
        base_url = self.context.call.base_url
        if files is not None and base_url is not None and files.offloads(event):
            direct_reply = isinstance(event, Message) and self.allow_reply and not self._emitted
            event = await files.offload(  # a large file: served by URL
                event,
                base_url=base_url,
                task_id=task.id,
                owner=owner_principal(self.owner),
                task_owner=self.owner,
                task_bound=not direct_reply,
            )
        chunk: TaskArtifactUpdateEvent | None = None
        if isinstance(event, TaskArtifactUpdateEvent):  # first: most events are chunks
            chunk = event = _owned(event, task)
        elif isinstance(event, Message):
            if self.allow_reply and not self._emitted:
                self.reply = _as_reply(event, task)
                manager.bus.publish(task.id, self.reply, NO_ID)
                self.settled.set()
                return
            # Within a task, a reply message is the agent's final answer.
            event = TaskStatusUpdateEvent(
                task_id=task.id,
                context_id=task.context_id,
                status=TaskStatus.now(TaskState.COMPLETED, _in_task(event, task)),
            )
        elif isinstance(event, TaskStatusUpdateEvent):
            event = _owned(event, task)
            if (
                event.status.state is TaskState.COMPLETED
                and event.status.message is None
                and manager.config.whole_answers
            ):
                event = _with_answer(event, self.task)
        else:
            raise IllegalTransitionError(f"agents may not emit {type(event).__name__} events")
        previous = task.status.state
        new_task: Task | None = None
        published = False
        flush_due = False
        channel = manager.channel
        shared = channel.shared
        if chunk is not None and self._coalesces(shared):
            self._check_open()
            if shared:
                await self._send_held(chunk)
                shared = channel.shared  # read again after awaiting the channel
            flush_due = self._hold(chunk)
            published = True  # to the shared channel, if any, by ``_send_held``
        else:
            new_task, published = await self._save(event)
            if new_task.status.state.is_interrupted:
                await manager.let_go(self)
            shared = channel.shared
        self._emitted = True
        version = self.version
        if shared:
            if not published:
                await manager.send_to_channel(task.id, version, event, self.published)
            self.published = version
        manager.bus.publish(task.id, event, version)
        self._tell(event, previous, previous is not self._task.status.state, new_task)
        state = self._task.status.state
        if state.is_terminal or state.is_interrupted:
            self.settled.set()
        if flush_due:
            # After the event reached this instance's streams: a subscriber taking the
            # run's task and version while the save is awaited must not get it twice.
            await self._flush()  # an agent that never yields still gets its chunks saved

    def _coalesces(self, shared: bool) -> bool:
        """Whether artifact events wait to be saved together: the task exists already and
        this run is the task's active one (a finished run's late events, from an agent
        still working in the background, are saved one by one as before).

        On a store whose channel is shared by several instances (redis://, postgresql://)
        only when that channel writes behind (``TaskChannel.write_behind``): each held
        event is published at once with its id, so the other instances' followers see it
        now, and whoever settles the task after this instance died applies the channel's
        events past the stored version before writing after them (``write_status``).
        ``shared``: the channel's ``shared``, read by the caller for this event.
        """
        return (
            self._hold_delay > 0
            and (self.stored != 0 or self._unknown_yet(shared))
            and (self._channel_behind or not shared)
            and self.manager._active.get(self._task.id) is self  # pyright: ignore[reportPrivateUsage]
        )

    def _unknown_yet(self, shared: bool) -> bool:
        """Whether this new, unwritten task may wait for its first write: nobody can know
        of it yet (no stream follows it, no push config names it: either would have had it
        written first), the store numbers creates (``TaskStore.creates_at_version``) and no
        other instance shares its channel. It is then written with its first status change,
        the end of the run, or the coalescing interval, whichever comes first."""
        manager = self.manager
        return (
            not shared
            and self.previous is None
            and manager.numbers_creates
            and not manager.bus.subscriber_count(self._task.id)
        )

    def _check_open(self) -> None:
        """Refuse artifacts once the task is final."""
        if self._task.status.state.is_terminal:
            raise IllegalTransitionError(
                f"task is already {self._task.status.state.value}; no more artifacts"
            )

    async def _send_held(self, event: TaskArtifactUpdateEvent) -> None:
        """Publish an artifact event on the shared channel before ``_hold`` holds it, with
        the id it is about to get: a subscriber reading the run's task and version
        meanwhile then gets it from this instance's bus, once."""
        sent = await self.manager.send_to_channel(
            self._task.id, self.version + 1, event, self.published
        )
        if sent is False:
            await self._overtaken()

    def _hold(self, event: TaskArtifactUpdateEvent) -> bool:
        """Apply an artifact event in memory; it is saved with the next save or flush.

        The event gets the next version as its id now, and the save that writes it stores
        the task at the id of the last event it holds, so ids stay versions. Returns
        whether the held events are due to be saved now (the caller checked the task is
        open: ``_check_open``).
        """
        now = time.monotonic()
        if not self._unsaved:
            self._chunks_since = now
        self._chunks.append(event)
        self._unsaved.append(event)
        self.version += 1
        delay = self._hold_delay
        if now - self._chunks_since >= delay:
            return True
        if self._flush_timer is None:
            self._flush_timer = asyncio.get_running_loop().call_later(delay, self._start_flusher)
        return False

    async def _overtaken(self) -> None:
        """The channel refused a held chunk as not above its last event: another instance
        wrote the task after this run's last one (it settled the task while this instance
        was frozen). The chunk is streamed nowhere: the run catches up and stops."""
        await self._reload()
        raise IllegalTransitionError(
            f"task {self._task.id} was written elsewhere ({self._task.status.state.value})"
        )

    def _start_flusher(self) -> None:
        self._flush_timer = None
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.get_running_loop().create_task(self._flush_later())

    async def _flush_later(self) -> None:
        async with self._lock:
            try:
                await self._flush()
            except A2AError:
                pass  # logged where it failed; the next save or the run's end tries again
            except Exception:
                logger.exception("task %s: could not save the streamed chunks", self._task.id)

    async def _flush(self) -> None:
        """Save the artifact events held in memory (under the lock)."""
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        for _ in range(_SAVE_ATTEMPTS):
            if not self._unsaved:
                return
            try:
                await self._persist(self.task)
            except ConcurrentUpdateError:
                await self._reload()  # the held events are re-applied to what is stored
                continue
            return
        self.error = InternalError("The task kept changing while it was being saved")
        raise self.error

    async def _save(
        self, event: TaskStatusUpdateEvent | TaskArtifactUpdateEvent
    ) -> tuple[Task, bool]:
        """Apply ``event`` to the task and store the result, re-applying after a conflict.

        Returns the new task, and whether the event was published with the save. Artifact
        events held in memory are saved with it (one write).
        """
        max_history = self.manager.config.max_history
        for _ in range(_SAVE_ATTEMPTS):
            if isinstance(event, TaskStatusUpdateEvent):
                new_task = apply_status(self.task, event, max_history)
            else:
                new_task = apply_artifact(self.task, event)
            try:
                published = await self._persist(new_task, self.version + 1, event)
            except ConcurrentUpdateError:
                await self._reload()
                continue
            return new_task, published
        self.error = InternalError("The task kept changing while it was being saved")
        raise self.error

    async def _persist(
        self, task: Task, version: int | None = None, event: StreamEvent | None = None
    ) -> bool:
        """Store ``task`` at ``version`` (default: the run's version, as the first save or
        a flush of held chunks), over the stored version; True when ``event`` was published
        in the same write."""
        manager = self.manager
        store = manager.store
        channel = manager.channel
        published = False
        if version is None:
            version = max(self.version, self.stored + 1)
        try:
            if self.stored == 0:
                if version == 1:
                    stored = await store.create(task, self.owner)
                else:  # its first events were held (``_unknown_yet``)
                    stored = await store.create_at(task, self.owner, version)
            elif event is not None and channel.shared and channel.saves_events:
                at = None if version == self.stored + 1 else version
                stored = await manager.save_and_publish(
                    task, self.owner, self.stored, event, self.published, at
                )
                published = True
            elif version == self.stored + 1:
                stored = await store.save(task, self.owner, self.stored)
            else:
                stored = await store.save_at(task, self.owner, self.stored, version)
        except (ConcurrentUpdateError, ServerBusyError):
            raise  # a conflict to re-apply, or a full store: retryable, not a failure
        except Exception as exc:
            logger.exception("task %s: the task store failed", task.id)
            self.error = InternalError("The task could not be saved")
            raise self.error from exc
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        self.version = self.stored = stored.version
        self.task = task
        self._unsaved = []
        self.error = None
        return published

    async def _reload(self) -> None:
        """Someone else saved the task (another instance, a concurrent cancel): catch up."""
        stored = await self.manager.store.get(self._task.id, self.owner)
        if stored is None:
            self.token.cancel()
            raise IllegalTransitionError("the task no longer exists")
        self.task, self.version = stored.task, stored.version
        self.stored = stored.version
        if stored.task.status.state.is_terminal:
            self._unsaved = []  # nothing more can be added to it
            # Finalized elsewhere (a survivor settled it while this instance was frozen,
            # or a cancel nobody here answered): tell the agent to stop, and end the
            # streams that follow it here with that final status (published elsewhere).
            self.token.cancel()
            task = stored.task
            final = TaskStatusUpdateEvent(
                task_id=task.id, context_id=task.context_id, status=task.status
            )
            self.manager.bus.publish(task.id, final, stored.version)
            self.settled.set()
        elif self._unsaved:
            # Artifact events held in memory (already streamed here) join what another
            # writer stored; the next save writes them, numbered after it (and after the
            # ids they were published with: a shared channel's ids only grow).
            self._chunks = list(self._unsaved)
            self.version = stored.version + len(self._unsaved)
            if self.manager.channel.shared:
                self.version = max(self.version, self.published)

    async def persist(self) -> None:
        """Store the task now if no event has yet (non-blocking sends, inline push configs),
        or save the artifact events held in memory."""
        if (self.version == 0 and self.reply is None) or self._unsaved:
            async with self._lock:
                if self.version == 0 and self.reply is None:
                    await self._persist(self.task)
                elif self._unsaved:
                    await self._flush()

    async def begin_continuation(self, task: Task) -> None:
        """Save the continued task (new message, WORKING) unless a cancel got there first."""
        async with self._lock:
            if self.state.is_terminal:
                raise UnsupportedOperationError(f"Task {task.id} is {self.state.value}")
            await self._persist(task)
            self.initial = task

    async def server_status(self, state: TaskState, text: str | None = None) -> bool:
        """A state change made by the server itself (cancel, failure); True if applied."""
        async with self._lock:
            return await self._server_status(state, text)

    async def _server_status(self, state: TaskState, text: str | None) -> bool:
        if self.state.is_terminal or self.reply is not None:
            return False
        task = self.task
        message = (
            Message(
                message_id=new_id(),
                role=Role.AGENT,
                parts=[Part(text=text)],
                task_id=task.id,
                context_id=task.context_id,
            )
            if text
            else None
        )
        event = TaskStatusUpdateEvent(
            task_id=task.id, context_id=task.context_id, status=TaskStatus.now(state, message)
        )
        try:
            await self._apply(event)
        except (IllegalTransitionError, A2AError) as exc:
            logger.warning("task %s: could not move to %s: %s", task.id, state.value, exc)
            return False
        return True

    # -- execution ------------------------------------------------------------
    def new_updater(self) -> TaskUpdater:
        """An updater whose events this run applies."""
        return TaskUpdater(self, self.task.id, self.task.context_id)

    def interrupt(self) -> None:
        """Cancel the run's task; one that has not started yet stops at its first step.

        A task canceled before its first step never runs its code, so its cleanup
        (which frees the slot) would never run: on Python 3.12+ a cancel that follows
        a non-blocking send at once got there first and held the slot for good.
        """
        handle = self.handle
        if handle is None or handle.done():
            return
        if self.started:
            handle.cancel()
        else:
            self._interrupt_at_start = True

    async def run(self, executor: AgentExecutor) -> None:
        """Execute the agent and turn its ending into the task's outcome."""
        self.started = True
        hooks = _telemetry.active
        if hooks is None:
            await self._execute(executor)
        else:
            await hooks.run(self, self._execute(executor))

    async def _execute(self, executor: AgentExecutor) -> None:
        # The updater is made here, not kept on the run: no reference cycle, so a
        # finished run is freed at once by reference counting, not by the GC.
        updater = self.new_updater()
        try:
            if self._interrupt_at_start:
                raise asyncio.CancelledError
            await executor.execute(self.context, updater)
        except asyncio.CancelledError:
            # Interrupted (cancel, shutdown): a cancel already made the task CANCELED.
            await self.server_status(TaskState.CANCELED)
            raise
        except CancelledByClient:
            await self.server_status(TaskState.CANCELED)
        except IllegalTransitionError:
            pass  # logged, and the task failed, where the event was rejected
        except Exception as exc:
            logger.exception("task %s: the agent raised", self.task.id)
            text = SAFE_FAILURE_TEXT
            if self.manager.config.expose_agent_errors:
                text = f"{text} ({type(exc).__name__}: {exc})"
            await self.server_status(TaskState.FAILED, text)
        else:
            # Returning means the work is done: never leave a task working forever.
            if not self.state.is_interrupted and not executor.leaves_task_open:
                done = TaskState.CANCELED if self.token.cancelled else TaskState.COMPLETED
                await self.server_status(done)
        finally:
            try:
                await self.persist()
                state = self.state
                channel = self.manager.channel
                unsettled = not (state.is_terminal or state.is_interrupted)
                if self.version and unsettled and channel.shared:
                    await channel.publish_end(
                        self.task.id, self.version
                    )  # tell followers elsewhere
            except Exception:
                logger.exception("task %s: could not record the end of the run", self.task.id)
            finally:
                if self._flush_timer is not None:
                    self._flush_timer.cancel()
                    self._flush_timer = None
                self.manager.finished(self)


def _as_reply(message: Message, task: Task) -> Message:
    """A direct reply belongs to the context; no task exists for it to name."""
    if message.task_id is None and message.context_id == task.context_id:
        return message
    return changed(message, {"task_id": None, "context_id": task.context_id})


def _with_answer(event: TaskStatusUpdateEvent, task: Task) -> TaskStatusUpdateEvent:
    """The COMPLETED status carrying the text and data of the task's ``result`` artifact,
    for peers that read only the final status message (CrewAI's delegation by default).
    The message says what it repeats (``REPEATS_KEY``), so it stays out of the history.
    Unchanged when there is no such artifact, or it holds only files."""
    parts = [
        part
        for artifact in task.artifacts
        if artifact.artifact_id == RESULT_ARTIFACT
        for part in artifact.parts
        if part.text is not None or part.data is not None
    ]
    if not parts:
        return event
    message = Message(
        message_id=new_id(),
        role=Role.AGENT,
        parts=parts,
        task_id=task.id,
        context_id=task.context_id,
        metadata={REPEATS_KEY: RESULT_ARTIFACT},
    )
    return changed(event, {"status": changed(event.status, {"message": message})})


def _in_task(message: Message, task: Task) -> Message:
    if message.task_id == task.id and message.context_id == task.context_id:
        return message
    return changed(message, {"task_id": task.id, "context_id": task.context_id})


_Update = TypeVar("_Update", TaskStatusUpdateEvent, TaskArtifactUpdateEvent)


def _owned(event: _Update, task: Task) -> _Update:
    """The event addressed to this task, its status stamped with a time."""
    update: dict[str, Any] = {}
    if event.task_id != task.id or event.context_id != task.context_id:
        update = {"task_id": task.id, "context_id": task.context_id}
    if isinstance(event, TaskStatusUpdateEvent) and event.status.timestamp is None:
        update["status"] = changed(event.status, {"timestamp": datetime.now(UTC)})
    return changed(event, update) if update else event


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
        self.numbers_creates = numbers_creates(self.backend)
        """Whether a new task's first write may be held (``TaskRun._unknown_yet``)."""
        self.saves_behind = saves_behind(self.backend)
        """Whether artifact chunks may be held and saved together (``TaskRun._hold``)."""
        self.bus: EventBus = bus if bus is not None else MemoryEventBus()
        self.config = config or ManagerConfig()
        # The store as given, not the timing wrapper: a wrapper per service would
        # otherwise hide the store's channel (or give each service its own).
        self.channel: TaskChannel = channel_for(self.backend)
        """How this instance shares events and cancels with the others on the store."""
        self._channel_started = False
        self._active: dict[str, TaskRun] = {}
        self._closing = False
        self.observing = Observers(observers, self._active)
        """Who hears of the runs' events besides their streams (the service adds push)."""
        # The runs tell them through the manager.
        self.observed = self.observing.observed
        self.notify = self.observing.notify
        self.trace_event = self.observing.trace
        writer = StatusWriter(
            store, self.channel, self.bus, self.config, self.notify, self.send_to_channel
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

    async def save_and_publish(
        self,
        task: Task,
        owner: str | None,
        version: int,
        event: StreamEvent,
        previous: int | None,
        at: int | None = None,
    ) -> StoredTask:
        """Save a run's task and publish its event in one write (``TaskChannel.saves_events``).

        ``at``: the version to save at, past held chunks already published (default: next).
        """
        hooks = _telemetry.active
        started = time.perf_counter()
        try:
            if at is None:
                return await self.channel.save_and_publish(task, owner, version, event, previous)
            return await self.channel.save_and_publish(
                task, owner, version, event, previous, version=at
            )
        finally:
            if hooks is not None:  # timed as a save, like the store's own saves
                hooks.store_time("save", type(self.backend).__name__, time.perf_counter() - started)

    async def send_to_channel(
        self, task_id: str, event_id: int, event: StreamEvent, previous: int | None
    ) -> bool | None:
        """Publish to the shared channel; a failure is logged (the task itself is saved).

        False when the channel dropped the event as not above its last (a late writer).
        """
        try:
            return await self.channel.publish(task_id, event_id, event, previous)
        except Exception:
            logger.exception(
                "task %s: could not publish event %d to the channel", task_id, event_id
            )
            return None

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

    async def let_go(self, run: TaskRun) -> None:
        """A run that paused drops its lease before the pause is announced (``RunLeases``)."""
        if self.leases is not None:
            await self.leases.let_go(run)

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
        persist_now: bool,
        task_id: str | None = None,
    ) -> TaskRun:
        """Register a run for ``message`` (a new task, or a continuation), not yet started.

        ``task_id`` names a new task (idempotent sends record it first). The
        caller must then ``start`` the run or ``abandon`` it.
        """
        if not self._channel_started:
            await self.start_channel()
        if message.task_id:
            run = await self._continuation(
                message.task_id, message, call, configuration, request_metadata
            )
        else:
            context_id = message.context_id or new_id()
            task_id = task_id or new_id()
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
            context = _request_context(task, message, call, configuration, request_metadata)
            context.earlier = EarlierTurns(self.store, call.owner, context_id, task_id)
            run = TaskRun(self, task, call.owner, context, allow_reply=allow_reply)
            self._register(run)
            try:
                self.executor.admit(context)
                if self.leases is not None:
                    await self.leases.acquire(run)
            except BaseException:
                self._unregister(run)
                raise
        if persist_now:
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
        if run.previous is not None and self.observing.anyone:
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
