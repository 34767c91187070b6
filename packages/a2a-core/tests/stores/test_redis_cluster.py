"""The cluster suite on ``redis://``: each instance has its own store (and pool) on one prefix."""

from __future__ import annotations

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
