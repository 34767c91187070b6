"""Stored answer files in the SQLite task file: what ``SqliteTaskStore.file_backend()`` returns.

One table (``a2a_files``) beside the tasks, written on the store's worker
thread in ``BEGIN IMMEDIATE`` transactions, so the bounds hold for every
process on the file. A trigger drops a task's files when the task row goes
(deleted, or evicted by ``max_tasks``).
"""

from __future__ import annotations

import sqlite3

from ..contracts.files import FileBackend, FileLimits, StoredFile
from .sqlite_worker import SqliteWorker

__all__ = ["SqliteFileBackend"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS a2a_files (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    token TEXT NOT NULL UNIQUE,
    task_id TEXT NOT NULL,
    owner TEXT,
    task_owner TEXT,
    task_bound INTEGER NOT NULL,
    media_type TEXT NOT NULL,
    filename TEXT,
    size INTEGER NOT NULL,
    expires_at REAL NOT NULL,
    data BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS a2a_files_by_task ON a2a_files (task_id);
CREATE INDEX IF NOT EXISTS a2a_files_by_expiry ON a2a_files (expires_at);
CREATE TRIGGER IF NOT EXISTS a2a_tasks_drop_files AFTER DELETE ON a2a_tasks
BEGIN DELETE FROM a2a_files WHERE task_id = OLD.id; END
"""


def _begin(conn: sqlite3.Connection, ready: list[bool]) -> None:
    """Open a write transaction, creating the table first when this store has not yet."""
    if not ready:
        conn.executescript(f"BEGIN IMMEDIATE; {_SCHEMA}; COMMIT;")
        ready.append(True)
    conn.execute("BEGIN IMMEDIATE")


def _finish(conn: sqlite3.Connection, ok: bool) -> None:
    conn.execute("COMMIT" if ok else "ROLLBACK")


class SqliteFileBackend(FileBackend):
    """Files in the store's SQLite database (made by ``SqliteTaskStore``, on its ``worker``)."""

    def __init__(self, worker: SqliteWorker) -> None:
        self.worker = worker
        self._ready: list[bool] = []  # touched only on the store's worker thread

    async def put(self, token: str, file: StoredFile, limits: FileLimits, now: float) -> bool:
        size = len(file.data)

        def work(conn: sqlite3.Connection) -> bool:
            _begin(conn, self._ready)
            ok = False
            try:
                conn.execute("DELETE FROM a2a_files WHERE expires_at <= ?", (now,))
                held = conn.execute(
                    "SELECT COALESCE(SUM(size), 0) FROM a2a_files WHERE task_id = ?",
                    (file.task_id,),
                ).fetchone()[0]
                if held + size > limits.max_task_bytes:
                    ok = True
                    return False
                count, total = conn.execute(
                    "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM a2a_files"
                ).fetchone()
                if count >= limits.max_files or total + size > limits.max_bytes:
                    doomed: list[str] = []
                    rows = conn.execute("SELECT token, size FROM a2a_files ORDER BY seq")
                    for old_token, old_size in rows:
                        if count < limits.max_files and total + size <= limits.max_bytes:
                            break
                        doomed.append(old_token)
                        count, total = count - 1, total - old_size
                    conn.executemany(
                        "DELETE FROM a2a_files WHERE token = ?", [(t,) for t in doomed]
                    )
                conn.execute(
                    "INSERT INTO a2a_files (token, task_id, owner, task_owner, task_bound,"
                    " media_type, filename, size, expires_at, data)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        token,
                        file.task_id,
                        file.owner,
                        file.task_owner,
                        file.task_bound,
                        file.media_type,
                        file.filename,
                        size,
                        file.expires,
                        file.data,
                    ),
                )
                ok = True
                return True
            finally:
                _finish(conn, ok)

        return await self.worker.run(work)

    async def get(self, token: str, now: float) -> StoredFile | None:
        def work(conn: sqlite3.Connection) -> StoredFile | None:
            if not self._ready:
                _begin(conn, self._ready)
                _finish(conn, True)
            row = conn.execute(
                f"SELECT {StoredFile.COLUMNS} FROM a2a_files WHERE token = ? AND expires_at > ?",
                (token, now),
            ).fetchone()
            return None if row is None else StoredFile.from_row(row)

        return await self.worker.run(work)

    async def drop_task(self, task_id: str) -> int:
        def work(conn: sqlite3.Connection) -> int:
            _begin(conn, self._ready)
            try:
                return conn.execute("DELETE FROM a2a_files WHERE task_id = ?", (task_id,)).rowcount
            finally:
                _finish(conn, True)

        return await self.worker.run(work)

    async def usage(self, now: float) -> tuple[int, int]:
        def work(conn: sqlite3.Connection) -> tuple[int, int]:
            _begin(conn, self._ready)
            try:
                conn.execute("DELETE FROM a2a_files WHERE expires_at <= ?", (now,))
                count, total = conn.execute(
                    "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM a2a_files"
                ).fetchone()
                return int(count), int(total)
            finally:
                _finish(conn, True)

        return await self.worker.run(work)
