"""A cancellation signal usable from the event loop and from worker threads."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

__all__ = ["CancellationToken", "CancelledByClient"]


class CancelledByClient(Exception):
    """Raised by ``raise_if_cancelled`` inside an agent whose task was canceled."""


class CancellationToken:
    """Set once when a task is canceled; cheap to poll, awaitable, thread-safe.

    Agents running in threads poll ``cancelled`` (or call ``raise_if_cancelled``,
    or block in ``wait_blocking``) between steps; async agents may
    ``await token.wait()``. One token exists per run, so the thread primitives
    are only created when a thread actually waits.
    """

    __slots__ = ("_callbacks", "_cancelled", "_event", "_lock", "_waiters")

    def __init__(self) -> None:
        self._cancelled = False
        self._lock = threading.Lock()
        self._event: threading.Event | None = None
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._callbacks: list[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        """Whether cancellation was requested."""
        return self._cancelled

    def cancel(self) -> None:
        """Request cancellation (idempotent). Wakes waiters and runs callbacks."""
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            event = self._event
            waiters, self._waiters = self._waiters, []
            callbacks, self._callbacks = self._callbacks, []
        if event is not None:
            event.set()
        for loop, fut in waiters:
            loop.call_soon_threadsafe(_resolve, fut)
        for callback in callbacks:
            callback()

    def raise_if_cancelled(self) -> None:
        """Stop a step loop early: raises CancelledByClient when cancelled."""
        if self._cancelled:
            raise CancelledByClient("task was canceled")

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` when cancelled (at once if already cancelled)."""
        with self._lock:
            if not self._cancelled:
                self._callbacks.append(callback)
                return
        callback()

    def wait_blocking(self, timeout: float | None = None) -> bool:
        """Block a worker thread until cancelled or ``timeout``; True if cancelled."""
        with self._lock:
            if self._cancelled:
                return True
            if self._event is None:
                self._event = threading.Event()
            event = self._event
        return event.wait(timeout)

    async def wait(self) -> None:
        """Wait until cancelled."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        entry = (loop, fut)
        with self._lock:
            if self._cancelled:
                return
            self._waiters.append(entry)
        try:
            await fut
        finally:
            with self._lock:
                if entry in self._waiters:
                    self._waiters.remove(entry)


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)
