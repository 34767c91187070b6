"""The event bus: per-task ordered fan-out of events to streams and subscribers."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import AsyncIterator

from ..errors import ServerBusyError
from ..types import StreamEvent

__all__ = ["EventBus", "MemoryEventBus", "Subscription"]

_CLOSED = object()


class Subscription:
    """One consumer's ordered view of a task's events. Iterate it; ``close()`` to leave."""

    __slots__ = ("_bus", "_closed", "_items", "_max_pending", "_waiter", "task_id")

    def __init__(self, bus: MemoryEventBus, task_id: str, max_pending: int) -> None:
        self._bus = bus
        self.task_id = task_id
        self._items: deque[object] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False
        self._max_pending = max_pending

    def _push(self, item: object) -> None:
        if self._closed:
            return
        if item is not _CLOSED and len(self._items) >= self._max_pending:
            self._items.clear()
            self._items.append(ServerBusyError("Subscriber fell too far behind; resubscribe"))
            self._closed = True
        else:
            self._items.append(item)
            if item is _CLOSED:
                self._closed = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self

    async def __anext__(self) -> StreamEvent:
        while not self._items:
            if self._closed:
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        item = self._items.popleft()
        if item is _CLOSED:
            self._detach()
            raise StopAsyncIteration
        if isinstance(item, ServerBusyError):
            self._detach()
            raise item
        return item  # type: ignore[return-value]

    def close(self) -> None:
        """Stop receiving events (idempotent)."""
        self._closed = True
        self._items.clear()
        self._detach()
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _detach(self) -> None:
        self._bus.unsubscribe(self)


class EventBus(ABC):
    """Fans each task's events out, in order, to every current subscriber."""

    @abstractmethod
    def subscribe(self, task_id: str) -> Subscription:
        """Start receiving the task's events from now on."""

    @abstractmethod
    def publish(self, task_id: str, event: StreamEvent) -> None:
        """Deliver ``event`` to the task's subscribers."""

    @abstractmethod
    def end(self, task_id: str) -> None:
        """End every subscription of the task (it reached a final or paused state)."""

    @abstractmethod
    def end_all(self) -> None:
        """End every open subscription (at shutdown)."""

    @abstractmethod
    def subscriber_count(self, task_id: str | None = None) -> int:
        """How many subscriptions are open (for one task, or in all)."""


class MemoryEventBus(EventBus):
    """In-process bus. ``max_pending`` bounds each subscriber's backlog."""

    def __init__(self, max_pending: int = 10_000) -> None:
        self._subs: dict[str, set[Subscription]] = {}
        self._max_pending = max_pending

    def subscribe(self, task_id: str) -> Subscription:
        sub = Subscription(self, task_id, self._max_pending)
        self._subs.setdefault(task_id, set()).add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        """Stop delivering a task's events to this subscription."""
        subs = self._subs.get(sub.task_id)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._subs[sub.task_id]

    def publish(self, task_id: str, event: StreamEvent) -> None:
        subs = self._subs.get(task_id)
        if subs:
            for sub in tuple(subs):
                sub._push(event)  # pyright: ignore[reportPrivateUsage]

    def end(self, task_id: str) -> None:
        subs = self._subs.pop(task_id, None)
        if subs:
            for sub in subs:
                sub._push(_CLOSED)  # pyright: ignore[reportPrivateUsage]

    def end_all(self) -> None:
        for task_id in list(self._subs):
            self.end(task_id)

    def subscriber_count(self, task_id: str | None = None) -> int:
        if task_id is not None:
            return len(self._subs.get(task_id, ()))
        return sum(len(s) for s in self._subs.values())
