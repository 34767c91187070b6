"""Run leases and crash recovery: no task stays WORKING after its instance died.

Store level: every store that keeps leases (SQLite, Redis, PostgreSQL) takes,
refuses, renews and hands over leases the same way. Service level: two
instances in one process share a Redis or PostgreSQL store; one stops
renewing (a simulated death) and the other settles its task FAILED, ending
the streams that follow it. ``sqlite://`` is killed for real (``kill -9`` of
``a2a serve``) and settles the task at its next start.
"""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from a2a_core import A2AClient, EchoAgent, running_server
from a2a_core.adapters import open_task_store
from a2a_core.compose.serve import RunningServer
from a2a_core.errors import UnsupportedOperationError
from a2a_core.server import AgentExecutor, RequestContext, TaskUpdater
from a2a_core.server.leases import LeaseKeeper
from a2a_core.server.manager import ManagerConfig
from a2a_core.stores.cluster import Lease, TaskLeases
from a2a_core.testing.fakes import make_task
from a2a_core.types import Task, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent
from cli_support import (  # pyright: ignore[reportMissingImports] - tests/cli/cli_support.py
    AGENTS_FILE,
    ServeProcess,
)
from store_support import POSTGRES_URL, REDIS_URL

ALICE = "alice"


def keeper_of(server: RunningServer) -> LeaseKeeper:
    """The lease keeper of a server on a store that keeps leases."""
    leases = server.service.manager.leases
    assert leases is not None
    return leases.keeper


def fast(instance: str | None = None) -> ManagerConfig:
    """Short leases, renewals and sweeps, so a death is noticed within about a second."""
    return ManagerConfig(
        instance_id=instance,
        lease_seconds=1.0,
        lease_renew_seconds=0.2,
        orphan_sweep_seconds=0.2,
        shutdown_grace_seconds=1.0,
    )


@pytest.fixture(params=["sqlite", "redis", "postgres"])
def lease_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
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


@pytest.fixture
async def leases(lease_url: str) -> AsyncIterator[TaskLeases]:
    store = open_task_store(lease_url)
    assert isinstance(store, TaskLeases)
    yield store
    await store.aclose()


# -- the store contract -------------------------------------------------------------------


async def test_a_live_lease_is_refused_to_others_and_extended_for_its_instance(
    leases: TaskLeases,
) -> None:
    now = time.time()
    assert await leases.acquire_lease("t1", ALICE, "A", now + 30, now) is None
    held = await leases.acquire_lease("t1", None, "B", now + 30, now)
    assert held == Lease("t1", ALICE, "A", now + 30)
    assert await leases.acquire_lease("t1", ALICE, "A", now + 60, now) is None  # extend own
    assert await leases.lease_of("t1") == Lease("t1", ALICE, "A", now + 60)
    assert await leases.renew_leases("A", ["t1", "gone"], now + 90) == ["gone"]
    assert await leases.renew_leases("B", ["t1"], now + 90) == ["t1"]  # not B's
    assert (await leases.lease_of("t1")) == Lease("t1", ALICE, "A", now + 90)
    assert await leases.expired_leases(now + 89, 10) == []
    await leases.release_lease("t1", "B")  # not B's: kept
    assert await leases.lease_of("t1") is not None
    await leases.release_lease("t1", "A")
    assert await leases.lease_of("t1") is None


