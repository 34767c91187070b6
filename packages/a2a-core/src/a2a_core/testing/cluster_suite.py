"""The cluster conformance suite: several service instances on one store backend.

Each test starts ``instances`` services (default 2) in this process, each
behind a real HTTP server on 127.0.0.1 with its own store object on the
shared backend, and drives them with our client over the wire. It checks
what a deployment of several replicas relies on (see
``a2a_core.contracts.channel``):

- a stream or subscribe on B follows a task running on A, in order, each
  event once, and ends when the task does;
- a resubscribe with ``Last-Event-ID`` (on any instance, each binding and
  protocol version) replays exactly what the client missed, then goes on;
- a cancel through B stops the agent on A at once (even an agent that never
  reports) and frees its capacity slot; cancel stays terminal;
- push configs created through B are delivered by A, each event once.

A backend subclasses it and says how to open a store on the shared
backend (called once per instance; return the same object for an
in-process store)::

    class TestRedisCluster(ClusterConformance):
        async def make_store(self) -> TaskStore:
            return RedisTaskStore(URL, prefix=self.prefix)  # one prefix per test

For ``postgresql://``, ``make_store`` returns a ``PostgresTaskStore`` on a
per-test schema (its ``event_channel()`` is the LISTEN/NOTIFY channel).
``cleanup`` (optional) runs after each cluster a test starts (a test may start several).

In-process stores (``memory://``, ``sqlite://``) have no backend channel:
their instances share live events only through one store object, so
``make_store`` returns that object (a new one after ``cleanup`` when the
services closed it). Two processes on one SQLite file share tasks, not live
events, cancels or push configs: use ``redis://`` or ``postgresql://`` for that.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

import httpx
import pytest

from ..client import A2AClient, EventStream
from ..compose.builder import configure_service
from ..compose.serve import running_server
from ..errors import TaskNotCancelableError
from ..server.config import ManagerConfig
from ..server.executor import AgentExecutor, RequestContext
from ..server.push import PushNotificationService
from ..server.service import A2AService
from ..server.updater import TaskUpdater
from ..stores import TaskStore
from ..types import (
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from ._suite import ConformanceSuite
from .fakes import AgentProbe

__all__ = ["ClusterConformance", "GatedAgent", "Instance"]

CHUNKS = 6
"""Artifact chunks the gated agent streams."""

_BINDINGS = (("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "0.3"))


class GatedAgent(AgentExecutor):
    """Streams ``CHUNKS`` artifact chunks, each when the test releases it; then completes.

    ``"slow"`` in the message: works until cancelled without reporting anything
    (one long model call), recording start and stop on ``probe``.
    """

    def __init__(self) -> None:
        self.gate = asyncio.Semaphore(0)
        self.probe = AgentProbe()

    def release(self, count: int = 1) -> None:
        """Let the agent emit ``count`` more chunks (the last release completes the task)."""
        for _ in range(count):
            self.gate.release()

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        if "slow" in context.text:
            try:
                await updater.start_work()
                self.probe.mark_started()
                await asyncio.Event().wait()
            finally:
                self.probe.mark_stopped()
            return
        await updater.start_work()
        for i in range(CHUNKS):
            await self.gate.acquire()
            await updater.add_artifact(
                f"c{i};",
                artifact_id="out",
                name="out",
                append=i > 0,
                last_chunk=i == CHUNKS - 1,
            )
        await self.gate.acquire()
        await updater.complete()


@dataclass(slots=True)
class Instance:
    """One service instance: its agent, service, URL and a client per binding/version."""

    agent: GatedAgent
    service: A2AService
    url: str
    http: httpx.AsyncClient
    clients: dict[tuple[str, str], A2AClient] = field(
        default_factory=dict[tuple[str, str], A2AClient]
    )

    @property
    def client(self) -> A2AClient:
        """The JSON-RPC 1.0 client."""
        return self.clients[("JSONRPC", "1.0")]


class _Webhook:
    """A tiny HTTP receiver on 127.0.0.1 recording every POST body."""

    def __init__(self) -> None:
        self.bodies: list[Any] = []
        self.arrived = asyncio.Condition()
        self._server: asyncio.Server | None = None
        self.url = ""

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/hook"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.decode("latin-1").split("\r\n")[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                body = await reader.readexactly(length)
                async with self.arrived:
                    self.bodies.append(json.loads(body))
                    self.arrived.notify_all()
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def wait_for(self, predicate: Any) -> None:
        async with self.arrived:
            await self.arrived.wait_for(lambda: predicate(self.bodies))

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


def _state_of(event: StreamEvent) -> TaskState | None:
    if isinstance(event, TaskStatusUpdateEvent):
        return event.status.state
    if isinstance(event, Task):
        return event.status.state
    return None


def _chunk_text(event: StreamEvent) -> str:
    if isinstance(event, TaskArtifactUpdateEvent):
        return "".join(p.text or "" for p in event.artifact.parts)
    return ""


async def _read(stream: EventStream, count: int | None = None) -> list[tuple[str | None, Any]]:
    """(event id, event) pairs: ``count`` of them, or until the stream ends."""
    out: list[tuple[str | None, Any]] = []
    async for event in stream:
        out.append((stream.last_event_id, event))
        if count is not None and len(out) >= count:
            break
    return out


class ClusterConformance(ConformanceSuite):
    """Subclass it and implement ``make_store`` (a store on the shared backend)."""

    _a2a_suite_root: ClassVar[bool] = True
    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [pytest.mark.asyncio]
    timeout: ClassVar[float] = 30.0
    instances: ClassVar[int] = 2
    """Service instances each test starts on the backend."""

    # -- what the subclass implements ------------------------------------------------
    async def make_store(self) -> TaskStore:
        """A store on the shared backend (called once per instance)."""
        raise NotImplementedError(f"{type(self).__qualname__} must implement make_store()")

    async def cleanup(self) -> None:
        """Called after each cluster a test starts (drop keys, forget a closed store...)."""

    # -- the cluster -----------------------------------------------------------------
    @asynccontextmanager
    async def cluster(
        self, *, count: int | None = None, max_background_tasks: int = 8
    ) -> AsyncGenerator[list[Instance]]:
        """``count`` instances serving ``GatedAgent``s on one backend, with clients."""
        async with AsyncExitStack() as stack:
            stack.push_async_callback(self.cleanup)
            nodes: list[Instance] = []
            for _ in range(count or self.instances):
                agent = GatedAgent()
                store = await self.make_store()
                service = configure_service(
                    agent,
                    name="Cluster test agent",
                    store=store,
                    push=PushNotificationService(allow_private_targets=True),
                    config=ManagerConfig(
                        max_background_tasks=max_background_tasks, cancel_grace_seconds=1.0
                    ),
                )
                server = await stack.enter_async_context(running_server(service))
                http = await stack.enter_async_context(httpx.AsyncClient(timeout=30.0))
                node = Instance(agent, service, server.url, http)
                for binding, version in _BINDINGS:
                    client = await A2AClient.connect(
                        server.url,
                        http_client=http,
                        preferred_bindings=[binding],
                        preferred_versions=[version],
                    )
                    stack.push_async_callback(client.aclose)
                    node.clients[(binding, version)] = client
                nodes.append(node)
            for node in nodes:  # let every gated agent finish, so shutdown is quick
                stack.callback(node.agent.release, CHUNKS + 1)
            yield nodes

    async def _started(self, node: Instance) -> Task:
        """A task of the gated agent on ``node`` (non-blocking send), with its id."""
        result = await node.client.send("stream please", blocking=False)
        assert result.task is not None, "a non-blocking send returns the task"
        return result.task

    async def _final(self, node: Instance, task_id: str) -> Task:
        """Poll ``node`` until the task is final."""
        while True:
            task = await node.client.get_task(task_id)
            if task.status.state.is_terminal:
                return task
            await asyncio.sleep(0.02)

    # -- tests -------------------------------------------------------------------------
    async def test_subscribe_on_another_instance_follows_live_events(self) -> None:
        """A subscribe through B follows A's task live: every chunk once, in order, to the end."""
        async with self._deadline("following a task of A through B"), self.cluster() as nodes:
            a, b = nodes[0], nodes[1]
            task = await self._started(a)
            stream = b.client.subscribe(task.id)
            first = await anext(stream)
            assert isinstance(first, Task)
            assert first.id == task.id
            a.agent.release(CHUNKS + 1)
            events = [first, *[e for _, e in await _read(stream)]]
            texts = [_chunk_text(e) for e in events if isinstance(e, TaskArtifactUpdateEvent)]
            assert texts == [f"c{i};" for i in range(CHUNKS)], "every chunk once, in order"
            assert _state_of(events[-1]) is TaskState.COMPLETED, "the stream ends at the end"
            assert stream.done
            assert stream.text == "".join(f"c{i};" for i in range(CHUNKS))

    async def test_stream_ids_increase_and_resume_on_other_instance(self) -> None:
        """Each binding and version: ids increase; resubscribing through B replays the missed."""
        async with self._deadline("resuming a stream on another instance"):
            for binding, version in _BINDINGS:
                async with self.cluster() as nodes:
                    a, b = nodes[0], nodes[-1]
                    stream = a.clients[(binding, version)].stream("stream please")
                    a.agent.release(2)
                    # snapshot, WORKING, two chunks: then the connection drops
                    seen = await _read(stream, 4)
                    await stream.aclose()
                    assert stream.last_event_id is not None, "SSE events carry ids"
                    ids = [int(i) for i, _ in seen if i is not None]
                    assert ids == sorted(set(ids)), ids
                    task = stream.task
                    assert task is not None
                    a.agent.release(CHUNKS - 1)
                    await self._final(a, task.id)
                    resumed = b.clients[(binding, version)].resubscribe(stream)
                    rest = await _read(resumed)
                    got = [e for _, e in rest]
                    assert not any(isinstance(e, Task) for e in got), (
                        f"{binding} {version}: within retention, no snapshot is needed"
                    )
                    texts = [_chunk_text(e) for e in got if isinstance(e, TaskArtifactUpdateEvent)]
                    assert texts == [f"c{i};" for i in range(2, CHUNKS)], (binding, version, texts)
                    assert _state_of(got[-1]) is TaskState.COMPLETED
                    rest_ids = [int(i) for i, _ in rest if i is not None]
                    assert rest_ids == sorted(set(rest_ids))
                    assert rest_ids[0] > ids[-1]
                    assert resumed.text == "".join(f"c{i};" for i in range(CHUNKS))

    async def test_resume_mid_task_then_live(self) -> None:
        """A resubscribe while the task runs replays the missed events, then continues live."""
        async with self._deadline("resuming a running task"), self.cluster() as nodes:
            a, b = nodes[0], nodes[-1]
            stream = a.client.stream("stream please")
            a.agent.release(1)
            await _read(stream, 3)  # snapshot, WORKING, c0
            await stream.aclose()
            a.agent.release(2)  # c1, c2 happen while no one listens
            resumed = b.client.resubscribe(stream)
            missed = await _read(resumed, 2)
            assert [_chunk_text(e) for _, e in missed] == ["c1;", "c2;"]
            a.agent.release(CHUNKS)  # the rest, live
            live = await _read(resumed)
            texts = [_chunk_text(e) for _, e in live if isinstance(e, TaskArtifactUpdateEvent)]
            assert texts == [f"c{i};" for i in range(3, CHUNKS)]
            assert _state_of(live[-1][1]) is TaskState.COMPLETED

    async def test_cancel_on_another_instance_stops_the_agent(self) -> None:
        """A cancel through B stops a silent agent on A, frees its slot, and stays terminal."""
        async with (
            self._deadline("cancelling through B an agent on A"),
            self.cluster(max_background_tasks=1) as nodes,
        ):
            a, b = nodes[0], nodes[1]
            result = await a.client.send("slow", blocking=False)
            assert result.task is not None
            assert await a.agent.probe.wait_started(self.timeout / 3)
            canceled = await b.client.cancel(result.task.id)
            assert canceled.status.state is TaskState.CANCELED
            assert await a.agent.probe.wait_stopped(self.timeout / 3), "the agent on A stopped"
            run = a.service.manager.active_run(result.task.id)
            if run is not None:  # the slot is freed as the run ends
                await run.done.wait()
            assert a.service.manager.active_count == 0
            again = await a.client.send("stream please", blocking=False)  # room again
            assert again.task is not None
            with pytest.raises(TaskNotCancelableError):
                await a.client.cancel(result.task.id)  # terminal: stays canceled
            assert (await a.client.get_task(result.task.id)).status.state is TaskState.CANCELED
            assert (await b.client.get_task(result.task.id)).status.state is TaskState.CANCELED

    async def test_push_config_from_another_instance_delivered_once(self) -> None:
        """A config created through B is delivered by A (who runs the task), each event once."""
        hook = _Webhook()
        await hook.start()
        try:
            async with self._deadline("push deliveries across instances"), self.cluster() as nodes:
                a, b = nodes[0], nodes[1]
                task = await self._started(a)
                await b.client.create_push_config(task.id, hook.url, token="tok")
                assert await a.client.list_push_configs(task.id), "A sees B's config"
                a.agent.release(CHUNKS + 1)
                await self._final(a, task.id)

                def finished(bodies: list[Any]) -> bool:
                    return any("COMPLETED" in json.dumps(body) for body in bodies)

                await hook.wait_for(finished)
                await asyncio.sleep(0.3)  # a second instance delivering would do it by now
                statuses = [json.dumps(body) for body in hook.bodies if "statusUpdate" in body]
                completed = [s for s in statuses if "TASK_STATE_COMPLETED" in s]
                assert len(completed) == 1, f"the final update once, not {len(completed)}"
                dumped = [json.dumps(body, sort_keys=True) for body in hook.bodies]
                assert len(dumped) == len(set(dumped)), "no delivery repeated"
        finally:
            await hook.aclose()
