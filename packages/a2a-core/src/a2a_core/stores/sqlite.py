"""A durable store in one SQLite file: tasks survive restarts (stdlib ``sqlite3``, no dependency).

``sqlite3`` blocks, so every call runs on one dedicated worker thread that
owns the only connection (``sqlite_worker``): calls are serialised in order
and the event loop never waits on the disk. The file is in WAL mode, so readers in other
processes (or another server on the same file) do not block the writer.

A row keeps the task's JSON (``model_dump_json``, the 1.0 wire shape) next to
the columns that listing filters and sorts on. Optimistic concurrency is one
conditional statement (``UPDATE ... WHERE version = ?``), so it holds across
processes sharing the file too.
"""

from __future__ import annotations

import os
import sqlite3
from typing import TYPE_CHECKING

from ..contracts.task_store import (
    ConcurrentUpdateError,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskStore,
    sort_key,
)
from ..types import Task
from .cluster import Lease, SentMessages, TaskLeases
from .sql_counts import ALL, EVERYONE, sqlite_counts_schema
from .sql_list import list_statements, task_page
from .sqlite_worker import SqliteWorker

if TYPE_CHECKING:
    from .sqlite_files import SqliteFileBackend

__all__ = ["SqliteTaskStore"]

SCHEMA_VERSION = 2  # 2: task counts kept by triggers (``sql_counts``)
_TRIM_EVERY = 64  # idempotency records are trimmed to max_sends every this many sends
EVICT_BATCH = 100
"""The most tasks one call on the worker evicts: calls queued meanwhile run between batches
(a hundred deletes, with their index and WAL writes, take a few milliseconds)."""

