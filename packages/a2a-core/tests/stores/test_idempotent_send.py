"""Idempotent SendMessage over real sockets: a retried messageId gets the same task, one run.

Every store that remembers sends is checked (memory, SQLite, Redis,
PostgreSQL); with Redis and PostgreSQL the retry also goes to another
instance on the same store.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from a2a_core import A2AClient, running_server
from a2a_core.adapters import open_task_store
from a2a_core.server import AgentExecutor, RequestContext, TaskUpdater
from a2a_core.server.manager import ManagerConfig
from a2a_core.stores import MemoryTaskStore
from a2a_core.stores.cluster import SentMessages, send_key
from a2a_core.types import Message, Part, Role, Task, TaskState
from store_support import POSTGRES_URL, REDIS_URL

ON = ManagerConfig(send_retention_seconds=3600)


class Counting(AgentExecutor):
    """Counts its runs; ``reply`` answers with a direct message, anything else with a task."""

    def __init__(self) -> None:
        self.runs = 0

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        self.runs += 1
        if context.text == "reply":
            await updater.reply("a direct reply")
            return
        await updater.start_work()
        await asyncio.sleep(0.2)
        await updater.add_artifact(f"run {self.runs}", name="out")
        await updater.complete()


def _message(message_id: str, text: str = "do it") -> Message:
    return Message(message_id=message_id, role=Role.USER, parts=[Part(text=text)])


@pytest.fixture(params=["memory", "sqlite", "redis", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "memory":
        return "memory://"
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'tasks.db'}"
    if request.param == "redis":
        return f"{REDIS_URL}?prefix={request.getfixturevalue('redis_prefix')}"
    return f"{POSTGRES_URL}?schema={request.getfixturevalue('postgres_schema')}"


@pytest.fixture(params=["redis", "postgres"])
def shared_url(request: pytest.FixtureRequest) -> str:
    if request.param == "redis":
        return f"{REDIS_URL}?prefix={request.getfixturevalue('redis_prefix')}"
    return f"{POSTGRES_URL}?schema={request.getfixturevalue('postgres_schema')}"


async def test_a_retried_send_returns_the_same_task_without_a_second_run(store_url: str) -> None:
    agent = Counting()
    async with (
        running_server(agent, store_url=store_url, config=ON) as server,
        await A2AClient.connect(server.url) as client,
    ):
        first = await client.send(_message("m-1"))
        again = await client.send(_message("m-1"))
        assert first.task is not None
        assert again.task is not None
        assert again.task.id == first.task.id
        assert again.state is TaskState.COMPLETED
        assert again.text == first.text == "run 1"
        assert agent.runs == 1
        # Concurrent retries while the first is still running: still one run.
        results = await asyncio.gather(*(client.send(_message("m-2")) for _ in range(4)))
        assert {r.task.id for r in results if r.task is not None} == {results[0].task.id}  # type: ignore[union-attr]
        assert agent.runs == 2
        # The same messageId with other content is another send, not a retry.
        other = await client.send(_message("m-1", "something else"))
        assert other.task is not None
        assert other.task.id != first.task.id
        assert agent.runs == 3
        # Another messageId is another send; a streamed retry follows the same task.
        third = await client.send(_message("m-3"))
        assert third.task is not None
        assert third.task.id != first.task.id
        events = [e async for e in client.stream(_message("m-3"))]
        assert len(events) == 1
        assert isinstance(events[0], Task)
        assert events[0].id == third.task.id
        assert agent.runs == 4


async def test_a_direct_reply_is_not_remembered_so_a_retry_runs_again(store_url: str) -> None:
    agent = Counting()
    async with (
        running_server(agent, store_url=store_url, config=ON) as server,
        await A2AClient.connect(server.url) as client,
    ):
        assert (await client.send(_message("r-1", "reply"))).text == "a direct reply"
        assert (await client.send(_message("r-1", "reply"))).text == "a direct reply"
        assert agent.runs == 2


async def test_off_by_default_and_keys_keep_principals_and_contents_apart(tmp_path: Path) -> None:
    agent = Counting()
    url = f"sqlite:///{tmp_path / 'tasks.db'}"
    async with (
        running_server(agent, store_url=url) as s,
        await A2AClient.connect(s.url) as client,
    ):
        assert s.service.sends is None
        one = await client.send(_message("same"))
        two = await client.send(_message("same"))
        assert one.task is not None
        assert two.task is not None
        assert one.task.id != two.task.id
        assert agent.runs == 2
    assert send_key("alice", "m") != send_key("bob", "m")
    assert send_key(None, "m") != send_key("", "m")
    assert send_key("alice", "m", "one") != send_key("alice", "m", "two")


async def test_a_retry_through_another_instance_gets_the_first_instances_task(
    shared_url: str,
) -> None:
    agent_a, agent_b = Counting(), Counting()
    async with (
        running_server(agent_a, store_url=shared_url, config=ON) as a,
        running_server(agent_b, store_url=shared_url, config=ON) as b,
        await A2AClient.connect(a.url) as to_a,
        await A2AClient.connect(b.url) as to_b,
    ):
        first = await to_a.send(_message("x-1"))
        retried = await to_b.send(_message("x-1"))
        assert first.task is not None
        assert retried.task is not None
        assert retried.task.id == first.task.id
        assert retried.text == "run 1"
        assert (agent_a.runs, agent_b.runs) == (1, 0)
        # Racing the same messageId through both instances: one run in all.
        both = await asyncio.gather(to_a.send(_message("x-2")), to_b.send(_message("x-2")))
        ids = {r.task.id for r in both if r.task is not None}
        assert len(ids) == 1
        assert agent_a.runs + agent_b.runs == 2


class Stalled(AgentExecutor):
    """Every send is a task; the agent says nothing until ``gate`` opens."""

    starts_task_at_once = True

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.gate = asyncio.Event()

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        self.started.set()
        await self.gate.wait()
        await updater.complete()


async def test_a_retry_of_a_just_started_send_finds_its_task_without_polling(
    store_url: str,
) -> None:
    """The first send's task is written when its run starts: a retry made before the agent
    said anything answers at once with it, and ListTasks shows it."""
    agent = Stalled()
    async with (
        running_server(agent, store_url=store_url, config=ON) as server,
        await A2AClient.connect(server.url) as client,
    ):
        first = asyncio.create_task(client.send(_message("s-1")))
        try:
            await asyncio.wait_for(agent.started.wait(), 10)
            again = await asyncio.wait_for(client.send(_message("s-1"), blocking=False), 1)
            assert again.task is not None
            assert again.state is TaskState.SUBMITTED
            listed = await client.list_tasks()
            assert [t.id for t in listed.tasks] == [again.task.id]
        finally:
            agent.gate.set()
        done = await asyncio.wait_for(first, 10)
        assert done.task is not None
        assert done.task.id == again.task.id


async def test_a_retry_through_another_instance_finds_a_just_started_task(
    shared_url: str,
) -> None:
    agent_a, agent_b = Stalled(), Stalled()
    async with (
        running_server(agent_a, store_url=shared_url, config=ON) as a,
        running_server(agent_b, store_url=shared_url, config=ON) as b,
        await A2AClient.connect(a.url) as to_a,
        await A2AClient.connect(b.url) as to_b,
    ):
        first = asyncio.create_task(to_a.send(_message("s-2")))
        try:
            await asyncio.wait_for(agent_a.started.wait(), 10)
            again = await asyncio.wait_for(to_b.send(_message("s-2"), blocking=False), 1)
            assert again.task is not None
            assert again.state is TaskState.SUBMITTED
        finally:
            agent_a.gate.set()
        done = await asyncio.wait_for(first, 10)
        assert done.task is not None
        assert done.task.id == again.task.id
        assert not agent_b.started.is_set()


@pytest.fixture
async def records(store_url: str) -> AsyncIterator[SentMessages]:
    store = open_task_store(store_url)
    assert isinstance(store, SentMessages)
    yield store
    await store.aclose()


async def test_records_expire_and_are_bounded(records: SentMessages) -> None:
    now = time.time()
    assert await records.remember_send("k1", "t1", now, 10) is None
    assert await records.remember_send("k1", "t2", now + 1, 10) == "t1"
    assert await records.remember_send("k1", "t3", now + 11, 10) is None  # expired: replaced
    assert await records.remember_send("k1", "t4", now + 12, 10) == "t3"
    await records.forget_send("k1", "other")  # names another task: kept
    assert await records.remember_send("k1", "t5", now + 12, 10) == "t3"
    await records.forget_send("k1", "t3")
    assert await records.remember_send("k1", "t6", now + 12, 10) is None


async def test_the_memory_store_keeps_at_most_max_sends() -> None:
    store = MemoryTaskStore(max_sends=3)
    now = time.time()
    for i in range(5):
        assert await store.remember_send(f"k{i}", f"t{i}", now + i, 60) is None
    assert await store.remember_send("k0", "new", now + 5, 60) is None  # dropped: oldest
    assert await store.remember_send("k4", "new", now + 5, 60) == "t4"


class Gated(AgentExecutor):
    """Works until released; ``ask`` pauses for input instead. Counts its runs."""

    def __init__(self) -> None:
        self.runs = 0
        self.started = asyncio.Event()
        self.gate = asyncio.Event()

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        self.runs += 1
        if context.text == "ask":
            await updater.require_input("Which one?")
            return
        await updater.start_work()
        self.started.set()
        await self.gate.wait()
        await updater.add_artifact("finished", name="out")
        await updater.complete()


def _fast(instance: str) -> ManagerConfig:
    return ManagerConfig(
        instance_id=instance,
        send_retention_seconds=3600,
        lease_seconds=1.0,
        lease_renew_seconds=0.2,
        orphan_sweep_seconds=0.2,
        shutdown_grace_seconds=1.0,
    )


async def test_a_blocking_retry_through_another_instance_waits_for_the_task_to_end(
    shared_url: str,
) -> None:
    """The retry finds the task WORKING on A: it answers when the task completes (or pauses,
    or fails when A died), as the first send would have, not with a snapshot at once."""
    agent_a, agent_b = Gated(), Gated()
    async with (
        running_server(agent_a, store_url=shared_url, config=_fast("A")) as a,
        running_server(agent_b, store_url=shared_url, config=_fast("B")) as b,
        await A2AClient.connect(a.url) as to_a,
        await A2AClient.connect(b.url) as to_b,
    ):
        first = asyncio.create_task(to_a.send(_message("g-1")))
        await asyncio.wait_for(agent_a.started.wait(), 10)
        retry = asyncio.create_task(to_b.send(_message("g-1")))
        immediate = await to_b.send(_message("g-1"), blocking=False)  # non-blocking: at once
        assert immediate.state is TaskState.WORKING
        await asyncio.sleep(0.5)
        assert not retry.done(), "the blocking retry answered before the task ended"
        agent_a.gate.set()
        answered = await asyncio.wait_for(retry, 10)
        original = await asyncio.wait_for(first, 10)
        assert answered.task is not None
        assert original.task is not None
        assert answered.task.id == original.task.id
        assert answered.state is TaskState.COMPLETED
        assert answered.text == original.text == "finished"
        assert (agent_a.runs, agent_b.runs) == (1, 0)
        # A paused task: the retry answers with the question at once.
        asked = await to_a.send(_message("g-2", "ask"))
        assert asked.state is TaskState.INPUT_REQUIRED
        again = await asyncio.wait_for(to_b.send(_message("g-2", "ask")), 10)
        assert again.state is TaskState.INPUT_REQUIRED
        assert again.task is not None
        assert asked.task is not None
        assert again.task.id == asked.task.id
        # A dies mid-task: the retry through B ends when B settles the task FAILED.
        agent_a.gate.clear()
        agent_a.started.clear()
        lost = asyncio.create_task(to_a.send(_message("g-3")))
        await asyncio.wait_for(agent_a.started.wait(), 10)
        retry = asyncio.create_task(to_b.send(_message("g-3")))
        await asyncio.sleep(0.3)
        assert not retry.done()
        leases = a.service.manager.leases
        assert leases is not None
        leases.keeper.stop_renewing()
        failed = await asyncio.wait_for(retry, 20)
        assert failed.state is TaskState.FAILED
        assert "stopped" in (failed.task.status.message.parts[0].text or "")  # type: ignore[union-attr]
        assert agent_b.runs == 0
        lost.cancel()
