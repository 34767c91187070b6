"""The simplest correct ``EventBus``, written from its contract alone (``server.events``).

A list of ``(id, event, JSON)`` per recorded task, never trimmed, and a set of
subscriptions per task. The event and replay tests run against it and against
``MemoryEventBus``: what they check is the contract, not one bus's internals.
"""

from __future__ import annotations

from collections.abc import Callable

from a2a_core.server.events import NO_ID, EventBus, EventsLost, MemoryEventBus, Subscription
from a2a_core.types import StreamEvent
from a2a_core.types._json import event_json

__all__ = ["BUSES", "BUS_IDS", "ListEventBus"]


class ListEventBus(EventBus):
    """Keeps every event of every recorded task (tests only: nothing is ever let go)."""

    def __init__(self) -> None:
        self._records: dict[str, tuple[int, list[tuple[int, StreamEvent, bytes | None]]]] = {}
        self._subs: dict[str, set[Subscription]] = {}

    def subscribe(
        self, task_id: str, *, after: int | None = None, current: int | None = None
    ) -> Subscription:
        subscription = Subscription(self, task_id)
        if after is not None:
            base, events = self._records.get(task_id, (None, []))
            if base is None or after < base:
                raise EventsLost(f"events of task {task_id} after {after} were not recorded")
            for event_id, event, encoded in events:
                if event_id > after:
                    subscription.deliver(event_id, event, encoded)
        elif current is not None:
            self._records.setdefault(task_id, (current, []))
        self._subs.setdefault(task_id, set()).add(subscription)
        return subscription

    def publish(self, task_id: str, event: StreamEvent, event_id: int = NO_ID) -> None:
        encoded = event_json(event)
        if event_id != NO_ID and task_id in self._records:
            self._records[task_id][1].append((event_id, event, encoded))
        for subscription in tuple(self._subs.get(task_id, ())):
            subscription.deliver(event_id, event, encoded)

    def end(self, task_id: str) -> None:
        for subscription in self._subs.pop(task_id, ()):
            subscription.finish()

    def end_all(self) -> None:
        for task_id in list(self._subs):
            self.end(task_id)

    def unsubscribe(self, subscription: Subscription) -> None:
        self._subs.get(subscription.task_id, set()).discard(subscription)

    def subscriber_count(self, task_id: str | None = None) -> int:
        if task_id is not None:
            return len(self._subs.get(task_id, ()))
        return sum(len(subs) for subs in self._subs.values())


BUSES: list[Callable[[], EventBus]] = [MemoryEventBus, ListEventBus]
"""The buses the event and replay tests run on."""
BUS_IDS = ["memory-bus", "list-bus"]