async def test_an_expired_lease_is_taken_once_and_can_be_reacquired(leases: TaskLeases) -> None:
    now = time.time()
    for i in range(3):
        assert await leases.acquire_lease(f"t{i}", None, "A", now + 1 + i, now) is None
    expired = await leases.expired_leases(now + 2.5, 10)
    assert [(x.task_id, x.owner, x.instance) for x in expired] == [
        ("t0", None, "A"),
        ("t1", None, "A"),
    ]
    assert await leases.acquire_lease("t0", None, "B", now + 30, now + 2.5) is None  # expired
    # Of many sweepers, exactly one takes an expired lease: handed to it, not removed.
    claims = [expired[1].settling_by(f"S{i}") for i in range(6)]
    taken = await asyncio.gather(
        *(leases.take_expired_lease(expired[1], now + 2.5, c, now + 40) for c in claims)
    )
    assert taken.count(True) == 1
    winner = taken.index(True)
    held = await leases.lease_of("t1")
    assert held == Lease("t1", None, claims[winner], now + 40)
    assert held is not None
    assert (held.ran_on, held.settler) == ("A", f"S{winner}")
    assert await leases.acquire_lease("t1", None, "C", now + 30, now + 2.5) == held  # settling
    assert await leases.take_expired_lease(expired[0], now + 2.5, "S", now + 40) is False  # B's
    assert [x.task_id for x in await leases.expired_leases(float("inf"), 10)] == ["t2", "t0", "t1"]
    assert await leases.renew_leases("A", ["t0", "t1", "t2"], now + 99) == ["t0", "t1"]
    await leases.release_lease("t1", "A")  # no longer A's: kept
    assert await leases.lease_of("t1") == held
    await leases.release_lease("t1", claims[winner])  # the settler lets go
    assert await leases.lease_of("t1") is None


# -- two instances in one process ---------------------------------------------------------


