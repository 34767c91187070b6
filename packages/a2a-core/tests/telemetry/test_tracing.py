"""Traces across a real socket: our client's span is the parent of our server's, the
agent's run is a span of its own (linked to the request), and nothing is recorded off.

Every test runs a uvicorn server on 127.0.0.1 and a real ``A2AClient``, with the
OpenTelemetry SDK's in-memory exporter (conftest ``otel``).
"""

from __future__ import annotations

import asyncio

import httpx
import pytest
from a2a_core import telemetry
from a2a_core.client import A2AClient
from a2a_core.compose.serve import running_server
from a2a_core.errors import TaskNotFoundError
from a2a_core.server import RequestContext, TaskUpdater
from a2a_core.server.executor import AgentExecutor
from a2a_core.testing.otel import InMemoryTelemetry as Otel
from a2a_core.types import TaskState
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

pytestmark = pytest.mark.timeout(60)

SECRET = "my secret words"


class Stepper(AgentExecutor):
    """Works, sends an artifact, completes (or waits for ``release`` first)."""

    def __init__(self, wait: bool = False) -> None:
        self.release = asyncio.Event()
        if not wait:
            self.release.set()

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work("thinking")
        await self.release.wait()
        await updater.add_artifact(f"answer to {context.text}", artifact_id="answer", name="answer")
        await updater.complete()


def _one(spans: list[ReadableSpan], kind: SpanKind, name_end: str = "") -> ReadableSpan:
    found = [s for s in spans if s.kind is kind and s.name.endswith(name_end)]
    assert len(found) == 1, [(s.name, s.kind) for s in spans]
    return found[0]


def _parent_of(child: ReadableSpan, parent: ReadableSpan) -> bool:
    assert child.parent is not None
    assert parent.context is not None
    assert child.context is not None
    return (
        child.parent.span_id == parent.context.span_id
        and child.context.trace_id == parent.context.trace_id
    )


def _no_contents(spans: list[ReadableSpan]) -> None:
    for span in spans:
        values = [str(v) for v in (span.attributes or {}).values()]
        for event in span.events:
            values += [str(v) for v in (event.attributes or {}).values()]
        assert not any(SECRET in v for v in values), span.name


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_send_is_one_trace_client_server_run(otel: Otel, binding: str) -> None:
    async with (
        running_server(Stepper()) as srv,
        A2AClient.for_endpoint(srv.url, binding=binding) as client,
    ):
        result = await client.send(SECRET)
    spans = otel.spans()
    client_span = _one(spans, SpanKind.CLIENT, "/SendMessage")
    server_span = _one(spans, SpanKind.SERVER, "/SendMessage")
    run = _one(spans, SpanKind.INTERNAL, "a2a.agent.run")
    assert _parent_of(server_span, client_span)
    assert _parent_of(run, server_span)
    assert [link.context.span_id for link in run.links] == [server_span.context.span_id]  # type: ignore[union-attr]
    task = result.task
    assert task is not None
    attributes = dict(server_span.attributes or {})
    assert attributes["a2a.method"] in ("SendMessage", "message/send")
    assert attributes["rpc.method"] == "SendMessage"
    assert attributes["rpc.service"] == "lf.a2a.v1.A2AService"
    assert attributes["a2a.binding"] == binding
    assert attributes["a2a.protocol.version"] == "1.0"
    assert attributes["a2a.task.id"] == task.id
    assert attributes["a2a.context.id"] == task.context_id
    assert attributes["a2a.task.state"] == "completed"
    assert attributes["http.response.status_code"] == 200
    assert attributes["http.request.method"] == "POST"
    client_attributes = dict(client_span.attributes or {})
    assert client_attributes["a2a.task.id"] == task.id
    assert client_attributes["a2a.task.state"] == "completed"
    assert client_attributes["server.address"] == "localhost"
    assert dict(run.attributes or {})["a2a.task.state"] == "completed"
    events = [(e.name, dict(e.attributes or {})) for e in run.events]
    states = [a["a2a.task.state"] for n, a in events if n == "a2a.task.status"]
    assert states == ["working", "completed"]
    artifacts = [a for n, a in events if n == "a2a.task.artifact"]
    assert artifacts == [
        {
            "a2a.artifact.id": "answer",
            "a2a.artifact.name": "answer",
            "a2a.artifact.parts": 1,
            "a2a.artifact.append": False,
            "a2a.artifact.last_chunk": True,
        }
    ]
    _no_contents(spans)


