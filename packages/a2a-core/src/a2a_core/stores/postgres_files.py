"""Stored answer files in PostgreSQL: what ``PostgresTaskStore.file_backend()`` returns.

One table (``a2a_files``) in the store's schema, so every instance on the
schema serves the files any of them stored. A write takes the table's
``SHARE ROW EXCLUSIVE`` lock for its transaction (writers queue, readers do
not wait), so the bounds hold across instances. A trigger drops a task's
files when the task row goes (deleted, or evicted by ``max_tasks``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..contracts.files import FileBackend, FileLimits, StoredFile
from .postgres_database import PostgresDatabase

__all__ = ["PostgresFileBackend"]

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS {s}.a2a_files (
    seq BIGINT GENERATED ALWAYS AS IDENTITY,
    token TEXT COLLATE "C" PRIMARY KEY,
    task_id TEXT COLLATE "C" NOT NULL,
    owner TEXT,
    task_owner TEXT,
    task_bound BOOLEAN NOT NULL,
    media_type TEXT NOT NULL,
    filename TEXT,
    size BIGINT NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL,
    data BYTEA NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS a2a_files_by_task ON {s}.a2a_files (task_id)",
    "CREATE INDEX IF NOT EXISTS a2a_files_by_expiry ON {s}.a2a_files (expires_at)",
    "CREATE INDEX IF NOT EXISTS a2a_files_by_seq ON {s}.a2a_files (seq)",
    """CREATE OR REPLACE FUNCTION {s}.a2a_drop_task_files() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM {s}.a2a_files WHERE task_id = OLD.id;
    RETURN OLD;
END $$""",
    """CREATE OR REPLACE TRIGGER a2a_tasks_drop_files AFTER DELETE ON {s}.a2a_tasks
    FOR EACH ROW EXECUTE FUNCTION {s}.a2a_drop_task_files()""",
)


class PostgresFileBackend(FileBackend):
    """Files in the store's schema (made by ``PostgresTaskStore``, on its ``database``)."""

    def __init__(self, database: PostgresDatabase) -> None:
        self.database = database
        self._s = database.quoted_schema
        self._ready = False
        self._migrating = asyncio.Lock()

    async def _conn(self) -> Any:
        """A pooled connection (the table is made on first use, one migrator at a time)."""
        if not self._ready:
            async with self._migrating:
                if not self._ready:
                    async with await self.database.connection() as conn, conn.transaction():
                        key = f"a2a-files:{self._s}"
                        await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (key,))
                        for statement in _SCHEMA:
                            await conn.execute(statement.format(s=self._s))
                    self._ready = True
        return await self.database.connection()

    async def put(self, token: str, file: StoredFile, limits: FileLimits, now: float) -> bool:
        s = self._s
        size = len(file.data)
        async with await self._conn() as conn, conn.transaction():
            await conn.execute(f"LOCK TABLE {s}.a2a_files IN SHARE ROW EXCLUSIVE MODE")
            await conn.execute(f"DELETE FROM {s}.a2a_files WHERE expires_at <= %s", (now,))
            cur = await conn.execute(
                f"SELECT COALESCE(SUM(size), 0) FROM {s}.a2a_files WHERE task_id = %s",
                (file.task_id,),
            )
            held = (await cur.fetchone())[0]
            if held + size > limits.max_task_bytes:
                return False
            cur = await conn.execute(f"SELECT COUNT(*), COALESCE(SUM(size), 0) FROM {s}.a2a_files")
            count, total = await cur.fetchone()
            if count >= limits.max_files or total + size > limits.max_bytes:
                cur = await conn.execute(f"SELECT token, size FROM {s}.a2a_files ORDER BY seq")
                doomed: list[str] = []
                async for old_token, old_size in cur:
                    if count < limits.max_files and total + size <= limits.max_bytes:
                        break
                    doomed.append(old_token)
                    count, total = count - 1, total - old_size
                await conn.execute(f"DELETE FROM {s}.a2a_files WHERE token = ANY(%s)", (doomed,))
            await conn.execute(
                f"INSERT INTO {s}.a2a_files (token, task_id, owner, task_owner, task_bound,"
                " media_type, filename, size, expires_at, data)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
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
        return True

    async def get(self, token: str, now: float) -> StoredFile | None:
        async with await self._conn() as conn:
            cur = await conn.execute(
                f"SELECT {StoredFile.COLUMNS}"
                f" FROM {self._s}.a2a_files WHERE token = %s AND expires_at > %s",
                (token, now),
            )
            row = await cur.fetchone()
        return None if row is None else StoredFile.from_row(row)

    async def drop_task(self, task_id: str) -> int:
        async with await self._conn() as conn:
            cur = await conn.execute(
                f"DELETE FROM {self._s}.a2a_files WHERE task_id = %s", (task_id,)
            )
            return int(cur.rowcount)

    async def usage(self, now: float) -> tuple[int, int]:
        async with await self._conn() as conn:
            await conn.execute(f"DELETE FROM {self._s}.a2a_files WHERE expires_at <= %s", (now,))
            cur = await conn.execute(
                f"SELECT COUNT(*), COALESCE(SUM(size), 0) FROM {self._s}.a2a_files"
            )
            count, total = await cur.fetchone()
        return int(count), int(total)