class Blocker(AgentExecutor):
    """Works until canceled (one long model call that never reports)."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work("thinking")
        self.started.set()
        await asyncio.Event().wait()


async def _until(check: object, what: str, within: float = 20.0) -> None:
    deadline = time.monotonic() + within
    while not await check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def test_a_survivor_settles_the_task_of_an_instance_that_stopped_renewing(
    shared_url: str,
) -> None:
    agent_a, agent_b = Blocker(), Blocker()
    async with (
        running_server(agent_a, store_url=shared_url, config=fast("A")) as a,
        running_server(agent_b, store_url=shared_url, config=fast("B")) as b,
        await A2AClient.connect(a.url) as to_a,
        await A2AClient.connect(b.url) as to_b,
    ):
        sent = await to_a.send("work", blocking=False)
        assert sent.task is not None
        task_id = sent.task.id
        await agent_a.started.wait()
        # While A renews, B refuses to run the task a second time.
        await asyncio.sleep(1.5)  # past one lease length: renewals keep it alive
        assert (await to_b.get_task(task_id)).status.state is TaskState.WORKING
        with pytest.raises(UnsupportedOperationError, match="running on instance A"):
            await to_b.send("more", task=task_id)
        # A subscriber through B, then A "dies": it stops renewing its lease.
        events: list[object] = []

        async def follow() -> None:
            async for event in to_b.subscribe(task_id):
                events.append(event)

        follower = asyncio.create_task(follow())
        await asyncio.sleep(0.2)
        keeper_of(a).stop_renewing()

        async def failed() -> bool:
            return (await to_b.get_task(task_id)).status.state is TaskState.FAILED

        await _until(failed, "B to settle A's task")
        task = await to_b.get_task(task_id)
        assert task.status.message is not None
        text = task.status.message.parts[0].text or ""
        assert "(A) stopped" in text
        assert "settled as failed" in text
        await asyncio.wait_for(follower, 10)  # the stream through B ended with the failure
        assert isinstance(events[0], Task)
        last = events[-1]
        assert getattr(last, "status").state is TaskState.FAILED  # noqa: B009
        assert keeper_of(b).settled_count == 1
        # A new message to the settled task starts nothing, anywhere.
        for client in (to_a, to_b):
            with pytest.raises(UnsupportedOperationError, match="cannot be continued"):
                await client.send("again", task=task_id)
        assert not agent_b.started.is_set()


class Watched(Blocker):
    """A Blocker that records when its run was stopped."""

    def __init__(self) -> None:
        super().__init__()
        self.stopped = asyncio.Event()

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        try:
            await super().execute(context, updater)
        finally:
            self.stopped.set()


async def test_a_frozen_instance_whose_task_was_settled_stops_its_run_when_it_wakes(
    shared_url: str,
) -> None:
    """A froze past its lease; B settled A's task FAILED. A wakes up and renews again:
    it finds the lease gone, stops its run (slot freed), and never overwrites the FAILED
    status; a stream through A ends with that failure."""
    agent_a = Watched()
    async with (
        running_server(agent_a, store_url=shared_url, config=fast("A")) as a,
        running_server(Blocker(), store_url=shared_url, config=fast("B")) as b,
        await A2AClient.connect(a.url) as to_a,
        await A2AClient.connect(b.url) as to_b,
    ):
        sent = await to_a.send("work", blocking=False)
        assert sent.task is not None
        task_id = sent.task.id
        await agent_a.started.wait()
        stream = to_a.subscribe(task_id)
        events: list[object] = []

        async def follow() -> None:
            async for event in stream:
                events.append(event)

        follower = asyncio.create_task(follow())
        manager_a = a.service.manager
        keeper_a = keeper_of(a)
        keeper_a.stop_renewing()  # frozen: neither renews nor sweeps

        async def failed() -> bool:
            return (await to_b.get_task(task_id)).status.state is TaskState.FAILED

        await _until(failed, "B to settle A's task")
        settled = await to_b.get_task(task_id)
        run = manager_a.active_run(task_id)
        assert run is not None  # A has not noticed: its agent still runs
        assert not agent_a.stopped.is_set()
        keeper_a.resume_renewing()  # A wakes up

        async def stopped() -> bool:
            return manager_a.active_run(task_id) is None

        await _until(stopped, "A to stop the run whose lease it lost")
        await asyncio.wait_for(agent_a.stopped.wait(), 10)
        assert run.token.cancelled
        assert manager_a.active_count == 0
        await asyncio.wait_for(follower, 10)
        for client in (to_a, to_b):  # FAILED, as B settled it: not CANCELED, not rewritten
            task = await client.get_task(task_id)
            assert task.status.state is TaskState.FAILED
            assert task.status == settled.status
            assert len(task.history) == len(settled.history)
        last = events[-1]
        assert getattr(last, "status").state is TaskState.FAILED  # noqa: B009
        assert keeper_of(b).settled_count == 1
        assert await keeper_a.leases.lease_of(task_id) is None


class ChunksThenBlock(AgentExecutor):
    """Works, streams ``n`` chunks when told to, then works on until canceled."""

    def __init__(self, n: int = 20) -> None:
        self.n = n
        self.started = asyncio.Event()
        self.go = asyncio.Event()
        self.sent = asyncio.Event()

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work("thinking")
        self.started.set()
        await self.go.wait()
        for i in range(self.n):
            await updater.add_artifact(f"c{i} ", artifact_id="answer", append=i > 0)
        self.sent.set()
        await asyncio.Event().wait()


def _text(task: Task) -> str:
    return "".join(p.text or "" for a in task.artifacts for p in a.parts)


async def test_a_survivor_settles_after_the_chunks_followers_saw_but_the_store_did_not(
    shared_url: str,
) -> None:
    """A publishes each chunk at once but saves them later (here: never, the interval is
    long); it dies. B applies the chunks the channel holds past the stored version, then
    writes FAILED after them: the stored task is what the follower assembled, and its
    ids strictly increase through the failure, live and replayed."""
    agent_a = ChunksThenBlock()
    slow = dataclasses.replace(fast("A"), store_coalesce_seconds=60.0)
    async with (
        running_server(agent_a, store_url=shared_url, config=slow) as a,
        running_server(Blocker(), store_url=shared_url, config=fast("B")) as b,
        await A2AClient.connect(a.url) as to_a,
        await A2AClient.connect(b.url) as to_b,
    ):
        sent = await to_a.send("work", blocking=False)
        assert sent.task is not None
        task_id = sent.task.id
        await agent_a.started.wait()
        stream = to_b.subscribe(task_id)
        seen: list[tuple[int, object]] = []
        chunks_in = asyncio.Event()

        async def follow() -> None:
            async for event in stream:
                assert stream.last_event_id is not None
                seen.append((int(stream.last_event_id), event))
                if sum(isinstance(e, TaskArtifactUpdateEvent) for _, e in seen) == agent_a.n:
                    chunks_in.set()

        follower = asyncio.create_task(follow())
        await asyncio.sleep(0.2)
        agent_a.go.set()
        await asyncio.wait_for(chunks_in.wait(), 20)  # B's follower saw every chunk live
        held = await to_b.get_task(task_id)
        assert _text(held) == ""  # ... which the store does not hold yet
        keeper_of(a).stop_renewing()  # A dies with its chunks unsaved

        async def failed() -> bool:
            return (await to_b.get_task(task_id)).status.state is TaskState.FAILED

        await _until(failed, "B to settle A's task")
        await asyncio.wait_for(follower, 10)
        expected = "".join(f"c{i} " for i in range(agent_a.n))
        settled = await to_b.get_task(task_id)
        assert _text(settled) == expected
        ids = [event_id for event_id, _ in seen]
        assert ids == sorted(set(ids))  # strictly increasing: no repeat
        last = seen[-1][1]
        assert isinstance(last, TaskStatusUpdateEvent)
        assert last.status.state is TaskState.FAILED
        # A resubscribe from the middle replays the rest, then the failure, once each.
        chunk_ids = [i for i, e in seen if isinstance(e, TaskArtifactUpdateEvent)]
        middle = chunk_ids[9]
        replay = to_b.subscribe(task_id, last_event_id=str(middle))
        again: list[tuple[int, object]] = []
        async with asyncio.timeout(20):
            async for event in replay:
                assert replay.last_event_id is not None
                again.append((int(replay.last_event_id), event))
        assert again == [(i, e) for i, e in seen if i > middle]


class Trickle(AgentExecutor):
    """Streams a chunk every 20 ms until stopped."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work("streaming")
        self.started.set()
        for i in range(100_000):
            await updater.add_artifact(f"c{i} ", artifact_id="answer", append=i > 0)
            await asyncio.sleep(0.02)


