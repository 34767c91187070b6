"""``sqlite://``: the conformance suite, and what only a file can show (tasks outlive the store)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from a2a_core.adapters import open_task_store
from a2a_core.plugins import PluginError
from a2a_core.stores import ConcurrentUpdateError, StoredTask, TaskQuery, TaskStore
from a2a_core.stores.sqlite import SqliteTaskStore
from a2a_core.testing import TaskStoreConformance
from a2a_core.testing.fakes import make_task
from a2a_core.types import TaskState, TaskStatus

ALICE = "alice"


class TestSqliteFileStore(TaskStoreConformance):
    supports_eviction = True

    async def make_store(self) -> TaskStore:
        return open_task_store(f"sqlite:///{self.tmp_path / 'tasks.db'}")

    async def make_bounded_store(self, max_tasks: int) -> TaskStore:
        return open_task_store(f"sqlite:///{self.tmp_path / 'tasks.db'}?max_tasks={max_tasks}")


class TestSqliteInMemoryStore(TaskStoreConformance):
    supports_eviction = True

    async def make_store(self) -> TaskStore:
        return open_task_store("sqlite://:memory:")

    async def make_bounded_store(self, max_tasks: int) -> TaskStore:
        return open_task_store(f"sqlite://:memory:?max_tasks={max_tasks}")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "tasks.db"


@pytest.fixture
async def two_on_one_file(db: Path) -> AsyncIterator[tuple[TaskStore, TaskStore]]:
    """Two stores on one file: two connections and threads, as two processes would have."""
    first, second = SqliteTaskStore(db), SqliteTaskStore(db)
    yield first, second
    await first.aclose()
    await second.aclose()


async def test_tasks_survive_reopening_the_file(db: Path) -> None:
    task = make_task("durable", text="kept", metadata={"n": [1, 2]})
    store = open_task_store(f"sqlite:///{db}")
    await store.create(task, ALICE)
    await store.create(make_task("anonymous"), None)
    done = task.model_copy(update={"status": TaskStatus(state=TaskState.COMPLETED)})
    await store.save(done, ALICE, 1)
    await store.aclose()

    reopened = open_task_store(f"sqlite:///{db}")
    try:
        got = await reopened.get("durable", ALICE)
        assert got is not None
        assert (got.task, got.version, got.owner) == (done, 2, ALICE)
        assert await reopened.get("durable", None) is None  # owners survive too
        page = await reopened.list(TaskQuery(), ALICE)
        assert ([t.id for t in page.tasks], page.total_size) == (["durable"], 1)
        with pytest.raises(ConcurrentUpdateError):
            await reopened.save(task, ALICE, 1)  # versions survive: 1 is stale
        assert (await reopened.save(task, ALICE, 2)).version == 3
    finally:
        await reopened.aclose()


async def test_two_stores_on_one_file_see_each_other(
    two_on_one_file: tuple[TaskStore, TaskStore],
) -> None:
    first, second = two_on_one_file
    await first.create(make_task("shared"), ALICE)
    seen = await second.get("shared", ALICE)
    assert seen is not None
    assert seen.version == 1
    assert await second.delete("shared", ALICE) is True
    assert await first.get("shared", ALICE) is None


async def test_concurrent_savers_on_one_file_exactly_one_wins(
    two_on_one_file: tuple[TaskStore, TaskStore],
) -> None:
    first, second = two_on_one_file
    task = make_task("contested")
    await first.create(task, ALICE)

    async def save(store: TaskStore, writer: int) -> StoredTask:
        update = task.model_copy(update={"metadata": {"writer": writer}})
        return await store.save(update, ALICE, 1)

    results = await asyncio.gather(
        *(save(first if i % 2 else second, i) for i in range(10)), return_exceptions=True
    )
    winners = [r for r in results if isinstance(r, StoredTask)]
    assert len(winners) == 1, results
    assert all(isinstance(r, ConcurrentUpdateError) for r in results if r not in winners)
    final = await first.get("contested", ALICE)
    assert final is not None
    assert (final.version, final.task.metadata) == (2, winners[0].task.metadata)


async def test_a_locked_database_does_not_block_the_event_loop(db: Path) -> None:
    store = SqliteTaskStore(db)
    await store.create(make_task("first"), ALICE)  # creates the file and tables
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")  # another process holding the write lock
        writing = asyncio.ensure_future(store.create(make_task("second"), ALICE))
        # Had the store blocked the loop, the sleeps would only end once the create had
        # failed ("database is locked", after busy_timeout): it is still waiting instead.
        for _ in range(20):
            await asyncio.sleep(0.01)
        assert not writing.done()
        holder.execute("COMMIT")
        await asyncio.wait_for(writing, 5)
        assert await store.get("second", ALICE) is not None
    finally:
        holder.close()
        await store.aclose()


def _exists(path: Path) -> bool:
    return path.exists()


async def test_nothing_touches_the_disk_before_the_first_call(db: Path) -> None:
    store = open_task_store(f"sqlite:///{db}")
    assert not _exists(db)
    assert await store.get("nothing", ALICE) is None
    assert _exists(db)
    await store.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        await store.get("nothing", ALICE)


async def test_a_file_from_a_newer_schema_is_refused(db: Path) -> None:
    store = SqliteTaskStore(db)
    await store.create(make_task("old"), ALICE)
    await store.aclose()
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE a2a_schema SET version = 99 WHERE name = 'tasks'")
    conn.close()
    newer = SqliteTaskStore(db)
    try:
        with pytest.raises(RuntimeError, match="schema version 99"):
            await newer.get("old", ALICE)
    finally:
        await newer.aclose()


async def test_a_bad_path_fails_with_the_path_named(tmp_path: Path) -> None:
    store = SqliteTaskStore(tmp_path)  # a directory, not a database file
    try:
        with pytest.raises(sqlite3.Error, match="task database"):
            await store.get("x", ALICE)
    finally:
        await store.aclose()


# -- URLs ----------------------------------------------------------------------------------


def test_relative_absolute_and_memory_urls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    relative = open_task_store("sqlite:///tasks.db?max_tasks=50")
    assert isinstance(relative, SqliteTaskStore)
    assert (relative.path, relative.max_tasks) == ("tasks.db", 50)
    absolute = open_task_store(f"sqlite:///{tmp_path / 'my tasks.db'}")
    assert isinstance(absolute, SqliteTaskStore)
    assert absolute.path == str(tmp_path / "my tasks.db")
    quoted = open_task_store("sqlite:///my%20tasks.db")
    assert isinstance(quoted, SqliteTaskStore)
    assert quoted.path == "my tasks.db"
    for url in ("sqlite://:memory:", "sqlite:///:memory:"):
        memory = open_task_store(url)
        assert isinstance(memory, SqliteTaskStore)
        assert (memory.path, memory.max_tasks) == (":memory:", None)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("sqlite://dbhost/tasks.db", "a host is not allowed"),
        ("sqlite://", "a host is not allowed"),
        ("sqlite:///tasks.db?cache=shared", r"unknown sqlite:// option\(s\): cache"),
        ("sqlite:///tasks.db?max_tasks=-1", "max_tasks must be one positive integer"),
        ("sqlite:///no/such/dir/tasks.db", "does not exist"),
    ],
)
def test_bad_sqlite_urls_are_refused_at_startup(
    url: str, problem: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PluginError, match=problem):
        open_task_store(url)
