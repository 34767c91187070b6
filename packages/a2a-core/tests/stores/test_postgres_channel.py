"""The ``postgresql://`` task channel: the event table, LISTEN/NOTIFY wake-ups, cancels, push.

Two stores on one schema stand for two instances (each its own pool and its
own LISTEN connection). Followers are made with a long ``poll_seconds``, so an
event that arrives within the test's bound arrived through a notification.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import psycopg
import pytest
from a2a_core.adapters import open_task_store
from a2a_core.contracts.channel import ChannelItem, EventsLost
from a2a_core.errors import InvalidParamsError
from a2a_core.server.push.store import PushConfigEntry
from a2a_core.stores.postgres import PostgresTaskStore
from a2a_core.stores.postgres_channel import PostgresTaskChannel
from a2a_core.types import (
    Artifact,
    Part,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from psycopg import sql
from store_support import POSTGRES_URL

BOUND = 10.0
"""Seconds any wait in these tests may take (the followers poll only every 120 s)."""


def _chunk(task_id: str, text: str) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id=task_id,
        context_id="ctx",
        artifact=Artifact(artifact_id="out", parts=[Part(text=text)]),
        append=True,
    )


def _status(task_id: str, state: TaskState) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(task_id=task_id, context_id="ctx", status=TaskStatus(state=state))


def _text(event: object) -> str:
    if isinstance(event, TaskArtifactUpdateEvent):
        return "".join(p.text or "" for p in event.artifact.parts)
    if isinstance(event, TaskStatusUpdateEvent):
        return event.status.state.value
    return "end"


async def _channel(url: str) -> tuple[PostgresTaskStore, PostgresTaskChannel]:
    store = open_task_store(url)
    assert isinstance(store, PostgresTaskStore)
    channel = store.event_channel()
    assert store.event_channel() is channel, "one channel per store"
    channel.poll_seconds = 120.0  # wake-ups must come from NOTIFY
    return store, channel


@pytest.fixture
async def pair(
    postgres_schema: str,
) -> AsyncIterator[tuple[PostgresTaskChannel, PostgresTaskChannel]]:
    url = f"{POSTGRES_URL}?schema={postgres_schema}"
    first, a = await _channel(url)
    second, b = await _channel(url)
    yield a, b
    await first.aclose()
    await second.aclose()


async def _take(follower: AsyncIterator[ChannelItem], count: int) -> list[ChannelItem]:
    async def read() -> list[ChannelItem]:
        return [await anext(follower) for _ in range(count)]

    return await asyncio.wait_for(read(), BOUND)


async def test_replay_then_live_in_order_without_duplicates(
    pair: tuple[PostgresTaskChannel, PostgresTaskChannel],
) -> None:
    a, b = pair
    await a.publish("t1", 2, _status("t1", TaskState.WORKING), previous=1)
    await a.publish("t1", 3, _chunk("t1", "x"))
    follower = b.follow("t1", 1, 3)
    assert [(i, _text(e)) for i, e in await _take(follower, 2)] == [
        (2, TaskState.WORKING.value),
        (3, "x"),
    ]
    await a.publish("t1", 3, _chunk("t1", "again"))  # a late writer: dropped
    await a.publish("t1", 2, _chunk("t1", "older"))  # dropped too
    await a.publish("t1", 4, _chunk("t1", "y"))  # live, woken by NOTIFY
    await a.publish("t1", 5, _status("t1", TaskState.COMPLETED))
    got = await _take(follower, 2)
    assert [(i, _text(e)) for i, e in got] == [(4, "y"), (5, TaskState.COMPLETED.value)]
    await follower.aclose()  # type: ignore[attr-defined]
    replayed = b.follow("t1", 3, 5)
    assert [i for i, _ in await _take(replayed, 2)] == [4, 5]
    await replayed.aclose()  # type: ignore[attr-defined]


async def test_followers_of_one_task_share_one_read_per_event(
    pair: tuple[PostgresTaskChannel, PostgresTaskChannel], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twenty followers of one task on B, woken by each of A's events, read the event
    rows once between them (not one query each), and each gets every event in order."""
    a, b = pair
    await a.publish("t-many", 2, _chunk("t-many", "0"), previous=1)
    followers = [b.follow("t-many", 2, 2) for _ in range(20)]
    waiting = [asyncio.ensure_future(anext(f)) for f in followers]
    await asyncio.sleep(0.3)  # every follower has replayed (nothing) and waits
    assert not any(w.done() for w in waiting)
    reads: list[str] = []
    rows_on = PostgresTaskChannel._rows_on

    async def counted(
        self: PostgresTaskChannel, conn: object, task_id: str, after: tuple[int, int]
    ) -> list[tuple[object, ...]]:
        reads.append(task_id)
        return await rows_on(self, conn, task_id, after)

    monkeypatch.setattr(PostgresTaskChannel, "_rows_on", counted)
    got: list[list[int]] = [[] for _ in followers]
    for version in range(3, 8):
        await a.publish("t-many", version, _chunk("t-many", str(version)))
        items = await asyncio.wait_for(asyncio.gather(*waiting), BOUND)
        for ids, (event_id, _) in zip(got, items, strict=True):
            ids.append(event_id)
        if version < 7:  # each follower reads once more, then waits for the next event
            waiting = [asyncio.ensure_future(anext(f)) for f in followers]
    assert all(ids == [3, 4, 5, 6, 7] for ids in got)
    # Shared: a read per wake-up and one as they wait again (one each would be 200).
    assert len(reads) <= 15, len(reads)
    for follower in followers:
        await follower.aclose()  # type: ignore[attr-defined]


