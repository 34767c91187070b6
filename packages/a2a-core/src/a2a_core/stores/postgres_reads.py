"""Followers of one task, woken by one notification, share one read of its new rows.

Each follower of a task on an instance wakes on the task's ``NOTIFY`` and reads the
rows above its position: with N followers of one task, that was N queries per event.
A read in flight now serves every follower whose rows it covers: one at or past the
position the read started from, asking before another notification for that task
arrives. A read started before a notification may not see that notification's event,
so a notification retires the task's read in flight: whoever asks after it reads anew.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["Rows", "SharedReads"]

Rows = list[tuple[Any, ...]]
"""Event rows in order: ``(event_id, seq, kind, body, prev_id)``."""

Position = tuple[int, int]
"""``(event_id, seq)`` of the last row a follower has."""


class _Read:
    __slots__ = ("after", "rows")

    def __init__(self, after: Position, rows: asyncio.Future[Rows]) -> None:
        self.after = after
        self.rows = rows


class SharedReads:
    """Reads of tasks' rows above a position, one query for the followers that can share it.

    ``query(task_id, after)`` reads up to ``batch`` rows above ``after``; ``key`` is how
    notifications name a task.
    """

    def __init__(self, query: Callable[[str, Position], Awaitable[Rows]], batch: int) -> None:
        self._query = query
        self._batch = batch
        self._reading: dict[str, _Read] = {}

    async def read(self, key: str, task_id: str, after: Position) -> Rows:
        """The task's rows above ``after`` (at most ``batch``; fewer: there were no more)."""
        shared = self._reading.get(key)
        if shared is not None and shared.after <= after:
            rows = await asyncio.shield(shared.rows)
            mine = [row for row in rows if (row[0], row[1]) > after]
            # A full batch that ends at or below ``after`` says nothing of what lies above.
            if mine or len(rows) < self._batch:
                return mine
        read = _Read(after, asyncio.ensure_future(self._query(task_id, after)))
        self._reading[key] = read
        read.rows.add_done_callback(lambda done: self._done(key, read, done))
        # Shielded: a follower that goes away does not cancel the others' read.
        return await asyncio.shield(read.rows)

    def notified(self, key: str) -> None:
        """A notification for ``key`` arrived: its read in flight may not hold that event."""
        self._reading.pop(key, None)

    def notified_all(self) -> None:
        """Notifications may have been missed (the listener reconnected): share nothing older."""
        self._reading.clear()

    def _done(self, key: str, read: _Read, done: asyncio.Future[Rows]) -> None:
        if self._reading.get(key) is read:
            del self._reading[key]
        if not done.cancelled():
            done.exception()  # retrieved: every follower that asked has it raised
