"""Per-task release signals of the scale_streams waiting agents (ours and the SDK twin).

No A2A library is imported here, so each server loads only its own.
"""

from __future__ import annotations

import asyncio

__all__ = ["Releases"]


class Releases:
    """Per-task release signals: one ``asyncio.Event`` per waiting task; ``release`` says
    how many it released (a task not yet waiting is not released)."""

    def __init__(self) -> None:
        self._events: dict[str, asyncio.Event] = {}

    async def wait(self, task_id: str) -> None:
        event = self._events.setdefault(task_id, asyncio.Event())
        try:
            await event.wait()
        finally:
            self._events.pop(task_id, None)

    def release(self, task_id: str) -> int:
        if task_id == "*":  # every task waiting now
            events = list(self._events.values())
        else:
            events = [self._events[task_id]] if task_id in self._events else []
        for event in events:
            event.set()
        return len(events)
