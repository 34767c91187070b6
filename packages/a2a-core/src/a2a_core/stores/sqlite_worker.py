"""The one thread and connection a SQLite store and its file backend share.

``sqlite3`` blocks, so every call runs on one dedicated worker thread that
owns the only connection: calls are serialised in order and the event loop
never waits on the disk. ``SqliteTaskStore`` makes the worker and hands it to
the file backend it makes.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["SqliteWorker"]

_T = TypeVar("_T")


class SqliteWorker:
    """Runs work on the connection to ``path``, on its own thread.

    The connection opens on first use (``prepare`` then runs on it: the
    store's migration). ``name`` is how errors name the owner.
    """

    def __init__(
        self,
        path: str,
        *,
        busy_timeout: float,
        prepare: Callable[[sqlite3.Connection], None],
        name: str,
    ) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self._prepare = prepare
        self._name = name
        self._executor: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None  # touched only on the worker thread
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether ``aclose`` ran (later calls raise RuntimeError)."""
        return self._closed

    async def run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """``work(connection)`` on the worker thread, after every call made before it."""
        if self._closed:
            raise RuntimeError(f"{self._name} is closed")
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="a2a-sqlite-store")
        return await asyncio.get_running_loop().run_in_executor(
            self._executor, self._on_worker, work
        )

    async def aclose(self) -> None:
        """Close the connection and stop the thread; idempotent."""
        if self._closed:
            return
        self._closed = True
        executor, self._executor = self._executor, None
        if executor is None:
            return
        try:
            await asyncio.get_running_loop().run_in_executor(executor, self._disconnect)
        finally:
            executor.shutdown(wait=False)

    def _on_worker(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        if self._conn is None:
            self._conn = self._connect()
        return work(self._conn)

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self.path,
                timeout=self.busy_timeout,
                isolation_level=None,  # autocommit; transactions are explicit
                check_same_thread=False,  # opened and used on the one worker thread
            )
        except sqlite3.Error as exc:
            raise sqlite3.OperationalError(
                f"cannot open the task database {self.path!r}: {exc}"
            ) from exc
        try:
            conn.execute("PRAGMA journal_mode=WAL")  # ":memory:" stays in memory mode
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL: safe against crashes, fast commits
            self._prepare(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _disconnect(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
