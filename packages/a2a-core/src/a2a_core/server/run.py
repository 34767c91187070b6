"""A run: one execution of the agent for one task, and its lifecycle.

A ``TaskRun`` is registered with the manager (taking a capacity slot and marking
the task busy) before anything is awaited; ``TaskManager.start`` then launches
it, and ``abandon`` undoes it when the launch cannot go ahead. Every write to a
registered task goes through its run, under the run's lock: each event is
checked against the state machine, applied copy-on-write, handed to the run's
writer (``writers``: saved, or held to be saved with the next write), then
published to this instance's streams and told to the observers. Streams
therefore see events in order, and once a task is terminal (canceled, say)
nothing can change it again. Each event's id is the task version its write
produces (``RunWriter.version``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Coroutine
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from .. import telemetry as _telemetry
from ..contracts.task_store import StoredTask
from ..errors import A2AError, UnsupportedOperationError
from ..types import (
    Message,
    Part,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    new_id,
)
from ..types._base import changed
from .cancellation import CancelledByClient
from .context import owner_principal
from .events import NO_ID
from .executor import AgentExecutor, RequestContext
from .oneshot import OneShot
from .task_state import REPEATS_KEY, IllegalTransitionError
from .updater import TaskUpdater
from .writers import RunWriter, writer_for

if TYPE_CHECKING:
    from .files import FileStore
    from .manager import TaskManager

__all__ = ["RESULT_ARTIFACT", "SAFE_FAILURE_TEXT", "TaskRun"]

logger = logging.getLogger("a2a_core.server")

SAFE_FAILURE_TEXT = "The agent failed while handling this task."
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
        self._waiters: deque[asyncio.Future[None]] | None = None
        """Made by the first waiter: an empty deque is ~600 bytes, and most runs' locks
        are never contended (one per open stream's run)."""

    async def __aenter__(self) -> None:
        if not self._locked:  # no waiters then: a release with waiters hands the lock over
            self._locked = True
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = deque()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed the lock, cancelled before taking it: pass it on
            else:  # still queued, unless a release skipped it already
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)  # a waiter made it: not None
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
        while waiters:  # None (never contended) or empty: free it
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
        self.initial = task
        """The task as the run began (the first event of a stream)."""
        self.owner = owner
        self.previous = previous
        """The stored task a continuation started from (to roll back to)."""
        self._lock = _RunLock()
        self.writer: RunWriter = writer_for(
            manager,
            task,
            owner,
            previous.version if previous is not None else 0,
            self._caught,
            self._lock,
        )
        """Saves the task and numbers its events, chosen once for the run."""
        self.context = context
        self.token = context.cancellation
        self.allow_reply = allow_reply
        self.reply: Message | None = None
        self.settled = OneShot()
        """Set when the task is terminal or interrupted, the agent replied, or the run ended."""
        self.done = OneShot()
        """Set when the run has ended."""
        self.handle: asyncio.Task[None] | None = None
        self.started = False
        """Whether the run's task has taken its first step (entered ``run``)."""
        self._interrupt_at_start = False
        self.span: Any = None
        """The run's span while telemetry traces it (events go there)."""
        self._emitted = False
        self._files = manager.files if context.call.base_url is not None else None
        """Where large files leave the events for (None: they stay, no URL to serve them)."""
        self._yielded = float("-inf")
        """When (``time.monotonic()``) an event last let the streams run."""

    @property
    def task(self) -> Task:
        """The latest state of the task (stored up to ``stored``, unless that is 0)."""
        return self.writer.task

    @property
    def version(self) -> int:
        """The id of the task's last event (0: not stored yet)."""
        return self.writer.version

    @property
    def stored(self) -> int:
        """The version the store holds (below ``version`` while chunks wait to be saved)."""
        return self.writer.stored

    @property
    def error(self) -> A2AError | None:
        """Why the last save failed (cleared by a later successful save)."""
        return self.writer.error

    @property
    def state(self) -> TaskState:
        return self.writer.head.status.state  # held artifact chunks never change it

    @property
    def whole_answers(self) -> bool:
        """``ManagerConfig.whole_answers`` (what the updater's artifact streams read)."""
        return self.manager.config.whole_answers

    @property
    def task_id(self) -> str:
        return self.writer.head.id

    # -- events ---------------------------------------------------------------
    async def emit(self, event: StreamEvent) -> None:
        """Apply an agent's event (the updater calls this)."""
        lock = self._lock
        if not lock.take():  # free is the rule: no coroutines to enter and leave it then
            await lock.__aenter__()  # queued behind a flush or a cancel
        try:
            if (
                self.state is TaskState.CANCELED
                and isinstance(event, TaskStatusUpdateEvent)
                and event.status.state is TaskState.CANCELED
            ):
                return  # an agent confirming the cancel the server already made
            try:
                flush_due = self._hold(event)
                if flush_due is None:
                    await self._apply(event)
                elif flush_due:  # an agent that never yields still gets its chunks saved
                    await self.writer.flush()
            except IllegalTransitionError as exc:
                logger.warning("task %s: rejected an event from the agent: %s", self.task_id, exc)
                if not self.state.is_terminal and self.reply is None:
                    await self._server_status(TaskState.FAILED, SAFE_FAILURE_TEXT)
                raise
        finally:
            lock.release()
        if not self.settled.is_set() and self.manager.bus.subscriber_count(self.task_id):
            # Let streams write what is pending (an agent that never awaits would make all
            # its events before the first reached the client), at most once per
            # _YIELD_SECONDS so streams send the events made meanwhile together. Not after
            # the event that settles the task: the run ends first, so a client that hears
            # the task is done finds it let go.
            now = time.monotonic()
            if now - self._yielded >= _YIELD_SECONDS:
                self._yielded = now
                await asyncio.sleep(0)

    def _hold(self, event: StreamEvent) -> bool | None:
        """The one fast lane: an artifact chunk the writer holds without awaiting (no file
        to offload). Whether the held chunks are due to be saved now; None when the event
        takes ``_apply``'s way."""
        if type(event) is not TaskArtifactUpdateEvent or self.reply is not None:
            return None
        writer = self.writer
        task = writer.head
        files = self._files
        if files is not None and files.offloads(event):
            return None
        chunk = _owned(event, task)
        self._check_open()
        flush_due = writer.hold(chunk)
        if flush_due is not None:
            self._emitted = True
            self.manager.bus.publish(task.id, chunk, writer.version)
            self._tell(chunk, task.status.state, changed=False)
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
        told = self.manager.observing
        if told.wanted(changed):
            task = task if task is not None else self.task
            told.notify(task, event, previous, self.version, self.span)
        else:
            told.trace(self.span, event, previous)

    async def _apply(self, event: StreamEvent) -> None:
        if self.reply is not None:
            raise IllegalTransitionError("the agent already replied with a message")
        writer = self.writer
        task = writer.head  # its id and state: held artifact chunks change neither
        manager = self.manager
        files = self._files  # set only when the call has a base URL to serve files at
        if files is not None and files.offloads(event):
            event = await self._offload(files, event)
        if isinstance(event, Message) and self.allow_reply and not self._emitted:
            self.reply = _as_reply(event, task)
            manager.bus.publish(task.id, self.reply, NO_ID)
            self.settled.set()
            return
        event = _task_event(event, writer, manager.config.whole_answers)
        chunk = event if isinstance(event, TaskArtifactUpdateEvent) else None
        previous = task.status.state
        new_task: Task | None = None
        flush_due: bool | None = None
        if chunk is not None:
            self._check_open()
            flush_due = await writer.add(chunk)
        if flush_due is None:
            new_task = await writer.save(event)
            if new_task.status.state.is_interrupted:
                await self._release_lease()
            await writer.share(event)
        self._emitted = True
        manager.bus.publish(task.id, event, writer.version)
        state = writer.head.status.state
        self._tell(event, previous, previous is not state, new_task)
        if state.is_terminal or state.is_interrupted:
            self.settled.set()
        if flush_due:
            # After the event reached this instance's streams: a subscriber taking the
            # run's task and version while the save is awaited must not get it twice.
            await writer.flush()  # an agent that never yields still gets its chunks saved

    async def _offload(self, files: FileStore, event: _AgentEvent) -> _AgentEvent:
        """``event`` with its large files served by URL instead."""
        direct_reply = isinstance(event, Message) and self.allow_reply and not self._emitted
        base_url = self.context.call.base_url
        assert base_url is not None  # ``_files`` is set only then
        return await files.offload(
            event,
            base_url=base_url,
            task_id=self.task_id,
            owner=owner_principal(self.owner),
            task_owner=self.owner,
            task_bound=not direct_reply,
        )

    def _check_open(self) -> None:
        """Refuse artifacts once the task is final."""
        state = self.state
        if state.is_terminal:
            raise IllegalTransitionError(f"task is already {state.value}; no more artifacts")

    async def _release_lease(self) -> None:
        """A run that paused drops its lease before the pause is announced (``RunLeases``)."""
        leases = self.manager.leases
        if leases is not None:
            await leases.let_go(self)

    def _caught(self, stored: StoredTask | None) -> None:
        """The writer found the task gone, or final elsewhere (settled by a survivor, or a
        cancel nobody here answered): stop the agent; end the streams here with it."""
        self.token.cancel()
        if stored is not None:
            task = stored.task
            final = TaskStatusUpdateEvent(
                task_id=task.id, context_id=task.context_id, status=task.status
            )
            self.manager.bus.publish(task.id, final, stored.version)
            self.settled.set()

    async def persist(self) -> None:
        """Store the task now if it never was (a run that is a task from its start), or
        save the artifact events held in memory (a reader needs the stored task)."""
        writer = self.writer
        if writer.dirty and (self.reply is None or writer.stored):
            async with self._lock:
                if self.reply is None or writer.stored:
                    await writer.persist()

    async def begin_continuation(self, task: Task) -> None:
        """Save the continued task (new message, WORKING) unless a cancel got there first."""
        async with self._lock:
            if self.state.is_terminal:
                raise UnsupportedOperationError(f"Task {task.id} is {self.state.value}")
            await self.writer.replace(task)
            self.initial = task

    async def server_status(self, state: TaskState, text: str | None = None) -> bool:
        """A state change made by the server itself (cancel, failure); True if applied."""
        async with self._lock:
            return await self._server_status(state, text)

    async def _server_status(self, state: TaskState, text: str | None) -> bool:
        if self.state.is_terminal or self.reply is not None:
            return False
        task = self.writer.head
        event = server_event(task, state, text)
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
        """Cancel the run's task; one that has not started yet stops at its first step
        (a task canceled before it never runs its code, so its cleanup, which frees the
        slot, would never run)."""
        handle = self.handle
        if handle is None or handle.done():
            return
        if self.started:
            handle.cancel()
        else:
            self._interrupt_at_start = True

    def run(self, executor: AgentExecutor) -> Coroutine[Any, Any, None]:
        """Execute the agent and turn its ending into the task's outcome: the coroutine
        for the run's task (no coroutine of its own around it, kept for the run's life)."""
        hooks = _telemetry.active
        if hooks is None:
            return self._execute(executor)
        return hooks.run(self, self._execute(executor))

    async def _execute(self, executor: AgentExecutor) -> None:
        self.started = True
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
                async with self._lock:
                    await self.writer.end(replied=self.reply is not None)
            except Exception:
                logger.exception("task %s: could not record the end of the run", self.task.id)
            finally:
                self.writer.close()
                self.manager.finished(self)