async def test_contents_only_when_enabled(otel: Otel) -> None:
    telemetry.enable(tracer_provider=otel.tracer_provider, record_content=True)
    async with running_server(Stepper()) as srv, A2AClient.for_endpoint(srv.url) as client:
        await client.send(SECRET)
    run = _one(otel.spans(), SpanKind.INTERNAL, "a2a.agent.run")
    texts = [str(e.attributes.get("a2a.artifact.text")) for e in run.events if e.attributes]
    assert f"answer to {SECRET}" in texts


async def test_stream_span_lasts_the_stream(otel: Otel) -> None:
    async with running_server(Stepper()) as srv, A2AClient.for_endpoint(srv.url) as client:
        events = [event async for event in client.stream(SECRET)]
    assert events
    spans = otel.spans()
    client_span = _one(spans, SpanKind.CLIENT, "/SendStreamingMessage")
    server_span = _one(spans, SpanKind.SERVER, "/SendStreamingMessage")
    assert _parent_of(server_span, client_span)
    assert dict(client_span.attributes or {})["a2a.task.state"] == "completed"
    assert dict(server_span.attributes or {})["a2a.task.state"] == "completed"
    streams = otel.metrics()["a2a.server.active_streams"]
    assert [value for _, value in streams] == [0]


async def test_error_is_recorded_with_its_a2a_code(otel: Otel) -> None:
    async with running_server(Stepper()) as srv, A2AClient.for_endpoint(srv.url) as client:
        with pytest.raises(TaskNotFoundError):
            await client.get_task("no-such-task")
    spans = otel.spans()
    client_span = _one(spans, SpanKind.CLIENT, "/GetTask")
    server_span = _one(spans, SpanKind.SERVER, "/GetTask")
    for span in (client_span, server_span):
        assert span.status.status_code is StatusCode.ERROR
        assert dict(span.attributes or {})["a2a.error.code"] == TaskNotFoundError.code
    requests = otel.metrics()["a2a.server.requests"]
    assert (
        {
            "a2a.operation": "GetTask",
            "a2a.binding": "JSONRPC",
            "a2a.outcome": "error",
            "a2a.error.code": TaskNotFoundError.code,
        },
        1,
    ) in requests


async def test_a_callers_traceparent_is_continued(otel: Otel) -> None:
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    parent = "00f067aa0ba902b7"
    async with running_server(Stepper()) as srv, httpx.AsyncClient() as http:
        answer = await http.post(
            srv.url,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {
                    "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
                },
            },
            headers={"A2A-Version": "1.0", "traceparent": f"00-{trace_id}-{parent}-01"},
        )
        assert answer.status_code == 200
    server_span = _one(otel.spans(), SpanKind.SERVER, "/SendMessage")
    assert server_span.parent is not None
    assert server_span.parent.is_remote
    assert format(server_span.parent.span_id, "016x") == parent
    assert format(server_span.context.trace_id, "032x") == trace_id  # type: ignore[union-attr]


