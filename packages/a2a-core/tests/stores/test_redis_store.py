"""``redis://``: the conformance suite, and what only a shared store can show.

Two stores on one prefix stand for two server instances: each has its own
connection pool, as separate processes would.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis
from a2a_core.adapters import open_task_store
from a2a_core.plugins import PluginError
from a2a_core.stores import ConcurrentUpdateError, StoredTask, TaskQuery, TaskStore
from a2a_core.stores.redis import RedisTaskStore
from a2a_core.testing import TaskStoreConformance
from a2a_core.testing.fakes import make_task
from a2a_core.types import TaskState, TaskStatus
from store_support import REDIS_URL, redis_unreachable

ALICE = "alice"


class TestRedisStore(TaskStoreConformance):
    supports_eviction = True

    @pytest.fixture(autouse=True)
    def _prefix(self, redis_prefix: str) -> None:
        self.prefix = redis_prefix

    async def make_store(self) -> TaskStore:
        return open_task_store(f"{REDIS_URL}?prefix={self.prefix}")

    async def make_bounded_store(self, max_tasks: int) -> TaskStore:
        return open_task_store(f"{REDIS_URL}?prefix={self.prefix}&max_tasks={max_tasks}")


@pytest.fixture
async def two_instances(redis_prefix: str) -> AsyncIterator[tuple[TaskStore, TaskStore]]:
    first = open_task_store(f"{REDIS_URL}?prefix={redis_prefix}")
    second = open_task_store(f"{REDIS_URL}?prefix={redis_prefix}")
    yield first, second
    await first.aclose()
    await second.aclose()


async def test_two_instances_on_one_prefix_share_tasks(
    two_instances: tuple[TaskStore, TaskStore],
) -> None:
    first, second = two_instances
    task = make_task("shared", context_id="ctx-shared")
    await first.create(task, ALICE)
    seen = await second.get("shared", ALICE)
    assert seen is not None
    assert (seen.task, seen.version) == (task, 1)
    assert [t.id for t in (await second.list(TaskQuery(), ALICE)).tasks] == ["shared"]
    done = task.model_copy(update={"status": TaskStatus(state=TaskState.COMPLETED)})
    await second.save(done, ALICE, 1)
    back = await first.get("shared", ALICE)
    assert back is not None
    assert (back.task.status.state, back.version) == (TaskState.COMPLETED, 2)
    with pytest.raises(ConcurrentUpdateError):
        await first.save(task, ALICE, 1)  # first's read is stale now
    assert await first.delete("shared", ALICE) is True
    assert await second.get("shared", ALICE) is None
    assert (await second.list(TaskQuery(), ALICE)).total_size == 0


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
        assert final.task.metadata == winners[0].task.metadata


async def test_prefixes_keep_deployments_apart(redis_prefix: str) -> None:
    one = open_task_store(f"{REDIS_URL}?prefix={redis_prefix}:one")
    two = open_task_store(f"{REDIS_URL}?prefix={redis_prefix}:two")
    try:
        await one.create(make_task("same-id", text="one"), ALICE)
        await two.create(make_task("same-id", text="two"), ALICE)
        got_one, got_two = await one.get("same-id", ALICE), await two.get("same-id", ALICE)
        assert got_one is not None
        assert got_two is not None
        assert got_one.task.artifacts[0].parts[0].text == "one"
        assert got_two.task.artifacts[0].parts[0].text == "two"
        assert (await one.list(TaskQuery(), ALICE)).total_size == 1
    finally:
        await one.aclose()
        await two.aclose()


async def test_deleted_and_evicted_tasks_leave_no_keys_behind(redis_prefix: str) -> None:
    store = open_task_store(f"{REDIS_URL}?prefix={redis_prefix}&max_tasks=2")
    client = aioredis.from_url(REDIS_URL, decode_responses=True)
    try:
        for i in range(4):
            state = TaskState.COMPLETED if i < 3 else TaskState.WORKING
            await store.create(make_task(f"t{i}", state=state), ALICE if i % 2 else None)
        await store.delete("t3", ALICE)
        keys = sorted(await client.keys(f"{redis_prefix}:*"))
        # t0, t1 were evicted (oldest terminal), t3 deleted: only t2, its indexes and the counters.
        assert keys == [
            f"{redis_prefix}:{name}"
            for name in (
                "count",
                "ctx:-:ctx-1",
                "owner:-",
                "seq",
                "state:-:TASK_STATE_COMPLETED",
                "task:t2",
                "terminal",
            )
        ]
        assert await client.get(f"{redis_prefix}:count") == "1"
        for index in ("owner:-", "ctx:-:ctx-1", "state:-:TASK_STATE_COMPLETED", "terminal"):
            assert await client.zrange(f"{redis_prefix}:{index}", 0, -1) == ["t2"]
    finally:
        await client.aclose()
        await store.aclose()


async def test_owners_that_look_alike_stay_apart(redis_prefix: str) -> None:
    store = open_task_store(f"{REDIS_URL}?prefix={redis_prefix}")
    try:
        for owner in (None, "", "-", "=", "a:b"):
            await store.create(make_task(f"of-{owner!r}"), owner)
        for owner in (None, "", "-", "=", "a:b"):
            page = await store.list(TaskQuery(), owner)
            assert [t.id for t in page.tasks] == [f"of-{owner!r}"]
            assert await store.get(f"of-{owner!r}", owner) is not None
    finally:
        await store.aclose()


async def test_a_client_passed_in_is_left_open(redis_prefix: str) -> None:
    client = aioredis.from_url(REDIS_URL)
    store = RedisTaskStore(client=client, prefix=redis_prefix)
    try:
        await store.create(make_task("borrowed"), ALICE)
        await store.aclose()
        assert await client.exists(f"{redis_prefix}:task:borrowed") == 1  # still usable
        with pytest.raises(RuntimeError, match="closed"):
            await store.get("borrowed", ALICE)
    finally:
        await client.aclose()


# -- URLs and the optional dependency (no server needed) -----------------------------------


def test_url_options_are_split_between_the_store_and_redis_py() -> None:
    store = open_task_store(
        "redis://:pw@cache.internal:6380/3?prefix=prod&max_tasks=5&socket_timeout=2"
    )
    assert isinstance(store, RedisTaskStore)
    assert (store.prefix, store.max_tasks) == ("prod", 5)
    assert store.url == "redis://:pw@cache.internal:6380/3?socket_timeout=2"
    default = open_task_store("rediss://cache.internal")
    assert isinstance(default, RedisTaskStore)
    assert (default.prefix, default.max_tasks, default.url) == (
        "a2a",
        None,
        "rediss://cache.internal",
    )


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("redis://h?max_tasks=0", "max_tasks must be one positive integer"),
        ("redis://h?max_tasks=ten", "max_tasks must be one positive integer"),
        ("redis://h?prefix=", "prefix must not be empty"),
        ("redis://h?prefix=a&prefix=b", "prefix is given 2 times"),
    ],
)
def test_bad_redis_urls_are_refused_at_startup(url: str, problem: str) -> None:
    with pytest.raises(PluginError, match=problem):
        open_task_store(url)


def test_without_redis_installed_the_error_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "redis.asyncio", None)  # import fails, as if not installed
    with pytest.raises(PluginError, match=r"pip install 'a2a-adapters-core\[redis\]'"):
        open_task_store("redis://127.0.0.1:6379/0")


def test_the_skip_reason_is_clear_when_redis_is_down(monkeypatch: pytest.MonkeyPatch) -> None:
    import store_support

    monkeypatch.setattr(store_support, "REDIS_PORT", 1)  # nothing listens on port 1
    monkeypatch.setattr(store_support, "_probed", False)
    monkeypatch.setattr(store_support, "_unreachable", None)
    reason = store_support.redis_unreachable()
    assert reason is not None
    assert reason.startswith("no Redis on 127.0.0.1:1 (")


@pytest.mark.skipif(not os.environ.get("CI"), reason="only CI promises a local Redis")
def test_ci_runs_the_redis_tests() -> None:
    """CI's machines start Redis: there, the Redis tests must run, never be skipped."""
    assert redis_unreachable() is None
