"""RemoteAgentExecutor: a local server fronting a remote A2A agent (a gateway)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest
from a2a_core import (
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    UnsupportedOperationError,
)
from a2a_core.client import A2AClient, RemoteAgentExecutor, RemoteSkill
from a2a_core.server import A2AService, ManagerConfig
from a2a_core.wire import Operation
from servers import (
    free_port,
    our_app,
    running,
    scripted_card,
    scripted_service,
    sdk_app,
)


async def until(check: Callable[[], Awaitable[bool]], attempts: int = 800) -> None:
    """Wait until ``check()`` holds, polling every 10 ms (the test's own timeout bounds it too)."""
    for _ in range(attempts):
        if await check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not reached in time")


async def mapped(executor: RemoteAgentExecutor, local_task_id: str) -> str:
    async def known() -> bool:
        return executor.remote_task_id(local_task_id) is not None

    await until(known)
    return executor.remote_task_id(local_task_id) or ""


class Gateway:
    """A remote scripted service, and a local service forwarding to it in process."""

    def __init__(self, streaming: bool | None = None) -> None:
        self.remote: Any = scripted_service()
        self.executor = RemoteAgentExecutor(A2AClient.in_process(self.remote), streaming=streaming)
        self.local = A2AService(self.executor, scripted_card())
        self.client = A2AClient.in_process(self.local)

    async def remote_task(self, local_task_id: str) -> Task:
        remote_id = self.executor.remote_task_id(local_task_id)
        assert remote_id is not None
        return await A2AClient.in_process(self.remote).get_task(remote_id)

    async def aclose(self) -> None:
        await self.local.aclose()
        await self.remote.aclose()


@pytest.fixture(params=[None, False], ids=["streaming", "blocking"])
async def gateway(request: pytest.FixtureRequest) -> AsyncIterator[Gateway]:
    gw = Gateway(streaming=request.param)
    yield gw
    await gw.aclose()


async def test_send_is_relayed(gateway: Gateway) -> None:
    async with asyncio.timeout(10):
        reply = await gateway.client.send("hello")
    assert reply.state is TaskState.COMPLETED
    assert reply.text == "Echo: hello"
    assert reply.task is not None
    assert reply.task.artifacts[0].name == "echo"
    # A finished local task forgets its remote task (the maps stay small).
    assert gateway.executor.remote_task_id(reply.task.id) is None


async def test_message_reply_is_relayed(gateway: Gateway) -> None:
    async with asyncio.timeout(10):
        reply = await gateway.client.send("reply here")
    assert reply.text == "Reply: reply here"
    if gateway.executor.streaming is None:
        assert reply.message is not None
    else:
        # Polling starts the remote task without blocking, and a remote server may
        # not answer such a send with a message: the reply completes a task instead.
        assert reply.done


async def test_multi_turn_maps_local_to_remote_task(gateway: Gateway) -> None:
    async with asyncio.timeout(10):
        question = await gateway.client.send("ask")
        assert question.state is TaskState.INPUT_REQUIRED
        assert question.text == "What is your name?"
        assert question.task_id is not None
        remote_before = await gateway.remote_task(question.task_id)
        assert remote_before.status.state is TaskState.INPUT_REQUIRED
        assert remote_before.id != question.task_id
        answer = await gateway.client.send("Ada", task=question)
    assert answer.state is TaskState.COMPLETED
    assert answer.text == "Hello, Ada"
    assert answer.task_id == question.task_id
    remote_after = await A2AClient.in_process(gateway.remote).get_task(remote_before.id)
    assert remote_after.status.state is TaskState.COMPLETED
    assert [m.text for m in remote_after.history if m.role.value == "ROLE_USER"] == ["ask", "Ada"]


async def test_local_cancel_cancels_the_remote_task(gateway: Gateway) -> None:
    async with asyncio.timeout(10):
        started = await gateway.client.send("slow", blocking=False)
        assert started.task_id is not None
        remote_id = await mapped(gateway.executor, started.task_id)
        canceled = await gateway.client.cancel(started)
        assert canceled.status.state is TaskState.CANCELED
        remote = A2AClient.in_process(gateway.remote)

        async def remote_canceled() -> bool:
            return (await remote.get_task(remote_id)).status.state is TaskState.CANCELED

        await until(remote_canceled)


async def test_streamed_events_are_relayed_in_order() -> None:
    gw = Gateway()
    try:
        async with asyncio.timeout(10):
            stream = gw.client.stream("chunks")
            events = [event async for event in stream]
    finally:
        await gw.aclose()
    chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    assert [c.artifact.parts[0].text for c in chunks] == ["c0", "c1", "c2"]
    assert [c.append for c in chunks] == [False, True, True]
    assert chunks[-1].last_chunk
    assert isinstance(events[-1], TaskStatusUpdateEvent)
    assert events[-1].status.state is TaskState.COMPLETED
    assert stream.text == "c0c1c2"


async def test_skills_of_the_remote_card() -> None:
    gw = Gateway()
    skills = await gw.executor.skills()
    await gw.aclose()
    assert skills == [
        RemoteSkill(
            id="echo",
            name="Echo",
            description="Echoes",
            source_url="inprocess:",
            agent_name="Scripted agent",
            tags=("echo",),
        )
    ]


# --- over HTTP ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sdk_url() -> Iterator[str]:
    port = free_port()
    with running(sdk_app(port, v03=True), port) as url:
        yield url


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_gateway_in_front_of_the_sdk_server(sdk_url: str, version: str) -> None:
    executor = RemoteAgentExecutor(sdk_url, preferred_versions=[version], timeout=10)
    local = A2AService(executor, scripted_card())
    client = A2AClient.in_process(local)
    try:
        async with asyncio.timeout(15):
            assert (await client.send("hello sdk")).text == "Echo: hello sdk"
            question = await client.send("ask")
            assert question.needs_input
            assert (await client.send("Bob", task=question)).text == "Hello, Bob"
            streamed = await client.stream("chunks").result()
            assert streamed.text == "c0c1c2"
            started = await client.send("slow", blocking=False)
            assert started.task_id is not None
            remote_id = await mapped(executor, started.task_id)
            assert (await client.cancel(started)).status.state is TaskState.CANCELED
            remote = await executor.client()
            assert remote.version == version
            assert (await remote.get_task(remote_id)).status.state is TaskState.CANCELED
    finally:
        await local.aclose()
        await executor.aclose()


async def test_http_gateway_chain() -> None:
    """client -HTTP-> our gateway server -HTTP-> our remote server."""
    remote_port, gateway_port = free_port(), free_port()
    remote: Any = scripted_service()
    with running(our_app(remote, remote_port), remote_port) as remote_url:
        executor = RemoteAgentExecutor(remote_url, preferred_bindings=["HTTP+JSON"], timeout=10)
        gateway = A2AService(executor, scripted_card())
        with running(our_app(gateway, gateway_port), gateway_port) as gateway_url:
            async with await A2AClient.connect(gateway_url, timeout=10) as client:
                async with asyncio.timeout(15):
                    assert (await client.send("via two hops")).text == "Echo: via two hops"
                    assert (await client.stream("chunks").result()).text == "c0c1c2"
            await executor.aclose()
        await gateway.aclose()
    await remote.aclose()


# --- a remote stream that drops before the task settles ----------------------------------


class DroppingTransport:
    """A fake remote: the stream stops after WORKING; subscribe or get then tell the end."""

    version = "1.0"
    binding = "FAKE"
    can_cancel_in_flight = True
    concurrent_calls = True

    def __init__(self, subscribe_works: bool) -> None:
        self.subscribe_works = subscribe_works
        self.calls: list[Operation] = []

    def _task(self, state: TaskState) -> Task:
        return Task(id="r1", context_id="rc", status=TaskStatus(state=state))

    def _status(self, state: TaskState) -> TaskStatusUpdateEvent:
        return TaskStatusUpdateEvent(task_id="r1", context_id="rc", status=TaskStatus(state=state))

    async def call(self, op: Operation, request: Any, options: Any = None) -> Any:
        self.calls.append(op)
        done = self._task(TaskState.COMPLETED)
        return done.model_copy(update={"artifacts": [], "history": []})

    async def open_stream(self, op: Operation, request: Any, options: Any = None) -> Any:
        self.calls.append(op)
        if op is Operation.SUBSCRIBE_TO_TASK:
            if not self.subscribe_works:
                raise UnsupportedOperationError("already terminal")
            return _events(self._task(TaskState.WORKING), self._status(TaskState.COMPLETED))
        return _events(self._task(TaskState.SUBMITTED), self._status(TaskState.WORKING))

    async def aclose(self) -> None:
        pass


async def _events(*events: Any) -> AsyncIterator[Any]:
    for event in events:
        yield event


@pytest.mark.parametrize("subscribe_works", [True, False])
async def test_a_dropped_remote_stream_is_followed_up(subscribe_works: bool) -> None:
    transport = DroppingTransport(subscribe_works)
    executor = RemoteAgentExecutor(A2AClient(transport, card=scripted_card()))  # type: ignore[arg-type]
    local = A2AService(executor, scripted_card())
    try:
        async with asyncio.timeout(10):
            reply = await A2AClient.in_process(local).send("hello")
    finally:
        await local.aclose()
    assert reply.state is TaskState.COMPLETED
    expected = [Operation.SEND_STREAMING_MESSAGE, Operation.SUBSCRIBE_TO_TASK]
    if not subscribe_works:
        expected.append(Operation.GET_TASK)
    assert transport.calls == expected


async def test_a_remote_that_ends_without_a_task_fails_the_local_one() -> None:
    class Silent(DroppingTransport):
        async def open_stream(self, op: Operation, request: Any, options: Any = None) -> Any:
            self.calls.append(op)
            return _events()

    transport = Silent(subscribe_works=False)
    executor = RemoteAgentExecutor(A2AClient(transport, card=scripted_card()))  # type: ignore[arg-type]
    local = A2AService(executor, scripted_card())
    try:
        async with asyncio.timeout(10):
            reply = await A2AClient.in_process(local).send("hello")
    finally:
        await local.aclose()
    assert reply.state is TaskState.FAILED
    assert "stopped answering" in reply.text


async def test_cancels_sent_are_remembered_within_max_tracked() -> None:
    """A cancel of a remote task that already ended is not kept forever (per-client state)."""
    from a2a_core.client.remote import RemoteAgentExecutor as Executor

    executor = Executor("http://127.0.0.1:9", max_tracked=3)

    class _Client:
        async def cancel(self, task_id: str) -> None:
            return None

    for i in range(10):
        await executor._cancel_remote(_Client(), f"r-{i}")  # pyright: ignore[reportPrivateUsage, reportArgumentType]
    assert len(executor._cancel_sent) == 3  # pyright: ignore[reportPrivateUsage]
    assert "r-9" in executor._cancel_sent  # pyright: ignore[reportPrivateUsage]


async def test_a_gateway_relays_each_chunk_at_once_and_ends_what_the_remote_left_open() -> None:
    """Real sockets: a remote agent that appends chunks and never says ``lastChunk``.

    The gateway's client gets the first chunk while the remote agent still works (nothing
    is held back on the way), and the artifact ends, at the gateway, with one update
    carrying all of it before the task completes.
    """
    from a2a_core.compose.serve import running_server
    from a2a_core.server import AgentExecutor, RequestContext, TaskUpdater

    gate = asyncio.Event()

    class NeverLast(AgentExecutor):
        async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
            await updater.start_work()
            await updater.add_artifact("Searching...", artifact_id="a", last_chunk=False)
            await asyncio.wait_for(gate.wait(), 10)
            await updater.add_artifact(" found.", artifact_id="a", append=True)
            await updater.complete()

    async with (
        asyncio.timeout(20),
        running_server(NeverLast(), config=ManagerConfig(whole_answers=False)) as remote,
        running_server(RemoteAgentExecutor(remote.url)) as gateway,
        await A2AClient.connect(gateway.url) as client,
        client.stream("flights") as events,
    ):
        seen: list[TaskArtifactUpdateEvent] = []
        async for event in events:
            if isinstance(event, TaskArtifactUpdateEvent):
                seen.append(event)
                gate.set()  # the first chunk came through while the remote agent waited
    assert [(e.artifact.parts[0].text, e.append, e.last_chunk) for e in seen] == [
        ("Searching...", False, False),
        (" found.", True, False),
        ("Searching... found.", False, True),  # the gateway marks the end
    ]
    assert events.task is not None
    assert events.task.status.state is TaskState.COMPLETED
    assert events.text == "Searching... found."
