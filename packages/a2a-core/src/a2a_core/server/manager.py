"""The task manager: runs agents, applies their events, enforces the lifecycle.

One ``TaskRun`` per execution of an agent for a task. Every event an agent
emits is checked against the state machine, applied copy-on-write, saved in
the store, and published on the event bus, under the run's lock, so streams
see events in order and a cancel cannot be overwritten by a late worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..errors import (
    A2AError,
    InternalError,
    InvalidParamsError,
    ServerBusyError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from ..stores import ConcurrentUpdateError, StoredTask, TaskStore
from ..types import (
    Message,
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
from .cancellation import CancellationToken, CancelledByClient
from .context import ServerCallContext
from .events import EventBus, MemoryEventBus, Subscription
from .executor import AgentExecutor, RequestContext
from .task_state import IllegalTransitionError, append_message, apply_artifact, apply_status
from .updater import TaskUpdater

__all__ = ["ManagerConfig", "TaskManager", "TaskObserver", "TaskRun"]

logger = logging.getLogger("a2a_core.server")

TaskObserver = Callable[[Task, StreamEvent, TaskState | None], None]
"""Called after each applied event with the task, the event and the previous state.

Observers must not block: they run inline on the event path (push delivery
queues work for a background sender).
"""

SAFE_FAILURE_TEXT = "The agent failed while handling this task."


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

    def __post_init__(self) -> None:
        if self.max_background_tasks <= 0:
            raise ValueError("max_background_tasks must be > 0")
        if self.max_history <= 0:
            raise ValueError("max_history must be > 0")


class TaskRun:
    """One execution of an agent for one task; the ``EventSink`` of its updater."""

    def __init__(
        self,
        manager: TaskManager,
        task: Task,
        owner: str | None,
        version: int,
        context: RequestContext,
        allow_reply: bool,
    ) -> None:
        self.manager = manager
        self.task = task
        self.initial = task
        self.owner = owner
        self.version = version  # 0: not yet in the store
        self.context = context
        self.token = context.cancellation
        self.updater = TaskUpdater(self, task.id, task.context_id)
        self.allow_reply = allow_reply
        self.reply: Message | None = None
        self.settled = asyncio.Event()
        self.done = asyncio.Event()
        self.handle: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._emitted = False

    @property
    def state(self) -> TaskState:
        return self.task.status.state

    @property
    def task_id(self) -> str:
        return self.task.id

    async def emit(self, event: StreamEvent) -> None:
        """Apply an agent's event (the updater calls this)."""
        async with self._lock:
            await self._apply(event, from_agent=True)

    async def _apply(self, event: StreamEvent, from_agent: bool) -> None:
        manager = self.manager
        if isinstance(event, Message):
            if self.allow_reply and not self._emitted and self.reply is None:
                self.reply = event
                self._emitted = True
                manager.bus.publish(self.task.id, event)
                self.settled.set()
                return
            if self.state.is_terminal:
                raise IllegalTransitionError("task is already final; no more messages")
            # A message after task events: deliver it as a status message.
            event = TaskStatusUpdateEvent(
                task_id=self.task.id,
                context_id=self.task.context_id,
                status=TaskStatus.now(self.state, event),
            )
        if self.reply is not None:
            raise IllegalTransitionError("the agent already replied with a message")
        previous = self.state
        if isinstance(event, TaskStatusUpdateEvent):
            event = _own(event, self.task)
            new_task = apply_status(self.task, event, manager.config.max_history)
        elif isinstance(event, TaskArtifactUpdateEvent):
            event = _own(event, self.task)
            new_task = apply_artifact(self.task, event)
        else:
            raise IllegalTransitionError(f"agents may not emit {type(event).__name__} events")
        await self._persist(new_task)
        self._emitted = True
        manager.bus.publish(self.task.id, event)
        manager.notify(new_task, event, previous)
        state = new_task.status.state
        if state.is_terminal or state.is_interrupted:
            self.settled.set()

    async def _persist(self, task: Task) -> None:
        store = self.manager.store
        if self.version == 0:
            stored = await store.create(task, self.owner)
        else:
            stored = await store.save(task, self.owner, self.version)
        self.version = stored.version
        self.task = task

    async def ensure_persisted(self) -> None:
        """Store the task if no event has done so yet (deferred creation)."""
        async with self._lock:
            if self.version == 0 and self.reply is None:
                await self._persist(self.task)

    async def server_status(self, state: TaskState, text: str | None = None) -> None:
        """A state change made by the server itself (cancel, failure handling)."""
        async with self._lock:
            if self.state.is_terminal or self.reply is not None:
                return
            message = (
                Message(
                    message_id=new_id(),
                    role=Role.AGENT,
                    parts=[_text_part(text)],
                    task_id=self.task.id,
                    context_id=self.task.context_id,
                )
                if text
                else None
            )
            event = TaskStatusUpdateEvent(
                task_id=self.task.id,
                context_id=self.task.context_id,
                status=TaskStatus.now(state, message),
            )
            try:
                await self._apply(event, from_agent=False)
            except IllegalTransitionError:
                logger.warning("task %s: server could not move to %s", self.task.id, state.value)

    async def run(self, executor: AgentExecutor) -> None:
        """Execute the agent and turn its ending into the task's outcome."""
        try:
            await executor.execute(self.context, self.updater)
        except asyncio.CancelledError:
            await asyncio.shield(self._on_cancelled())
        except CancelledByClient:
            await self._on_cancelled()
        except IllegalTransitionError as exc:
            logger.warning("task %s: rejected agent event: %s", self.task.id, exc)
            await self.server_status(TaskState.FAILED, SAFE_FAILURE_TEXT)
        except Exception as exc:
            logger.exception("task %s: agent raised", self.task.id)
            text = (
                f"{SAFE_FAILURE_TEXT} ({type(exc).__name__}: {exc})"
                if self.manager.config.expose_agent_errors
                else SAFE_FAILURE_TEXT
            )
            await self.server_status(TaskState.FAILED, text)
        finally:
            try:
                if self.token.cancelled and not self.state.is_terminal:
                    await self.server_status(TaskState.CANCELED)
                await self.ensure_persisted()
            except Exception:
                logger.exception("task %s: could not record the run's end", self.task.id)
            finally:
                self.manager.finished(self)

    async def _on_cancelled(self) -> None:
        if not self.state.is_terminal:
            await self.server_status(TaskState.CANCELED)