async def test_non_blocking_run_outlives_its_request(otel: Otel) -> None:
    agent = Stepper(wait=True)
    async with running_server(agent) as srv, A2AClient.for_endpoint(srv.url) as client:
        sent = await client.send("hello", blocking=False)
        assert sent.task is not None
        assert not otel.named("a2a.agent.run")  # still running after the answer
        server_span = _one(otel.spans(), SpanKind.SERVER, "/SendMessage")
        agent.release.set()
        for _ in range(200):
            if otel.named("a2a.agent.run"):
                break
            await asyncio.sleep(0.01)
    run = _one(otel.spans(), SpanKind.INTERNAL, "a2a.agent.run")
    assert [link.context.span_id for link in run.links] == [server_span.context.span_id]  # type: ignore[union-attr]
    assert run.end_time is not None
    assert server_span.end_time is not None
    assert run.end_time > server_span.end_time
    metrics = otel.metrics()
    assert ({"a2a.task.state": "completed"}, 1) in metrics["a2a.server.tasks"]
    assert [value for _, value in metrics["a2a.server.active_tasks"]] == [0]
    assert metrics["a2a.server.task.duration"] == [({"a2a.task.state": "completed"}, 1)]
    store_ops = {a["a2a.store.operation"] for a, _ in metrics["a2a.server.store.duration"]}
    assert {"create", "save"} <= store_ops


class AnswerAtOnce(AgentExecutor):
    """An artifact, then done: a blocking send's task is then written once."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.add_artifact("the answer", name="answer")
        await updater.complete()


async def test_a_blocking_send_is_timed_as_a_create_and_a_numbered_save(otel: Otel) -> None:
    """The timed store passes the numbered save through (``save_at``): the task written
    when its run starts, then its held answer saved with the final status."""
    async with running_server(AnswerAtOnce()) as srv, A2AClient.for_endpoint(srv.url) as client:
        sent = await client.send("hello")
    assert sent.task is not None
    assert sent.task.status.state is TaskState.COMPLETED
    writes = [
        a["a2a.store.operation"]
        for a, count in otel.metrics()["a2a.server.store.duration"]
        for _ in range(count)
        if a["a2a.store.operation"] in ("create", "save")
    ]
    assert writes == ["create", "save"]


async def test_failed_run_marks_its_span(otel: Otel) -> None:
    async def broken(context: RequestContext) -> str:
        raise RuntimeError(SECRET)

    async with running_server(broken) as srv, A2AClient.for_endpoint(srv.url) as client:
        result = await client.send("hi")
    assert result.task is not None
    assert result.task.status.state is TaskState.FAILED
    run = _one(otel.spans(), SpanKind.INTERNAL, "a2a.agent.run")
    assert run.status.status_code is StatusCode.ERROR
    assert dict(run.attributes or {})["a2a.task.state"] == "failed"
    _no_contents(otel.spans())


async def test_off_records_nothing_and_sends_no_traceparent(otel: Otel) -> None:
    telemetry.disable()
    seen: list[str | None] = []

    async def recorder(context: RequestContext) -> str:
        seen.append(context.call.headers.get("traceparent"))
        return "ok"

    async with running_server(recorder) as srv, A2AClient.for_endpoint(srv.url) as client:
        await client.send("hi")
    assert seen == [None]
    assert otel.spans() == []


async def test_the_run_records_its_events_with_no_observer_installed(otel: Otel) -> None:
    """The run's events are traced whether or not anyone observes tasks: an application
    without plugins (no transition observer) gets the same span events."""
    from a2a_core import AgentCardBuilder
    from a2a_core.server import A2AService

    card = (
        AgentCardBuilder("plain", description="no observers", version="1")
        .skill("plain", "Plain", "answers", tags=["t"])
        .jsonrpc("http://127.0.0.1/")
        .build()
    )
    service = A2AService(Stepper(), card)
    assert not service.manager.observing  # nobody observes: events are traced all the same
    async with running_server(service) as srv, A2AClient.for_endpoint(srv.url) as client:
        await client.send("hello")
    run = _one(otel.spans(), SpanKind.INTERNAL, "a2a.agent.run")
    names = [e.name for e in run.events]
    assert names.count("a2a.task.status") == 2  # working, completed
    assert names.count("a2a.task.artifact") == 1