# sort_ts is the first half of ``base.sort_key``: minus the status time (0 when
# undated), so ascending (sort_ts, id) is "newest status first, ties by id",
# exactly the order and cursor of every other store. status_ts stays NULL when
# undated: such tasks never match ``status_after``. seq orders writes, for eviction.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS a2a_schema (
    name TEXT PRIMARY KEY,
    version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS a2a_tasks (
    id TEXT PRIMARY KEY,
    owner TEXT,
    context_id TEXT NOT NULL,
    state TEXT NOT NULL,
    status_ts REAL,
    sort_ts REAL NOT NULL,
    terminal INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    version INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS a2a_tasks_by_owner ON a2a_tasks (owner, sort_ts, id);
CREATE INDEX IF NOT EXISTS a2a_tasks_by_context ON a2a_tasks (owner, context_id, sort_ts, id);
CREATE INDEX IF NOT EXISTS a2a_tasks_by_state ON a2a_tasks (owner, state, sort_ts, id);
CREATE INDEX IF NOT EXISTS a2a_tasks_by_seq ON a2a_tasks (seq);
CREATE INDEX IF NOT EXISTS a2a_tasks_terminal_by_seq ON a2a_tasks (seq) WHERE terminal = 1;
CREATE TABLE IF NOT EXISTS a2a_leases (
    task_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    instance TEXT NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS a2a_leases_by_expiry ON a2a_leases (expires_at);
CREATE TABLE IF NOT EXISTS a2a_sends (
    key TEXT PRIMARY KEY,
    task_id TEXT NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS a2a_sends_by_expiry ON a2a_sends (expires_at);
"""

_NEXT_SEQ = "(SELECT COALESCE(MAX(seq), 0) + 1 FROM a2a_tasks)"
_INSERT = (
    "INSERT INTO a2a_tasks (id, owner, context_id, state, status_ts, sort_ts, terminal, body,"
    f" seq, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, {_NEXT_SEQ}, ?)"
)
_UPDATE = (
    "UPDATE a2a_tasks SET context_id = ?, state = ?, status_ts = ?, sort_ts = ?, terminal = ?,"
    f" body = ?, seq = {_NEXT_SEQ}, version = version + ?"
    " WHERE id = ? AND owner IS ? AND version = ?"
)


class SqliteTaskStore(TaskStore, TaskLeases, SentMessages):
    """Tasks in a SQLite file (``":memory:"``: a private in-memory database, lost on close).

    ``max_tasks`` (default: unbounded) bounds the table: past it, the least
    recently updated terminal tasks are evicted on ``create``, as in
    ``MemoryTaskStore``; active and paused tasks never are. A bound far below
    the count is reached ``EVICT_BATCH`` tasks per call on the worker, so
    other calls run in between. Counts are kept by triggers (``sql_counts``). ``busy_timeout``
    is how long a write waits for another process holding the file's lock.
    Nothing touches the disk before the first call (the file and table are
    created then).

    Run leases (``TaskLeases``): one process serves a file, so at startup the
    tasks a previous life left running are settled at once. Idempotent sends
    (``SentMessages``) keep at most ``max_sends`` records.
    """

    settles_at_startup = True

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        *,
        max_tasks: int | None = None,
        busy_timeout: float = 5.0,
        max_sends: int = 100_000,
    ) -> None:
        if max_sends <= 0:
            raise ValueError("max_sends must be > 0")
        self.max_sends = max_sends
        self._remembered = 0  # touched only on the worker thread
        if max_tasks is not None and max_tasks <= 0:
            raise ValueError("max_tasks must be > 0")
        self.path = os.fspath(path)
        self.max_tasks = max_tasks
        self.busy_timeout = busy_timeout
        self.worker = SqliteWorker(
            self.path, busy_timeout=busy_timeout, prepare=_migrate, name=repr(self)
        )
        """The thread and connection every call runs on, shared with the file backend."""
        self._files: SqliteFileBackend | None = None

    def file_backend(self) -> SqliteFileBackend:
        """Answer files served by URL, in a table of the same database (they outlive a restart)."""
        if self._files is None:
            from .sqlite_files import SqliteFileBackend

            self._files = SqliteFileBackend(self.worker)
        return self._files

    def __repr__(self) -> str:
        return f"SqliteTaskStore({self.path!r}, max_tasks={self.max_tasks!r})"

    # -- the TaskStore contract ---------------------------------------------------------
    async def create(self, task: Task, owner: str | None) -> StoredTask:
        row = _row(task)
        version = 1
        bound = self.max_tasks

        def insert(conn: sqlite3.Connection) -> bool:
            with _transaction(conn):
                try:
                    conn.execute(_INSERT, (task.id, owner, *row, version))
                except sqlite3.IntegrityError:
                    raise ConcurrentUpdateError(f"task {task.id} already exists") from None
                return bound is not None and _evict(conn, bound)

        def evict(conn: sqlite3.Connection) -> bool:
            assert bound is not None
            with _transaction(conn):
                return _evict(conn, bound)

        more = await self.worker.run(insert)
        while more:  # far over the bound (it was lowered): a batch per call on the worker
            more = await self.worker.run(evict)
        return StoredTask(task, version, owner)

    async def get(self, task_id: str, owner: str | None) -> StoredTask | None:
        def select(conn: sqlite3.Connection) -> tuple[int, str] | None:
            return conn.execute(
                "SELECT version, body FROM a2a_tasks WHERE id = ? AND owner IS ?", (task_id, owner)
            ).fetchone()

        found = await self.worker.run(select)
        if found is None:
            return None
        return StoredTask(Task.model_validate_json(found[1]), found[0], owner)

    async def save(self, task: Task, owner: str | None, expected_version: int) -> StoredTask:
        return await self._update(task, owner, expected_version, expected_version + 1)

    async def save_at(
        self, task: Task, owner: str | None, expected_version: int, version: int
    ) -> StoredTask:
        """``save``, numbering the result ``version`` (``SavesAtVersion``)."""
        if version <= expected_version:
            raise ValueError("a save must advance the version")
        return await self._update(task, owner, expected_version, version)

    async def _update(
        self, task: Task, owner: str | None, expected_version: int, version: int
    ) -> StoredTask:
        row = _row(task)

        def update(conn: sqlite3.Connection) -> None:
            params = (*row, version - expected_version, task.id, owner, expected_version)
            changed = conn.execute(_UPDATE, params).rowcount
            if changed == 1:
                return
            current = conn.execute(
                "SELECT version FROM a2a_tasks WHERE id = ? AND owner IS ?", (task.id, owner)
            ).fetchone()
            if current is None:
                raise ConcurrentUpdateError(f"task {task.id} no longer exists")
            raise ConcurrentUpdateError(
                f"task {task.id} is at version {current[0]}, expected {expected_version}"
            )

        await self.worker.run(update)
        return StoredTask(task, version, owner)

    async def delete(self, task_id: str, owner: str | None) -> bool:
        def remove(conn: sqlite3.Connection) -> bool:
            sql = "DELETE FROM a2a_tasks WHERE id = ? AND owner IS ?"
            return conn.execute(sql, (task_id, owner)).rowcount == 1

        return await self.worker.run(remove)

    async def list(self, query: TaskQuery, owner: str | None) -> TaskPage:
        sql = list_statements(
            query,
            table="a2a_tasks",
            counts="a2a_task_counts",
            owner=owner,
            owner_tag=_owner_tag(owner),
            owner_op="IS",
        )

        def select(conn: sqlite3.Connection) -> tuple[int, list[str]]:
            with _transaction(conn, "BEGIN"):  # one snapshot for the count and the page
                (total,) = conn.execute(sql.count, sql.count_params).fetchone()
                bodies = [body for (body,) in conn.execute(sql.page, sql.page_params)]
            return total, bodies

        total, bodies = await self.worker.run(select)
        return task_page(total, bodies, query.page_size)

    # -- leases (TaskLeases) ------------------------------------------------------------
    async def acquire_lease(
        self, task_id: str, owner: str | None, instance: str, until: float, now: float
    ) -> Lease | None:
        def acquire(conn: sqlite3.Connection) -> Lease | None:
            with _transaction(conn):
                found = conn.execute(
                    "SELECT owner, instance, expires_at FROM a2a_leases WHERE task_id = ?",
                    (task_id,),
                ).fetchone()
                if found is not None and found[1] != instance and found[2] > now:
                    return Lease(task_id, _owner_of(found[0]), found[1], found[2])
                conn.execute(
                    "INSERT OR REPLACE INTO a2a_leases VALUES (?, ?, ?, ?)",
                    (task_id, _owner_tag(owner), instance, until),
                )
                return None

        return await self.worker.run(acquire)

    async def renew_leases(self, instance: str, task_ids: list[str], until: float) -> list[str]:
        def renew(conn: sqlite3.Connection) -> list[str]:
            lost: list[str] = []
            with _transaction(conn):
                for task_id in task_ids:
                    changed = conn.execute(
                        "UPDATE a2a_leases SET expires_at = ? WHERE task_id = ? AND instance = ?",
                        (until, task_id, instance),
                    ).rowcount
                    if changed != 1:
                        lost.append(task_id)
            return lost

        return await self.worker.run(renew) if task_ids else []

    async def release_lease(self, task_id: str, instance: str) -> None:
        def release(conn: sqlite3.Connection) -> None:
            sql = "DELETE FROM a2a_leases WHERE task_id = ? AND instance = ?"
            conn.execute(sql, (task_id, instance))

        await self.worker.run(release)

    async def expired_leases(self, now: float, limit: int) -> list[Lease]:
        def expired(conn: sqlite3.Connection) -> list[Lease]:
            rows = conn.execute(
                "SELECT task_id, owner, instance, expires_at FROM a2a_leases"
                " WHERE expires_at <= ? ORDER BY expires_at LIMIT ?",
                (now, limit),
            ).fetchall()
            return [Lease(r[0], _owner_of(r[1]), r[2], r[3]) for r in rows]

        return await self.worker.run(expired)

    async def take_expired_lease(self, lease: Lease, now: float, holder: str, until: float) -> bool:
        def take(conn: sqlite3.Connection) -> bool:
            sql = (
                "UPDATE a2a_leases SET instance = ?, expires_at = ?"
                " WHERE task_id = ? AND instance = ? AND expires_at <= ?"
            )
            args = (holder, until, lease.task_id, lease.instance, now)
            return conn.execute(sql, args).rowcount == 1

        return await self.worker.run(take)

    async def lease_of(self, task_id: str) -> Lease | None:
        def select(conn: sqlite3.Connection) -> Lease | None:
            r = conn.execute(
                "SELECT owner, instance, expires_at FROM a2a_leases WHERE task_id = ?",
                (task_id,),
            ).fetchone()
            return None if r is None else Lease(task_id, _owner_of(r[0]), r[1], r[2])

        return await self.worker.run(select)

    # -- idempotent sends (SentMessages) -------------------------------------------------
    async def remember_send(
        self, key: str, task_id: str, now: float, retention: float
    ) -> str | None:
        def remember(conn: sqlite3.Connection) -> str | None:
            with _transaction(conn):
                found = conn.execute(
                    "SELECT task_id FROM a2a_sends WHERE key = ? AND expires_at > ?", (key, now)
                ).fetchone()
                if found is not None:
                    return str(found[0])
                conn.execute(
                    "INSERT OR REPLACE INTO a2a_sends VALUES (?, ?, ?)",
                    (key, task_id, now + retention),
                )
                self._remembered += 1
                if self._remembered % _TRIM_EVERY:
                    return None
                conn.execute("DELETE FROM a2a_sends WHERE expires_at <= ?", (now,))
                (count,) = conn.execute("SELECT COUNT(*) FROM a2a_sends").fetchone()
                if count > self.max_sends:
                    conn.execute(
                        "DELETE FROM a2a_sends WHERE key IN (SELECT key FROM a2a_sends"
                        " ORDER BY expires_at LIMIT ?)",
                        (count - self.max_sends,),
                    )
            return None

        return await self.worker.run(remember)

    async def forget_send(self, key: str, task_id: str) -> None:
        def forget(conn: sqlite3.Connection) -> None:
            sql = "DELETE FROM a2a_sends WHERE key = ? AND task_id = ?"
            conn.execute(sql, (key, task_id))

        await self.worker.run(forget)

    async def aclose(self) -> None:
        """Close the connection and stop the worker thread; later calls raise RuntimeError."""
        await self.worker.aclose()


# -- SQL helpers (run on the worker thread) ---------------------------------------------


class _transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error) on an autocommit connection."""

    def __init__(self, conn: sqlite3.Connection, begin: str = "BEGIN IMMEDIATE") -> None:
        self.conn = conn
        self.begin = begin

    def __enter__(self) -> None:
        self.conn.execute(self.begin)

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")


def _migrate(conn: sqlite3.Connection) -> None:
    """Create the tables on first use, or bring a version 1 file up to 2 (the kept counts,
    counted once from its tasks); refuse a file written by a newer schema."""
    with _transaction(conn):
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
        found = conn.execute("SELECT version FROM a2a_schema WHERE name = 'tasks'").fetchone()
        if found is not None and found[0] > SCHEMA_VERSION:
            raise RuntimeError(
                f"the task table has schema version {found[0]}; this a2a-core reads up to "
                f"{SCHEMA_VERSION} (upgrade a2a-adapters-core)"
            )
        if found is None or found[0] < 2:
            for statement in sqlite_counts_schema():
                conn.execute(statement)
        conn.execute("INSERT OR REPLACE INTO a2a_schema VALUES ('tasks', ?)", (SCHEMA_VERSION,))


def _row(task: Task) -> tuple[str, str, float | None, float, int, str]:
    """The columns after (id, owner): context, state, times, terminal flag, JSON body."""
    ts = task.status.timestamp
    state = task.status.state
    return (
        task.context_id,
        state.value,
        ts.timestamp() if ts is not None else None,
        sort_key(task)[0],
        int(state.is_terminal),
        task.model_dump_json(by_alias=True),
    )


def _owner_tag(owner: str | None) -> str:
    return "-" if owner is None else f"={owner}"


def _owner_of(tag: str) -> str | None:
    return None if tag == "-" else tag[1:]


def _evict(conn: sqlite3.Connection, max_tasks: int) -> bool:
    """Delete up to ``EVICT_BATCH`` of the least recently updated terminal tasks beyond
    ``max_tasks`` (the kept count says how many are stored); True when more are due."""
    (count,) = conn.execute(
        "SELECT COALESCE((SELECT n FROM a2a_task_counts WHERE owner = ? AND kind = ?"
        " AND key = ''), 0)",
        (EVERYONE, ALL),
    ).fetchone()
    excess = count - max_tasks
    if excess <= 0:
        return False
    batch = min(excess, EVICT_BATCH)
    deleted = conn.execute(
        "DELETE FROM a2a_tasks WHERE id IN"
        " (SELECT id FROM a2a_tasks WHERE terminal = 1 ORDER BY seq LIMIT ?)",
        (batch,),
    ).rowcount
    return excess > batch and deleted == batch
