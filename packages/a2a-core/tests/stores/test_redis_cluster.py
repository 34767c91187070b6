"""The cluster suite on ``redis://``: each instance has its own store (and pool) on one prefix."""

from __future__ import annotations

import asyncio

import pytest
from a2a_core.adapters import open_task_store
from a2a_core.stores import TaskStore
from a2a_core.testing import ClusterConformance
from store_support import REDIS_URL, resubscribe_past_retention


class TestRedisCluster(ClusterConformance):
    @pytest.fixture(autouse=True)
    def _prefix(self, redis_prefix: str) -> None:
        self.prefix = redis_prefix

    async def make_store(self) -> TaskStore:
        return open_task_store(f"{REDIS_URL}?prefix={self.prefix}")


async def test_resubscribe_past_retention_starts_with_a_snapshot(redis_prefix: str) -> None:
    """Events expired (stream_ttl): a resubscribe with Last-Event-ID gets the Task first."""
    await resubscribe_past_retention(f"{REDIS_URL}?prefix={redis_prefix}&stream_ttl=1")


async def test_an_event_saved_but_never_published_is_a_hole_followers_notice(
    redis_prefix: str,
) -> None:
    """An instance killed between saving event 3 and publishing it: 4 arrives after 2.

    The survivor that settles the task publishes 4 with ``previous=3`` (the version it
    read); followers get 1 and 2, then ``EventsLost`` (the service then sends the Task),
    never 4 as if nothing were missing. A follower from 3 on misses nothing.
    """
    import asyncio

    from a2a_core.contracts.channel import EventsLost
    from a2a_core.stores.redis import RedisTaskStore
    from a2a_core.types import TaskState, TaskStatus, TaskStatusUpdateEvent

    def status(state: TaskState) -> TaskStatusUpdateEvent:
        return TaskStatusUpdateEvent(task_id="t", context_id="c", status=TaskStatus.now(state))

    store = open_task_store(f"{REDIS_URL}?prefix={redis_prefix}")
    assert isinstance(store, RedisTaskStore)
    channel = store.event_channel()
    assert channel is not None
    try:
        await channel.publish("t", 1, status(TaskState.WORKING), 0)
        await channel.publish("t", 2, status(TaskState.WORKING), 1)
        live = channel.follow("t", 2, 2)
        waiting = asyncio.ensure_future(anext(live))
        await asyncio.sleep(0.2)  # blocked in XREAD
        await channel.publish("t", 4, status(TaskState.FAILED), 3)  # 3 was never published
        with pytest.raises(EventsLost):
            await asyncio.wait_for(waiting, 10)
        replay = channel.follow("t", 0, 4)
        assert [(await anext(replay))[0], (await anext(replay))[0]] == [1, 2]
        with pytest.raises(EventsLost):
            await anext(replay)
        after_hole = channel.follow("t", 3, 4)
        event_id, event = await anext(after_hole)
        assert event_id == 4
        assert isinstance(event, TaskStatusUpdateEvent)
        assert event.status.state is TaskState.FAILED
        # An end mark is not a hole: a run that ends at a version it never published.
        await channel.publish_end("t", 6)
        assert (await anext(after_hole)) == (6, None)
    finally:
        await store.aclose()


