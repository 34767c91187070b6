"""A shared store in PostgreSQL: several server instances on one schema see the same tasks.

Needs the ``postgres`` extra (``pip install 'a2a-adapters-core[postgres]'``:
psycopg 3 and psycopg-pool); the driver is imported when a store is made,
never by ``import a2a_core``. Calls go through an async connection pool
opened on first use.

Tables, in ``schema`` (default ``public``), created or migrated at first use
under an advisory lock (so instances starting together do not race)::

    a2a_schema   name -> version (refuses a schema written by a newer a2a-core)
    a2a_tasks    id, owner tag, context, state, status time, sort key, terminal,
                 write sequence, version, body (the task's JSON as text)
    a2a_task_counts  owner tag, kind, key -> n: the tasks of each owner, context and
                 state, kept by triggers (``sql_counts``: ``total_size`` and
                 ``max_tasks`` read one row, never count)
    a2a_leases   task id -> owner tag, instance, expiry (running tasks only)
    a2a_sends    send key -> task id, expiry (idempotent SendMessage)

and the event channel's tables and ``a2a_publish`` function (live events,
replay, cancels and push configs shared by the instances on the schema; each
task's events kept for ``stream_ttl`` seconds after its last one, at most about
``stream_max_events``): see ``event_channel()`` and
``a2a_core.stores.postgres_channel``.

The body is text, not jsonb: jsonb refuses ``\\u0000``, which task text may
hold. Rows are listed by ``(sort_ts, id COLLATE "C")``: the same order and
page tokens as every other store. Optimistic concurrency is one conditional
``UPDATE ... WHERE version = %s``, so exactly one of several racing instances
wins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..contracts.task_store import (
    ConcurrentUpdateError,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskStore,
    decode_cursor,
    sort_key,
)
from ..errors import InvalidParamsError
from ..types import Task
from .cluster import Lease, SentMessages, TaskLeases
from .postgres_channel import PostgresTaskChannel, channel_schema
from .postgres_database import PostgresDatabase
from .sql_counts import ALL, EVERYONE, postgres_counts_schema
from .sql_list import list_statements, task_page

if TYPE_CHECKING:
    from .postgres_files import PostgresFileBackend

__all__ = ["PostgresTaskStore"]

SCHEMA_VERSION = 2  # 2: task counts kept by triggers (``sql_counts``)
_TRIM_EVERY = 256
EVICT_BATCH = 500
"""The most tasks one statement evicts: a lowered bound is reached in several."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS {s}.a2a_schema (
    name TEXT PRIMARY KEY,
    version INTEGER NOT NULL
);
CREATE SEQUENCE IF NOT EXISTS {s}.a2a_tasks_seq;
CREATE TABLE IF NOT EXISTS {s}.a2a_tasks (
    id TEXT COLLATE "C" PRIMARY KEY,
    owner TEXT COLLATE "C" NOT NULL,
    context_id TEXT COLLATE "C" NOT NULL,
    state TEXT NOT NULL,
    status_ts DOUBLE PRECISION,
    sort_ts DOUBLE PRECISION NOT NULL,
    terminal BOOLEAN NOT NULL,
    seq BIGINT NOT NULL,
    version INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS a2a_tasks_by_owner ON {s}.a2a_tasks (owner, sort_ts, id);
CREATE INDEX IF NOT EXISTS a2a_tasks_by_context ON {s}.a2a_tasks (owner, context_id, sort_ts, id);
CREATE INDEX IF NOT EXISTS a2a_tasks_by_state ON {s}.a2a_tasks (owner, state, sort_ts, id);
CREATE INDEX IF NOT EXISTS a2a_tasks_terminal_by_seq ON {s}.a2a_tasks (seq) WHERE terminal;
CREATE TABLE IF NOT EXISTS {s}.a2a_leases (
    task_id TEXT COLLATE "C" PRIMARY KEY,
    owner TEXT NOT NULL,
    instance TEXT NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS a2a_leases_by_expiry ON {s}.a2a_leases (expires_at);
CREATE INDEX IF NOT EXISTS a2a_leases_by_instance ON {s}.a2a_leases (instance);
CREATE TABLE IF NOT EXISTS {s}.a2a_sends (
    key TEXT PRIMARY KEY,
    task_id TEXT NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS a2a_sends_by_expiry ON {s}.a2a_sends (expires_at);
"""


class PostgresTaskStore(TaskStore, TaskLeases, SentMessages):
    """Tasks in PostgreSQL tables under ``schema``, shared by every store using that schema.

    ``conninfo`` is a libpq URL or DSN (``postgresql://user:pw@host:5432/db``);
    the pool (``min_size``..``max_size`` connections) opens on first use.
    ``max_tasks`` (default: unbounded) evicts the least recently updated
    terminal tasks on ``create``; ``max_sends`` bounds the idempotency
    records (the oldest go first). ``stream_max_events`` and ``stream_ttl``
    bound each task's retained events (the replay a resubscribe with
    ``Last-Event-ID`` can get). Use a store from one event loop.
    """

    def __init__(
        self,
        conninfo: str = "postgresql://postgres@127.0.0.1:5432/postgres",
        *,
        schema: str = "public",
        max_tasks: int | None = None,
        max_sends: int = 100_000,
        min_size: int = 1,
        max_size: int = 10,
        stream_max_events: int = 1000,
        stream_ttl: int = 3600,
    ) -> None:
        if not schema:
            raise ValueError("the schema must not be empty")
        if max_tasks is not None and max_tasks <= 0:
            raise ValueError("max_tasks must be > 0")
        if max_sends <= 0:
            raise ValueError("max_sends must be > 0")
        if min_size < 0 or max_size < max(1, min_size):
            raise ValueError("pool sizes must satisfy 0 <= min_size <= max_size, max_size >= 1")
        if stream_max_events <= 0 or stream_ttl <= 0:
            raise ValueError("stream_max_events and stream_ttl must be > 0")
        self.conninfo = conninfo
        self.schema = schema
        self.max_tasks = max_tasks
        self.max_sends = max_sends
        self.min_size = min_size
        self.max_size = max_size
        self.database = PostgresDatabase(
            conninfo,
            schema=schema,
            min_size=min_size,
            max_size=max_size,
            prepare=self._migrate,
            name=repr(self),
        )
        """The schema's connections, shared with the event channel and the file backend."""
        self._remembered = 0
        self._sql = _Statements(self.database.quoted_schema)
        self.stream_max_events = stream_max_events
        self.stream_ttl = stream_ttl
        self._channel: PostgresTaskChannel | None = None
        self._files: PostgresFileBackend | None = None

    def event_channel(self) -> PostgresTaskChannel:
        """The channel every instance on this schema shares (events, cancels, push configs)."""
        if self._channel is None:
            self._channel = PostgresTaskChannel(
                self.database,
                self.save_on,
                stream_max_events=self.stream_max_events,
                stream_ttl=self.stream_ttl,
            )
        return self._channel

    def file_backend(self) -> PostgresFileBackend:
        """Answer files served by URL, shared by every instance on this schema."""
        if self._files is None:
            from .postgres_files import PostgresFileBackend

            self._files = PostgresFileBackend(self.database)
        return self._files

    def __repr__(self) -> str:
        return f"PostgresTaskStore(schema={self.schema!r}, max_tasks={self.max_tasks!r})"

    # -- the TaskStore contract ---------------------------------------------------------
    async def create(self, task: Task, owner: str | None) -> StoredTask:
        row = _row(task)
        bound = self.max_tasks
        async with await self._connection() as conn:
            async with conn.transaction():
                cur = await conn.execute(self._sql.insert, (task.id, _owner_tag(owner), *row))
                if cur.rowcount != 1:
                    raise ConcurrentUpdateError(f"task {task.id} already exists")
                more = bound is not None and await self._evict(conn, bound)
            while more and bound is not None:  # far over the bound (it was lowered)
                more = await self._evict(conn, bound)
        return StoredTask(task, 1, owner)

    async def _evict(self, conn: Any, max_tasks: int) -> bool:
        """Evict up to ``EVICT_BATCH`` of the least recently updated terminal tasks beyond
        ``max_tasks`` (the kept count says how many are stored); True when more are due."""
        cur = await conn.execute(self._sql.evict, (max_tasks, EVICT_BATCH))
        excess, deleted = await cur.fetchone()
        return excess > EVICT_BATCH and deleted == EVICT_BATCH

    async def get(self, task_id: str, owner: str | None) -> StoredTask | None:
        if _nul(task_id, owner):
            return None  # PostgreSQL text cannot hold NUL: no such task can exist
        async with await self._connection() as conn:
            cur = await conn.execute(self._sql.get, (task_id, _owner_tag(owner)))
            found = await cur.fetchone()
        if found is None:
            return None
        return StoredTask(Task.model_validate_json(found[1]), found[0], owner)

    async def save(self, task: Task, owner: str | None, expected_version: int) -> StoredTask:
        return await self._save(task, owner, expected_version, expected_version + 1)

    async def save_at(
        self, task: Task, owner: str | None, expected_version: int, version: int
    ) -> StoredTask:
        """``save``, numbering the result ``version`` (``SavesAtVersion``)."""
        return await self._save(task, owner, expected_version, version)

    async def _save(
        self, task: Task, owner: str | None, expected_version: int, version: int
    ) -> StoredTask:
        async with await self._connection() as conn:
            return await self.save_on(conn, task, owner, expected_version, version)

    async def save_on(
        self, conn: Any, task: Task, owner: str | None, expected_version: int, version: int
    ) -> StoredTask:
        """``save_at`` on an open connection (the channel's settling write, in its transaction)."""
        row = _row(task)
        tag = _owner_tag(owner)
        args = (*row, version, task.id, tag, expected_version)
        cur = await conn.execute(self._sql.update, args)
        updated = await cur.fetchone()
        if updated is not None:
            return StoredTask(task, updated[0], owner)
        cur = await conn.execute(self._sql.version, (task.id, tag))
        current = await cur.fetchone()
        if current is None:
            raise ConcurrentUpdateError(f"task {task.id} no longer exists")
        raise ConcurrentUpdateError(
            f"task {task.id} is at version {current[0]}, expected {expected_version}"
        )

    async def delete(self, task_id: str, owner: str | None) -> bool:
        if _nul(task_id, owner):
            return False
        async with await self._connection() as conn:
            cur = await conn.execute(self._sql.delete, (task_id, _owner_tag(owner)))
            return cur.rowcount == 1

    async def list(self, query: TaskQuery, owner: str | None) -> TaskPage:
        if _nul(query.context_id, owner):
            return TaskPage(tasks=[], next_page_token="", total_size=0)
        if query.page_token and _nul(decode_cursor(query.page_token)[1]):
            raise InvalidParamsError("Invalid page token")  # no task id holds NUL here
        tag = _owner_tag(owner)
        sql = list_statements(
            query,
            table=self._sql.tasks,
            counts=self._sql.counts,
            owner=tag,
            owner_tag=tag,
            mark="%s",
        )
        async with await self._connection() as conn, conn.transaction():
            # REPEATABLE READ: the count and the page see one snapshot.
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cur = await conn.execute(sql.count, sql.count_params)
            counted = await cur.fetchone()
            cur = await conn.execute(sql.page, sql.page_params)
            bodies: list[str] = [body for (body,) in await cur.fetchall()]
        total = int(counted[0]) if counted is not None else 0
        return task_page(total, bodies, query.page_size)

    # -- leases (TaskLeases) ------------------------------------------------------------
    async def acquire_lease(
        self, task_id: str, owner: str | None, instance: str, until: float, now: float
    ) -> Lease | None:
        async with await self._connection() as conn:
            cur = await conn.execute(
                self._sql.acquire, (task_id, _owner_tag(owner), instance, until, instance, now)
            )
            if await cur.fetchone() is not None:
                return None
            return await self._lease(conn, task_id)

    async def renew_leases(self, instance: str, task_ids: list[str], until: float) -> list[str]:
        if not task_ids:
            return []
        async with await self._connection() as conn:
            cur = await conn.execute(self._sql.renew, (until, instance, task_ids))
            held = {task_id for (task_id,) in await cur.fetchall()}
        return [task_id for task_id in task_ids if task_id not in held]

    async def release_lease(self, task_id: str, instance: str) -> None:
        async with await self._connection() as conn:
            await conn.execute(self._sql.release, (task_id, instance))

    async def expired_leases(self, now: float, limit: int) -> list[Lease]:
        async with await self._connection() as conn:
            cur = await conn.execute(self._sql.expired, (now, limit))
            rows = await cur.fetchall()
        return [Lease(r[0], _owner_of(r[1]), r[2], r[3]) for r in rows]

    async def take_expired_lease(self, lease: Lease, now: float, holder: str, until: float) -> bool:
        async with await self._connection() as conn:
            cur = await conn.execute(
                self._sql.take, (holder, until, lease.task_id, lease.instance, now)
            )
            return cur.rowcount == 1

    async def lease_of(self, task_id: str) -> Lease | None:
        async with await self._connection() as conn:
            return await self._lease(conn, task_id)

    async def _lease(self, conn: Any, task_id: str) -> Lease | None:
        cur = await conn.execute(self._sql.lease, (task_id,))
        r = await cur.fetchone()
        return None if r is None else Lease(task_id, _owner_of(r[0]), r[1], r[2])

    # -- idempotent sends (SentMessages) -------------------------------------------------
    async def remember_send(
        self, key: str, task_id: str, now: float, retention: float
    ) -> str | None:
        async with await self._connection() as conn, conn.transaction():
            cur = await conn.execute(self._sql.remember, (key, task_id, now + retention, now))
            found = await cur.fetchone()
            if found is None:  # a live record of another send exists
                cur = await conn.execute(self._sql.sent, (key,))
                existing = await cur.fetchone()
                return None if existing is None else str(existing[0])
        self._remembered += 1
        if self._remembered % _TRIM_EVERY == 0:
            await self.purge_sends(now)
        return None

    async def purge_sends(self, now: float) -> None:
        """Drop expired records, and the oldest beyond ``max_sends`` (every few hundred sends)."""
        async with await self._connection() as conn:
            await conn.execute(self._sql.trim_sends, (now, self.max_sends))

    async def forget_send(self, key: str, task_id: str) -> None:
        async with await self._connection() as conn:
            await conn.execute(self._sql.forget, (key, task_id))

    # -- connections --------------------------------------------------------------------
    async def aclose(self) -> None:
        """Close the pool; idempotent. Later calls raise RuntimeError."""
        if self.database.closed:
            return
        if self._channel is not None:
            await self._channel.aclose()
        await self.database.aclose()

    async def _connection(self) -> Any:
        return await self.database.connection()

    async def _migrate(self) -> None:
        """Create the schema and tables once per database; refuse a newer schema."""
        s = self._sql.schema
        conn = await self.database.connect()
        try:
            async with conn.transaction():
                # One migrator at a time (per schema): CREATE ... IF NOT EXISTS races otherwise.
                await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"a2a:{s}",))
                await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
                for statement in _SCHEMA.format(s=s).split(";"):
                    if statement.strip():
                        await conn.execute(statement)
                await conn.execute(channel_schema(s))  # one script: its function holds ";"
                cur = await conn.execute(f"SELECT version FROM {s}.a2a_schema WHERE name = 'tasks'")
                found = await cur.fetchone()
                if found is not None and found[0] > SCHEMA_VERSION:
                    raise RuntimeError(
                        f"the task tables in schema {self.schema!r} have schema version "
                        f"{found[0]}; this a2a-core reads up to {SCHEMA_VERSION} "
                        "(upgrade a2a-adapters-core)"
                    )
                if found is None or found[0] < 2:  # the kept counts, counted once
                    script, recount = postgres_counts_schema(s)
                    await conn.execute(script)
                    for statement in recount:
                        await conn.execute(statement)
                await conn.execute(
                    f"INSERT INTO {s}.a2a_schema VALUES ('tasks', %s)"
                    " ON CONFLICT (name) DO UPDATE SET version = EXCLUDED.version",
                    (SCHEMA_VERSION,),
                )
        finally:
            await conn.close()


class _Statements:
    """Every statement, with the quoted schema filled in once."""

    def __init__(self, schema: str) -> None:
        self.schema = schema
        t = self.tasks = f"{schema}.a2a_tasks"
        counts = self.counts = f"{schema}.a2a_task_counts"
        leases = f"{schema}.a2a_leases"
        sends = f"{schema}.a2a_sends"
        seq = f"nextval('{schema}.a2a_tasks_seq')"
        self.insert = (
            f"INSERT INTO {t} (id, owner, context_id, state, status_ts, sort_ts, terminal, body,"
            f" seq, version) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, {seq}, 1)"
            " ON CONFLICT (id) DO NOTHING"
        )
        # (tasks beyond the bound, tasks evicted): at most a batch, oldest write first.
        self.evict = (
            f"WITH excess AS (SELECT COALESCE((SELECT n FROM {counts} WHERE owner = '{EVERYONE}'"
            f" AND kind = '{ALL}' AND key = ''), 0) - %s AS n),"
            # = ANY(ARRAY(...)): ids looked up one by one, never a hash join over the table.
            f" gone AS (DELETE FROM {t} WHERE id = ANY(ARRAY(SELECT id FROM {t} WHERE terminal"
            " ORDER BY seq LIMIT LEAST(GREATEST((SELECT n FROM excess), 0), %s))) RETURNING 1)"
            " SELECT (SELECT n FROM excess), (SELECT count(*) FROM gone)"
        )
        self.get = f"SELECT version, body FROM {t} WHERE id = %s AND owner = %s"
        self.update = (
            f"UPDATE {t} SET context_id = %s, state = %s, status_ts = %s, sort_ts = %s,"
            f" terminal = %s, body = %s, seq = {seq}, version = %s"
            " WHERE id = %s AND owner = %s AND version = %s RETURNING version"
        )
        self.version = f"SELECT version FROM {t} WHERE id = %s AND owner = %s"
        self.delete = f"DELETE FROM {t} WHERE id = %s AND owner = %s"
        # Take a free or expired lease, or extend our own.
        self.acquire = (
            f"INSERT INTO {leases} AS l (task_id, owner, instance, expires_at)"
            " VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (task_id) DO UPDATE SET owner = EXCLUDED.owner,"
            " instance = EXCLUDED.instance, expires_at = EXCLUDED.expires_at"
            " WHERE l.instance = %s OR l.expires_at <= %s RETURNING 1"
        )
        self.renew = (
            f"UPDATE {leases} SET expires_at = %s WHERE instance = %s AND task_id = ANY(%s)"
            " RETURNING task_id"
        )
        self.release = f"DELETE FROM {leases} WHERE task_id = %s AND instance = %s"
        self.expired = (
            f"SELECT task_id, owner, instance, expires_at FROM {leases}"
            " WHERE expires_at <= %s ORDER BY expires_at LIMIT %s"
        )
        self.take = (
            f"UPDATE {leases} SET instance = %s, expires_at = %s"
            " WHERE task_id = %s AND instance = %s AND expires_at <= %s"
        )
        self.lease = f"SELECT owner, instance, expires_at FROM {leases} WHERE task_id = %s"
        self.remember = (
            f"INSERT INTO {sends} AS s (key, task_id, expires_at) VALUES (%s, %s, %s)"
            " ON CONFLICT (key) DO UPDATE SET task_id = EXCLUDED.task_id,"
            " expires_at = EXCLUDED.expires_at WHERE s.expires_at <= %s RETURNING 1"
        )
        self.sent = f"SELECT task_id FROM {sends} WHERE key = %s"
        self.trim_sends = (
            f"DELETE FROM {sends} WHERE expires_at <= %s OR key IN (SELECT key FROM {sends}"
            f" ORDER BY expires_at DESC OFFSET %s)"
        )
        self.forget = f"DELETE FROM {sends} WHERE key = %s AND task_id = %s"


def _nul(*values: str | None) -> bool:
    return any(v is not None and "\x00" in v for v in values)


def _owner_tag(owner: str | None) -> str:
    """The owner as stored: None and every string stay distinct."""
    return "-" if owner is None else f"={owner}"


def _owner_of(tag: str) -> str | None:
    return None if tag == "-" else tag[1:]


def _row(task: Task) -> tuple[str, str, float | None, float, bool, str]:
    """The columns after (id, owner): context, state, times, terminal flag, JSON body."""
    ts = task.status.timestamp
    state = task.status.state
    return (
        task.context_id,
        state.value,
        ts.timestamp() if ts is not None else None,
        sort_key(task)[0],
        state.is_terminal,
        task.model_dump_json(by_alias=True),
    )
