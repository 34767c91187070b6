"""Push deliveries carry the task's trace: a real server and client with telemetry on
(the OpenTelemetry SDK's in-memory exporter) and a real webhook on 127.0.0.1.

Each non-blocking send starts its own trace; every webhook call for that task
(sent after the send has returned, from the agent's run) has a ``traceparent``
in that trace, naming the delivery's own ``a2a.push`` CLIENT span.
"""

from __future__ import annotations

import asyncio

import pytest
from _push_support import Receiver, eventually, webhook_server
from a2a_core.client import A2AClient
from a2a_core.compose.serve import running_server
from a2a_core.server import AgentExecutor, RequestContext, TaskUpdater
from a2a_core.testing.otel import InMemoryTelemetry
from a2a_core.types import TaskPushNotificationConfig
from opentelemetry.trace import SpanKind

pytestmark = pytest.mark.timeout(60)


class Gated(AgentExecutor):
    """Starts work, then finishes only once ``release`` is set (after the send returned)."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        await self.release.wait()
        await updater.complete(f"done: {context.text}")


def _task_id(body: dict[str, object]) -> str:
    update = body.get("statusUpdate") or body.get("artifactUpdate") or body.get("task")
    assert isinstance(update, dict)
    value = update.get("taskId") or update.get("id")
    assert isinstance(value, str)
    return value


async def test_push_deliveries_carry_the_trace_of_the_send_that_made_the_task() -> None:
    agent = Gated()
    with InMemoryTelemetry() as otel:
        async with (
            webhook_server() as receiver,
            running_server(agent, push=True, allow_private_push_targets=True) as srv,
            A2AClient.for_endpoint(srv.url) as client,
        ):
            hook = TaskPushNotificationConfig(url=receiver.url, token="tok")
            sent = [
                await client.send(text, blocking=False, push_config=hook) for text in ("a", "b")
            ]
            agent.release.set()
            task_ids = [result.task.id for result in sent if result.task is not None]
            assert len(task_ids) == 2
            await _until_both_completed(receiver, task_ids)
            await eventually(
                lambda: sum(s.name == "a2a.push" for s in otel.spans()) >= len(receiver.requests),
                what="the push spans to end",
            )
        spans = otel.spans()
    send_traces: dict[str, int] = {}
    for span in spans:
        attributes = dict(span.attributes or {})
        if span.kind is SpanKind.CLIENT and span.name.endswith("/SendMessage"):
            assert span.context is not None
            send_traces[str(attributes["a2a.task.id"])] = span.context.trace_id
    assert set(send_traces) == set(task_ids)
    assert len(set(send_traces.values())) == 2  # two sends, two traces
    push_spans = {
        s.context.span_id: s for s in spans if s.name == "a2a.push" and s.context is not None
    }
    for request in receiver.requests:
        version, trace_hex, span_hex, _flags = request.headers["traceparent"].split("-")
        assert version == "00"
        task_id = _task_id(request.json)
        assert int(trace_hex, 16) == send_traces[task_id]
        push_span = push_spans[int(span_hex, 16)]
        assert push_span.kind is SpanKind.CLIENT
        assert dict(push_span.attributes or {})["a2a.task.id"] == task_id


async def _until_both_completed(receiver: Receiver, task_ids: list[str]) -> None:
    def completed() -> set[str]:
        return {
            _task_id(r.json)
            for r in receiver.requests
            if r.json.get("statusUpdate", {}).get("status", {}).get("state")
            == "TASK_STATE_COMPLETED"
        }

    await eventually(lambda: completed() == set(task_ids), what="both tasks' final pushes")


async def test_push_deliveries_and_failures_are_counted() -> None:
    """``a2a.server.push.deliveries`` by outcome; a refused delivery's span is an error."""
    agent = Gated()
    with InMemoryTelemetry() as otel:
        async with (
            webhook_server() as receiver,
            running_server(agent, push=True, allow_private_push_targets=True) as srv,
            A2AClient.for_endpoint(srv.url) as client,
        ):
            receiver.statuses = [400]  # the first delivery is refused (not retried), then 200s
            hook = TaskPushNotificationConfig(url=receiver.url, token="tok")
            sent = await client.send("a", blocking=False, push_config=hook)
            assert sent.task is not None
            agent.release.set()
            await _until_both_completed(receiver, [sent.task.id])
            await eventually(
                lambda: sum(s.name == "a2a.push" for s in otel.spans()) >= len(receiver.requests),
                what="the push spans to end",
            )
        calls = len(receiver.requests)
        counts = {
            attributes["a2a.push.outcome"]: value
            for attributes, value in otel.metrics()["a2a.server.push.deliveries"]
        }
        failed = [s for s in otel.spans() if s.name == "a2a.push" and not s.status.is_ok]
    assert calls >= 2
    assert counts == {"failed": 1, "delivered": calls - 1}
    assert len(failed) == 1
