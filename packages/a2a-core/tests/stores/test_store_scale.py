"""What keeps a store's calls from growing with its history (issue #40), without timing.

- ``totalSize`` and the eviction bound read counts kept by triggers (``sql_counts``),
  not a ``count(*)`` over every match: the kept counts must equal a recount after every
  kind of write, a file or schema of version 1 gains them on opening, and the count
  query plans read the counts table only;
- pages are index ranges (a page token and ``status_after`` bound the index);
- a lowered ``max_tasks`` is reached in bounded batches, with other calls between them.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, LiteralString, cast

import psycopg
import pytest
from a2a_core.contracts.task_store import encode_cursor
from a2a_core.stores import TaskQuery, TaskStore
from a2a_core.stores import postgres as postgres_module
from a2a_core.stores import redis as redis_module
from a2a_core.stores import sqlite as sqlite_module
from a2a_core.stores.postgres import PostgresTaskStore
from a2a_core.stores.redis import RedisTaskStore
from a2a_core.stores.sql_list import list_statements
from a2a_core.stores.sqlite import SqliteTaskStore
from a2a_core.testing.fakes import make_task
from a2a_core.types import TaskState
from psycopg import sql
from store_support import POSTGRES_URL, REDIS_URL

T0 = datetime(2026, 1, 1, tzinfo=UTC)
OWNERS = (None, "alice", "bob")
STATES = (TaskState.WORKING, TaskState.COMPLETED, TaskState.FAILED)


def _at(i: int) -> datetime:
    return T0 + timedelta(seconds=i)


# -- the stores, and how to read their tables directly ----------------------------------------
class Sqlite:
    def __init__(self, path: Path) -> None:
        self.path = path

    def open(self, **kw: Any) -> SqliteTaskStore:
        return SqliteTaskStore(self.path, **kw)

    def rows(self, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        conn = sqlite3.connect(self.path)
        try:
            return conn.execute(statement, params).fetchall()
        finally:
            conn.close()

    def run(self, statement: str) -> None:
        conn = sqlite3.connect(self.path)
        try:
            conn.execute(statement)
            conn.commit()
        finally:
            conn.close()

    def counts(self) -> set[tuple[Any, ...]]:
        return set(self.rows("SELECT owner, kind, key, n FROM a2a_task_counts"))

    def recount(self) -> set[tuple[Any, ...]]:
        tag = "CASE WHEN owner IS NULL THEN '-' ELSE '=' || owner END"
        return _recount(self.rows(f"SELECT {tag}, context_id, state FROM a2a_tasks"))


class Postgres:
    def __init__(self, schema: str) -> None:
        self.schema = schema

    def open(self, **kw: Any) -> PostgresTaskStore:
        return PostgresTaskStore(POSTGRES_URL, schema=self.schema, **kw)

    def rows(self, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))
            return conn.execute(cast(LiteralString, statement), params).fetchall()

    def run(self, statement: str) -> None:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))
            conn.execute(cast(LiteralString, statement))

    def counts(self) -> set[tuple[Any, ...]]:
        return set(self.rows("SELECT owner, kind, key, n FROM a2a_task_counts"))

    def recount(self) -> set[tuple[Any, ...]]:
        return _recount(self.rows("SELECT owner, context_id, state FROM a2a_tasks"))


def _recount(rows: list[tuple[Any, ...]]) -> set[tuple[Any, ...]]:
    """The kept counts ``sql_counts`` describes, from (owner tag, context, state) rows."""
    found: dict[tuple[str, str, str], int] = {}
    for owner, context, state in rows:
        for key in (
            ("", "all", ""),
            (owner, "all", ""),
            (owner, "ctx", context),
            (owner, "state", state),
        ):
            found[key] = found.get(key, 0) + 1
    return {(*key, n) for key, n in found.items()}


@pytest.fixture(params=["sqlite", "postgres"])
def sql_store(request: pytest.FixtureRequest, tmp_path: Path) -> Sqlite | Postgres:
    if request.param == "sqlite":
        return Sqlite(tmp_path / "tasks.db")
    return Postgres(request.getfixturevalue("postgres_schema"))


async def _fill(store: TaskStore, n: int) -> None:
    for i in range(n):
        task = make_task(f"t{i}", context_id=f"c{i % 3}", state=STATES[i % 3], timestamp=_at(i))
        await store.create(task, OWNERS[i % 3])


async def _totals_match(store: TaskStore) -> None:
    """Every single-filter total equals the number of tasks the pages hold."""
    for owner in OWNERS:
        queries = [TaskQuery(page_size=100)]
        queries += [TaskQuery(page_size=100, context_id=f"c{i}") for i in range(4)]
        queries += [TaskQuery(page_size=100, state=state) for state in TaskState]
        for query in queries:
            page = await store.list(query, owner)
            assert page.next_page_token == ""
            assert page.total_size == len(page.tasks), (owner, query)


# -- kept counts -------------------------------------------------------------------------------
async def test_kept_counts_follow_every_write(sql_store: Sqlite | Postgres) -> None:
    store = sql_store.open()
    try:
        await _fill(store, 30)
        assert sql_store.counts() == sql_store.recount()
        for i in range(0, 30, 4):  # state and context changes, and saves that change neither
            got = await store.get(f"t{i}", OWNERS[i % 3])
            assert got is not None
            status = got.task.status.model_copy(update={"state": TaskState.CANCELED})
            moved = got.task.model_copy(update={"context_id": f"c{i % 4}", "status": status})
            saved = await store.save(moved, OWNERS[i % 3], got.version)
            await store.save(
                moved.model_copy(update={"metadata": {"k": i}}), OWNERS[i % 3], saved.version
            )
        for i in range(1, 30, 5):
            assert await store.delete(f"t{i}", OWNERS[i % 3])
        assert sql_store.counts() == sql_store.recount()
        assert not [row for row in sql_store.counts() if row[3] <= 0], "zero rows are dropped"
        await _totals_match(store)
        store.max_tasks = 10  # eviction deletes through the same triggers
        await store.create(make_task("late", state=TaskState.COMPLETED), None)
        assert sql_store.counts() == sql_store.recount()
        assert (await store.list(TaskQuery(), None)).total_size == len(
            (await store.list(TaskQuery(page_size=100), None)).tasks
        )
    finally:
        await store.aclose()


async def test_a_version_1_database_gains_its_counts_on_opening(
    sql_store: Sqlite | Postgres,
) -> None:
    store = sql_store.open()
    await _fill(store, 20)
    await store.aclose()
    # What a2a-core with schema version 1 left: the same tables, no counts or triggers.
    for trigger in ("insert", "delete", "update"):
        sql_store.run(f"DROP TRIGGER a2a_tasks_counted_{trigger}" + _ON_TASKS[type(sql_store)])
    sql_store.run("DROP TABLE a2a_task_counts")
    sql_store.run("UPDATE a2a_schema SET version = 1")
    reopened = sql_store.open()
    try:
        await _totals_match(reopened)
        assert sql_store.counts() == sql_store.recount()
        assert sql_store.rows("SELECT version FROM a2a_schema WHERE name = 'tasks'") == [(2,)]
        await reopened.create(make_task("after", state=TaskState.WORKING), "alice")
        assert sql_store.counts() == sql_store.recount()  # the triggers are back too
    finally:
        await reopened.aclose()


_ON_TASKS = {Sqlite: "", Postgres: " ON a2a_tasks"}


async def test_postgres_counts_hold_with_instances_writing_at_once(postgres_schema: str) -> None:
    """Two instances (two pools) create, finish and delete tasks of one context at once:
    every transaction touches the same count rows, yet none deadlocks and none is lost."""
    db = Postgres(postgres_schema)
    first, second = db.open(), db.open()
    try:

        async def life(store: TaskStore, i: int) -> None:
            task = make_task(f"r{i}", context_id="shared", state=TaskState.WORKING)
            created = await store.create(task, "alice")
            status = task.status.model_copy(update={"state": TaskState.COMPLETED})
            await store.save(task.model_copy(update={"status": status}), "alice", created.version)
            if i % 3 == 0:
                assert await store.delete(task.id, "alice")

        await asyncio.gather(*(life(first if i % 2 else second, i) for i in range(40)))
        assert db.counts() == db.recount()
        page = await first.list(TaskQuery(page_size=100, context_id="shared"), "alice")
        assert page.total_size == len(page.tasks) == 26
    finally:
        await first.aclose()
        await second.aclose()


# -- query plans ---------------------------------------------------------------------------------
_TOKEN_QUERY = TaskQuery(page_token=encode_cursor(make_task("t1", timestamp=_at(1))))


def _statements(query: TaskQuery, **kw: Any) -> Any:
    return list_statements(query, table="a2a_tasks", counts="a2a_task_counts", **kw)


async def test_sqlite_totals_read_the_counts_and_pages_are_index_ranges(tmp_path: Path) -> None:
    db = Sqlite(tmp_path / "tasks.db")
    store = db.open()
    await _fill(store, 5)
    await store.aclose()
    conn = sqlite3.connect(db.path)
    try:

        def plan(statement: str, params: list[Any]) -> str:
            rows = conn.execute(f"EXPLAIN QUERY PLAN {statement}", params).fetchall()
            return " / ".join(row[3] for row in rows)

        kw = {"owner": "alice", "owner_tag": "=alice", "owner_op": "IS"}
        for query in (TaskQuery(), TaskQuery(context_id="c1"), TaskQuery(state=TaskState.FAILED)):
            statements = _statements(query, **kw)
            counted = plan(statements.count, statements.count_params)
            assert "a2a_task_counts" in counted, counted
            assert "a2a_tasks " not in counted, counted
        deep = _statements(_TOKEN_QUERY, **kw)
        assert "OFFSET" not in deep.page
        assert "(owner=? AND (sort_ts,id)>(?,?))" in plan(deep.page, deep.page_params)
        recent = _statements(TaskQuery(status_after=_at(3)), **kw)
        for statement, params in (
            (recent.count, recent.count_params),
            (recent.page, recent.page_params),
        ):
            assert "(owner=? AND sort_ts<?)" in plan(statement, params)
    finally:
        conn.close()


async def test_postgres_totals_read_the_counts(postgres_schema: str) -> None:
    db = Postgres(postgres_schema)
    store = db.open()
    await _fill(store, 5)
    await store.aclose()
    for query in (TaskQuery(), TaskQuery(context_id="c1"), TaskQuery(state=TaskState.FAILED)):
        statements = _statements(query, owner="=alice", owner_tag="=alice", mark="%s")
        explained = db.rows(f"EXPLAIN {statements.count}", tuple(statements.count_params))
        text = "\n".join(row[0] for row in explained)
        assert "a2a_task_counts" in text, text
        assert "on a2a_tasks " not in text, text


# -- bounded eviction ---------------------------------------------------------------------------
async def _terminal(store: TaskStore, n: int) -> None:
    for i in range(n):
        await store.create(make_task(f"done{i}", state=TaskState.COMPLETED, timestamp=_at(i)), None)


async def test_sqlite_evicts_a_lowered_bound_in_batches_between_other_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_module, "EVICT_BATCH", 3)
    db = Sqlite(tmp_path / "tasks.db")
    store = db.open()
    try:
        await _terminal(store, 20)
        sizes: list[int] = []
        run = store.worker.run

        async def counted_run(call: Callable[[sqlite3.Connection], Any]) -> Any:
            result = await run(call)
            sizes.append(db.rows("SELECT count(*) FROM a2a_tasks")[0][0])
            return result

        monkeypatch.setattr(store.worker, "run", counted_run)
        store.max_tasks = 5
        creating = asyncio.create_task(
            store.create(make_task("new", state=TaskState.WORKING), None)
        )
        await asyncio.sleep(0)  # the create's first call is on the worker
        got = await store.get("done19", None)  # queued behind it, ahead of the next batch
        assert got is not None
        assert not creating.done(), "the get waited for the whole eviction"
        await creating
        drops = [before - after for before, after in zip([21, *sizes], sizes, strict=False)]
        assert sizes[-1] == 5, sizes
        assert max(drops) <= 3, sizes
    finally:
        await store.aclose()


async def test_postgres_evicts_a_lowered_bound_in_batches(
    postgres_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres_module, "EVICT_BATCH", 3)
    store = Postgres(postgres_schema).open()
    try:
        await _terminal(store, 20)
        sizes: list[int] = []
        evict = store._evict  # pyright: ignore[reportPrivateUsage]

        async def counted(conn: Any, max_tasks: int) -> bool:
            before = (
                await (await conn.execute(f"SELECT count(*) FROM {store._sql.tasks}")).fetchone()
            )[0]  # pyright: ignore[reportPrivateUsage]
            more = await evict(conn, max_tasks)
            after = (
                await (await conn.execute(f"SELECT count(*) FROM {store._sql.tasks}")).fetchone()
            )[0]  # pyright: ignore[reportPrivateUsage]
            sizes.append(before - after)
            return more

        monkeypatch.setattr(store, "_evict", counted)
        store.max_tasks = 5
        await store.create(make_task("new", state=TaskState.WORKING), None)
        assert (await store.list(TaskQuery(), None)).total_size == 5
        assert len(sizes) >= 6, sizes
        assert max(sizes) <= 3, sizes
    finally:
        await store.aclose()


async def test_redis_evicts_a_lowered_bound_a_batch_per_script(
    redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(redis_module, "EVICT_BATCH", 3)
    store = RedisTaskStore(REDIS_URL, prefix=redis_prefix)
    try:
        await _terminal(store, 20)
        drops: list[int] = []
        script: Callable[..., Awaitable[Any]] = store.connection.script
        client = store.connection.client()

        async def counted(name: str, source: str, keys: list[str], args: list[Any]) -> Any:
            before = await client.zcard(f"{redis_prefix}:owner:-")
            result = await script(name, source, keys, args)
            drops.append(before - await client.zcard(f"{redis_prefix}:owner:-"))
            return result

        monkeypatch.setattr(store.connection, "script", counted)
        store.max_tasks = 5
        await store.create(make_task("new", state=TaskState.WORKING), None)
        assert (await store.list(TaskQuery(), None)).total_size == 5
        assert len(drops) >= 6, drops
        assert max(drops) <= 3, drops
    finally:
        await store.aclose()