async def _assembled(stream: Any, into: list[tuple[int, object]]) -> None:
    async for event in stream:
        into.append((int(stream.last_event_id), event))


async def test_a_frozen_instance_streaming_on_stops_at_the_settled_status(
    shared_url: str,
) -> None:
    """A keeps streaming while B settles its task (A stopped renewing, its agent did not):
    A's next chunk is refused by the channel, so it is streamed nowhere; A's run stops with
    B's FAILED. Streams through A and through B end with FAILED, ids strictly increasing,
    each holding exactly the stored task's text."""
    agent_a = Trickle()
    slow = dataclasses.replace(fast("A"), store_coalesce_seconds=60.0)  # no timed flushes
    async with (
        running_server(agent_a, store_url=shared_url, config=slow) as a,
        running_server(Blocker(), store_url=shared_url, config=fast("B")) as b,
        await A2AClient.connect(a.url) as to_a,
        await A2AClient.connect(b.url) as to_b,
    ):
        sent = await to_a.send("work", blocking=False)
        assert sent.task is not None
        task_id = sent.task.id
        await agent_a.started.wait()
        seen: dict[str, list[tuple[int, object]]] = {"a": [], "b": []}
        followers = [
            asyncio.create_task(_assembled(to_a.subscribe(task_id), seen["a"])),
            asyncio.create_task(_assembled(to_b.subscribe(task_id), seen["b"])),
        ]
        await asyncio.sleep(0.3)
        keeper_of(a).stop_renewing()  # A's agent streams on

        async def failed() -> bool:
            return (await to_b.get_task(task_id)).status.state is TaskState.FAILED

        await _until(failed, "B to settle A's task")
        await asyncio.wait_for(asyncio.gather(*followers), 10)
        manager_a = a.service.manager

        async def stopped() -> bool:
            return manager_a.active_run(task_id) is None

        await _until(stopped, "A to stop its run")  # at its next chunk, before any renewal
        stored = await to_b.get_task(task_id)
        for name, events in seen.items():
            ids = [i for i, _ in events]
            assert ids == sorted(set(ids)), name
            last = events[-1][1]
            assert isinstance(last, TaskStatusUpdateEvent), name
            assert last.status.state is TaskState.FAILED, name
            first = events[0][1]
            assert isinstance(first, Task)
            text = _text(first) + "".join(
                p.text or ""
                for _, e in events
                if isinstance(e, TaskArtifactUpdateEvent)
                for p in e.artifact.parts
            )
            assert text == _text(stored), name


