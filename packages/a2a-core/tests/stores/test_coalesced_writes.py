"""Streamed chunks: saved together, streamed one by one, stored whole.

Every store saves held chunks together: ``sqlite://`` and ``memory://`` hold them in
memory; ``redis://`` and ``postgresql://`` (whose channel several instances share) also
publish each one to the channel at once, so other instances' followers see it now and a
survivor settling the task after a crash applies them (``WritesBehind``). Each
store serves a real server on 127.0.0.1; a real client streams a 100-chunk answer. The
store's writes are counted by wrapping the store object's own methods (the manager calls
them on the object), so the leases and the shared channel of the store stay as they are.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

import pytest
from a2a_core import AgentCardBuilder, running_server
from a2a_core.adapters import open_task_store
from a2a_core.client import A2AClient, SendResult
from a2a_core.contracts.task_store import SavesAtVersion, TaskPage, TaskQuery
from a2a_core.server import (
    A2AService,
    AgentExecutor,
    ManagerConfig,
    RequestContext,
    TaskUpdater,
)
from a2a_core.server.writers import CoalescingWriter, DirectWriter, writer_for
from a2a_core.stores import CompactMemoryTaskStore as MemoryTaskStore  # what memory:// opens
from a2a_core.stores import StoredTask, TaskStore
from a2a_core.types import Task, TaskArtifactUpdateEvent, TaskState
from store_support import POSTGRES_URL, REDIS_URL

CHUNKS = [f"tok{i} " for i in range(100)]


def _open(kind: str, request: pytest.FixtureRequest) -> TaskStore:
    if kind == "sqlite":
        return open_task_store(f"sqlite:///{request.getfixturevalue('tmp_path') / 't.db'}")
    if kind == "redis":
        return open_task_store(f"{REDIS_URL}?prefix={request.getfixturevalue('redis_prefix')}")
    if kind == "postgres":
        schema = request.getfixturevalue("postgres_schema")
        return open_task_store(f"{POSTGRES_URL}?schema={schema}")
    return open_task_store("memory://")


@pytest.fixture(params=["sqlite", "memory", "redis", "postgres"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[TaskStore]:
    made = _open(request.param, request)
    yield made
    await made.aclose()


@pytest.fixture(params=["redis", "postgres"])
async def shared_store(request: pytest.FixtureRequest) -> AsyncIterator[TaskStore]:
    made = _open(request.param, request)
    yield made
    await made.aclose()


_depth: ContextVar[int] = ContextVar("write_depth", default=0)


def _count_writes(store: TaskStore) -> list[str]:
    """Record every create/save/save_at made on ``store`` from now on (a
    redis:// save runs through save_and_then: one write, counted once)."""
    writes: list[str] = []

    def counted(name: str) -> Callable[..., Any]:
        method = getattr(store, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            depth = _depth.get()
            if depth == 0:
                writes.append(name)
            token = _depth.set(depth + 1)
            try:
                return await method(*args, **kwargs)
            finally:
                _depth.reset(token)

        return call

    # save_and_then: redis:// saving a task and publishing its event in one script.
    for name in ("create", "save", "save_at", "save_and_then"):
        if hasattr(store, name):
            setattr(store, name, counted(name))
    return writes


class Chunks(AgentExecutor):
    """Streams CHUNKS into one artifact, then completes (or, with ``pause``, waits first)."""

    def __init__(self, pause: asyncio.Event | None = None) -> None:
        self.pause = pause
        self.sent = asyncio.Event()

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        for i, chunk in enumerate(CHUNKS):
            await updater.add_artifact(chunk, artifact_id="answer", append=i > 0)
        self.sent.set()
        if self.pause is not None:
            await self.pause.wait()
        await updater.complete()


def _card() -> Any:
    return (
        AgentCardBuilder("chunks", description="streams", version="1")
        .skill("chunks", "Chunks", "streams chunks", tags=["t"])
        .jsonrpc("http://127.0.0.1/")
        .streaming()
        .build()
    )


async def _stream(
    store: TaskStore, coalesce: float, agent: Chunks | None = None
) -> tuple[list[str], str, str]:
    """Stream one answer; (chunk texts the client saw, final state, stored artifact text)."""
    service = A2AService(
        agent or Chunks(),
        _card(),
        store=store,
        config=ManagerConfig(store_coalesce_seconds=coalesce),
    )
    seen: list[str] = []
    async with (
        running_server(service) as server,
        A2AClient.for_endpoint(server.url) as client,
    ):
        state = ""
        task_id = ""
        async with asyncio.timeout(60):
            async for event in client.stream("go"):
                if isinstance(event, TaskArtifactUpdateEvent):
                    seen.extend(part.text or "" for part in event.artifact.parts)
                    task_id = event.task_id
                elif hasattr(event, "status"):
                    state = event.status.state.value  # type: ignore[union-attr]
        stored = await store.get(task_id, None)
        assert stored is not None
        text = "".join(part.text or "" for part in stored.task.artifacts[0].parts)
    return seen, state, text


async def test_a_streamed_answer_is_saved_in_a_few_writes_and_stored_whole(
    store: TaskStore,
) -> None:
    writes = _count_writes(store)
    seen, state, stored_text = await _stream(store, coalesce=1.0)
    assert seen == CHUNKS  # every chunk reached the client, in order
    assert state == TaskState.COMPLETED.value
    assert stored_text == "".join(CHUNKS)
    # The task's creation, its status changes and the chunks saved with them; a save per
    # chunk would be over 100.
    assert len(writes) <= 10, writes


async def test_without_coalescing_every_chunk_is_a_write(store: TaskStore) -> None:
    """The count above can fail: with the interval at 0 each chunk is saved on its own."""
    writes = _count_writes(store)
    seen, state, stored_text = await _stream(store, coalesce=0)
    assert seen == CHUNKS
    assert state == TaskState.COMPLETED.value
    assert stored_text == "".join(CHUNKS)
    assert len(writes) > len(CHUNKS), len(writes)


async def test_chunks_are_saved_within_the_interval_while_the_agent_waits(
    store: TaskStore,
) -> None:
    """No status change follows the chunks for a while: the interval's flush saves them."""
    pause = asyncio.Event()
    agent = Chunks(pause)
    service = A2AService(
        agent, _card(), store=store, config=ManagerConfig(store_coalesce_seconds=0.05)
    )
    async with (
        running_server(service) as server,
        A2AClient.for_endpoint(server.url) as client,
    ):
        stream = client.stream("go")
        task_id = ""
        async with asyncio.timeout(60):
            async for event in stream:
                if isinstance(event, TaskArtifactUpdateEvent):
                    task_id = event.task_id
                    if event.artifact.parts[-1].text == CHUNKS[-1]:
                        break
            await agent.sent.wait()
            text = ""
            while text != "".join(CHUNKS):  # bounded by the timeout above
                await asyncio.sleep(0.02)
                stored = await store.get(task_id, None)
                assert stored is not None
                assert not stored.task.status.state.is_terminal  # still running
                artifacts = stored.task.artifacts
                text = "".join(p.text or "" for p in artifacts[0].parts) if artifacts else ""
        pause.set()
        await stream.aclose()


async def test_held_chunks_survive_a_write_by_another_writer(store: TaskStore) -> None:
    """Another writer saves the task while chunks are held: the run's next save conflicts,
    reloads, and writes the chunks on top of the other writer's change (none is lost)."""
    pause = asyncio.Event()
    agent = Chunks(pause)
    config = ManagerConfig(store_coalesce_seconds=30.0)  # nothing flushes by itself here
    service = A2AService(agent, _card(), store=store, config=config)
    async with (
        running_server(service) as server,
        A2AClient.for_endpoint(server.url) as client,
    ):
        async with asyncio.timeout(60):
            stream = client.stream("go")
            first = await anext(aiter(stream))
            assert isinstance(first, Task)
            task_id = first.id
            await agent.sent.wait()
            before = await store.get(task_id, None)
            assert before is not None
            # The first chunk made the task; the 99 others are held, not saved yet.
            assert [p.text for p in before.task.artifacts[0].parts] == [CHUNKS[0]]
            marked = before.task.model_copy(update={"metadata": {"other": "writer"}})
            await store.save(marked, None, before.version)
            pause.set()
            async for _ in stream:
                pass
        stored = await store.get(task_id, None)  # before the server closes the store
    assert stored is not None
    assert stored.task.status.state is TaskState.COMPLETED
    assert stored.task.metadata == {"other": "writer"}
    assert "".join(p.text or "" for p in stored.task.artifacts[0].parts) == "".join(CHUNKS)


class Answers(AgentExecutor):
    """One artifact, then completes; with ``pause``, waits between the two."""

    starts_task_at_once = True  # a task from the first event, as the benchmark's echo agent

    def __init__(self, pause: asyncio.Event | None = None) -> None:
        self.pause = pause
        self.task_ids: list[str] = []
        self.answered = asyncio.Event()

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        self.task_ids.append(context.task_id)
        await updater.add_artifact("the answer", name="answer")
        self.answered.set()
        if self.pause is not None:
            await self.pause.wait()
        await updater.complete()


async def test_a_blocking_send_writes_its_task_when_its_run_starts(store: TaskStore) -> None:
    """A task is written when its run starts (version 1), its answer chunk is held, and
    the final status saves both: two writes, the last at the id of the last event."""
    writes = _count_writes(store)
    service = A2AService(Answers(), _card(), store=store)
    async with (
        running_server(service) as server,
        A2AClient.for_endpoint(server.url) as client,
    ):
        result = await asyncio.wait_for(client.send("go"), 30)
        task = result.task
        assert task is not None
        assert task.status.state is TaskState.COMPLETED
        assert [p.text for p in task.artifacts[0].parts] == ["the answer"]
        stored = await store.get(task.id, None)
    assert stored is not None
    assert stored.task == task
    assert stored.version == 3  # written at the start (1), the artifact (2), the status (3)
    assert writes[:1] == ["create"], writes
    assert len(writes) == 2, writes


@asynccontextmanager
async def _blocking_send(
    store: TaskStore, coalesce: float
) -> AsyncIterator[tuple[Answers, A2AClient, asyncio.Task[SendResult]]]:
    """A blocking send in the background, to an agent that answers and then waits for its
    ``pause`` (set on the way out, and the send awaited)."""
    pause = asyncio.Event()
    agent = Answers(pause)
    config = ManagerConfig(store_coalesce_seconds=coalesce)
    service = A2AService(agent, _card(), store=store, config=config)
    async with (
        running_server(service) as server,
        A2AClient.for_endpoint(server.url) as client,
    ):
        sending = asyncio.create_task(client.send("go"))
        try:
            async with asyncio.timeout(30):
                yield agent, client, sending
        finally:
            pause.set()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(sending, 30)


async def test_list_tasks_shows_a_running_task_before_its_first_event(
    store: TaskStore,
) -> None:
    """Written when its run starts: ListTasks shows the task while its agent has not said
    anything yet, and the coalescing interval then saves its held answer."""
    gate = asyncio.Event()
    running = asyncio.Event()

    class Slow(Answers):
        async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
            self.task_ids.append(context.task_id)
            running.set()
            await gate.wait()
            await super().execute(context, updater)

    agent = Slow(asyncio.Event())
    service = A2AService(
        agent, _card(), store=store, config=ManagerConfig(store_coalesce_seconds=0.05)
    )
    async with (
        running_server(service) as server,
        A2AClient.for_endpoint(server.url) as client,
    ):
        sending = asyncio.create_task(client.send("go"))
        try:
            async with asyncio.timeout(30):
                await running.wait()
                listed = await client.list_tasks()  # no polling: there at once
                assert [t.id for t in listed.tasks] == agent.task_ids
                assert listed.tasks[0].status.state is TaskState.SUBMITTED
                gate.set()
                await agent.answered.wait()
                text = ""
                while text != "the answer":  # the interval's flush, the agent still waiting
                    await asyncio.sleep(0.01)
                    stored = await store.get(agent.task_ids[0], None)
                    assert stored is not None
                    assert not stored.task.status.state.is_terminal
                    parts = stored.task.artifacts[0].parts if stored.task.artifacts else []
                    text = "".join(p.text or "" for p in parts)
        finally:
            gate.set()
            assert agent.pause is not None
            agent.pause.set()
        result = await asyncio.wait_for(sending, 30)
        assert result.task is not None
        assert result.task.status.state is TaskState.COMPLETED
        final = await store.get(result.task.id, None)
    assert final is not None
    assert (final.version, final.task.status.state) == (3, TaskState.COMPLETED)


async def test_a_task_with_held_chunks_can_be_canceled(store: TaskStore) -> None:
    """Canceled while its answer is held (nothing flushes by itself here): the cancel
    reaches the run, and the task is written canceled, after its artifact's id."""
    async with _blocking_send(store, coalesce=30.0) as (agent, client, sending):
        await agent.answered.wait()
        task_id = agent.task_ids[0]
        canceled = await client.cancel(task_id)
        result = await sending
        assert canceled.status.state is TaskState.CANCELED
        assert result.task is not None
        assert result.task.status.state is TaskState.CANCELED
        stored = await store.get(task_id, None)
    assert stored is not None
    assert stored.task.status.state is TaskState.CANCELED
    assert [p.text for p in stored.task.artifacts[0].parts] == ["the answer"]
    assert stored.version == 3


class BaseOnly(TaskStore):
    """A store implementing only the base contract (it keeps its tasks in a memory store)."""

    def __init__(self) -> None:
        self.inner = MemoryTaskStore()

    async def create(self, task: Task, owner: str | None) -> StoredTask:
        return await self.inner.create(task, owner)

    async def get(self, task_id: str, owner: str | None) -> StoredTask | None:
        return await self.inner.get(task_id, owner)

    async def save(self, task: Task, owner: str | None, expected_version: int) -> StoredTask:
        return await self.inner.save(task, owner, expected_version)

    async def delete(self, task_id: str, owner: str | None) -> bool:
        return await self.inner.delete(task_id, owner)

    async def list(self, query: TaskQuery, owner: str | None) -> TaskPage:
        return await self.inner.list(query, owner)


class AuditedSaves(MemoryTaskStore):
    """Counts the saves that go through ``save``: a subclass customizing it alone."""

    def __init__(self) -> None:
        super().__init__()
        self.saved = 0

    async def save(self, task: Task, owner: str | None, expected_version: int) -> StoredTask:
        self.saved += 1
        return await super().save(task, owner, expected_version)


def test_the_writer_follows_what_the_store_does() -> None:
    """Capabilities are protocols checked with ``isinstance``: a store with only the base
    contract gets the direct writer, a store that numbers saves the coalescing one, and
    a subclass overriding ``save`` alone is not sniffed (it still numbers saves)."""
    assert not isinstance(BaseOnly(), SavesAtVersion)
    assert isinstance(MemoryTaskStore(), SavesAtVersion)
    assert isinstance(AuditedSaves(), SavesAtVersion)
    task = Task(id="t", context_id="c", status={"state": "TASK_STATE_SUBMITTED"})  # type: ignore[arg-type]
    chosen = {}
    for store in (BaseOnly(), MemoryTaskStore(), AuditedSaves()):
        manager = A2AService(Chunks(), _card(), store=store).manager
        writer = writer_for(manager, task, None, 0, lambda _: None, contextlib.nullcontext())
        chosen[type(store).__name__] = type(writer)
    assert chosen == {
        "BaseOnly": DirectWriter,
        "CompactMemoryTaskStore": CoalescingWriter,
        "AuditedSaves": CoalescingWriter,
    }


async def test_a_store_with_only_the_base_contract_sees_every_chunk_saved() -> None:
    store = BaseOnly()
    writes = _count_writes(store)
    seen, state, stored_text = await _stream(store, coalesce=1.0)
    assert seen == CHUNKS
    assert state == TaskState.COMPLETED.value
    assert stored_text == "".join(CHUNKS)
    # Created with the first chunk; every later chunk, then the final status, saved.
    assert writes == ["create"] + ["save"] * len(CHUNKS), writes


async def test_a_subclass_overriding_only_save_still_saves_chunks_together() -> None:
    store = AuditedSaves()
    writes = _count_writes(store)
    seen, state, stored_text = await _stream(store, coalesce=1.0)
    assert seen == CHUNKS
    assert state == TaskState.COMPLETED.value
    assert stored_text == "".join(CHUNKS)
    assert writes == ["create", "save_at"], writes


async def test_a_shared_channel_that_writes_behind_gets_the_channel_writer(
    shared_store: TaskStore,
) -> None:
    """Channel capabilities are protocols checked with ``isinstance``, not flags: redis://
    and postgresql:// write behind (redis:// also saves an event with its task), the
    in-process channel does neither, and the run of a shared store gets the channel writer."""
    from a2a_core.contracts import SavesEvents, WritesBehind
    from a2a_core.server import MemoryTaskChannel
    from a2a_core.server.writers import ChannelWriter

    channel = shared_store.event_channel()
    assert isinstance(channel, WritesBehind)
    assert isinstance(channel, SavesEvents) == (type(shared_store).__name__ == "RedisTaskStore")
    assert not isinstance(MemoryTaskChannel(), WritesBehind | SavesEvents)
    task = Task(id="t", context_id="c", status={"state": "TASK_STATE_SUBMITTED"})  # type: ignore[arg-type]
    manager = A2AService(Chunks(), _card(), store=shared_store).manager
    writer = writer_for(manager, task, None, 0, lambda _: None, contextlib.nullcontext())
    assert type(writer) is ChannelWriter