def server_event(task: Task, state: TaskState, text: str | None) -> TaskStatusUpdateEvent:
    """A status the server itself gives ``task`` (cancel, failure), with ``text`` if any."""
    message = None
    if text:
        message = Message(
            message_id=new_id(),
            role=Role.AGENT,
            parts=[Part(text=text)],
            task_id=task.id,
            context_id=task.context_id,
        )
    return TaskStatusUpdateEvent(
        task_id=task.id, context_id=task.context_id, status=TaskStatus.now(state, message)
    )


def _task_event(
    event: StreamEvent, writer: RunWriter, whole_answers: bool
) -> TaskStatusUpdateEvent | TaskArtifactUpdateEvent:
    """An agent's event as the task's: addressed to it, a message as its final answer,
    a bare COMPLETED status carrying the answer (``whole_answers``)."""
    task = writer.head
    if isinstance(event, TaskArtifactUpdateEvent):  # first: most events are chunks
        return _owned(event, task)
    if isinstance(event, Message):  # within a task, a message is the agent's final answer
        status = TaskStatus.now(TaskState.COMPLETED, _in_task(event, task))
        return TaskStatusUpdateEvent(task_id=task.id, context_id=task.context_id, status=status)
    if isinstance(event, TaskStatusUpdateEvent):
        event = _owned(event, task)
        if (
            whole_answers
            and event.status.state is TaskState.COMPLETED
            and event.status.message is None
        ):
            return _with_answer(event, writer.task)
        return event
    raise IllegalTransitionError(f"agents may not emit {type(event).__name__} events")


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


_AgentEvent = Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent
"""What an agent may emit (``FileStore.offload`` takes the same)."""

_Update = TypeVar("_Update", TaskStatusUpdateEvent, TaskArtifactUpdateEvent)


def _owned(event: _Update, task: Task) -> _Update:
    """The event addressed to this task, its status stamped with a time."""
    update: dict[str, Any] = {}
    if event.task_id != task.id or event.context_id != task.context_id:
        update = {"task_id": task.id, "context_id": task.context_id}
    if isinstance(event, TaskStatusUpdateEvent) and event.status.timestamp is None:
        update["status"] = changed(event.status, {"timestamp": datetime.now(UTC)})
    return changed(event, update) if update else event
