"""One event loop in a background thread: how synchronous code runs the async client.

A synchronous caller (a CrewAI tool, a LangChain ``invoke``, a script) may
run inside a thread whose own event loop is running, where ``asyncio.run``
is not allowed. ``BackgroundLoop`` runs a private loop in a daemon thread;
``run`` submits a coroutine there and blocks the calling thread until it is
done. Interrupting the wait (KeyboardInterrupt, any exception while blocked,
or a cancel hook firing) cancels the coroutine on the loop, which closes
its HTTP request. ``SyncA2AClient`` owns one loop per client;
``BackgroundLoop.shared()`` is one per process, for adapters that call many
remote agents.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["BackgroundLoop", "CancelHook"]

T = TypeVar("T")

CancelHook = Callable[[Callable[[], None]], Callable[[], None]]
"""Registers a callback to run when the caller's work is canceled; returns its undo."""

_shared: BackgroundLoop | None = None
_shared_lock = threading.Lock()


class BackgroundLoop:
    """An event loop running forever in a daemon thread."""

    def __init__(self, name: str = "a2a-client") -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._closed = False
        self.thread.start()

    @classmethod
    def shared(cls) -> BackgroundLoop:
        """The process-wide loop (started on first use, never stopped)."""
        global _shared
        with _shared_lock:
            if _shared is None or _shared.closed:
                _shared = cls("a2a-remote")
            return _shared

    @classmethod
    def shared_if_started(cls) -> BackgroundLoop | None:
        """The process-wide loop if it runs (None: nothing to clean up on it)."""
        with _shared_lock:
            return _shared if _shared is not None and not _shared.closed else None

    @property
    def closed(self) -> bool:
        """Whether ``close`` has run: a closed loop runs nothing more."""
        return self._closed

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start ``coro`` on the loop without waiting (refused from the loop's own thread)."""
        if self._closed:
            coro.close()
            raise RuntimeError("This background event loop is closed")
        if threading.current_thread() is self.thread:
            coro.close()
            raise RuntimeError(
                "A synchronous A2A call was made from its own event loop thread; "
                "use the async API there"
            )
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], *, cancel_hook: CancelHook | None = None) -> T:
        """Run ``coro`` on the loop and wait for it; cancel it if the wait is interrupted.

        ``cancel_hook`` ties the call to the caller's own cancellation (for
        example a served task being canceled): when it fires, the coroutine
        is canceled and this raises ``concurrent.futures.CancelledError``.
        """
        future = self.submit(coro)
        remove = cancel_hook(lambda: _cancel(future)) if cancel_hook is not None else None
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise
        finally:
            if remove is not None:
                remove()

    def stop(self) -> None:
        """Cancel what still runs, then stop the loop and join its thread."""
        if self._closed:
            return
        self._closed = True
        if threading.current_thread() is self.thread:
            # Collected on its own loop (a finalizer): no waiting on ourselves.
            self.loop.stop()
            return
        if self.loop.is_running():
            with contextlib.suppress(TimeoutError, RuntimeError):
                asyncio.run_coroutine_threadsafe(_cancel_all(), self.loop).result(timeout=5)
            self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)


def _cancel(future: concurrent.futures.Future[Any]) -> None:
    future.cancel()


async def _cancel_all() -> None:
    current = asyncio.current_task()
    tasks = [t for t in asyncio.all_tasks() if t is not current]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=2)
