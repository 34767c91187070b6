"""A silent task followed through another instance, over real processes on the default URLs.

Two ``a2a serve`` processes share one backend (``redis://`` and
``postgresql://`` as an operator writes them, nothing about timeouts in the
URL). Instance A runs a task whose agent says nothing for 12 s, longer than
every read timeout involved (the Redis client's 5 s socket timeout, the
channel's 5 s ``XREAD BLOCK``, the PostgreSQL listener's pings). Through
instance B a client subscribes to it and another retries the same send
(blocking): both must wait out the silence and get the finished task, never
an internal error.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack, ExitStack

import pytest
from a2a_core import A2AClient
from a2a_core.types import Message, Part, Role, TaskArtifactUpdateEvent, TaskState
from cli_support import (  # pyright: ignore[reportMissingImports] - tests/cli/cli_support.py
    AGENTS_FILE,
    ServeProcess,
)

SILENCE = 12.0
"""Seconds the agent says nothing: above every read timeout of both backends."""

pytestmark = pytest.mark.timeout(120)


async def test_a_task_silent_for_12_s_is_followed_through_another_instance(
    cluster_url: str,
) -> None:
    args = [
        f"{AGENTS_FILE}:ScriptedAgent",
        "--port",
        "0",
        "--no-playground",
        "--store",
        cluster_url,
        "--send-retention-seconds",
        "600",
    ]
    with ExitStack() as processes:  # each stopped by its PID at the end, whatever happens
        procs = [processes.enter_context(ServeProcess(args)) for _ in range(2)]
        url_a, url_b = await asyncio.gather(*(asyncio.to_thread(p.start, 60.0) for p in procs))
        processes.callback(lambda: print(*(p.errors() for p in procs), sep="\n"))  # on failure
        async with AsyncExitStack() as stack:
            a = await stack.enter_async_context(await A2AClient.connect(url_a, timeout=60.0))
            b = await stack.enter_async_context(await A2AClient.connect(url_b, timeout=60.0))
            message = Message(
                message_id="silent-1", role=Role.USER, parts=[Part(text=f"count 1 {SILENCE}")]
            )
            sent = await a.send(message, blocking=False)
            assert sent.task is not None
            assert sent.state in (TaskState.SUBMITTED, TaskState.WORKING)

            async def subscribed() -> list[object]:
                return [event async for event in b.subscribe(sent.task_id or "")]

            loop = asyncio.get_running_loop()
            started = loop.time()
            events, retried = await asyncio.gather(subscribed(), b.send(message))
            waited = loop.time() - started
            assert waited >= SILENCE - 1.0, f"the task ended after {waited:.1f} s"

            # The blocking retry through B: the same task, finished.
            assert retried.task_id == sent.task_id
            assert retried.state is TaskState.COMPLETED
            assert retried.text == "0;"
            # The subscription through B: the chunk after the silence, then the end.
            chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
            assert ["".join(p.text or "" for p in c.artifact.parts) for c in chunks] == ["0;"]
            final = await b.get_task(sent.task_id or "")
            assert final.status.state is TaskState.COMPLETED
        for proc in procs:
            assert "Traceback" not in proc.errors(), proc.errors()


class _Cancels:
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def cancel_requested(self, task_id: str) -> None:
        self.asked.append(task_id)


async def test_redis_reads_outlast_a_short_socket_timeout_in_the_url(redis_prefix: str) -> None:
    """The channel owns its waiting reads' timeouts: ``socket_timeout=0.3`` in the URL cuts
    neither a follower waiting 1.5 s for the next event nor the cancel subscription."""
    from a2a_core.adapters import open_task_store
    from a2a_core.stores.redis import RedisTaskStore
    from a2a_core.types import TaskStatus, TaskStatusUpdateEvent
    from store_support import REDIS_URL

    store = open_task_store(f"{REDIS_URL}?prefix={redis_prefix}&socket_timeout=0.3")
    assert isinstance(store, RedisTaskStore)
    channel = store.event_channel()
    cancels = _Cancels()
    channel.attach(cancels)
    try:
        await channel.start()
        working = TaskStatusUpdateEvent(
            task_id="t", context_id="c", status=TaskStatus.now(TaskState.WORKING)
        )
        await channel.publish("t", 1, working, 0)
        follower = channel.follow("t", 1, 1)
        waiting = asyncio.ensure_future(anext(follower))
        await asyncio.sleep(1.5)  # five socket timeouts, well within one XREAD BLOCK
        assert not waiting.done(), waiting
        await channel.publish("t", 2, working, 1)
        event_id, event = await asyncio.wait_for(waiting, 10)
        assert (event_id, event) == (2, working)
        await channel.request_cancel("t")
        for _ in range(500):
            if cancels.asked:
                break
            await asyncio.sleep(0.01)
        assert cancels.asked == ["t"]
    finally:
        await store.aclose()


async def test_a_redis_read_that_times_out_is_re_armed(redis_prefix: str) -> None:
    """A client passed in whose pool the channel does not copy (a subclass here, as a
    sentinel's would be), with a socket timeout far below the block: each read times out,
    and the follower waits again instead of ending."""
    import redis.asyncio as redis
    from a2a_core.stores.redis import RedisTaskStore
    from a2a_core.types import TaskStatus, TaskStatusUpdateEvent
    from store_support import REDIS_HOST, REDIS_PORT

    class OwnPool(redis.ConnectionPool):
        pass

    pool = OwnPool(host=REDIS_HOST, port=REDIS_PORT, socket_timeout=0.3)
    client = redis.Redis(connection_pool=pool)
    store = RedisTaskStore(prefix=redis_prefix, client=client)
    channel = store.event_channel()
    try:
        working = TaskStatusUpdateEvent(
            task_id="t", context_id="c", status=TaskStatus.now(TaskState.WORKING)
        )
        await channel.publish("t", 1, working, 0)
        follower = channel.follow("t", 1, 1)
        waiting = asyncio.ensure_future(anext(follower))
        await asyncio.sleep(1.5)  # at least two reads timed out
        assert not waiting.done(), waiting
        await channel.publish("t", 2, working, 1)
        assert await asyncio.wait_for(waiting, 10) == (2, working)
    finally:
        await store.aclose()
        await client.aclose()
        await pool.disconnect()
