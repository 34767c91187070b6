"""Per-task release signals of the scale_streams waiting agents (ours and the SDK twin).

No A2A library is imported here, so each server loads only its own.
"""

from __future__ import annotations

import asyncio

__all__ = ["Releases"]


class Releases:
    """Per-task release signals: one future per waiting task; ``release`` says how many
    it released (a task not yet waiting is not released).

    A bare future, not an ``asyncio.Event``: an idle stream's memory is what the server
    keeps for it, and an Event (its dict, its waiters' deque and their future) would add
    about 1.6 KB per waiting task of the benchmark's own agent to both servers' figures.
    """

    def __init__(self) -> None:
        self._waiting: dict[str, asyncio.Future[None]] = {}

    async def wait(self, task_id: str) -> None:
        waiter = self._waiting.get(task_id)
        if waiter is None:
            waiter = self._waiting[task_id] = asyncio.get_running_loop().create_future()
        try:
            await waiter
        finally:
            self._waiting.pop(task_id, None)

    def release(self, task_id: str) -> int:
        if task_id == "*":  # every task waiting now
            waiters = list(self._waiting.values())
        else:
            waiters = [self._waiting[task_id]] if task_id in self._waiting else []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
        return len(waiters)
