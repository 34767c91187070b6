"""Real servers on loopback for the client tests: the official SDK's, and tiny raw ASGI apps.

Each server runs uvicorn in a thread with its own event loop, so a module-
scoped server outlives the per-test loops of pytest-asyncio.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from a2a_core.testing import asgi_in_thread
from a2a_core.testing import free_port as free_port  # re-exported for the tests

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@contextlib.contextmanager
def running(
    app: Any,
    port: int | None = None,
    startup_timeout: float = 10.0,
    grpc_port: int | None = None,
    grpc_app: Any = None,
) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 in a background thread; yields the base URL.

    ``grpc_port``: also serve ``app``'s service over gRPC (our ``GrpcServer``) on
    that port, in the same event loop; ``grpc_app`` instead serves that
    ``grpc.aio`` server factory ``(port) -> server`` (the official SDK's).
    """

    @contextlib.asynccontextmanager
    async def grpc_beside(grpc: int) -> AsyncIterator[None]:
        if grpc_app is not None:
            server = grpc_app(grpc)
        else:
            from a2a_core.grpc import GrpcServer

            server = GrpcServer("127.0.0.1", grpc)
            server.attach(app)
        await server.start()
        try:
            yield
        finally:
            await server.stop(0)

    beside = None if grpc_port is None else functools.partial(grpc_beside, grpc_port)
    with asgi_in_thread(
        app, port=port, lifespan="off", startup_timeout=startup_timeout, beside=beside
    ) as url:
        yield url


# --- the official SDK's server --------------------------------------------------------


def sdk_app(port: int, *, v03: bool, grpc_port: int | None = None) -> Any:
    """An a2a-sdk 1.x server (JSON-RPC at /, REST at /rest) with a small scripted agent.

    By the text of the first message: "hello X" answers "Echo: hello X" as a task
    artifact; "reply X" answers with a Message; "ask" pauses for input and
    then greets the answer; "slow" works until canceled; "chunks" streams
    three artifact chunks.
    """
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import (
        create_agent_card_routes,
        create_jsonrpc_routes,
        create_rest_routes,
    )
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types import (
        AgentCapabilities,
        AgentCard,
        AgentInterface,
        AgentSkill,
        Message,
        Part,
        Role,
        Task,
        TaskState,
        TaskStatus,
    )
    from starlette.applications import Starlette

    class ScriptedAgent(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            text = context.get_user_input()
            task_id, context_id = context.task_id or "", context.context_id or ""
            if text.startswith("reply") and context.current_task is None:
                await event_queue.enqueue_event(
                    Message(
                        role=Role.ROLE_AGENT,
                        message_id=f"m-{task_id}",
                        context_id=context_id,
                        parts=[Part(text=f"Reply: {text}")],
                    )
                )
                return
            current = context.current_task
            if current is None:
                await event_queue.enqueue_event(
                    Task(
                        id=task_id,
                        context_id=context_id,
                        status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                        history=[context.message] if context.message else [],
                    )
                )
            updater = TaskUpdater(event_queue, task_id, context_id)
            if current is not None and current.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
                await updater.add_artifact([Part(text=f"Hello, {text}")], name="greeting")
                await updater.complete()
                return
            if text == "ask":
                await updater.requires_input(
                    updater.new_agent_message([Part(text="What is your name?")])
                )
                return
            await updater.start_work()
            if text == "slow":
                await asyncio.sleep(30)
                return
            if text == "chunks":
                for i in range(3):
                    await updater.add_artifact(
                        [Part(text=f"c{i}")],
                        artifact_id="out",
                        append=i > 0,
                        last_chunk=i == 2,
                    )
                await updater.complete()
                return
            await updater.add_artifact([Part(text=f"Echo: {text}")], name="echo")
            await updater.complete()

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()

    base = f"http://127.0.0.1:{port}"
    interfaces = [
        AgentInterface(url=base + "/", protocol_binding="JSONRPC", protocol_version="1.0"),
        AgentInterface(url=base + "/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"),
    ]
    if grpc_port is not None:
        interfaces.append(
            AgentInterface(
                url=f"127.0.0.1:{grpc_port}", protocol_binding="GRPC", protocol_version="1.0"
            )
        )
    if v03:
        interfaces += [
            AgentInterface(url=base + "/", protocol_binding="JSONRPC", protocol_version="0.3"),
            AgentInterface(
                url=base + "/rest", protocol_binding="HTTP+JSON", protocol_version="0.3"
            ),
        ]
    card = AgentCard(
        name="SDK scripted agent",
        description="The official SDK serving a scripted agent for client tests",
        version="1.0.0",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=ScriptedAgent(), task_store=InMemoryTaskStore(), agent_card=card
    )
    sdk_handlers[port] = handler
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/", enable_v0_3_compat=v03),
        *create_rest_routes(handler, enable_v0_3_compat=v03, path_prefix="/rest"),
    ]
    return Starlette(routes=routes)


