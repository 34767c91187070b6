"""A cancellation signal usable from the event loop and from worker threads."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

__all__ = ["CancellationToken", "CancelledByClient"]


class CancelledByClient(Exception):
    """Raised by ``raise_if_cancelled`` inside an agent whose task was canceled."""


class CancellationToken:
    """Set once when a task is canceled; cheap to poll, awaitable, thread-safe to read.

    Agents running in threads poll ``cancelled`` (or call ``raise_if_cancelled``)
    between steps; async agents may ``await token.wait()``.
    """

    __slots__ = ("_callbacks", "_event", "_waiters")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._callbacks: list[Callable[[], None]] = []

    @property
    def cancelled(self) -> bool:
        """Whether cancellation was requested."""
        return self._event.is_set()

    def cancel(self) -> None:
        """Request cancellation (idempotent). Wakes waiters and runs callbacks."""
        if self._event.is_set():
            return
        self._event.set()
        for loop, fut in self._waiters:
            loop.call_soon_threadsafe(_resolve, fut)
        self._waiters.clear()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def raise_if_cancelled(self) -> None:
        """Stop a step loop early: raises CancelledByClient when cancelled."""
        if self._event.is_set():
            raise CancelledByClient("task was canceled")

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` when cancelled (at once if already cancelled)."""
        if self._event.is_set():
            callback()
        else:
            self._callbacks.append(callback)

    def wait_blocking(self, timeout: float | None = None) -> bool:
        """Block a worker thread until cancelled or ``timeout``; True if cancelled."""
        return self._event.wait(timeout)

    async def wait(self) -> None:
        """Wait until cancelled."""
        if self._event.is_set():
            return
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self._waiters.append((loop, fut))
        await fut


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)