async def test_save_and_publish_is_one_round_trip_and_all_or_nothing(
    redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's event: the task saved and the event added to its stream by one script."""
    from typing import Any

    import redis.asyncio.connection as connection
    from a2a_core.contracts import SavesEvents
    from a2a_core.stores import ConcurrentUpdateError
    from a2a_core.stores.redis import RedisTaskStore
    from a2a_core.testing.fakes import make_task
    from a2a_core.types import TaskState, TaskStatus, TaskStatusUpdateEvent

    store = open_task_store(f"{REDIS_URL}?prefix={redis_prefix}")
    assert isinstance(store, RedisTaskStore)
    channel = store.event_channel()
    assert isinstance(channel, SavesEvents)
    task = make_task("t", context_id="c")
    await store.create(task, "alice")
    await store.get("t", "alice")  # connected, so only the save is counted below
    sent: list[object] = []
    original = connection.AbstractConnection.send_packed_command

    async def counted(self: Any, command: Any, check_health: bool = True) -> None:
        sent.append(command)
        await original(self, command, check_health)

    monkeypatch.setattr(connection.AbstractConnection, "send_packed_command", counted)
    working = task.model_copy(update={"status": TaskStatus(state=TaskState.WORKING)})
    event = TaskStatusUpdateEvent(task_id="t", context_id="c", status=working.status)
    try:
        saved = await channel.save_and_publish(working, "alice", 1, event, 1)
        assert saved.version == 2
        assert len(sent) == 1, "the save and the publish travel as one script call"
        monkeypatch.setattr(connection.AbstractConnection, "send_packed_command", original)
        stored = await store.get("t", "alice")
        assert stored is not None
        assert (stored.version, stored.task.status.state) == (2, TaskState.WORKING)
        follower = channel.follow("t", 1, 2)
        event_id, seen = await anext(follower)
        assert event_id == 2
        assert seen == event
        with pytest.raises(ConcurrentUpdateError):  # stale: neither saved nor published
            await channel.save_and_publish(working, "alice", 1, event, 2)
        with pytest.raises(ConcurrentUpdateError):  # another owner: the same
            await channel.save_and_publish(working, "bob", 2, event, 2)
        client = store.connection.client()
        assert await client.xlen(channel.stream_key("t")) == 1
    finally:
        await store.aclose()


FOLLOWERS = 150
"""More than a Redis pool's default size (100 connections)."""


async def test_followers_of_many_tasks_wait_in_one_read_on_one_connection(
    redis_prefix: str,
) -> None:
    """150 followers (one per task) wait for their next event in one blocked ``XREAD`` on
    one connection, not one connection each (a pool of 100 ran out past the 100th), and
    each gets its own task's event."""
    import redis.asyncio as redis
    from a2a_core.stores.redis import RedisTaskStore
    from a2a_core.types import TaskState, TaskStatus, TaskStatusUpdateEvent
    from store_support import REDIS_HOST, REDIS_PORT

    name = f"followers-{redis_prefix}"  # this store's connections, among other tests' ones
    store = open_task_store(f"{REDIS_URL}?prefix={redis_prefix}&client_name={name}")
    assert isinstance(store, RedisTaskStore)
    channel = store.event_channel()
    admin = redis.Redis(host=REDIS_HOST, port=REDIS_PORT)

    def working(task_id: str) -> TaskStatusUpdateEvent:
        return TaskStatusUpdateEvent(
            task_id=task_id, context_id="c", status=TaskStatus.now(TaskState.WORKING)
        )

    ids = [f"t{i}" for i in range(FOLLOWERS)]
    followers = [channel.follow(task_id, 0, 0) for task_id in ids]
    try:
        waiting = [asyncio.ensure_future(anext(f)) for f in followers]

        async def blocked_reads() -> int:
            clients = await admin.client_list()
            return sum(
                1
                for c in clients
                if c.get("name") == name and c.get("cmd") == "xread" and "b" in c.get("flags", "")
            )

        seen: list[int] = []
        for _ in range(200):  # until every follower waits (the count holds still)
            seen.append(await blocked_reads())
            if len(seen) >= 10 and seen[-1] > 0 and len(set(seen[-10:])) == 1:
                break
            await asyncio.sleep(0.02)
        assert seen[-1] == 1
        assert not any(w.done() for w in waiting)
        await asyncio.gather(*(channel.publish(t, 1, working(t), 0) for t in ids))
        got = await asyncio.wait_for(asyncio.gather(*waiting), 20)
        assert [(event_id, getattr(event, "task_id", None)) for event_id, event in got] == [
            (1, t) for t in ids
        ]
    finally:
        for f in followers:
            await f.aclose()  # type: ignore[attr-defined]
        await store.aclose()
        await admin.aclose()


async def test_many_tasks_publishing_at_once_wait_for_a_connection_instead_of_failing(
    redis_prefix: str,
) -> None:
    """150 events published at once from one store (more than its pool's connections):
    each waits for a free connection and is added, none fails with "Too many connections"."""
    from a2a_core.stores.redis import RedisTaskStore
    from a2a_core.types import TaskState, TaskStatus, TaskStatusUpdateEvent

    store = open_task_store(f"{REDIS_URL}?prefix={redis_prefix}")
    assert isinstance(store, RedisTaskStore)
    assert store.connection.client().connection_pool.max_connections < FOLLOWERS
    channel = store.event_channel()
    status = TaskStatus.now(TaskState.WORKING)
    try:
        added = await asyncio.gather(
            *(
                channel.publish(
                    f"t{i}",
                    1,
                    TaskStatusUpdateEvent(task_id=f"t{i}", context_id="c", status=status),
                    0,
                )
                for i in range(FOLLOWERS)
            )
        )
        assert added == [True] * FOLLOWERS
    finally:
        await store.aclose()