async def test_end_mark_and_follow_from_the_current_version(
    pair: tuple[PostgresTaskChannel, PostgresTaskChannel],
) -> None:
    a, b = pair
    await a.publish("t2", 2, _status("t2", TaskState.WORKING), previous=1)
    follower = b.follow("t2", 1, 2)
    assert [i for i, _ in await _take(follower, 1)] == [2]
    await a.publish_end("t2", 2)  # the run ended, the task left open
    assert await _take(follower, 1) == [(2, None)]
    await follower.aclose()  # type: ignore[attr-defined]
    late = b.follow("t2", 2, 2)  # an end mark at ``after`` itself is not news
    await a.publish("t2", 3, _chunk("t2", "z"))
    assert [(i, _text(e)) for i, e in await _take(late, 1)] == [(3, "z")]
    await late.aclose()  # type: ignore[attr-defined]


async def test_a_hole_before_the_first_retained_event_is_reported(
    pair: tuple[PostgresTaskChannel, PostgresTaskChannel],
) -> None:
    a, b = pair
    await a.publish("t3", 5, _chunk("t3", "a"), previous=4)  # nothing known before 4
    with pytest.raises(EventsLost):
        await anext(b.follow("t3", 3, 5))
    await a.publish("t4", 5, _chunk("t4", "a"))  # previous unknown: a hole for anyone before
    with pytest.raises(EventsLost):
        await anext(b.follow("t4", 4, 5))
    ok = b.follow("t3", 4, 5)
    assert [i for i, _ in await _take(ok, 1)] == [5]
    await ok.aclose()  # type: ignore[attr-defined]


async def test_retention_by_count_trims_the_oldest(postgres_schema: str) -> None:
    store, channel = await _channel(f"{POSTGRES_URL}?schema={postgres_schema}&stream_max_events=4")
    try:
        assert channel.stream_max_events == 4
        for i in range(1, 21):
            await channel.publish("t", i, _chunk("t", str(i)), previous=i - 1)
        async with await store.database.connection() as conn:
            cur = await conn.execute(
                f'SELECT count(*) FROM "{postgres_schema}".a2a_events WHERE task_id = %s', ("t",)
            )
            kept = (await cur.fetchone())[0]
        assert 4 <= kept <= 5, kept
        with pytest.raises(EventsLost):
            await anext(channel.follow("t", 1, 20))
        recent = channel.follow("t", 17, 20)
        assert [i for i, _ in await _take(recent, 3)] == [18, 19, 20]
        await recent.aclose()  # type: ignore[attr-defined]
    finally:
        await store.aclose()


