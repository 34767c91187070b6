"""The in-memory stores: optimistic versions, owner scoping, bounded by evicting old terminal tasks.

The contract's tests run on both the reference ``MemoryTaskStore`` and the
``CompactMemoryTaskStore`` ``memory://`` opens; packs and charges are the compact one's.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from a2a_core.errors import ServerBusyError
from a2a_core.stores import (
    CompactMemoryTaskStore,
    ConcurrentUpdateError,
    MemoryTaskStore,
    TaskQuery,
)
from a2a_core.types import Task, TaskState, TaskStatus
from hypothesis import given
from hypothesis import strategies as st

T0 = datetime(2026, 1, 1, tzinfo=UTC)

StoreClass = type[MemoryTaskStore] | type[CompactMemoryTaskStore]
both_stores = pytest.mark.parametrize("store_class", [MemoryTaskStore, CompactMemoryTaskStore])


def task(task_id: str, state: TaskState = TaskState.WORKING, seconds: int = 0) -> Task:
    status = TaskStatus(state=state, timestamp=T0 + timedelta(seconds=seconds))
    return Task(id=task_id, context_id="ctx", status=status)


@both_stores
async def test_versions_are_optimistic(store_class: StoreClass) -> None:
    store = store_class()
    created = await store.create(task("t"), None)
    assert created.version == 1
    saved = await store.save(task("t", TaskState.COMPLETED), None, 1)
    assert saved.version == 2
    with pytest.raises(ConcurrentUpdateError):
        await store.save(task("t", TaskState.FAILED), None, 1)  # stale
    stored = await store.get("t", None)
    assert stored is not None
    assert stored.version == 2
    assert stored.task.status.state is TaskState.COMPLETED
    with pytest.raises(ConcurrentUpdateError):
        await store.create(task("t"), None)  # ids are unique
    with pytest.raises(ConcurrentUpdateError):
        await store.save(task("never-created"), None, 1)


@both_stores
async def test_concurrent_writers_exactly_one_wins(store_class: StoreClass) -> None:
    store = store_class()
    await store.create(task("t"), None)

    async def write(state: TaskState) -> bool:
        current = await store.get("t", None)
        assert current is not None
        await asyncio.sleep(0)  # both have read version 1
        try:
            await store.save(task("t", state), None, current.version)
        except ConcurrentUpdateError:
            return False
        return True

    results = await asyncio.gather(write(TaskState.COMPLETED), write(TaskState.CANCELED))
    assert sorted(results) == [False, True]


@both_stores
async def test_every_operation_is_owner_scoped(store_class: StoreClass) -> None:
    store = store_class()
    await store.create(task("a"), "alice")
    await store.create(task("n"), None)
    assert await store.get("a", "bob") is None
    assert await store.get("a", None) is None
    assert await store.get("n", "alice") is None
    with pytest.raises(ConcurrentUpdateError):
        await store.save(task("a", TaskState.CANCELED), "bob", 1)
    assert not await store.delete("a", "bob")
    assert [t.id for t in (await store.list(TaskQuery(), "alice")).tasks] == ["a"]
    assert [t.id for t in (await store.list(TaskQuery(), None)).tasks] == ["n"]
    assert await store.delete("a", "alice")
    assert await store.get("a", "alice") is None


@both_stores
def test_max_tasks_must_be_positive(store_class: StoreClass) -> None:
    with pytest.raises(ValueError, match="max_tasks"):
        store_class(max_tasks=0)


@both_stores
async def test_old_terminal_tasks_are_evicted_never_active_ones(store_class: StoreClass) -> None:
    store = store_class(max_tasks=3)
    await store.create(task("done-old", TaskState.COMPLETED), None)
    await store.create(task("working"), None)
    await store.create(task("paused", TaskState.INPUT_REQUIRED), None)
    await store.create(task("done-new", TaskState.FAILED), None)
    assert await store.get("done-old", None) is None  # the oldest terminal one went
    assert len(store) == 3
    # Only active tasks left besides one terminal: that one goes, active ones stay.
    await store.create(task("working-2"), None)
    assert await store.get("done-new", None) is None
    for active in ("working", "paused", "working-2"):
        assert await store.get(active, None) is not None
    # All active: the store may exceed its count rather than lose live work
    # (their bytes still count against max_bytes).
    await store.create(task("working-3"), None)
    assert len(store) == 4


@both_stores
async def test_eviction_prefers_the_least_recently_updated(store_class: StoreClass) -> None:
    store = store_class(max_tasks=2)
    first = await store.create(task("first"), None)
    await store.create(task("second"), None)
    await store.save(task("first", TaskState.COMPLETED), None, first.version)  # now most recent
    stored = await store.get("second", None)
    assert stored is not None
    await store.save(task("second", TaskState.COMPLETED), None, stored.version)
    await store.create(task("third"), None)
    assert await store.get("first", None) is None
    assert await store.get("second", None) is not None


async def test_eviction_walks_past_tasks_in_progress_once() -> None:
    """Live tasks ahead of the finished ones are skipped, then left behind: the next
    eviction starts at the finished ones, still oldest first."""
    store = CompactMemoryTaskStore(max_tasks=6)
    for i in range(4):
        await store.create(task(f"live-{i}"), None)
    for name in ("done-a", "done-b", "done-c"):
        await store.create(task(name, TaskState.COMPLETED), None)
    # Seven tasks, four live: the oldest finished one goes, the live ones move back.
    assert await store.get("done-a", None) is None
    assert list(store._tasks) == ["done-b", "done-c", "live-0", "live-1", "live-2", "live-3"]  # pyright: ignore[reportPrivateUsage]
    await store.create(task("done-d", TaskState.FAILED), None)
    assert await store.get("done-b", None) is None
    for name in ("done-c", "done-d", "live-0", "live-3"):
        assert await store.get(name, None) is not None
    # Only live tasks past the bound: nothing to evict, the store grows.
    crowded = CompactMemoryTaskStore(max_tasks=2)
    for i in range(5):
        await crowded.create(task(f"w-{i}"), None)
    assert len(crowded) == 5
    await crowded.create(task("finished", TaskState.COMPLETED), None)
    assert await crowded.get("finished", None) is None  # the only one eviction may take
    assert len(crowded) == 5


@both_stores
@given(
    offsets=st.lists(st.integers(min_value=0, max_value=5), min_size=0, max_size=25),
    page_size=st.integers(min_value=1, max_value=7),
)
def test_pagination_walks_every_task_once_newest_first(
    store_class: StoreClass, offsets: list[int], page_size: int
) -> None:
    async def walk() -> tuple[list[str], list[str]]:
        store = store_class()
        for i, offset in enumerate(offsets):  # many equal timestamps: ties break by id
            await store.create(task(f"t{i:02d}", seconds=offset), None)
        seen: list[str] = []
        token: str | None = None
        while True:
            page = await store.list(TaskQuery(page_size=page_size, page_token=token), None)
            assert len(page.tasks) <= page_size
            assert page.total_size == len(offsets)
            seen.extend(t.id for t in page.tasks)
            if not page.next_page_token:
                break
            assert page.tasks, "a page with a next token is never empty"
            token = page.next_page_token
        expected = sorted(
            (f"t{i:02d}" for i in range(len(offsets))),
            key=lambda tid: (-offsets[int(tid[1:])], tid),
        )
        return seen, expected

    seen, expected = asyncio.run(walk())
    assert seen == expected


# -- the byte budget ----------------------------------------------------------------------------


def big_task(task_id: str, state: TaskState = TaskState.WORKING, size: int = 100_000) -> Task:
    """A task holding ``size`` incompressible bytes (random base64) in its history."""
    import base64
    import os

    from a2a_core.types import Message, Part, Role

    text = base64.b64encode(os.urandom(size * 3 // 4)).decode()
    message = Message(message_id=f"m-{task_id}", role=Role.USER, parts=[Part(text=text)])
    return task(task_id, state).model_copy(update={"history": [message]})


def echo_task(i: int, state: TaskState = TaskState.COMPLETED) -> Task:
    """A small finished task like a blocking send's: the user's message and one artifact."""
    from a2a_core.types import Artifact, Message, Part, Role

    task_id, context_id = f"{i:08x}-db45-4820-adf1-d7d18ec5f0bc", f"ctx-{i:04d}-472c-b7d0"
    asked = Message(
        message_id=f"m-{i:08x}",
        role=Role.USER,
        parts=[Part(text=f"question {i}")],
        task_id=task_id,
        context_id=context_id,
    )
    answer = Artifact(artifact_id="a-1", name="echo", parts=[Part(text=f"answer {i}")])
    status = TaskStatus(state=state, timestamp=T0 + timedelta(seconds=i))
    return Task(
        id=task_id, context_id=context_id, status=status, history=[asked], artifacts=[answer]
    )


def charged(store: CompactMemoryTaskStore) -> int:
    return sum(e.size for e in store._tasks.values())  # pyright: ignore[reportPrivateUsage]


async def test_finished_tasks_are_deflated_together_in_packs_and_read_back_whole() -> None:
    """Finished tasks are kept as JSON in packs of up to 32, deflated together once full:
    a third of the bytes of each deflated alone, for one compressor set-up."""
    import zlib

    from a2a_core.stores.compact import _Pack  # pyright: ignore[reportPrivateUsage]
    from a2a_core.wire import dumps

    store = CompactMemoryTaskStore()
    tasks = [echo_task(i) for i in range(70)]
    for t in tasks:
        await store.create(t, None)
        assert store.stored_bytes == charged(store)
    entries = store._tasks  # pyright: ignore[reportPrivateUsage]
    packs = {id(e._data) for e in entries.values()}  # pyright: ignore[reportPrivateUsage]
    assert len(packs) == 3  # 32 + 32 deflated, 6 in the open pack
    first = entries[tasks[0].id]._data  # pyright: ignore[reportPrivateUsage]
    assert isinstance(first, _Pack)
    assert not first.open
    alone = sum(len(zlib.compress(dumps(t), 1, -15)) for t in tasks[:32])
    together = sum(entries[t.id].size for t in tasks[:32]) - 32 * 400  # the entry overhead
    assert together < alone / 2
    for t in reversed(tasks):  # the open pack's raw JSON, then the deflated ones'
        stored = await store.get(t.id, None)
        assert stored is not None
        assert stored.task == t
    page = await store.list(TaskQuery(page_size=100), None)
    assert [t.id for t in page.tasks] == [t.id for t in reversed(tasks)]


async def test_a_pack_deflated_after_some_of_its_tasks_went_charges_only_those_left() -> None:
    store = CompactMemoryTaskStore()
    for i in range(20):
        await store.create(echo_task(i), None)
    for i in range(0, 20, 3):
        assert await store.delete(echo_task(i).id, None)
    await store.create(task("live"), None)
    for i in range(20, 60):  # fills the first pack, deflating it, and then the next
        await store.create(echo_task(i), None)
        assert store.stored_bytes == charged(store)
    for i in range(1, 20, 3):
        stored = await store.get(echo_task(i).id, None)
        assert stored is not None
        assert stored.task == echo_task(i)
    for tid in list(store._tasks):  # pyright: ignore[reportPrivateUsage]
        await store.delete(tid, None)
    assert store.stored_bytes == 0


async def test_a_task_that_finishes_joins_a_pack_and_a_large_one_gets_its_own() -> None:
    from a2a_core.stores.compact import _Pack  # pyright: ignore[reportPrivateUsage]

    store = CompactMemoryTaskStore()
    await store.create(echo_task(1, TaskState.WORKING), None)
    await store.save(echo_task(1), None, 1)
    big = big_task("big", TaskState.COMPLETED, size=40_000)
    await store.create(big, None)
    assert store.stored_bytes == charged(store)
    entries = store._tasks  # pyright: ignore[reportPrivateUsage]
    assert entries["big"].size > 28_000  # random base64: 6 bits a byte
    alone, shared = entries["big"]._data, entries[echo_task(1).id]._data  # pyright: ignore[reportPrivateUsage]
    assert isinstance(alone, _Pack)
    assert isinstance(shared, _Pack)
    assert not alone.open
    assert shared.open
    for t in (echo_task(1), big):
        stored = await store.get(t.id, None)
        assert stored is not None
        assert stored.task == t
        assert stored.version == (1 if t is big else 2)


@both_stores
async def test_finished_tasks_are_evicted_to_stay_within_max_bytes(store_class: StoreClass) -> None:
    store = store_class(max_bytes=1_000_000)
    for i in range(30):  # ~100 KB each, incompressible: 3 MB offered
        await store.create(big_task(f"done-{i}", TaskState.COMPLETED), None)
        assert store.stored_bytes <= store.max_bytes
    assert await store.get("done-29", None) is not None  # the newest stay
    assert await store.get("done-0", None) is None  # the oldest went
    assert 5 <= len(store) <= 15


async def test_live_tasks_holding_the_budget_refuse_new_work_retryably() -> None:
    store = CompactMemoryTaskStore(max_bytes=1_000_000)
    await store.create(big_task("done", TaskState.COMPLETED), None)
    live = 0
    refused: ServerBusyError | None = None
    for i in range(20):
        try:
            await store.create(big_task(f"live-{i}"), None)
        except ServerBusyError as exc:
            refused = exc
            break
        live += 1
    assert refused is not None
    assert refused.data == {
        "reason": "task_store_full",
        "retryable": True,
        "max_bytes": 1_000_000,
    }
    assert 2 <= live < 10
    assert store.stored_bytes <= store.max_bytes
    # A running task may not grow past the budget either; finishing always fits.
    stored = await store.get("live-0", None)
    assert stored is not None
    with pytest.raises(ServerBusyError):
        await store.save(big_task("live-0", size=900_000), None, stored.version)
    await store.save(big_task("live-0", TaskState.COMPLETED), None, stored.version)
    # Deleting gives the bytes back.
    before = store.stored_bytes
    assert await store.delete("live-1", None)
    assert store.stored_bytes < before


@both_stores
async def test_accounting_returns_to_zero(store_class: StoreClass) -> None:
    store = store_class(max_bytes=10_000_000)
    created = await store.create(big_task("t"), None)
    saved = await store.save(big_task("t", TaskState.INPUT_REQUIRED), None, created.version)
    await store.save(big_task("t", TaskState.COMPLETED), None, saved.version)
    assert store.stored_bytes > 0
    assert await store.delete("t", None)
    assert store.stored_bytes == 0


@both_stores
def test_max_bytes_must_be_positive(store_class: StoreClass) -> None:
    with pytest.raises(ValueError, match="max_bytes"):
        store_class(max_bytes=0)