async def test_a_message_to_an_orphan_settles_it_instead_of_restarting_the_agent(
    lease_url: str,
) -> None:
    store = open_task_store(lease_url)
    assert isinstance(store, TaskLeases)
    try:
        # A task left WORKING by an instance that died (its lease expired long ago).
        task = make_task("orphan", state=TaskState.WORKING)
        await store.create(task, None)
        now = time.time()
        await store.acquire_lease("orphan", None, "dead-instance", now - 5, now - 10)
    finally:
        await store.aclose()
    agent = Blocker()
    slow_sweep = ManagerConfig(orphan_sweep_seconds=600.0)
    async with (
        running_server(agent, store_url=lease_url, config=slow_sweep) as server,
        await A2AClient.connect(server.url) as client,
    ):
        await asyncio.sleep(0.2)  # the first sweep at startup may settle it: either way it ends
        with pytest.raises(UnsupportedOperationError, match=r"cannot be continued|stopped before"):
            await client.send("hello?", task="orphan")
        got = await client.get_task("orphan")
        assert got.status.state is TaskState.FAILED
        assert got.status.message is not None
        assert "(dead-instance) stopped" in (got.status.message.parts[0].text or "")
        assert not agent.started.is_set()


@pytest.mark.parametrize("message_reads", ["after the take", "before the take"])
async def test_a_message_racing_the_settler_is_refused_once_the_task_is_failed(
    lease_url: str, message_reads: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The startup sweep has taken the orphan's lease but not yet written FAILED when a
    message continuing the task arrives: it neither starts the agent nor is refused while
    the task still reads WORKING; it waits for the settler, then is refused.

    (The settler deleted the lease first: a message in that window found the task free
    and ran its agent again ("after the take"), or, having read the lease just before,
    lost the take and was refused at once, before the FAILED status existed ("before").
    A CI flake, about 1 run in 6 under load.)
    """
    store = open_task_store(lease_url)
    assert isinstance(store, TaskLeases)
    try:
        await store.create(make_task("orphan", state=TaskState.WORKING), None)
        now = time.time()
        await store.acquire_lease("orphan", None, "dead-instance", now - 5, now - 10)
    finally:
        await store.aclose()
    read, taken, gate, saw_settler = (asyncio.Event() for _ in range(4))
    kind = type(store)
    take, lease_of = kind.take_expired_lease, kind.lease_of

    async def paused_take(self: Any, lease: Lease, now: float, holder: str, until: float) -> bool:
        if message_reads == "before the take":
            await read.wait()
        got = await take(self, lease, now, holder, until)
        if got:
            taken.set()
            await gate.wait()  # the settler has the lease; FAILED is not written yet
        return got

    async def watched_lease_of(self: Any, task_id: str) -> Lease | None:
        lease = await lease_of(self, task_id)
        if lease is not None and lease.settler is not None:
            saw_settler.set()
        elif lease is not None and not read.is_set():  # the message read the dead lease
            read.set()
            await taken.wait()
        return lease

    monkeypatch.setattr(kind, "take_expired_lease", paused_take)
    monkeypatch.setattr(kind, "lease_of", watched_lease_of)
    agent = Blocker()
    slow_sweep = ManagerConfig(orphan_sweep_seconds=600.0)
    async with (
        running_server(agent, store_url=lease_url, config=slow_sweep) as server,
        await A2AClient.connect(server.url) as client,
    ):
        if message_reads == "after the take":
            await asyncio.wait_for(taken.wait(), 20)
        sending = asyncio.ensure_future(client.send("hello?", task="orphan"))
        signals = [asyncio.ensure_future(e.wait()) for e in (saw_settler, agent.started)]
        await asyncio.wait([sending, *signals], timeout=20, return_when=asyncio.FIRST_COMPLETED)
        for signal_ in signals:
            signal_.cancel()
        answered_early, ran_again = sending.done(), agent.started.is_set()
        gate.set()
        if ran_again:
            sending.cancel()
        assert not ran_again, "the agent ran again"
        assert not answered_early, "refused while the task still read WORKING"
        with pytest.raises(UnsupportedOperationError, match=r"cannot be continued|stopped before"):
            await sending
        assert not agent.started.is_set()
        got = await client.get_task("orphan")
        assert got.status.state is TaskState.FAILED
        assert got.status.message is not None
        assert "(dead-instance) stopped" in (got.status.message.parts[0].text or "")
        keeper = keeper_of(server)
        assert keeper.settled_count == 1
        assert await keeper.leases.lease_of("orphan") is None  # the settler let go


class SlowToReturn(AgentExecutor):
    """Asks a question, then takes a while to return (an agent unwinding after its pause)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.answered = asyncio.Event()

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        if context.is_continuation:
            self.answered.set()
            await updater.complete(f"answered on {self.name}")
            return
        await updater.require_input("which city?")
        await asyncio.sleep(2.0)


async def test_an_answer_through_another_instance_is_taken_while_the_pausing_run_returns(
    shared_url: str,
) -> None:
    """The client sees the question while A's agent is still returning: B takes the answer.

    (A dropped the lease only when its run ended, in the background, so B refused
    with "running on instance A": a race a LangGraph test hit in CI.)
    """
    agent_a, agent_b = SlowToReturn("A"), SlowToReturn("B")
    async with (
        running_server(agent_a, store_url=shared_url, config=fast("A")) as a,
        running_server(agent_b, store_url=shared_url, config=fast("B")) as b,
        await A2AClient.connect(a.url) as to_a,
        await A2AClient.connect(b.url) as to_b,
    ):
        paused = await to_a.send("weather please")
        assert paused.task is not None
        assert paused.task.status.state is TaskState.INPUT_REQUIRED
        assert a.service.manager.active_run(paused.task.id) is not None  # still returning
        answered = await to_b.send("Rome", task=paused.task.id)
        assert answered.task is not None
        assert answered.task.status.state is TaskState.COMPLETED
        assert agent_b.answered.is_set()
        assert not agent_a.answered.is_set()


async def test_an_answer_waits_for_a_pausing_instance_to_let_go(shared_url: str) -> None:
    """A lease another instance still has on a paused task (its pause heard through a
    follower before that instance let go) is waited for, up to the cancel grace, not
    refused at once."""
    store = open_task_store(shared_url)
    assert isinstance(store, TaskLeases)
    try:
        await store.create(make_task("paused", state=TaskState.INPUT_REQUIRED), None)
        await store.create(make_task("stuck", state=TaskState.INPUT_REQUIRED), None)
        now = time.time()
        for task_id in ("paused", "stuck"):
            await store.acquire_lease(task_id, None, "A", now + 60, now)
        config = dataclasses.replace(fast("B"), cancel_grace_seconds=1.0)
        agent = SlowToReturn("B")
        async with (
            running_server(agent, store_url=shared_url, config=config) as server,
            await A2AClient.connect(server.url) as client,
        ):

            async def let_go() -> None:
                await asyncio.sleep(0.3)
                await store.release_lease("paused", "A")

            releasing = asyncio.create_task(let_go())
            answered = await client.send("Rome", task="paused")
            await releasing
            assert answered.task is not None
            assert answered.task.status.state is TaskState.COMPLETED
            # An instance that does not let go within the grace: refused, nothing started.
            agent.answered.clear()
            with pytest.raises(UnsupportedOperationError, match="running on instance A"):
                await client.send("Rome", task="stuck")
            assert not agent.answered.is_set()
    finally:
        await store.aclose()


async def test_a_renewal_racing_a_new_run_does_not_stop_it(lease_url: str) -> None:
    """A renewal or a startup sweep that runs while a run takes its lease leaves that run alone.

    (It once listed every run, found no lease yet for the new one and stopped
    it as if another instance had taken it: a blocking send then answered with
    a task that never finished.)
    """
    async with (
        running_server(EchoAgent(), store_url=lease_url, config=fast("A")) as server,
        await A2AClient.connect(server.url) as client,
    ):
        keeper = keeper_of(server)
        backend = keeper.leases
        take = backend.acquire_lease
        renewed_while_taking: list[int] = []

        async def renew_first(*args: object) -> Lease | None:
            await keeper.renew()  # the worst moment: the run is listed, its lease not yet taken
            renewed_while_taking.append(1)
            refused = await take(*args)  # type: ignore[arg-type]
            # and the startup sweep, right after the lease is written, before the run knows
            assert await keeper.sweep(previous_lives=True) == 0
            held = await backend.lease_of(str(args[0]))
            assert held is not None, "the sweep took this instance's fresh lease"
            assert held.instance == "A"
            return refused

        backend.acquire_lease = renew_first  # type: ignore[method-assign]
        for n in range(3):
            sent = await client.send(f"hello {n}")
            assert renewed_while_taking
            assert sent.state is TaskState.COMPLETED, sent.state
            assert sent.text == f"echo: hello {n}"


async def test_a_stale_renewal_does_not_stop_a_later_run_of_the_same_task(
    shared_url: str,
) -> None:
    """A renewal that began before a run's lease was taken cannot report that run lost."""
    agent = Blocker()
    async with running_server(agent, store_url=shared_url, config=fast("A")) as server:
        manager = server.service.manager
        async with await A2AClient.connect(server.url) as client:
            before = time.monotonic()
            sent = await client.send("work", blocking=False)
            assert sent.task is not None
            await agent.started.wait()
            run = manager.active_run(sent.task.id)
            leases = manager.leases
            assert run is not None
            assert leases is not None
            assert leases.leased(run)
            leases.lost(sent.task.id, before)  # a renewal that began before the lease
            assert leases.leased(run)
            assert not run.token.cancelled
            leases.lost(sent.task.id, time.monotonic())  # began after: truly lost
            assert not leases.leased(run)
            assert run.token.cancelled


# -- sqlite: a real kill -9, and a restart --------------------------------------------------


async def test_sqlite_settles_what_a_killed_server_left_running(tmp_path: Path) -> None:
    args = [f"{AGENTS_FILE}:ScriptedAgent", "--port", "0", "--store", "sqlite:///tasks.db"]
    with ServeProcess(args, cwd=tmp_path) as proc:
        url = await asyncio.to_thread(proc.start)
        async with await A2AClient.connect(url) as client:
            sent = await client.send("slow", blocking=False)
            assert sent.task is not None
            task_id = sent.task.id

            async def working() -> bool:
                return (await client.get_task(task_id)).status.state is TaskState.WORKING

            await _until(working, "the agent to start")
        proc.stop(signal.SIGKILL)
    with ServeProcess(args, cwd=tmp_path) as proc:
        url = await asyncio.to_thread(proc.start)
        async with await A2AClient.connect(url) as client:

            async def failed() -> bool:
                return (await client.get_task(task_id)).status.state is TaskState.FAILED

            # Settled at startup: no waiting for the 30 s lease to expire.
            await _until(failed, "the restarted server to settle the task", within=10.0)
            task = await client.get_task(task_id)
            assert task.status.message is not None
            assert "stopped" in (task.status.message.parts[0].text or "")
            with pytest.raises(UnsupportedOperationError):
                await client.send("again", task=task_id)


async def test_memory_stores_keep_no_leases() -> None:
    async with running_server(Blocker(), store_url="memory://") as server:
        assert server.service.manager.leases is None
