"""The event bus: per-task ordered fan-out of events to streams and subscribers.

Every event carries an id: the task version its save produced (monotonic per
task; 0 for the task before its first save, -1 for a direct message reply,
which belongs to no task and is never replayed). Streams send it as the SSE
``id``, and a resubscribe with ``Last-Event-ID`` asks for what came after it.

The in-process bus keeps, for each task that has had a subscriber, a short
replay buffer of its latest events (``replay_events`` per task, for the
``replay_tasks`` most recently active tasks). A subscribe ``after`` an id the
buffer still covers replays the missed events and continues live; one the
buffer cannot prove complete raises ``EventsLost`` (the service then starts
again from a snapshot). Tasks nobody ever streamed cost nothing here.

When a task's streams end (it is final or paused) its buffer is kept as its
events' JSON bytes, packed into one ``bytearray`` and two arrays, instead of the
event objects, decoded again only for a replay: a long-running server keeps up
to ``replay_tasks`` buffers, and as objects they were hundreds of thousands that
the garbage collector walked on every full collection (and that made full
collections happen more often), which cost more than a third of a streamed
event's CPU; as one ``(id, bytes)`` tuple per event, still one object per event
for every full collection to touch (21.8 ms per collection at the default bounds
with 1,000-event streams, 0.7 ms packed: ``benchmarks/replay_gc_bench.py``). The
bytes are those a 1.0 stream sent (``Codec.encode_event_frame``, handed over by
``Subscription.sent`` after each write, so a long stream's buffer is packed as it
goes), else encoded when the task's streams have let go of the buffer (about 2 µs
per event, once; ``pack`` waits for subscriptions still reading, so the events
they have yet to send are not encoded twice).
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from array import array
from bisect import bisect_right
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from itertools import accumulate, islice

from ..contracts.channel import EventsLost
from ..errors import ServerBusyError
from ..types import StreamEvent, StreamResponse
from ..types._json import event_json

__all__ = ["EventBus", "EventsLost", "MemoryEventBus", "Subscription"]

_CLOSED = object()
NO_ID = -1
"""The id of an event that belongs to no stored task version (a direct reply)."""


class _Ring:
    """The latest events of one task, and the id from which the record is complete.

    The oldest events are held packed: their 1.0 ``StreamResponse`` JSON one after the
    other in a ``bytearray``, their ids and end offsets in two arrays. None of the three
    is a container the garbage collector walks, where a deque of ``(int, bytes)`` tuples
    was one object per event to visit on every full collection (a thousand retained
    buffers of a hundred events made those most of their time). The newer events are
    in ``events``, as the objects published, until a stream has sent their frames
    (``pack_sent``) or the task has no stream left (``pack``). An event with no JSON of
    its own (a subclass's, an end mark) is packed as no bytes and kept in ``_objects``.
    """

    __slots__ = (
        "_data",
        "_ends",
        "_first",
        "_held",
        "_ids",
        "_objects",
        "base",
        "events",
        "size",
    )

    def __init__(self, base: int, size: int) -> None:
        self.base = base
        """Every event with an id above ``base`` is (or was) held."""
        self.size = size
        self.events: deque[tuple[int, StreamEvent]] = deque()
        """The events after the packed ones, oldest first."""
        self._ids = array("q")
        """The packed events' ids (from ``_first`` on: the older ones were let go)."""
        self._ends = array("Q")
        """Where each packed event's JSON ends in ``_data``."""
        self._data = bytearray()
        self._first = 0
        self._held = 0
        """How many events are held, packed or not (at most ``size``)."""
        self._objects: dict[int, StreamEvent] | None = None
        """The packed events kept as objects, by id (None: there are none)."""

    def add(self, event_id: int, event: StreamEvent) -> None:
        if self._held < self.size:
            self._held += 1
        elif self._first < len(self._ids):  # full: the oldest goes
            self.base = self._ids[self._first]
            self._first += 1
            if self._objects is not None:
                self._objects.pop(self.base, None)
        else:
            self.base = self.events.popleft()[0]
        self.events.append((event_id, event))

    def pack(self) -> None:
        """Hold every event packed."""
        ids: list[int] = []
        chunks: list[bytes] = []
        for event_id, event in self.events:
            data = event_json(event)
            if data is None:  # a subclass's (its own serializer) or an end mark
                if self._objects is None:
                    self._objects = {}
                self._objects[event_id] = event
                data = b""
            ids.append(event_id)
            chunks.append(data)
        self.events.clear()
        self._append(ids, chunks)

    def pack_sent(self, replays: list[tuple[int, bytes]]) -> None:
        """Pack the events whose frames a stream has just sent, as the bytes it gives (none
        is encoded here): a long stream's buffer is packed as it goes, and its objects
        freed, rather than all at its end while the client's next request waits. Events a
        stream sent before it followed the task, or that another stream packed already,
        are not at the front: passed over."""
        events = self.events
        ids: list[int] = []
        chunks: list[bytes] = []
        for event_id, data in replays:
            if not events:
                break
            front = events[0][0]
            if event_id < front:
                continue
            if event_id > front:
                break  # the front was sent without its bytes: it stays, and those after it
            events.popleft()
            ids.append(event_id)
            chunks.append(data)
        self._append(ids, chunks)

    def _append(self, ids: list[int], chunks: list[bytes]) -> None:
        """Pack these events (the oldest of ``events``, just taken from it)."""
        if not ids:
            return
        if self._first > 64 and self._first * 2 > len(self._ids):
            self._drop_let_go()
        self._ids.extend(ids)
        self._ends.extend(islice(accumulate(map(len, chunks), initial=len(self._data)), 1, None))
        self._data += b"".join(chunks)

    def _drop_let_go(self) -> None:
        """Free the packed events the ring has let go of (once they are most of it)."""
        first = self._first
        begin = self._ends[first - 1]
        del self._data[:begin]
        self._ids = self._ids[first:]
        self._ends = array("Q", [end - begin for end in self._ends[first:]])
        self._first = 0

    def _packed(self, index: int) -> StreamEvent | bytes:
        """The packed event at ``index``: its bytes, or the object kept for it."""
        if self._objects is not None:
            kept = self._objects.get(self._ids[index])
            if kept is not None:
                return kept
        ends = self._ends
        return bytes(self._data[ends[index - 1] if index else 0 : ends[index]])

    def held(self) -> list[tuple[int, StreamEvent | bytes]]:
        """Every event held, oldest first, as an object or as its bytes."""
        ids = self._ids
        packed = [(ids[i], self._packed(i)) for i in range(self._first, len(ids))]
        return [*packed, *self.events]

    def after(self, event_id: int) -> list[tuple[int, StreamEvent]]:
        if event_id < self.base:
            raise EventsLost(f"events after {event_id} are past retention")
        ids = self._ids
        missed: list[tuple[int, StreamEvent]] = []
        for i in range(bisect_right(ids, event_id, self._first), len(ids)):
            event = self._packed(i)
            missed.append((ids[i], _unpack(event) if isinstance(event, bytes) else event))
        missed += [(i, event) for i, event in self.events if i > event_id]
        return missed


def _unpack(data: bytes) -> StreamEvent:
    """An event ``_Ring.pack`` encoded (the model's own JSON: it decodes to an equal one)."""
    return StreamResponse.model_validate_json(data).event


class Subscription:
    """One consumer's ordered view of a task's events. Iterate it; ``close()`` to leave.

    ``event_id`` is the id of the event last returned (None before the first).
    """

    __slots__ = (
        "_bus",
        "_closed",
        "_items",
        "_max_pending",
        "_waiter",
        "event_id",
        "task_id",
    )

    def __init__(self, bus: MemoryEventBus, task_id: str, max_pending: int) -> None:
        self._bus = bus
        self.task_id = task_id
        self._items: deque[object] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False
        self._max_pending = max_pending
        self.event_id: int | None = None

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
        self.event_id, event = item  # type: ignore[misc]
        return event  # type: ignore[has-type]

    def take_ready(self) -> tuple[int, StreamEvent] | None:
        """The next ``(event id, event)`` if one is waiting, without a coroutine (None:
        nothing waiting, or the end or an error is next: ``__anext__`` raises those)."""
        items = self._items
        if not items or type(items[0]) is not tuple:
            return None
        item: tuple[int, StreamEvent] = items.popleft()  # type: ignore[assignment]
        self.event_id = item[0]
        return item

    @property
    def pending(self) -> int:
        """Events received and not yet read (a replay is pending in full when subscribed)."""
        return len(self._items)

    def sent(self, replays: list[tuple[int, bytes]]) -> None:
        """Frames were sent: the task's replay buffer can keep these events' bytes."""
        self._bus.frames_sent(self.task_id, replays)

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
    def subscribe(
        self, task_id: str, *, after: int | None = None, current: int | None = None
    ) -> Subscription:
        """Receive the task's events: from now on, or replayed from just ``after`` an id.

        ``current`` (the task's version now) starts the task's replay record.
        Raises ``EventsLost`` when the events after ``after`` are not all retained.
        """

    @abstractmethod
    def publish(self, task_id: str, event: StreamEvent, event_id: int = NO_ID) -> None:
        """Deliver ``event`` (with its id) to the task's subscribers."""

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
    """In-process bus. ``max_pending`` bounds each subscriber's backlog.

    ``replay_events`` (per task) and ``replay_tasks`` (tasks, least recently
    published dropped first) bound the replay buffers; 0 turns replay off.
    ``end`` (and ``pack``) keep a task's buffer as JSON bytes until it has events again.
    """

    def __init__(
        self, max_pending: int = 10_000, replay_events: int = 1000, replay_tasks: int = 1000
    ) -> None:
        if replay_events < 0 or replay_tasks < 0:
            raise ValueError("replay_events and replay_tasks must be >= 0")
        self._subs: dict[str, set[Subscription]] = {}
        self._draining: dict[str, set[Subscription]] = {}
        """Subscriptions still reading a task whose buffer is due to be packed (tasks with a
        buffer only: bounded by ``replay_tasks``)."""
        self._max_pending = max_pending
        self._rings: OrderedDict[str, _Ring] = OrderedDict()
        self._replay_events = replay_events
        self._replay_tasks = replay_tasks if replay_events else 0

    def subscribe(
        self, task_id: str, *, after: int | None = None, current: int | None = None
    ) -> Subscription:
        ring = self._rings.get(task_id)
        missed: list[tuple[int, StreamEvent]] = []
        if after is not None:
            if ring is None:
                raise EventsLost(f"no events of task {task_id} are retained")
            missed = ring.after(after)
        elif ring is None and current is not None:
            self.record(task_id, current)
        sub = Subscription(self, task_id, self._max_pending + len(missed))
        for item in missed:
            sub._push(item)  # pyright: ignore[reportPrivateUsage]
        self._subs.setdefault(task_id, set()).add(sub)
        return sub

    def record(self, task_id: str, base: int) -> None:
        """Start the task's replay buffer (complete from ``base`` on) unless it has one."""
        if self._replay_tasks and task_id not in self._rings:
            self._rings[task_id] = _Ring(base, self._replay_events)
            if len(self._rings) > self._replay_tasks:
                dropped, _ = self._rings.popitem(last=False)
                self._draining.pop(dropped, None)  # nothing left to pack for its streams

    def unsubscribe(self, sub: Subscription) -> None:
        """Stop delivering a task's events to this subscription."""
        task_id = sub.task_id
        subs = self._subs.get(task_id)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._subs[task_id]
        draining = self._draining.get(task_id)
        if draining is not None:
            draining.discard(sub)
            if not draining:
                del self._draining[task_id]
                self.pack(task_id)  # the last stream has sent (and kept) its frames

    def frames_sent(self, task_id: str, replays: list[tuple[int, bytes]]) -> None:
        """A stream sent frames of the task's events: these are their replay bytes."""
        ring = self._rings.get(task_id)
        if ring is not None and ring.events:
            ring.pack_sent(replays)

    def publish(self, task_id: str, event: StreamEvent, event_id: int = NO_ID) -> None:
        if self._rings and event_id != NO_ID:
            ring = self._rings.get(task_id)
            if ring is not None:
                ring.add(event_id, event)
                self._rings.move_to_end(task_id)
        subs = self._subs.get(task_id)
        if subs:
            item = (event_id, event)
            for sub in tuple(subs):
                sub._push(item)  # pyright: ignore[reportPrivateUsage]

    def end(self, task_id: str) -> None:
        subs = self._subs.pop(task_id, None)
        if subs:
            for sub in subs:
                sub._push(_CLOSED)  # pyright: ignore[reportPrivateUsage]
            if task_id in self._rings:
                self._draining.setdefault(task_id, set()).update(subs)
        self.pack(task_id)

    def pack(self, task_id: str) -> None:
        """Hold the task's retained events as bytes: it has no stream now, maybe never again.

        While subscriptions of the task are still reading (its run ended before they sent
        its last events), the buffer is packed when the last of them lets go: by then each
        event was encoded for its frame, and the buffer takes those bytes.
        """
        ring = self._rings.get(task_id)
        if ring is None:
            return
        subs = self._subs.get(task_id)
        if subs or task_id in self._draining:
            self._draining.setdefault(task_id, set()).update(subs or ())
            return
        ring.pack()

    def end_all(self) -> None:
        for task_id in list(self._subs):
            self.end(task_id)

    def subscriber_count(self, task_id: str | None = None) -> int:
        if task_id is not None:
            return len(self._subs.get(task_id, ()))
        return sum(len(s) for s in self._subs.values())
