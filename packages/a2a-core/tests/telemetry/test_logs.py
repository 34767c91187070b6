"""The access log joins traces: its line carries the SERVER span's ids; JSON when asked."""

from __future__ import annotations

import json
import logging

import pytest
from a2a_core.client import A2AClient
from a2a_core.compose.serve import running_server
from a2a_core.server.asgi.access import JsonLogFormatter
from a2a_core.testing.otel import InMemoryTelemetry
from opentelemetry.trace import SpanKind

pytestmark = pytest.mark.timeout(60)


async def _echo(context: object) -> str:
    return "ok"


async def test_access_line_has_the_server_spans_ids_as_json(
    otel: InMemoryTelemetry, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="a2a_core.access")
    async with running_server(_echo) as srv, A2AClient.for_endpoint(srv.url) as client:
        await client.send("private words")
    [record] = [r for r in caplog.records if r.name == "a2a_core.access"]
    [server] = [s for s in otel.spans() if s.kind is SpanKind.SERVER]
    assert server.context is not None
    trace_id = format(server.context.trace_id, "032x")
    span_id = format(server.context.span_id, "016x")
    assert f"trace={trace_id} span={span_id}" in record.getMessage()
    line = JsonLogFormatter().format(record)
    assert "\n" not in line
    entry = json.loads(line)
    assert entry["trace_id"] == trace_id
    assert entry["span_id"] == span_id
    assert entry["a2a_method"] == "SendMessage"
    assert entry["http_status"] == 200
    assert entry["a2a_state"] == "completed"
    assert entry["logger"] == "a2a_core.access"
    assert "private words" not in line


async def test_without_telemetry_the_line_has_no_ids(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="a2a_core.access")
    async with running_server(_echo) as srv, A2AClient.for_endpoint(srv.url) as client:
        await client.send("hi")
    [record] = [r for r in caplog.records if r.name == "a2a_core.access"]
    assert "trace=" not in record.getMessage()
    assert "trace_id" not in json.loads(JsonLogFormatter().format(record))