def _text_part(text: str) -> Any:
    from ..types import Part

    return Part(text=text)


_E = TypeVar("_E", TaskStatusUpdateEvent, TaskArtifactUpdateEvent)


def _own(event: _E, task: Task) -> _E:
    if event.task_id == task.id and event.context_id == task.context_id:
        return event
    return event.model_copy(update={"task_id": task.id, "context_id": task.context_id})


class TaskManager:
    """Starts runs, tracks the active ones, cancels them, and shuts them all down."""

    def __init__(
        self,
        executor: AgentExecutor,
        store: TaskStore,
        bus: EventBus | None = None,
        config: ManagerConfig | None = None,
        observers: Sequence[TaskObserver] = (),
    ) -> None:
        self.executor = executor
        self.store = store
        self.bus: EventBus = bus if bus is not None else MemoryEventBus()
        self.config = config or ManagerConfig()
        self.observers: list[TaskObserver] = list(observers)
        self._active: dict[str, TaskRun] = {}
        self._closing = False

    # -- bookkeeping ----------------------------------------------------------
    @property
    def active_count(self) -> int:
        """Agents running right now."""
        return len(self._active)

    def active_run(self, task_id: str) -> TaskRun | None:
        """The run executing ``task_id``, if any."""
        return self._active.get(task_id)

    def notify(self, task: Task, event: StreamEvent, previous: TaskState | None) -> None:
        for observer in self.observers:
            try:
                observer(task, event, previous)
            except Exception:
                logger.exception("task observer %r failed", observer)

    def finished(self, run: TaskRun) -> None:
        if self._active.get(run.task_id) is run:
            del self._active[run.task_id]
        run.settled.set()
        run.done.set()
        self.bus.end(run.task_id)

    def _check_capacity(self) -> None:
        if self._closing:
            raise ServerBusyError("The server is shutting down", data={"retryable": True})
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

    # -- starting work --------------------------------------------------------
    async def prepare(
        self,
        message: Message,
        call: ServerCallContext,
        configuration: SendMessageConfiguration | None,
        request_metadata: dict[str, Any] | None,
        allow_reply: bool,
        persist_now: bool,
    ) -> TaskRun:
        """Create (or continue) the task for ``message`` and a run for it, not yet started."""
        self._check_capacity()
        owner = call.owner
        if message.task_id:
            stored = await self.store.get(message.task_id, owner)
            if stored is None:
                raise TaskNotFoundError(f"Task {message.task_id} not found")
            run = await self._continuation(stored, message, call, configuration, request_metadata)
        else:
            context_id = message.context_id or new_id()
            task_id = new_id()
            message = message.model_copy(update={"task_id": task_id, "context_id": context_id})
            task = Task(
                id=task_id,
                context_id=context_id,
                status=TaskStatus.now(TaskState.SUBMITTED),
                history=[message],
            )
            context = self._context(task, message, call, configuration, request_metadata, False)
            run = TaskRun(self, task, owner, 0, context, allow_reply)
        if persist_now:
            await run.ensure_persisted()
        return run

    async def _continuation(
        self,
        stored: StoredTask,
        message: Message,
        call: ServerCallContext,
        configuration: SendMessageConfiguration | None,
        request_metadata: dict[str, Any] | None,
    ) -> TaskRun:
        task = stored.task
        if message.context_id and message.context_id != task.context_id:
            raise InvalidParamsError(
                f"contextId {message.context_id!r} does not match task {task.id}'s context"
            )
        if task.status.state.is_terminal:
            raise UnsupportedOperationError(
                f"Task {task.id} is {task.status.state.value} and cannot be continued; "
                "start a new task in the same context"
            )
        if task.id in self._active:
            raise UnsupportedOperationError(
                f"Task {task.id} is still running; wait for it to pause or cancel it"
            )
        message = message.model_copy(update={"context_id": task.context_id})
        task = append_message(task, message, self.config.max_history)
        # Continuing clears the question the agent asked; the agent works again.
        task = task.model_copy(update={"status": TaskStatus.now(TaskState.WORKING)})
        saved = await self.store.save(task, stored.owner, stored.version)
        context = self._context(task, message, call, configuration, request_metadata, True)
        run = TaskRun(self, task, stored.owner, saved.version, context, allow_reply=False)
        self.notify(
            task,
            TaskStatusUpdateEvent(task_id=task.id, context_id=task.context_id, status=task.status),
            stored.task.status.state,
        )
        return run

    def _context(
        self,
        task: Task,
        message: Message,
        call: ServerCallContext,
        configuration: SendMessageConfiguration | None,
        request_metadata: dict[str, Any] | None,
        is_continuation: bool,
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

    def start(self, run: TaskRun) -> None:
        """Launch the run in the background. On failure nothing is left behind."""
        self._check_capacity()
        self._active[run.task_id] = run
        try:
            run.handle = asyncio.get_running_loop().create_task(
                run.run(self.executor), name=f"a2a-task-{run.task_id}"
            )
        except Exception as exc:
            del self._active[run.task_id]
            logger.exception("task %s: could not start the agent", run.task_id)
            raise InternalError("Could not start the agent") from exc

    async def rollback(self, run: TaskRun) -> None:
        """Remove a task whose launch failed (never leave it half-created)."""
        if run.version:
            with contextlib.suppress(Exception):
                await self.store.delete(run.task_id, run.owner)

    # -- cancel -------------------------------------------------------------------
    async def cancel(self, task_id: str, call: ServerCallContext) -> Task:
        """Cancel a task: terminal at once; the agent is told and then interrupted."""
        owner = call.owner
        run = self._active.get(task_id)
        if run is not None and run.owner == owner:
            return await self._cancel_run(run)
        for _ in range(3):
            stored = await self.store.get(task_id, owner)
            if stored is None:
                raise TaskNotFoundError(f"Task {task_id} not found")
            state = stored.task.status.state
            if state.is_terminal:
                raise TaskNotCancelableError(f"Task {task_id} is already {state.value}")
            run = self._active.get(task_id)
            if run is not None:
                return await self._cancel_run(run)
            # Paused or idle: no agent to stop, no capacity slot needed.
            event = TaskStatusUpdateEvent(
                task_id=task_id,
                context_id=stored.task.context_id,
                status=TaskStatus.now(TaskState.CANCELED),
            )
            new_task = apply_status(stored.task, event, self.config.max_history)
            try:
                await self.store.save(new_task, owner, stored.version)
            except ConcurrentUpdateError:
                continue
            self.bus.publish(task_id, event)
            self.bus.end(task_id)
            self.notify(new_task, event, state)
            return new_task
        raise TaskNotCancelableError(f"Task {task_id} kept changing; retry the cancel")

    async def _cancel_run(self, run: TaskRun) -> Task:
        if run.state.is_terminal:
            raise TaskNotCancelableError(f"Task {run.task_id} is already {run.state.value}")
        run.token.cancel()
        try:
            await asyncio.wait_for(
                self.executor.cancel(run.context, run.updater), self.config.cancel_grace_seconds
            )
        except (TimeoutError, IllegalTransitionError):
            pass
        except Exception:
            logger.exception("task %s: agent's cancel raised", run.task_id)
        await run.server_status(TaskState.CANCELED)
        if run.handle is not None and not run.handle.done():
            run.handle.cancel()
        if not run.state.is_terminal:  # lost a race with the agent finishing
            raise TaskNotCancelableError(f"Task {run.task_id} is already {run.state.value}")
        return run.task

    # -- subscriptions ------------------------------------------------------------
    def subscribe(self, task_id: str) -> Subscription:
        """Receive the task's events from now on."""
        return self.bus.subscribe(task_id)

    # -- shutdown -----------------------------------------------------------------
    async def aclose(self) -> None:
        """Cancel every running task, wait for the agents, then close the store."""
        self._closing = True
        runs = list(self._active.values())
        for run in runs:
            run.token.cancel()
        handles = [r.handle for r in runs if r.handle is not None]
        if handles:
            _, pending = await asyncio.wait(handles, timeout=self.config.shutdown_grace_seconds)
            for handle in pending:
                handle.cancel()
            if pending:
                await asyncio.wait(pending, timeout=self.config.shutdown_grace_seconds)
        await self.store.aclose()


_ = A2AError
