"""Idempotent-send records kept in process memory, for the in-memory stores."""

from __future__ import annotations

from collections import OrderedDict

__all__ = ["SendRecords"]


class SendRecords:
    """``SentMessages`` for one process: at most ``limit`` records, the oldest dropped first.

    Records are kept in the order they were made, which is also the order they expire
    in (one retention for all), so both bounds drop from the front.
    """

    __slots__ = ("_records", "limit")

    def __init__(self, limit: int) -> None:
        if limit <= 0:
            raise ValueError("max_sends must be > 0")
        self.limit = limit
        self._records: OrderedDict[str, tuple[str, float]] = OrderedDict()

    def remember(self, key: str, task_id: str, now: float, retention: float) -> str | None:
        """Record ``key -> task_id`` unless a live record exists: then return its task id."""
        records = self._records
        found = records.get(key)
        if found is not None and found[1] > now:
            return found[0]
        records.pop(key, None)
        records[key] = (task_id, now + retention)
        while records:
            first = next(iter(records.values()))
            if len(records) <= self.limit and first[1] > now:
                break
            records.popitem(last=False)
        return None

    def forget(self, key: str, task_id: str) -> None:
        """Drop the record if it still names ``task_id``."""
        found = self._records.get(key)
        if found is not None and found[0] == task_id:
            del self._records[key]
