"""A small map that forgets the least recently remembered entries beyond a limit.

Remote-agent state (which remote task a local task or conversation maps
to) must not grow without bound in a long-running process; this keeps the
most recent ``limit`` entries and is safe to use from several threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

__all__ = ["BoundedMap"]

K = TypeVar("K")
V = TypeVar("V")


class BoundedMap(Generic[K, V]):
    """At most ``limit`` entries; remembering one more drops the least recently remembered."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        self.limit = limit
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, key: K, value: V) -> None:
        """Keep ``value`` under ``key`` as the newest entry; the oldest goes past the limit."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.limit:
                self._items.popitem(last=False)

    def get(self, key: K) -> V | None:
        """The value under ``key``, or None."""
        with self._lock:
            return self._items.get(key)

    def pop(self, key: K) -> V | None:
        """Forget ``key``; its value, or None."""
        with self._lock:
            return self._items.pop(key, None)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items