sdk_handlers: dict[int, Any] = {}
"""The SDK request handler of each ``sdk_app`` by HTTP port (for ``sdk_grpc_server``)."""


def sdk_grpc_server(http_port: int) -> Callable[[int], Any]:
    """A factory of the SDK's ``grpc.aio`` server for the ``sdk_app`` on ``http_port``."""

    def make(grpc_port: int) -> Any:
        import grpc.aio
        from a2a.server.request_handlers import GrpcHandler
        from a2a.types import a2a_pb2_grpc

        server = grpc.aio.server()
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(sdk_handlers[http_port]), server)
        server.add_insecure_port(f"127.0.0.1:{grpc_port}")
        return server

    return make


# --- raw ASGI helpers ---------------------------------------------------------------------


async def read_body(receive: Receive) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


async def respond(
    send: Send,
    status: int,
    body: bytes,
    headers: list[tuple[bytes, bytes]] | None = None,
    content_type: bytes = b"application/json",
) -> None:
    all_headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
    all_headers += headers or []
    await send({"type": "http.response.start", "status": status, "headers": all_headers})
    await send({"type": "http.response.body", "body": body})


def wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


# --- our own server --------------------------------------------------------------------


def scripted_card(**capabilities: Any) -> Any:
    """The card of ``ScriptedAgent`` (interfaces are filled in by whoever serves it)."""
    from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill

    return AgentCard(
        name="Scripted agent",
        description="Our server serving a scripted agent for client tests",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, **capabilities),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"])],
    )


def scripted_executor() -> Any:
    """Our executor with the same script as the SDK agent above."""
    from a2a_core.server import AgentExecutor, RequestContext, TaskUpdater

    class ScriptedAgent(AgentExecutor):
        async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
            text = context.text
            if context.is_continuation:
                await updater.add_artifact(f"Hello, {text}", name="greeting")
                await updater.complete()
                return
            if text.startswith("reply"):
                await updater.reply(f"Reply: {text}")
                return
            if text == "ask":
                await updater.require_input("What is your name?")
                return
            await updater.start_work()
            if text == "slow":
                await asyncio.sleep(30)
                return
            if text == "chunks":
                for i in range(3):
                    await updater.add_artifact(
                        f"c{i}", artifact_id="out", append=i > 0, last_chunk=i == 2
                    )
                await updater.complete()
                return
            await updater.add_artifact(f"Echo: {text}", name="echo")
            await updater.complete()

    return ScriptedAgent()


def scripted_service(**options: Any) -> Any:
    from a2a_core.server import A2AService

    return A2AService(scripted_executor(), scripted_card(), **options)


def our_app(service: Any, port: int, grpc_port: int | None = None) -> Any:
    """Our ASGI app for ``service``, JSON-RPC at / and REST at /rest, both versions.

    ``grpc_port``: the card also lists gRPC at ``127.0.0.1:grpc_port``.
    """
    from a2a_core.compose.serve import interfaces_for
    from a2a_core.server.asgi import create_app

    base = f"http://127.0.0.1:{port}"
    grpc_address = f"127.0.0.1:{grpc_port}" if grpc_port is not None else None
    card = service.card.model_copy(
        update={
            "supported_interfaces": interfaces_for(
                base, rest_prefix="/rest", grpc_address=grpc_address
            )
        }
    )
    return create_app(service, card=card, rest_prefix="/rest")
