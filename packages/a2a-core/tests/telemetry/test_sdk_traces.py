"""Trace context between us and the official a2a-sdk, over real sockets.

- Our client's ``traceparent`` reaches the SDK's server, naming our CLIENT span.
  The SDK (1.3, src/a2a/utils/telemetry.py) decorates its classes with spans but
  extracts no incoming context (no propagator anywhere in its source), so its own
  spans cannot join our trace: what is observable, and checked, is the header
  it receives (its ``ServerCallContext.state["headers"]``).
- The SDK's client sends no ``traceparent`` of its own (it injects nothing either);
  one given through its ``httpx`` client's headers is honoured by our server: our
  SERVER span continues that trace.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from a2a_core.client import A2AClient
from a2a_core.compose.serve import running_server
from a2a_core.testing.otel import InMemoryTelemetry
from opentelemetry.trace import SpanKind

pytest.importorskip("a2a.server.routes")
pytestmark = pytest.mark.timeout(60)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _sdk_app(port: int, seen: list[dict[str, str]]) -> Any:
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from a2a.types import (
        AgentCapabilities,
        AgentCard,
        AgentInterface,
        AgentSkill,
        Message,
        Part,
        Role,
    )
    from starlette.applications import Starlette

    class Recorder(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            call = context.call_context
            seen.append(dict(call.state.get("headers", {})) if call is not None else {})
            await event_queue.enqueue_event(
                Message(
                    role=Role.ROLE_AGENT,
                    message_id=str(uuid.uuid4()),
                    context_id=context.context_id or "",
                    parts=[Part(text="ok")],
                )
            )

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            return None

    card = AgentCard(
        name="SDK recorder",
        description="Records the headers it receives",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=f"http://127.0.0.1:{port}/", protocol_binding="JSONRPC", protocol_version="1.0"
            )
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="record", name="Record", description="Records", tags=["t"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=Recorder(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/")]
    return Starlette(routes=routes)


@contextlib.contextmanager
def _serving(app: Any, port: int) -> Iterator[str]:
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


async def _answer(context: Any) -> str:
    return "ok"


@pytest.mark.parametrize("streaming", [False, True])
async def test_our_traceparent_reaches_the_sdk_server(streaming: bool) -> None:
    seen: list[dict[str, str]] = []
    port = _free_port()
    with InMemoryTelemetry() as otel, _serving(_sdk_app(port, seen), port) as url:
        async with A2AClient.for_endpoint(url + "/", timeout=10) as client:
            if streaming:
                events = [event async for event in client.stream("hi")]
                assert events
            else:
                assert (await client.send("hi")).text == "ok"
        await asyncio.sleep(0)
    [ours] = [s for s in otel.spans() if s.kind is SpanKind.CLIENT]
    assert ours.context is not None
    [headers] = seen
    version, trace_id, span_id, flags = headers["traceparent"].split("-")
    assert version == "00"
    assert trace_id == format(ours.context.trace_id, "032x")
    assert span_id == format(ours.context.span_id, "016x")
    assert int(flags, 16) & 1  # sampled


async def test_the_sdk_clients_traceparent_is_continued_by_our_server() -> None:
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types import Message, Part, Role, SendMessageRequest

    trace_id = "0af7651916cd43dd8448eb211c80319c"
    parent = "b7ad6b7169203331"
    with InMemoryTelemetry() as otel:
        async with running_server(_answer) as srv:
            http = httpx.AsyncClient(headers={"traceparent": f"00-{trace_id}-{parent}-01"})
            client = await ClientFactory(
                ClientConfig(streaming=False, httpx_client=http)
            ).create_from_url(srv.url)
            try:
                request = SendMessageRequest(
                    message=Message(
                        role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text="hi")]
                    )
                )
                responses = [r async for r in client.send_message(request)]
                assert responses
            finally:
                await client.close()
                await http.aclose()
    [server] = [
        s for s in otel.spans() if s.kind is SpanKind.SERVER and s.name.endswith("/SendMessage")
    ]
    assert server.parent is not None
    assert server.parent.is_remote
    assert format(server.parent.span_id, "016x") == parent
    assert server.context is not None
    assert format(server.context.trace_id, "032x") == trace_id
