"""The event bus: per-task ordered fan-out of events to streams and subscribers.

Every event carries an id: the task version its save produced (monotonic per
task; 0 for the task before its first save, ``NO_ID`` for a direct message
reply, which belongs to no task and is never replayed). Streams send it as the
SSE ``id``, and a resubscribe with ``Last-Event-ID`` asks for what came after it.

An event is encoded once, when it is published: its JSON (``event_json``, the
internal model's own form) goes with it to every subscription, and is what the
task's replay record keeps. A stream's writer frames those bytes (a 1.0 codec
writes them as they are); nothing comes back down to the bus.

**The contract** (``EventBus``: enough to write another bus from):

- ``subscribe(task_id, after=None, current=None)`` returns a ``Subscription``
  (this module's class; a bus feeds it with ``deliver`` and ``finish``). With
  ``after``, it first delivers every recorded event with an id above ``after``,
  in order, then the live ones; when the bus cannot prove that it still holds
  all of them (no record of the task, or the oldest are gone) it raises
  ``EventsLost`` instead. ``current`` (the task's version now) starts the
  task's record, complete from that id on, unless it has one.
- ``publish(task_id, event, event_id)`` delivers ``(event_id, event,
  event_json(event))`` to every open subscription of the task, in publish
  order, and adds an event with an id to the task's record when it has one.
  It encodes the event once, however many subscriptions read it.
- ``end(task_id)`` finishes the task's open subscriptions (each reads what it
  was delivered, then stops); ``end_all()`` finishes every task's.
- ``unsubscribe(subscription)`` (a subscription's ``close`` calls it): deliver
  nothing more to it.
- ``subscriber_count(task_id=None)``: open subscriptions of one task, or of all.

A record's bounds are the bus's to choose (``MemoryEventBus``: the latest
``replay_events`` events of the ``replay_tasks`` most recently active tasks);
tasks nobody ever streamed need no record, and their events no encoding.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from array import array
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import AsyncIterator

from ..contracts.channel import EventsLost
from ..errors import ServerBusyError
from ..types import StreamEvent, StreamResponse
from ..types._json import event_json

__all__ = ["EventBus", "EventsLost", "MemoryEventBus", "Subscription"]

NO_ID = -1
"""The id of an event that belongs to no stored task version (a direct reply)."""

Delivered = tuple[int, StreamEvent, bytes | None]
"""``(event id, event, its JSON)`` as a bus delivers it (no JSON: ``event_json`` has none)."""


class Subscription:
    """One consumer's ordered view of a task's events. Iterate it; ``close()`` to leave.

    ``event_id`` and ``encoded`` belong to the event last returned (None before the
    first): its id, and its JSON as the bus encoded it (None: it has none of its own).
    The bus side is ``deliver`` and ``finish``; a consumer more than ``max_pending``
    events behind is dropped, and reads ``ServerBusyError``.
    """

    __slots__ = (
        "_bus",
        "_error",
        "_finished",
        "_head",
        "_items",
        "_max_pending",
        "_waiter",
        "encoded",
        "event_id",
        "task_id",
    )

    def __init__(self, bus: EventBus, task_id: str, max_pending: int = 10_000) -> None:
        self._bus = bus
        self.task_id = task_id
        self._items: list[Delivered] = []
        """Delivered events; those before ``_head`` were read. A list, not a deque: an
        idle subscription's empty list is ~56 bytes, an empty deque's block ~600."""
        self._head = 0
        self._finished = False
        """Nothing more will be delivered: the reader stops after ``_items``."""
        self._error: ServerBusyError | None = None
        """Raised to the reader instead of stopping."""
        self._waiter: asyncio.Future[None] | None = None
        self._max_pending = max_pending
        self.event_id: int | None = None
        self.encoded: bytes | None = None

    # -- the bus's side -----------------------------------------------------------------
    def deliver(self, event_id: int, event: StreamEvent, encoded: bytes | None) -> None:
        """Queue one event (the bus calls this, or ``put``, in publish order)."""
        self.put((event_id, event, encoded))

    def put(self, item: Delivered) -> None:
        """Queue one delivered event as it is: a bus hands every subscription of the task
        the same tuple, so an event is one object however many read it (objects made per
        subscriber and event are what a full garbage collection pays for at scale)."""
        if self._finished:
            return
        if len(self._items) - self._head >= self._max_pending:
            self._items.clear()
            self._head = 0
            self._error = ServerBusyError("Subscriber fell too far behind; resubscribe")
            self._finished = True
        else:
            self._items.append(item)
        self._wake()

    def finish(self) -> None:
        """End the subscription after the events already delivered."""
        self._finished = True
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    # -- the reader's side --------------------------------------------------------------
    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self

    async def __anext__(self) -> StreamEvent:
        while (waiter := self.waiter()) is not None:
            await waiter
        if self._head == len(self._items):  # finished
            self._bus.unsubscribe(self)
            error, self._error = self._error, None
            if error is not None:
                raise error
            raise StopAsyncIteration
        return self._pop()

    def _pop(self) -> StreamEvent:
        """The next delivered event, noted as the last returned (there is one)."""
        items = self._items
        head = self._head
        self.event_id, event, self.encoded = items[head]
        head += 1
        if head == len(items):
            items.clear()  # frees its storage: an idle subscription holds none
            head = 0
        elif head > 64 and head * 2 > len(items):
            del items[:head]  # a reader far behind: let the read ones go
            head = 0
        self._head = head
        return event

    def waiter(self) -> asyncio.Future[None] | None:
        """A future done when something is next (an event, the end or an error), or None
        when something is next now. A reader may await it itself, rather than a coroutine
        of ``__anext__`` per event, then ``take_ready()`` (or ``__anext__`` at the end)."""
        if self._head < len(self._items) or self._finished:
            return None
        waiter = self._waiter
        if waiter is None or waiter.done():
            waiter = self._waiter = asyncio.get_running_loop().create_future()
        return waiter

    def take_ready(self) -> StreamEvent | None:
        """The next event if one is waiting, without a coroutine (None: nothing waiting,
        or the end or an error is next: ``__anext__`` raises those)."""
        if self._head == len(self._items):
            return None
        return self._pop()

    @property
    def pending(self) -> int:
        """Events received and not yet read (a replay is pending in full when subscribed)."""
        return len(self._items) - self._head

    def close(self) -> None:
        """Stop receiving events (idempotent)."""
        self._finished = True
        self._error = None
        self._items.clear()
        self._head = 0
        self._bus.unsubscribe(self)
        self._wake()


class EventBus(ABC):
    """Fans each task's events out, in order, to every current subscriber (see the module
    docstring for the whole contract)."""

    @abstractmethod
    def subscribe(
        self, task_id: str, *, after: int | None = None, current: int | None = None
    ) -> Subscription:
        """Receive the task's events: from now on, or replayed from just ``after`` an id.

        ``current`` (the task's version now) starts the task's replay record.
        Raises ``EventsLost`` when the events after ``after`` are not all retained.
        """

    @abstractmethod
    def publish(self, task_id: str, event: StreamEvent, event_id: int = NO_ID) -> None:
        """Deliver ``event`` (with its id and JSON) to the task's subscribers; record it."""

    @abstractmethod
    def end(self, task_id: str) -> None:
        """Finish every subscription of the task (it reached a final or paused state)."""

    @abstractmethod
    def end_all(self) -> None:
        """Finish every open subscription (at shutdown)."""

    @abstractmethod
    def unsubscribe(self, subscription: Subscription) -> None:
        """Deliver nothing more to ``subscription`` (it closed or read its end)."""

    @abstractmethod
    def subscriber_count(self, task_id: str | None = None) -> int:
        """How many subscriptions are open (for one task, or in all)."""


class _Ring:
    """The latest events of one task, packed, and the id from which the record is complete.

    Their JSON one after the other in a ``bytearray``, their ids and end offsets in two
    arrays: none of the three is a container the garbage collector walks, where events
    held as objects were most of what a long-running server's full collections visited
    (``benchmarks/replay_gc_bench.py``). An event with no JSON of its own (a subclass's,
    a channel's end mark) is kept as itself in ``_objects``, with no bytes.
    """

    __slots__ = ("_data", "_ends", "_first", "_ids", "_objects", "base", "size")

    def __init__(self, base: int, size: int) -> None:
        self.base = base
        """Every event with an id above ``base`` is (or was) held."""
        self.size = size
        self._ids = array("q")
        """The events' ids (from ``_first`` on: the older ones were let go)."""
        self._ends = array("Q")
        """Where each event's JSON ends in ``_data``."""
        self._data = bytearray()
        self._first = 0
        self._objects: dict[int, StreamEvent] | None = None
        """The events kept as objects, by id (None: there are none)."""

    def add(self, event_id: int, event: StreamEvent, encoded: bytes | None) -> None:
        if len(self._ids) - self._first >= self.size:  # full: the oldest goes
            self.base = self._ids[self._first]
            self._first += 1
            if self._objects is not None:
                self._objects.pop(self.base, None)
            if self._first > 64 and self._first * 2 > len(self._ids):
                self._drop_let_go()
        if encoded is None:
            if self._objects is None:
                self._objects = {}
            self._objects[event_id] = event
        else:
            self._data += encoded
        self._ids.append(event_id)
        self._ends.append(len(self._data))

    def _drop_let_go(self) -> None:
        """Free the events the ring has let go of (once they are most of it)."""
        first = self._first
        begin = self._ends[first - 1]
        del self._data[:begin]
        self._ids = self._ids[first:]
        self._ends = array("Q", [end - begin for end in self._ends[first:]])
        self._first = 0

    def _held(self, index: int) -> tuple[StreamEvent, bytes | None]:
        """The event at ``index`` and its JSON (decoded: it gives an equal event)."""
        if self._objects is not None:
            kept = self._objects.get(self._ids[index])
            if kept is not None:
                return kept, None
        ends = self._ends
        data = bytes(self._data[ends[index - 1] if index else 0 : ends[index]])
        return StreamResponse.model_validate_json(data).event, data

    def after(self, event_id: int) -> list[Delivered]:
        """The events with ids above ``event_id``; ``EventsLost`` if some are gone."""
        if event_id < self.base:
            raise EventsLost(f"events after {event_id} are past retention")
        ids = self._ids
        start = bisect_right(ids, event_id, self._first)
        return [(ids[i], *self._held(i)) for i in range(start, len(ids))]

    def __len__(self) -> int:
        return len(self._ids) - self._first


class MemoryEventBus(EventBus):
    """In-process bus. ``max_pending`` bounds each subscriber's backlog.

    ``replay_events`` (per task) and ``replay_tasks`` (tasks, least recently
    published dropped first) bound the replay records; 0 turns replay off.
    """

    def __init__(
        self, max_pending: int = 10_000, replay_events: int = 1000, replay_tasks: int = 1000
    ) -> None:
        if replay_events < 0 or replay_tasks < 0:
            raise ValueError("replay_events and replay_tasks must be >= 0")
        self._subs: dict[str, set[Subscription]] = {}
        self._max_pending = max_pending
        self._rings: OrderedDict[str, _Ring] = OrderedDict()
        self._replay_events = replay_events
        self._replay_tasks = replay_tasks if replay_events else 0

    def subscribe(
        self, task_id: str, *, after: int | None = None, current: int | None = None
    ) -> Subscription:
        missed: list[Delivered] = []
        if after is not None:
            ring = self._rings.get(task_id)
            if ring is None:
                raise EventsLost(f"no events of task {task_id} are retained")
            missed = ring.after(after)
        elif current is not None:
            self.record(task_id, current)
        sub = Subscription(self, task_id, self._max_pending + len(missed))
        for item in missed:
            sub.deliver(*item)
        self._subs.setdefault(task_id, set()).add(sub)
        return sub

    def record(self, task_id: str, base: int) -> None:
        """Start the task's replay record (complete from ``base`` on) unless it has one."""
        if self._replay_tasks and task_id not in self._rings:
            self._rings[task_id] = _Ring(base, self._replay_events)
            if len(self._rings) > self._replay_tasks:
                self._rings.popitem(last=False)

    def unsubscribe(self, subscription: Subscription) -> None:
        task_id = subscription.task_id
        subs = self._subs.get(task_id)
        if subs is not None:
            subs.discard(subscription)
            if not subs:
                del self._subs[task_id]

    def publish(self, task_id: str, event: StreamEvent, event_id: int = NO_ID) -> None:
        ring = self._rings.get(task_id) if self._rings and event_id != NO_ID else None
        subs = self._subs.get(task_id)
        if ring is None and not subs:
            return  # nobody reads it: not even encoded
        encoded = event_json(event)
        if ring is not None:
            ring.add(event_id, event, encoded)
            self._rings.move_to_end(task_id)
        if subs:
            item = (event_id, event, encoded)  # one tuple for every subscription
            for sub in tuple(subs):
                sub.put(item)

    def end(self, task_id: str) -> None:
        for sub in self._subs.pop(task_id, ()):
            sub.finish()

    def end_all(self) -> None:
        for task_id in list(self._subs):
            self.end(task_id)

    def subscriber_count(self, task_id: str | None = None) -> int:
        if task_id is not None:
            return len(self._subs.get(task_id, ()))
        return sum(len(s) for s in self._subs.values())
