"""Traces over the gRPC binding: our client's CLIENT span is the parent of our
server's SERVER span (the trace travels as gRPC metadata), for a unary call and
a stream, with a real gRPC server on 127.0.0.1 (``running_server(grpc_port=0)``).
"""

from __future__ import annotations

import pytest
from a2a_core.client import A2AClient
from a2a_core.compose.serve import running_server
from a2a_core.server import AgentExecutor, RequestContext, TaskUpdater
from a2a_core.testing.otel import InMemoryTelemetry as Otel
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

pytest.importorskip("grpc")
pytestmark = pytest.mark.timeout(60)


class Echo(AgentExecutor):
    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        await updater.complete(f"echo: {context.text}")


def _one(spans: list[ReadableSpan], kind: SpanKind, name_end: str) -> ReadableSpan:
    found = [s for s in spans if s.kind is kind and s.name.endswith(name_end)]
    assert len(found) == 1, [(s.name, s.kind) for s in spans]
    return found[0]


@pytest.mark.parametrize("operation", ["SendMessage", "SendStreamingMessage"])
async def test_grpc_call_is_one_trace_client_then_server(otel: Otel, operation: str) -> None:
    async with running_server(Echo(), grpc_port=0) as srv:
        address = srv.grpc_address
        assert address is not None
        async with A2AClient.for_endpoint(address, binding="GRPC", timeout=10) as client:
            assert client.binding == "GRPC"
            if operation == "SendMessage":
                result = await client.send("hi")
                assert result.task is not None
                task_id = result.task.id
            else:
                events = [event async for event in client.stream("hi")]
                assert events
                task_id = None
    spans = otel.spans()
    client_span = _one(spans, SpanKind.CLIENT, f"/{operation}")
    server_span = _one(spans, SpanKind.SERVER, f"/{operation}")
    assert client_span.context is not None
    assert server_span.context is not None
    assert server_span.context.trace_id == client_span.context.trace_id
    assert server_span.parent is not None
    assert server_span.parent.span_id == client_span.context.span_id
    assert server_span.parent.is_remote  # it came over the wire, not from a shared context
    attributes = dict(server_span.attributes or {})
    assert attributes["a2a.binding"] == "GRPC"
    assert attributes["rpc.system"] == "grpc"
    assert attributes["rpc.method"] == operation
    if task_id is not None:
        assert attributes["a2a.task.id"] == task_id
    assert dict(client_span.attributes or {})["a2a.binding"] == "GRPC"
