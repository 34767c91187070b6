"""Every store lists exactly like ``MemoryTaskStore``: same pages, tokens and totals.

A seeded random history (ties in time, undated and pre-1970 tasks, other
owners, saves that move tasks, deletes) is applied to the memory store and
to the store under test; then every query is walked page by page on both.
Several hundred tasks make the Redis walk cross its batch boundaries.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone

import pytest
from a2a_core.adapters import open_task_store
from a2a_core.stores import MemoryTaskStore, TaskPage, TaskQuery, TaskStore
from a2a_core.testing.fakes import make_task
from a2a_core.types import TaskState, TaskStatus
from store_support import POSTGRES_URL, REDIS_URL

OWNERS = ("alice", "bob", None)
STATES = (TaskState.SUBMITTED, TaskState.WORKING, TaskState.COMPLETED, TaskState.FAILED)
BASE = datetime(2025, 3, 1, tzinfo=UTC)
INSTANTS: list[datetime | None] = [
    None,
    datetime(1969, 7, 20, 20, 17, tzinfo=UTC),  # before the epoch: negative times
    datetime(1970, 1, 1, tzinfo=UTC),  # the epoch itself
    *(BASE + timedelta(seconds=s, microseconds=us) for s in range(12) for us in (0, 1)),
]
IDS = ["Z", "a", "é", "日本", "task", "Task", "t-"]


@pytest.fixture(params=["sqlite", "redis", "postgres"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[TaskStore]:
    if request.param == "sqlite":
        tmp = request.getfixturevalue("tmp_path")
        made = open_task_store(f"sqlite:///{tmp / 'tasks.db'}")
    elif request.param == "redis":
        prefix = request.getfixturevalue("redis_prefix")
        made = open_task_store(f"{REDIS_URL}?prefix={prefix}")
    else:
        schema = request.getfixturevalue("postgres_schema")
        made = open_task_store(f"{POSTGRES_URL}?schema={schema}")
    yield made
    await made.aclose()


def _when(rng: random.Random) -> datetime | None:
    when = rng.choice(INSTANTS)
    if when is not None and rng.random() < 0.3:  # same instant, another offset
        when = when.astimezone(timezone(timedelta(hours=rng.randint(-12, 12))))
    return when


async def _apply_history(seed: int, stores: list[TaskStore]) -> None:
    rng = random.Random(seed)
    live: dict[str, tuple[str | None, int]] = {}
    for n in range(420):
        task_id = f"{rng.choice(IDS)}{n:03d}"
        owner = rng.choices(OWNERS, weights=(8, 1, 1))[0]
        task = make_task(
            task_id,
            context_id=f"ctx-{rng.randint(0, 3)}",
            state=rng.choice(STATES),
            timestamp=_when(rng),
        )
        for s in stores:
            await s.create(task, owner)
        live[task_id] = (owner, 1)
    for task_id in rng.sample(sorted(live), 120):
        owner, version = live[task_id]
        if rng.random() < 0.25:
            for s in stores:
                assert await s.delete(task_id, owner)
            del live[task_id]
            continue
        got = await stores[0].get(task_id, owner)
        assert got is not None
        status = TaskStatus(state=rng.choice(STATES), timestamp=_when(rng))
        moved = got.task.model_copy(update={"status": status})
        for s in stores:
            assert (await s.save(moved, owner, version)).version == version + 1
        live[task_id] = (owner, version + 1)


async def _walk(store: TaskStore, query: TaskQuery, owner: str | None) -> list[TaskPage]:
    pages: list[TaskPage] = []
    token: str | None = None
    while len(pages) < 500:
        q = TaskQuery(
            context_id=query.context_id,
            state=query.state,
            status_after=query.status_after,
            page_size=query.page_size,
            page_token=token,
        )
        page = await store.list(q, owner)
        pages.append(page)
        token = page.next_page_token or None
        if token is None:
            return pages
    raise AssertionError("the pages never ended")


QUERIES = [
    TaskQuery(page_size=1000),
    TaskQuery(page_size=7),
    TaskQuery(state=TaskState.COMPLETED, page_size=1),
    TaskQuery(context_id="ctx-2", page_size=9),
    TaskQuery(context_id="ctx-1", state=TaskState.WORKING, page_size=3),
    TaskQuery(status_after=BASE + timedelta(seconds=6), page_size=10),
    TaskQuery(status_after=BASE + timedelta(seconds=6, microseconds=1), page_size=10),
    TaskQuery(status_after=datetime(1960, 1, 1, tzinfo=UTC), page_size=40),
    TaskQuery(status_after=datetime(1970, 1, 1, tzinfo=UTC), page_size=40),
    TaskQuery(state=TaskState.FAILED, status_after=BASE, page_size=4),
]


@pytest.mark.parametrize("seed", [1, 2])
async def test_pages_tokens_and_totals_match_the_memory_store(store: TaskStore, seed: int) -> None:
    reference = MemoryTaskStore(max_tasks=100_000)
    await _apply_history(seed, [reference, store])
    for owner in OWNERS:
        for query in QUERIES:
            expected = await _walk(reference, query, owner)
            got = await _walk(store, query, owner)
            want_ids = [[t.id for t in p.tasks] for p in expected]
            got_ids = [[t.id for t in p.tasks] for p in got]
            assert got_ids == want_ids, f"owner {owner!r}, {query}"
            assert [p.total_size for p in got] == [p.total_size for p in expected]
            assert [p.next_page_token for p in got] == [p.next_page_token for p in expected]
            assert [t for p in got for t in p.tasks] == [t for p in expected for t in p.tasks]
    assert sum(len(p.tasks) for p in await _walk(store, TaskQuery(page_size=50), "alice")) > 256
