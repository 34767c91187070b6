"""A third party's HTTP binding: one module (this one) and one ``register_binding`` call.

The binding below ("X-OPS": ``POST {url}/{operation}`` with the 1.0 request
as the body, ``{"result": ...}`` or ``{"error": {"code", "message"}}`` back)
is not JSON-RPC or HTTP+JSON: its server routes and its interfaces come
from the table, so ``A2AApp`` serves it and the card publishes it, and its
client transport is chosen from that card by ``A2AClient``. The built-in
bindings are registrations of the same kind.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from a2a_core import AgentInterface
from a2a_core.bindings import (
    Binding,
    bindings,
    register_binding,
    unregister_binding,
)
from a2a_core.client import A2AClient
from a2a_core.client.transports.base import CallOptions, EventIterator, TransportConfig
from a2a_core.compose.serve import running_server
from a2a_core.errors import (
    A2AError,
    ConfigurationError,
    UnsupportedOperationError,
    error_class_for_code,
)
from a2a_core.server.asgi import Route, RouteContext, create_app, published_interfaces
from a2a_core.server.asgi.http import Receive, Scope, Send, header_map, read_body, send_bytes
from a2a_core.server.context import ServerCallContext
from a2a_core.server.options import AppOptions
from a2a_core.wire import V10Codec, dumps, loads
from a2a_core.wire.operations import Operation
from pydantic import BaseModel

NAME = "X-OPS"
PATH = "/x-ops"
_CODEC = V10Codec()


async def echo(context: Any) -> str:
    return f"echo: {context.text}"


# --- the binding: server side ------------------------------------------------------


class OpsEndpoint:
    """``POST /x-ops/{operation}``: unary operations only."""

    def __init__(self, context: RouteContext) -> None:
        self.edge = context.edge

    async def __call__(self, scope: Scope, receive: Receive, send: Send, rest: str) -> None:
        headers = header_map(scope["headers"])
        try:
            op = Operation(rest.lstrip("/"))
        except ValueError:
            await send_bytes(
                send, 404, b'{"error":{"code":404,"message":"no such op"}}', b"application/json"
            )
            return
        try:
            if op.streaming:
                raise UnsupportedOperationError("X-OPS carries no streams")
            principal = await self.edge.principal(headers)
            params = loads(await read_body(receive, self.edge.max_body_bytes, headers))
            request = _CODEC.decode_request(op, params)
            call = ServerCallContext("1.0", principal, None, frozenset(), headers)
            result = await self.edge.service.handle(op, request, call)
            body = dumps({"result": _CODEC.encode_result(op, result)})
        except A2AError as exc:
            body = dumps({"error": {"code": exc.code, "message": exc.message}})
        await send_bytes(send, 200, body, b"application/json")


class OpsBinding:
    def interfaces(self, base_url: str, options: AppOptions) -> list[AgentInterface]:
        return [AgentInterface(url=base_url + PATH, protocol_binding=NAME, protocol_version="1.0")]

    def routes(self, context: RouteContext) -> list[Route]:
        return [Route(PATH, OpsEndpoint(context), prefix=True)]


SERVED = OpsBinding()


# --- the binding: client side ------------------------------------------------------


class OpsTransport:
    binding = NAME
    version = "1.0"
    can_cancel_in_flight = True
    concurrent_calls = True

    def __init__(self, interface: AgentInterface, config: TransportConfig) -> None:
        self.url = interface.url
        self.http = config.http
        self.calls: list[Operation] = []

    async def call(
        self, op: Operation, request: BaseModel, options: CallOptions | None = None
    ) -> Any:
        self.calls.append(op)
        response = await self.http.post(
            f"{self.url}/{op.value}", content=dumps(_CODEC.encode_request(op, request))
        )
        doc = loads(response.content)
        if "error" in doc:
            error = doc["error"]
            raise error_class_for_code(error["code"])(error["message"])
        return _CODEC.decode_result(op, doc["result"])

    async def open_stream(
        self, op: Operation, request: BaseModel, options: CallOptions | None = None
    ) -> EventIterator:
        raise UnsupportedOperationError("X-OPS carries no streams")

    async def aclose(self) -> None:
        pass


def from_interface(interface: AgentInterface, config: TransportConfig) -> OpsTransport:
    return OpsTransport(interface, config)


@pytest.fixture
def ops_binding() -> Iterator[Binding]:
    entry = Binding(
        name=NAME,
        versions=("1.0",),
        client=f"{__name__}:from_interface",
        routes=f"{__name__}:SERVED",
    )
    register_binding(entry)
    try:
        yield entry
    finally:
        unregister_binding(NAME)


# --- tests -------------------------------------------------------------------------


async def test_a_registered_binding_is_served_published_and_reached(ops_binding: Binding) -> None:
    async with running_server(echo, name="Echo") as server:
        async with await A2AClient.connect(server.url, preferred_bindings=(NAME,)) as client:
            assert client.card is not None
            published = [(i.protocol_binding, i.url) for i in client.card.supported_interfaces]
            assert (NAME, server.url.rstrip("/") + PATH) in published
            assert isinstance(client.transport, OpsTransport)
            assert await client.send_text("hi") == "echo: hi"
            assert client.transport.calls == [Operation.SEND_MESSAGE]
        # The built-in bindings are served beside it, from the same table.
        async with await A2AClient.connect(server.url, preferred_bindings=("JSONRPC",)) as client:
            assert client.transport.binding == "JSONRPC"


async def test_the_card_lists_table_bindings_in_order(ops_binding: Binding) -> None:
    found = published_interfaces("http://h:1", AppOptions(rest_prefix="/api"))
    assert [(i.protocol_binding, i.url) for i in found] == [
        ("JSONRPC", "http://h:1"),
        ("JSONRPC", "http://h:1"),
        ("HTTP+JSON", "http://h:1/api"),
        ("HTTP+JSON", "http://h:1/api"),
        (NAME, "http://h:1/x-ops"),
    ]


async def test_unregistered_it_is_neither_served_nor_published() -> None:
    assert NAME not in [b.name for b in bindings()]
    app = create_app(_service())
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as http:
        card = (await http.get("/.well-known/agent-card.json")).json()
        assert NAME not in {i["protocolBinding"] for i in card["supportedInterfaces"]}
        # Without the binding, /x-ops/... is an HTTP+JSON path (and no route of it).
        response = await http.post(f"{PATH}/SendMessage", content=b"{}")
        assert response.status_code == 404


def test_two_bindings_on_one_path_are_refused(ops_binding: Binding) -> None:
    register_binding(
        Binding(name="X-OPS-TWIN", routes=f"{__name__}:SERVED", client=f"{__name__}:from_interface")
    )
    try:
        with pytest.raises(ConfigurationError, match="two bindings serve the prefix '/x-ops'"):
            create_app(_service())
    finally:
        unregister_binding("X-OPS-TWIN")


def _service() -> Any:
    from a2a_core.compose.builder import build_service
    from a2a_core.server.options import parse_options

    return build_service(echo, options=parse_options({"name": "Echo"}))
