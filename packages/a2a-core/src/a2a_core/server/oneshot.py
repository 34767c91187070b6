"""A one-way event for a run's milestones (settled, done): set once, never cleared.

``asyncio.Event`` allocates its waiters' deque (~600 bytes with its first block) and an
instance dict when made; a run has two of them for its whole life, and most are never
awaited (a streamed send's run is followed by its stream, not waited for). ``OneShot``
is a slotted flag whose waiters' list is made by its first waiter.
"""

from __future__ import annotations

import asyncio
import contextlib

__all__ = ["OneShot"]


class OneShot:
    """``set``, ``is_set`` and ``wait`` as ``asyncio.Event``'s; no ``clear``."""

    __slots__ = ("_is_set", "_waiters")

    def __init__(self) -> None:
        self._is_set = False
        self._waiters: list[asyncio.Future[None]] | None = None
        """Made by the first ``wait`` before the flag is set; dropped when it is."""

    def is_set(self) -> bool:
        return self._is_set

    def set(self) -> None:
        """Set the flag and wake every waiter (idempotent)."""
        if self._is_set:
            return
        self._is_set = True
        waiters, self._waiters = self._waiters, None
        if waiters is not None:
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    async def wait(self) -> bool:
        """Return (True) once the flag is set; at once if it is."""
        if self._is_set:
            return True
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = []
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            self._forget(waiter)
        return True

    def _forget(self, waiter: asyncio.Future[None]) -> None:
        """A waiter that stopped waiting (woken, cancelled, timed out) is not kept."""
        waiters = self._waiters  # None once set: the list went with the wake-up
        if waiters is not None:
            with contextlib.suppress(ValueError):
                waiters.remove(waiter)
