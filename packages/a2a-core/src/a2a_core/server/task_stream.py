"""The service's ``ServerStream``: events from a generator, then from a subscription.

The send and subscribe paths (``sending.py``, ``following.py``) build their first
events in an async generator of ``StreamItem``s; when it yields ``FOLLOW`` the stream
reads the subscription itself, so no generator stands between the bus and the response.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from ..types import Message, StreamEvent, Task, TaskStatusUpdateEvent
from .events import NO_ID, Subscription

__all__ = [
    "FOLLOW",
    "StreamItem",
    "TaskStream",
    "event_id_of",
    "nothing",
    "settles",
    "single",
    "then_follow",
]

StreamItem = tuple[int, StreamEvent | None, bytes | None]
"""``(event id, event, its JSON as the bus encoded it)`` as a ``TaskStream``'s source yields it."""

FOLLOW = NO_ID - 1
"""The id a source yields (with no event) when the rest is the subscription's."""


def settles(event: StreamEvent) -> bool:
    """Whether ``event`` ends a stream: a final or interrupted status, or a direct reply."""
    if isinstance(event, TaskStatusUpdateEvent):
        state = event.status.state
        return state.is_terminal or state.is_interrupted
    return isinstance(event, Message)


def event_id_of(subscription: Subscription) -> int:
    """The id of the event ``subscription`` returned last, ``NO_ID`` when it has none."""
    event_id = subscription.event_id
    return NO_ID if event_id is None else event_id


class TaskStream:
    """Events from a generator, then from a subscription.

    It releases its subscription even if never iterated (``aclose()`` on an async
    generator that never started skips its ``finally``). ``event_id`` is the id of the
    event last returned (the SSE ``id``; None for a direct message reply, which no task
    version holds). When ``events`` yields ``FOLLOW``, the stream continues straight
    from the subscription until an event settles the task.
    """

    __slots__ = ("_events", "_following", "_settled", "_subscription", "encoded", "event_id")

    def __init__(
        self, events: AsyncGenerator[StreamItem], subscription: Subscription | None
    ) -> None:
        self._events = events
        self._subscription = subscription
        self._following = False
        self._settled = False
        self.event_id: int | None = None
        self.encoded: bytes | None = None

    def __aiter__(self) -> TaskStream:
        return self

    async def __anext__(self) -> StreamEvent:
        if not self._following:
            event_id, event, self.encoded = await anext(self._events)
            if event is not None:
                self.event_id = None if event_id == NO_ID else event_id
                return event
            self._following = True
        subscription = self._subscription
        if subscription is None:  # settled (or, for a source that never follows, over)
            raise StopAsyncIteration
        try:
            # The subscription's own future, awaited here: a waiting stream holds no
            # coroutine of the subscription's, one fewer object per stream and event.
            while (waiter := subscription.waiter()) is not None:
                await waiter
            event = subscription.take_ready()
            if event is None:  # the end or an error is next: __anext__ raises it
                event = await anext(subscription)
        except BaseException:
            self._stop()
            raise
        return self._followed(subscription, event)

    def _followed(self, subscription: Subscription, event: StreamEvent) -> StreamEvent:
        """Note an event read from the subscription; let it go after the settling one."""
        event_id = subscription.event_id
        self.event_id = None if event_id is None or event_id == NO_ID else event_id
        self.encoded = subscription.encoded
        if settles(event):
            self._settled = True
            self._stop()
        return event

    def _stop(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None

    def ends(self) -> bool:
        """Whether the event last returned is the stream's last (it settled the task)."""
        return self._settled

    def next_ready(self) -> StreamEvent | None:
        """The next event if it can be read without waiting (no coroutine: a stream reads
        a burst of an agent's events this way), else None: read on with ``__anext__``."""
        subscription = self._subscription
        if not self._following or subscription is None:
            return None
        event = subscription.take_ready()
        return None if event is None else self._followed(subscription, event)

    async def aclose(self) -> None:
        self._stop()
        await self._events.aclose()


async def single(event_id: int, task: Task) -> AsyncGenerator[StreamItem]:
    """A source of one task snapshot."""
    yield event_id, task, None


async def then_follow(first: StreamItem) -> AsyncGenerator[StreamItem]:
    """A source of one event (a task snapshot), then the subscription's (``FOLLOW``)."""
    yield first
    yield FOLLOW, None, None


async def nothing() -> AsyncGenerator[StreamItem]:
    """A source of no events."""
    return
    yield  # pragma: no cover
