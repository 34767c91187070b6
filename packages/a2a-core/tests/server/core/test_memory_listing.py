"""CompactMemoryTaskStore's kept ListTasks order lists exactly what sorting every task would.

The order is built by the first listing and then kept up to date by the writes, so
the tests interleave writes and listings: a seeded random history (ties in time,
undated and pre-1970 tasks, several owners, status times that go back, deletes,
evictions) checked after every few writes against a listing computed here from
``get`` alone, page by page.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from a2a_core.contracts.task_store import sort_key
from a2a_core.stores import CompactMemoryTaskStore, TaskPage, TaskQuery
from a2a_core.testing.fakes import make_task
from a2a_core.types import Task, TaskState, TaskStatus

OWNERS = ("alice", "bob", None)
STATES = (TaskState.SUBMITTED, TaskState.WORKING, TaskState.COMPLETED, TaskState.FAILED)
BASE = datetime(2025, 3, 1, tzinfo=UTC)
INSTANTS: list[datetime | None] = [
    None,
    datetime(1969, 7, 20, 20, 17, tzinfo=UTC),
    datetime(1970, 1, 1, tzinfo=UTC),
    *(BASE + timedelta(seconds=s) for s in range(8)),
]
QUERIES = [
    TaskQuery(page_size=4),
    TaskQuery(page_size=1000),
    TaskQuery(state=TaskState.COMPLETED, page_size=3),
    TaskQuery(state=TaskState.SUBMITTED, page_size=2),
    TaskQuery(context_id="ctx-1", page_size=5),
    TaskQuery(context_id="ctx-0", state=TaskState.WORKING, page_size=2),
    TaskQuery(status_after=BASE + timedelta(seconds=4), page_size=3),
    TaskQuery(status_after=datetime(1960, 1, 1, tzinfo=UTC), page_size=6),
    TaskQuery(status_after=datetime(1970, 1, 1, tzinfo=UTC), page_size=6),
]


async def _expected(
    store: CompactMemoryTaskStore, ids: set[str], query: TaskQuery, owner: str | None
):
    """Every page of the listing, computed by sorting what ``get`` returns."""
    tasks: list[Task] = []
    for task_id in ids:
        stored = await store.get(task_id, owner)
        if stored is not None:
            tasks.append(stored.task)
    after = query.status_after
    matching = sorted(
        (
            t
            for t in tasks
            if (query.context_id is None or t.context_id == query.context_id)
            and (query.state is None or t.status.state is query.state)
            and (after is None or (t.status.timestamp is not None and t.status.timestamp >= after))
        ),
        key=sort_key,
    )
    size = query.page_size
    return [matching[i : i + size] for i in range(0, len(matching), size)] or [[]], len(matching)


async def _walk(
    store: CompactMemoryTaskStore, query: TaskQuery, owner: str | None
) -> list[TaskPage]:
    pages: list[TaskPage] = []
    token: str | None = None
    while len(pages) < 200:
        page = await store.list(
            TaskQuery(
                context_id=query.context_id,
                state=query.state,
                status_after=query.status_after,
                page_size=query.page_size,
                page_token=token,
            ),
            owner,
        )
        pages.append(page)
        token = page.next_page_token or None
        if token is None:
            return pages
    raise AssertionError("the pages never ended")


async def _check(store: CompactMemoryTaskStore, ids: set[str]) -> None:
    for owner in OWNERS:
        for query in QUERIES:
            want_pages, want_total = await _expected(store, ids, query, owner)
            got = await _walk(store, query, owner)
            assert [[t.id for t in p.tasks] for p in got] == [
                [t.id for t in p] for p in want_pages
            ], f"owner {owner!r}, {query}"
            assert [t for p in got for t in p.tasks] == [t for p in want_pages for t in p]
            assert {p.total_size for p in got} == {want_total}, f"total_size, {query}"


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_listings_between_writes_match_a_full_sort(seed: int) -> None:
    rng = random.Random(seed)
    store = CompactMemoryTaskStore(max_tasks=60)  # past it, finished tasks are evicted
    ids: set[str] = set()
    versions: dict[str, tuple[str | None, int]] = {}
    await store.list(TaskQuery(), None)  # the order is kept from the first listing on
    for step in range(700):
        roll = rng.random()
        if roll < 0.3 or not versions:
            task_id = f"t{step:03d}"
            owner = rng.choices(OWNERS, weights=(6, 2, 2))[0]
            made = make_task(
                task_id,
                context_id=f"ctx-{rng.randint(0, 2)}",
                state=rng.choice(STATES),
                timestamp=rng.choice(INSTANTS),
            )
            await store.create(made, owner)
            ids.add(task_id)
            versions[task_id] = (owner, 1)
        else:
            task_id = rng.choice(sorted(versions))
            owner, version = versions[task_id]
            stored = await store.get(task_id, owner)
            if stored is None:  # evicted
                del versions[task_id]
                continue
            if roll < 0.4:
                assert await store.delete(task_id, owner)
                del versions[task_id]
                continue
            # A new status, often at a time the task had before (a place it held).
            status = TaskStatus(state=rng.choice(STATES), timestamp=rng.choice(INSTANTS))
            moved = stored.task.model_copy(update={"status": status})
            await store.save(moved, owner, version)
            versions[task_id] = (owner, version + 1)
        if step % 25 == 0:
            await _check(store, ids)
    await _check(store, ids)


async def test_saves_of_the_same_tasks_keep_the_order_bounded() -> None:
    """Each new status time adds a place; stale places are dropped as they pile up, so a
    store listed once and then written forever does not grow."""
    store = CompactMemoryTaskStore()
    for n in range(10):
        await store.create(make_task(f"t{n}", timestamp=BASE), None)
    await store.list(TaskQuery(), None)
    order = store._order  # pyright: ignore[reportPrivateUsage]
    assert order is not None
    for i in range(5000):
        task_id = f"t{i % 10}"
        stored = await store.get(task_id, None)
        assert stored is not None
        status = TaskStatus(state=TaskState.WORKING, timestamp=BASE + timedelta(seconds=i))
        await store.save(stored.task.model_copy(update={"status": status}), None, stored.version)
        assert len(order._places) <= 2 * len(store) + 257  # pyright: ignore[reportPrivateUsage]
    page = await store.list(TaskQuery(page_size=3), None)
    assert [t.id for t in page.tasks] == ["t9", "t8", "t7"]
    assert page.total_size == 10


async def test_a_store_never_listed_keeps_no_order() -> None:
    store = CompactMemoryTaskStore()
    await store.create(make_task("t"), None)
    assert store._order is None  # pyright: ignore[reportPrivateUsage]
