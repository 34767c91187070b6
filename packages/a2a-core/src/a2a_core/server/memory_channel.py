"""The in-process task channel (``MemoryTaskChannel``), and the channel a store gets.

A store without a shared backend (``event_channel()`` returns None) gets one
``MemoryTaskChannel`` per store object, so services sharing that object see each
other's events and cancel requests. The contract is ``a2a_core.contracts.channel``.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from ..contracts.channel import ChannelItem, ChannelListener, ListenerSet, TaskChannel
from ..types import StreamEvent
from .events import MemoryEventBus, Subscription

if TYPE_CHECKING:
    from ..contracts.push_configs import PushConfigStore
    from ..contracts.task_store import TaskStore

__all__ = ["MemoryTaskChannel", "channel_for"]


class _Follower:
    """A memory follower: a bus subscription seen as ``(id, event)`` items."""

    __slots__ = ("_after", "_bus", "_sub", "_task_id")

    def __init__(self, bus: MemoryEventBus, task_id: str, after: int) -> None:
        self._bus = bus
        self._task_id = task_id
        self._after = after
        self._sub: Subscription | None = None

    def __aiter__(self) -> _Follower:
        return self

    async def __anext__(self) -> ChannelItem:
        sub = self._sub
        if sub is None:
            sub = self._sub = self._bus.subscribe(self._task_id, after=self._after)
        event = await anext(sub)
        event_id = sub.event_id if sub.event_id is not None else self._after
        return (event_id, None if isinstance(event, _EndMark) else event)

    async def aclose(self) -> None:
        if self._sub is not None:
            self._sub.close()


class _EndMark:
    """Stands for an end mark inside the memory bus (never leaves this module)."""

    __slots__ = ()


_END = _EndMark()


class MemoryTaskChannel(ListenerSet, TaskChannel):
    """The in-process channel of one store object: shared by the services attached to it.

    With one instance attached nothing is published (``shared`` is False);
    with several, every event is recorded for replay (``replay_events`` per
    task, ``replay_tasks`` tasks, as JSON bytes: see ``MemoryEventBus``) and
    fanned out to followers. Its push config store is one
    ``MemoryPushConfigStore`` for all of them.
    """

    def __init__(self, replay_events: int = 1000, replay_tasks: int = 1000) -> None:
        self._listeners: list[ChannelListener] = []
        self._bus = MemoryEventBus(replay_events=replay_events, replay_tasks=replay_tasks)
        self._push: PushConfigStore | None = None
        self._pending: set[asyncio.Future[None]] = set()

    @property
    def shared(self) -> bool:
        return len(self._listeners) > 1

    async def publish(
        self, task_id: str, event_id: int, event: StreamEvent, previous: int | None = None
    ) -> None:
        self._record(task_id, event_id if previous is None else previous)
        self._bus.publish(task_id, event, event_id)

    async def publish_end(self, task_id: str, event_id: int) -> None:
        self._record(task_id, event_id)
        self._bus.publish(task_id, _END, event_id)  # type: ignore[arg-type]

    def _record(self, task_id: str, previous: int) -> None:
        # The record of a task starts at the last event before its first published one.
        self._bus.record(task_id, previous)

    def follow(
        self, task_id: str, after: int, current: int | None = None
    ) -> AsyncIterator[ChannelItem]:
        self._bus.record(task_id, after if current is None else current)
        return _Follower(self._bus, task_id, after)

    async def request_cancel(self, task_id: str) -> None:
        # Sent, not awaited: like a message to another process, the asker does not wait.
        for listener in tuple(self._listeners):
            pending = asyncio.ensure_future(listener.cancel_requested(task_id))
            self._pending.add(pending)
            pending.add_done_callback(self._pending.discard)

    def push_configs(self) -> PushConfigStore | None:
        if self._push is None:
            from .push.store import MemoryPushConfigStore

            self._push = MemoryPushConfigStore()
        return self._push


_MEMORY_CHANNELS: weakref.WeakKeyDictionary[object, MemoryTaskChannel] = weakref.WeakKeyDictionary()


def channel_for(store: TaskStore) -> TaskChannel:
    """The store's channel: its own (``event_channel()``), else one in-process per store object."""
    channel = store.event_channel()
    if channel is not None:
        return channel
    found = _MEMORY_CHANNELS.get(store)
    if found is None:
        found = _MEMORY_CHANNELS[store] = MemoryTaskChannel()
    return found