async def test_retention_by_time_then_purge(postgres_schema: str) -> None:
    store, channel = await _channel(f"{POSTGRES_URL}?schema={postgres_schema}&stream_ttl=1")
    try:
        await channel.publish("t", 2, _chunk("t", "a"), previous=1)
        await channel.publish("t", 3, _chunk("t", "b"))
        await asyncio.sleep(1.3)
        with pytest.raises(EventsLost):
            await anext(channel.follow("t", 1, 3))  # expired, though not yet purged
        assert await channel.purge() == 2
        with pytest.raises(EventsLost):
            await anext(channel.follow("t", 1, 3))
        # A new event after expiry starts a new record from the publisher's previous id.
        await channel.publish("t", 4, _chunk("t", "c"), previous=3)
        resumed = channel.follow("t", 3, 4)
        assert [(i, _text(e)) for i, e in await _take(resumed, 1)] == [(4, "c")]
        await resumed.aclose()  # type: ignore[attr-defined]
    finally:
        await store.aclose()


async def test_notify_payload_is_small_and_long_task_ids_work(
    pair: tuple[PostgresTaskChannel, PostgresTaskChannel],
) -> None:
    a, b = pair
    task_id = "long-" + "x" * 9000  # longer than a NOTIFY payload may be
    spy = await psycopg.AsyncConnection.connect(a.database.conninfo, autocommit=True)
    try:
        await spy.execute(sql.SQL("LISTEN {}").format(sql.Identifier(a.notify_channel)))
        follower = b.follow(task_id, 1, 1)
        big = "y" * 20_000  # an event far above the payload limit
        await a.publish(task_id, 2, _chunk(task_id, big), previous=1)
        assert [(i, _text(e)) for i, e in await _take(follower, 1)] == [(2, big)]
        await follower.aclose()  # type: ignore[attr-defined]
        payloads = []
        async for notify in spy.notifies(timeout=BOUND, stop_after=1):
            payloads.append(notify.payload)
        assert len(payloads) == 1
        assert payloads[0].startswith("e 2 #")
        assert len(payloads[0]) < 100, "the payload names the task, never carries the event"
    finally:
        await spy.close()


class _Listener:
    def __init__(self) -> None:
        self.asked: asyncio.Queue[str] = asyncio.Queue()

    async def cancel_requested(self, task_id: str) -> None:
        await self.asked.put(task_id)


async def test_cancel_reaches_the_other_instance(
    pair: tuple[PostgresTaskChannel, PostgresTaskChannel],
) -> None:
    a, b = pair
    on_a = _Listener()
    a.attach(on_a)
    await a.start()
    await b.request_cancel("task-on-a")
    assert await asyncio.wait_for(on_a.asked.get(), BOUND) == "task-on-a"
    a.detach(on_a)


async def test_the_listener_reconnects_and_followers_catch_up(
    pair: tuple[PostgresTaskChannel, PostgresTaskChannel],
) -> None:
    a, b = pair
    b.ping_seconds = 0.2
    on_b = _Listener()
    b.attach(on_b)
    await a.publish("t5", 2, _chunk("t5", "before"), previous=1)
    follower = b.follow("t5", 1, 2)
    assert [i for i, _ in await _take(follower, 1)] == [2]
    pid = b.listener_pid
    assert pid is not None
    async with await a.database.connection() as conn:
        await conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
    # Published while B's listener may be down: B catches up from the table.
    await a.publish("t5", 3, _chunk("t5", "during"))
    assert [(i, _text(e)) for i, e in await _take(follower, 1)] == [(3, "during")]

    for _ in range(int(BOUND / 0.05)):  # the listener comes back on a new connection
        if b.listener_pid not in (None, pid):
            break
        await asyncio.sleep(0.05)
    assert b.listener_pid not in (None, pid)
    assert b.reconnects >= 1
    await a.publish("t5", 4, _chunk("t5", "after"))
    assert [(i, _text(e)) for i, e in await _take(follower, 1)] == [(4, "after")]
    await a.request_cancel("t5")  # cancels reach the new connection too
    assert await asyncio.wait_for(on_b.asked.get(), BOUND) == "t5"
    await follower.aclose()  # type: ignore[attr-defined]


