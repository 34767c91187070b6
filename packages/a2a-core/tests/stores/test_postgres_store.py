"""``postgresql://``: the conformance suite, and what only a shared store can show.

Two stores on one schema stand for two server instances: each has its own
connection pool, as separate processes would. Every test works in a schema
of its own (dropped afterwards), so concurrent runs never meet.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator

import psycopg
import pytest
from a2a_core.adapters import open_task_store
from a2a_core.plugins import PluginError
from a2a_core.store_registry import redact_url
from a2a_core.stores import ConcurrentUpdateError, StoredTask, TaskQuery, TaskStore
from a2a_core.stores.postgres import SCHEMA_VERSION, PostgresTaskStore
from a2a_core.testing import TaskStoreConformance
from a2a_core.testing.fakes import make_task
from a2a_core.types import TaskState, TaskStatus
from psycopg import sql
from store_support import POSTGRES_URL, postgres_unreachable

ALICE = "alice"


class TestPostgresStore(TaskStoreConformance):
    supports_eviction = True

    @pytest.fixture(autouse=True)
    def _schema(self, postgres_schema: str) -> None:
        self.schema = postgres_schema

    async def make_store(self) -> TaskStore:
        return open_task_store(f"{POSTGRES_URL}?schema={self.schema}&pool_max=4")

    async def make_bounded_store(self, max_tasks: int) -> TaskStore:
        return open_task_store(f"{POSTGRES_URL}?schema={self.schema}&max_tasks={max_tasks}")


@pytest.fixture
async def two_instances(postgres_schema: str) -> AsyncIterator[tuple[TaskStore, TaskStore]]:
    first = open_task_store(f"{POSTGRES_URL}?schema={postgres_schema}")
    second = open_task_store(f"{POSTGRES_URL}?schema={postgres_schema}")
    yield first, second
    await first.aclose()
    await second.aclose()


async def test_two_instances_on_one_schema_share_tasks(
    two_instances: tuple[TaskStore, TaskStore],
) -> None:
    first, second = two_instances
    task = make_task("shared", context_id="ctx-shared")
    await first.create(task, ALICE)
    seen = await second.get("shared", ALICE)
    assert seen is not None
    assert (seen.task, seen.version) == (task, 1)
    done = task.model_copy(update={"status": TaskStatus(state=TaskState.COMPLETED)})
    await second.save(done, ALICE, 1)
    back = await first.get("shared", ALICE)
    assert back is not None
    assert (back.task.status.state, back.version) == (TaskState.COMPLETED, 2)
    with pytest.raises(ConcurrentUpdateError):
        await first.save(task, ALICE, 1)  # first's read is stale now
    assert await first.delete("shared", ALICE) is True
    assert await second.get("shared", ALICE) is None


async def test_concurrent_savers_across_instances_exactly_one_wins(
    two_instances: tuple[TaskStore, TaskStore],
) -> None:
    first, second = two_instances
    task = make_task("contested")
    await first.create(task, ALICE)
    for round_ in range(5):
        got = await first.get("contested", ALICE)
        assert got is not None

        async def save(store: TaskStore, writer: int, version: int = got.version) -> StoredTask:
            update = task.model_copy(update={"metadata": {"writer": writer}})
            return await store.save(update, ALICE, version)

        results = await asyncio.gather(
            *(save(first if i % 2 else second, i) for i in range(10)), return_exceptions=True
        )
        winners = [r for r in results if isinstance(r, StoredTask)]
        assert len(winners) == 1, f"round {round_}: {results}"
        assert all(isinstance(r, ConcurrentUpdateError) for r in results if r not in winners)
        final = await second.get("contested", ALICE)
        assert final is not None
        assert final.version == got.version + 1 == winners[0].version


async def test_instances_starting_together_create_the_tables_once(postgres_schema: str) -> None:
    stores = [open_task_store(f"{POSTGRES_URL}?schema={postgres_schema}") for _ in range(4)]
    try:
        await asyncio.gather(*(s.get("none", ALICE) for s in stores))  # all migrate at once
        with psycopg.connect(POSTGRES_URL) as conn:
            query = sql.SQL("SELECT name, version FROM {}.a2a_schema")
            rows = conn.execute(query.format(sql.Identifier(postgres_schema))).fetchall()
        assert rows == [("tasks", SCHEMA_VERSION)]
    finally:
        for s in stores:
            await s.aclose()


async def test_a_newer_schema_is_refused(postgres_schema: str) -> None:
    store = open_task_store(f"{POSTGRES_URL}?schema={postgres_schema}")
    await store.get("warm-up", ALICE)
    await store.aclose()
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        query = sql.SQL("UPDATE {}.a2a_schema SET version = 99")
        conn.execute(query.format(sql.Identifier(postgres_schema)))
    newer = open_task_store(f"{POSTGRES_URL}?schema={postgres_schema}")
    try:
        with pytest.raises(RuntimeError, match="schema version 99; this a2a-core reads up to"):
            await newer.get("x", ALICE)
    finally:
        await newer.aclose()


async def test_schemas_keep_deployments_apart(postgres_schema: str) -> None:
    one = open_task_store(f"{POSTGRES_URL}?schema={postgres_schema}")
    two = open_task_store(f"{POSTGRES_URL}?schema={postgres_schema}_two")
    try:
        await one.create(make_task("same-id", text="one"), ALICE)
        await two.create(make_task("same-id", text="two"), ALICE)
        got_one, got_two = await one.get("same-id", ALICE), await two.get("same-id", ALICE)
        assert got_one is not None
        assert got_two is not None
        assert got_one.task.artifacts[0].parts[0].text == "one"
        assert got_two.task.artifacts[0].parts[0].text == "two"
    finally:
        await one.aclose()
        await two.aclose()
        from store_support import drop_schema

        drop_schema(f"{postgres_schema}_two")


async def test_owners_that_look_alike_and_nul_characters(postgres_schema: str) -> None:
    store = open_task_store(f"{POSTGRES_URL}?schema={postgres_schema}")
    try:
        for owner in (None, "", "-", "=", "a:b"):
            await store.create(make_task(f"of-{owner!r}"), owner)
        for owner in (None, "", "-", "=", "a:b"):
            page = await store.list(TaskQuery(), owner)
            assert [t.id for t in page.tasks] == [f"of-{owner!r}"]
        # Text with NUL is stored (escaped in the JSON); ids with NUL simply do not exist.
        await store.create(make_task("nul", text="a\x00b"), ALICE)
        got = await store.get("nul", ALICE)
        assert got is not None
        assert got.task.artifacts[0].parts[0].text == "a\x00b"
        assert await store.get("n\x00l", ALICE) is None
        assert await store.delete("n\x00l", ALICE) is False
        assert (await store.list(TaskQuery(context_id="c\x00"), ALICE)).total_size == 0
    finally:
        await store.aclose()


# -- URLs and the optional dependency (no server needed) -----------------------------------


def test_url_options_are_split_between_the_store_and_libpq() -> None:
    store = open_task_store(
        "postgres://app:s3cret@db.internal:5433/tasks?schema=prod&max_tasks=5&pool_max=3"
        "&sslmode=require"
    )
    assert isinstance(store, PostgresTaskStore)
    assert (store.schema, store.max_tasks, store.max_size) == ("prod", 5, 3)
    assert store.conninfo == "postgresql://app:s3cret@db.internal:5433/tasks?sslmode=require"
    default = open_task_store("postgresql://db.internal/tasks")
    assert isinstance(default, PostgresTaskStore)
    assert (default.schema, default.max_tasks, default.min_size, default.max_size) == (
        "public",
        None,
        1,
        10,
    )
    assert redact_url("postgresql://app:s3cret@db.internal:5433/tasks") == (
        "postgresql://app:***@db.internal:5433/tasks"
    )


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("postgresql://h/db?max_tasks=0", "max_tasks must be one positive integer"),
        ("postgresql://h/db?pool_max=x", "pool_max must be one positive integer"),
        ("postgresql://h/db?schema=", "schema must not be empty"),
        ("postgresql://h/db?schema=a&schema=b", "schema is given 2 times"),
    ],
)
def test_bad_postgres_urls_are_refused_at_startup(url: str, problem: str) -> None:
    with pytest.raises(PluginError, match=problem):
        open_task_store(url)


def test_the_password_never_shows_in_the_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(PluginError) as caught:
        open_task_store("postgresql://app:s3cret@h/db?max_tasks=0")
    assert "s3cret" not in str(caught.value)
    assert "app:***@h" in str(caught.value)


def test_without_psycopg_installed_the_error_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import fails, as if not installed
    with pytest.raises(PluginError, match=r"pip install 'a2a-adapters-core\[postgres\]'"):
        open_task_store("postgresql://127.0.0.1/test")


@pytest.mark.skipif(not os.environ.get("CI"), reason="only CI promises a local PostgreSQL")
def test_ci_runs_the_postgres_tests() -> None:
    """CI's machines start PostgreSQL: there, the PostgreSQL tests must run, never be skipped."""
    assert postgres_unreachable() is None
