"""A status written to a task no run of this instance has, from outside any run.

A paused task (canceled), a task whose instance died (an orphan settled as
FAILED) and a task whose instance did not answer a cancel have no run to apply
an event: ``StatusWriter.write_status`` saves the new status, publishes it to
every instance's streams and tells the observers. A run that saved behind may
have left chunks on the channel past the stored version; they are applied first.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from ..contracts.channel import ChannelItem, TaskChannel, WritesBehind
from ..contracts.task_store import ConcurrentUpdateError, StoredTask, TaskStore
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
from .config import ManagerConfig
from .events import EventBus
from .task_state import apply_artifacts, apply_status

__all__ = ["Notify", "Publish", "StatusWriter"]

_CATCH_UP_ATTEMPTS = 20

Notify = Callable[[Task, StreamEvent, TaskState | None, int | None], None]
"""Tells the observers (and the push intake) of an event (``TaskManager.notify``)."""

Publish = Callable[[str, int, StreamEvent, int | None], Awaitable[bool | None]]
"""Publishes an event to the shared channel, logging a failure (``writers.publish_logged``)."""


class StatusWriter:
    """Writes the status of tasks no run here has: saved, published everywhere, observed."""

    def __init__(
        self,
        store: TaskStore,
        channel: TaskChannel,
        bus: EventBus,
        config: ManagerConfig,
        notify: Notify,
        publish: Publish,
    ) -> None:
        self.store = store
        self.channel = channel
        self.bus = bus
        self._max_history = config.max_history
        self._notify = notify
        self._publish = publish

    async def write_status(
        self, stored: StoredTask, state: TaskState, text: str | None = None
    ) -> Task:
        """Move a task no run has to ``state``: save, publish everywhere, tell the observers.

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
        if channel.shared and isinstance(channel, WritesBehind):
            # The channel may have chunks past the stored version (published by a run that
            # saves behind, maybe on an instance that died): followers saw them, so the
            # task gets them too, and this status comes after them.
            new_task, saved = await self._write_after(channel, stored, event)
        else:
            new_task = apply_status(task, event, self._max_history)
            saved = await self.store.save(new_task, stored.owner, stored.version)
            if channel.shared:
                await self._publish(task.id, saved.version, event, stored.version)
        self.bus.publish(task.id, event, saved.version)
        if state.is_terminal or state.is_interrupted:
            self.bus.end(task.id)
        self._notify(new_task, event, task.status.state, saved.version)
        return new_task

    async def _write_after(
        self, channel: WritesBehind, stored: StoredTask, event: TaskStatusUpdateEvent
    ) -> tuple[Task, StoredTask]:
        """``event`` applied after the channel's events past ``stored`` and saved after them.

        A run still publishing behind (its instance stopped renewing but runs on) can move
        the channel between the read and the write: read it again, while the task itself
        stays at ``stored.version`` (else ``ConcurrentUpdateError`` for the caller).
        """
        task_id = stored.task.id
        for _ in range(_CATCH_UP_ATTEMPTS):
            events, head = await channel.since(task_id, stored.version)
            task = _caught_up(stored.task, events or ())
            new_task = apply_status(task, event, self._max_history)
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


def _caught_up(task: Task, events: Sequence[ChannelItem]) -> Task:
    """``task`` with the channel's events past its stored version applied (chunks saved behind)."""
    chunks = [e for _, e in events if isinstance(e, TaskArtifactUpdateEvent)]
    return apply_artifacts(task, chunks) if chunks else task