async def test_closing_the_channel_ends_its_followers(postgres_schema: str) -> None:
    store, channel = await _channel(f"{POSTGRES_URL}?schema={postgres_schema}")
    await channel.publish("t", 2, _chunk("t", "a"), previous=1)
    follower = channel.follow("t", 2, 2)
    waiting = asyncio.ensure_future(anext(follower))
    await asyncio.sleep(0.2)
    assert not waiting.done()
    await store.aclose()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(waiting, BOUND)


def _entry(task_id: str, config_id: str, url: str = "https://example.com/hook") -> PushConfigEntry:
    config = TaskPushNotificationConfig(task_id=task_id, id=config_id, url=url, token="secret")
    return PushConfigEntry(config=config, version="1.0", created_ns=1)


async def test_push_configs_are_shared_and_bounded(
    pair: tuple[PostgresTaskChannel, PostgresTaskChannel],
) -> None:
    a, b = pair
    on_a, on_b = a.push_configs(), b.push_configs()
    assert on_a is not None
    assert on_b is not None
    await on_a.put(_entry("t", "one"))
    await on_a.put(_entry("t", "two"))
    await on_b.put(_entry("t", "one", "https://example.com/other"))  # replaced in place
    found = await on_b.get("t", "one")
    assert found is not None
    assert found.config.url == "https://example.com/other"
    assert found.config.token == "secret"
    assert [e.config_id for e in await on_a.list("t")] == ["one", "two"]
    for i in range(14):
        await on_a.put(_entry("t", f"n{i}"))
    with pytest.raises(InvalidParamsError):
        await on_b.put(_entry("t", "one-too-many"))
    await on_b.put(_entry("t", "two", "https://example.com/2"))  # replacing stays allowed
    assert await on_b.get("t", "bad\x00id") is None
    with pytest.raises(InvalidParamsError):
        await on_b.put(_entry("t", "bad\x00id"))
    assert await on_b.delete("t", "one")
    assert not await on_b.delete("t", "one")
    assert await on_a.get("t", "one") is None
    assert await on_a.delete_task("t") == 15
    assert await on_b.list("t") == []


def test_url_retention_options() -> None:
    store = open_task_store("postgresql://h/db?stream_max_events=7&stream_ttl=60&schema=x")
    assert isinstance(store, PostgresTaskStore)
    channel = store.event_channel()
    assert (channel.stream_max_events, channel.stream_ttl) == (7, 60)
    assert store.conninfo == "postgresql://h/db"


async def test_an_event_saved_but_never_published_is_a_hole_followers_notice(
    pair: tuple[PostgresTaskChannel, PostgresTaskChannel],
) -> None:
    """An instance killed between saving event 3 and publishing it: 4 arrives after 2.

    The survivor settling the task publishes 4 with ``previous=3``: followers get 1
    and 2, then ``EventsLost`` (the service then sends the Task), never 4 as if
    nothing were missing. A follower from 3 on misses nothing.
    """
    a, b = pair
    await a.publish("t", 1, _status("t", TaskState.WORKING), 0)
    await a.publish("t", 2, _status("t", TaskState.WORKING), 1)
    live = b.follow("t", 2, 2)
    waiting = asyncio.ensure_future(anext(live))
    await asyncio.sleep(0.2)  # waiting for a wake-up
    await a.publish("t", 4, _status("t", TaskState.FAILED), 3)  # 3 was never published
    with pytest.raises(EventsLost):
        await asyncio.wait_for(waiting, BOUND)
    replay = b.follow("t", 0, 4)
    assert [i for i, _ in await _take(replay, 2)] == [1, 2]
    with pytest.raises(EventsLost):
        await anext(replay)
    after_hole = b.follow("t", 3, 4)
    assert [(i, _text(e)) for i, e in await _take(after_hole, 1)] == [(4, TaskState.FAILED.value)]
    await a.publish_end("t", 6)  # an end mark is not a hole
    assert await _take(after_hole, 1) == [(6, None)]
    await after_hole.aclose()  # type: ignore[attr-defined]
