"""Canceling a task wherever it runs: a run here, a run on another instance, or none.

A run on this instance is made CANCELED first (so nothing its agent does later
can win), then its agent is told, given ``cancel_grace_seconds`` for its own
``cancel``, and interrupted. A task that may run on another instance (the
store's channel is shared) is canceled there: the request goes through the
channel to every instance, and the one running it cancels its run
(``cancel_requested``). A paused task, or one whose instance did not answer
within ``remote_cancel_timeout`` (it died), has no agent to stop: its CANCELED
status is written here (``StatusWriter``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from ..contracts.channel import ChannelItem, TaskChannel
from ..contracts.task_store import ConcurrentUpdateError, StoredTask, TaskStore
from ..errors import A2AError, TaskNotCancelableError, TaskNotFoundError
from ..types import Task, TaskState, TaskStatusUpdateEvent
from .config import ManagerConfig
from .context import ServerCallContext
from .events import EventsLost
from .executor import AgentExecutor
from .status_writer import StatusWriter
from .task_state import IllegalTransitionError

if TYPE_CHECKING:
    from .run import TaskRun

__all__ = ["SHUTDOWN_TEXT", "Cancels"]

logger = logging.getLogger("a2a_core.server")

SHUTDOWN_TEXT = "The server shut down before the task finished."
_ATTEMPTS = 3


class Cancels:
    """Cancels tasks, and hears the cancel requests of other instances (``ChannelListener``)."""

    def __init__(
        self,
        active_run: Callable[[str], TaskRun | None],
        store: TaskStore,
        channel: TaskChannel,
        executor: AgentExecutor,
        config: ManagerConfig,
        writer: StatusWriter,
    ) -> None:
        self._active_run = active_run
        self._store = store
        self._channel = channel
        self._executor = executor
        self._grace = config.cancel_grace_seconds
        self._remote_timeout = config.remote_cancel_timeout
        self._writer = writer

    async def cancel(self, task_id: str, call: ServerCallContext) -> Task:
        """Cancel a task: terminal at once; then the agent is told and interrupted."""
        owner = call.owner
        asked_others = False
        for _ in range(_ATTEMPTS):
            run = self._active_run(task_id)
            if run is not None and run.owner == owner:
                return await self.cancel_run(run)
            stored = await self._store.get(task_id, owner)
            if stored is None:
                raise TaskNotFoundError.for_task(task_id)
            state = stored.task.status.state
            if state.is_terminal:
                if asked_others and state is TaskState.CANCELED:
                    return stored.task  # the instance running it canceled it
                raise TaskNotCancelableError(f"Task {task_id} is already {state.value}")
            if self._active_run(task_id) is not None:
                continue  # a run took it while we read it
            if not asked_others and not state.is_interrupted and self._channel.shared:
                # An agent may be running it on another instance: let that one cancel it.
                asked_others = True
                done = await self._cancel_elsewhere(stored)
                if done is not None:
                    return done
                continue
            # Paused, left over, or its instance did not answer: no agent here to stop.
            try:
                return await self._writer.write_status(stored, TaskState.CANCELED)
            except ConcurrentUpdateError:
                continue
        raise TaskNotCancelableError(f"Task {task_id} kept changing; retry the cancel")

    async def cancel_requested(self, task_id: str) -> None:
        """Another instance asks to cancel ``task_id`` (``ChannelListener``): stop it if here.

        The asking instance checked the caller may cancel the task.
        """
        run = self._active_run(task_id)
        if run is None:
            return
        try:
            await self.cancel_run(run)
        except A2AError:
            if run.state is TaskState.CANCELED:  # the asking instance canceled it already
                await self._interrupt(run)

    async def cancel_run(self, run: TaskRun, text: str | None = None) -> Task:
        """CANCELED first (so nothing the agent does later can win), then stop the agent."""
        if not await run.server_status(TaskState.CANCELED, text):
            if run.error is not None:
                raise run.error
            raise TaskNotCancelableError(f"Task {run.task_id} is already {run.state.value}")
        await self._interrupt(run)
        return run.task

    async def stop(self, run: TaskRun) -> None:
        """Cancel a run because the server shuts down."""
        try:
            await self.cancel_run(run, SHUTDOWN_TEXT)
        except A2AError:
            run.token.cancel()  # already final: ask the agent to wrap up within the grace

    async def _interrupt(self, run: TaskRun) -> None:
        """Tell the agent to stop, give its ``cancel`` the grace period, then interrupt it."""
        run.token.cancel()
        handle = run.handle
        if handle is not None:
            try:
                await asyncio.wait_for(
                    self._executor.cancel(run.context, run.new_updater()), self._grace
                )
            except (TimeoutError, IllegalTransitionError):
                pass
            except Exception:
                logger.exception("task %s: the agent's cancel raised", run.task_id)
            run.interrupt()  # whatever it awaits; its cleanup still runs

    async def _cancel_elsewhere(self, stored: StoredTask) -> Task | None:
        """Ask the instance running the task to cancel it; its final task, or None if nobody did."""
        task_id = stored.task.id
        follower = self._channel.follow(task_id, stored.version, stored.version)
        try:
            waiting = asyncio.ensure_future(_final_state(follower))
            try:
                await self._channel.request_cancel(task_id)
                final = await asyncio.wait_for(asyncio.shield(waiting), self._remote_timeout)
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
        now = await self._store.get(task_id, stored.owner)
        return now.task if now is not None else None


async def _final_state(follower: AsyncIterator[ChannelItem]) -> TaskState | None:
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
