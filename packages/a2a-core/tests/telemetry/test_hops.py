"""Trace context through a gateway, baggage only when asked, and the client's duration metric.

Real uvicorn servers on 127.0.0.1 and real ``A2AClient``s; the OpenTelemetry SDK's
in-memory exporter (conftest ``otel``).
"""

from __future__ import annotations

import itertools

import pytest
from a2a_core import telemetry
from a2a_core.client import A2AClient, RemoteAgentExecutor
from a2a_core.compose.serve import running_server
from a2a_core.server import RequestContext
from a2a_core.testing.otel import InMemoryTelemetry as Otel
from opentelemetry import baggage
from opentelemetry import context as otel_context
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind

pytestmark = pytest.mark.timeout(60)


async def _answer(context: RequestContext) -> str:
    return f"remote says {context.text}"


def _ancestors(span: ReadableSpan, by_id: dict[int, ReadableSpan]) -> list[int]:
    found: list[int] = []
    while span.parent is not None and span.parent.span_id in by_id:
        found.append(span.parent.span_id)
        span = by_id[span.parent.span_id]
    return found


async def test_a_gateway_continues_the_trace(otel: Otel) -> None:
    """caller -> gateway (``RemoteAgentExecutor``) -> remote agent: one trace, in order."""
    async with (
        running_server(_answer) as remote,
        running_server(RemoteAgentExecutor(remote.url)) as gateway,
        A2AClient.for_endpoint(gateway.url) as client,
    ):
        result = await client.send("hi")
    assert result.text == "remote says hi"
    spans = otel.spans()
    by_id = {s.context.span_id: s for s in spans if s.context is not None}
    sends = [s for s in spans if s.name.startswith("lf.a2a.v1.A2AService/Send")]
    clients = sorted(
        (s for s in sends if s.kind is SpanKind.CLIENT), key=lambda s: s.start_time or 0
    )
    servers = sorted(
        (s for s in sends if s.kind is SpanKind.SERVER), key=lambda s: s.start_time or 0
    )
    runs = sorted(otel.named("a2a.agent.run"), key=lambda s: s.start_time or 0)
    assert len(clients) == 2, [s.name for s in spans]
    assert len(servers) == 2, [s.name for s in spans]
    assert len(runs) == 2, [s.name for s in spans]
    lineage = [clients[0], servers[0], runs[0], clients[1], servers[1], runs[1]]
    assert len({s.context.trace_id for s in lineage if s.context is not None}) == 1
    for upper, lower in itertools.pairwise(lineage):
        assert upper.context is not None
        assert upper.context.span_id in _ancestors(lower, by_id), (upper.name, lower.name)
    durations = otel.metrics()["a2a.client.request.duration"]
    timed = {attributes["a2a.operation"]: count for attributes, count in durations}
    # the caller's send, and the gateway's stream to the remote agent (its card streams)
    assert timed == {"SendMessage": 1, "SendStreamingMessage": 1}


@pytest.mark.parametrize("asked", [True, False])
async def test_baggage_only_when_asked(otel: Otel, asked: bool) -> None:
    telemetry.enable(
        tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider, baggage=asked
    )
    seen: list[tuple[str | None, object]] = []

    async def recorder(context: RequestContext) -> str:
        seen.append((context.call.headers.get("baggage"), baggage.get_baggage("tenant")))
        return "ok"

    async with running_server(recorder) as srv, A2AClient.for_endpoint(srv.url) as client:
        # set after the server started, so only the wire can carry it there
        token = otel_context.attach(baggage.set_baggage("tenant", "acme"))
        try:
            await client.send("hi")
        finally:
            otel_context.detach(token)
    [(header, value)] = seen
    if asked:
        assert header == "tenant=acme"
        assert value == "acme"  # the server's run sees the caller's baggage
    else:
        assert header is None
        assert value is None


async def test_a_stream_is_timed_too(otel: Otel) -> None:
    """``a2a.client.request.duration`` covers streams (recorded when the stream ends)."""
    async with running_server(_answer) as srv, A2AClient.for_endpoint(srv.url) as client:
        events = [event async for event in client.stream("hi")]
    assert events
    durations = otel.metrics()["a2a.client.request.duration"]
    ok = {"a2a.operation": "SendStreamingMessage", "a2a.binding": "JSONRPC", "a2a.outcome": "ok"}
    assert (ok, 1) in durations, durations
