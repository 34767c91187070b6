"""The gRPC binding of an ``A2AApp``: ``lf.a2a.v1.A2AService`` on its own port.

It runs on ``grpc.aio`` in the same event loop as the HTTP server and calls
the same ``A2AService`` through the same ``Edge`` as the HTTP bindings: the
same authentication (metadata ``authorization`` and any other key reach the
``authenticate`` hook as lower-case headers), extensions (metadata
``a2a-extensions``, activated ones echoed in the initial metadata), bounds
and errors. Every A2A error becomes its gRPC status with a
``google.rpc.Status`` carrying an ErrorInfo (and the error's data) in the
``grpc-status-details-bin`` trailer.

The ``a2a-version`` metadata is optional (this service is the 1.0 package);
any version other than 1.0 is VersionNotSupportedError.

    server = GrpcServer(port=50051)
    server.attach(app)          # an A2AApp (create_app) or its Edge
    await server.start()
    ...
    await server.stop(grace=5)

``serve(agent, grpc_port=...)`` and ``running_server(...)`` do this beside
the HTTP server and list the interface in the card.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Protocol, cast

import grpc
import grpc.aio
from google.protobuf import json_format
from google.protobuf.message import Message as ProtoMessage
from pydantic import BaseModel

from .. import telemetry as _telemetry
from ..errors import (
    A2AError,
    HttpStatusMapping,
    InternalError,
    InvalidParamsError,
    VersionNotSupportedError,
)
from ..identity import connection_tls
from ..server.asgi.edge import Edge
from ..server.asgi.http import negotiate_version
from ..server.context import ServerCallContext
from ..server.stream import ServerStream
from ..wire._json import DEFAULT_LIMITS
from ..wire.operations import Operation
from ..wire.v10 import V10Codec
from .proto import (
    GRPC_STATUS_CODES,
    SERVICE,
    STATUS_DETAILS_KEY,
    decode_message,
    encode_status,
    encode_value,
    parse,
    request_class,
    response_class,
)

__all__ = ["GrpcServer", "grpc_address"]

logger = logging.getLogger("a2a_core.grpc")

_RESULT: ContextVar[Any] = ContextVar("a2a_grpc_result", default=None)
"""The answer of the unary call in progress (read by its span; set only while tracing)."""
_FAILED: ContextVar[A2AError | None] = ContextVar("a2a_grpc_failed", default=None)
"""The A2A error the call in progress aborted with (set only while tracing)."""


def _a2a_error(failure: BaseException | None) -> BaseException | None:
    """What a traced call failed with: the A2A error behind an abort, else the exception."""
    found = _FAILED.get()
    return found if found is not None else failure


_STATUS = {name: code for code in grpc.StatusCode for name in (code.name,)}


class _HasEdge(Protocol):
    @property
    def edge(self) -> Edge: ...


def grpc_address(host: str, port: int) -> str:
    """``host:port`` as gRPC targets spell it (IPv6 in brackets)."""
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


def _serialize(message: ProtoMessage) -> bytes:
    return message.SerializeToString()


class _Binding:
    """Per-app handlers: metadata -> call context, proto <-> model, errors -> status."""

    def __init__(
        self, edge: Edge, mapping: HttpStatusMapping, client_certificates: bool = False
    ) -> None:
        self.edge = edge
        self.mapping = mapping
        self.client_certificates = client_certificates
        self.codec = V10Codec(edge.limits)
        self.service = edge.service

    def handler(self) -> grpc.GenericRpcHandler:
        methods: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
        for op in Operation:
            deserialize = self._deserializer(op)
            if op.streaming:
                methods[op.value] = grpc.unary_stream_rpc_method_handler(
                    self._stream(op),
                    request_deserializer=deserialize,
                    response_serializer=_serialize,
                )
            else:
                methods[op.value] = grpc.unary_unary_rpc_method_handler(
                    self._unary(op),
                    request_deserializer=deserialize,
                    response_serializer=_serialize,
                )
        return grpc.method_handlers_generic_handler(SERVICE, methods)

    @staticmethod
    def _deserializer(op: Operation) -> Callable[[bytes], Any]:
        cls = request_class(op)

        def deserialize(data: bytes) -> Any:
            # Keep the bytes: a parse failure must become an A2A error inside the
            # handler, not a bare INTERNAL from the deserializer.
            try:
                return parse(cls, data)
            except A2AError as exc:
                return exc

        return deserialize

    async def _prepare(
        self, op: Operation, raw: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tuple[BaseModel, ServerCallContext]:
        headers = _headers(context)
        edge = self.edge
        tls = connection_tls.set(_peer_tls(context) if self.client_certificates else None)
        try:
            principal = (
                await edge.principal(headers)
                if edge.authenticate is not None or edge.require_auth
                else None
            )
        finally:
            connection_tls.reset(tls)
        version = headers.get("a2a-version")
        if version is not None and version.strip() and negotiate_version(version) != "1.0":
            raise VersionNotSupportedError(
                f"A2A version {version.strip()[:32]!r} is not served over gRPC (1.0 is)"
            )
        extensions, echo = edge.extensions(headers)
        if echo:
            await context.send_initial_metadata(
                [(name.decode("latin-1"), value.decode("latin-1")) for name, value in echo]
            )
        if isinstance(raw, A2AError):
            raise raw
        try:
            value = decode_message(cast(ProtoMessage, raw), edge.limits)
        except json_format.Error as exc:
            raise InvalidParamsError(f"Invalid parameters: {exc}") from None
        request = self.codec.decode_request(op, value)
        call = ServerCallContext(
            "1.0", principal, getattr(request, "tenant", None), extensions, headers
        )
        return request, call

    def _unary(
        self, op: Operation
    ) -> Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[ProtoMessage]]:
        out = response_class(op)

        async def handle(raw: Any, context: grpc.aio.ServicerContext[Any, Any]) -> ProtoMessage:
            hooks = _telemetry.active
            if hooks is not None:
                return await self._traced(hooks, op, raw, context, answer)
            return await answer(raw, context)

        async def answer(raw: Any, context: grpc.aio.ServicerContext[Any, Any]) -> ProtoMessage:
            try:
                request, call = await self._prepare(op, raw, context)
                result = await self.service.handle(op, request, call)
                if _telemetry.active is not None:
                    _RESULT.set(result)
                return encode_value(out, self.codec.encode_result(op, result))
            except A2AError as exc:
                await self._abort(context, exc)
            except json_format.Error:
                logger.exception("gRPC %s: the result does not fit the proto", op.value)
                await self._abort(context, InternalError())
            except Exception:
                logger.exception("gRPC %s failed", op.value)
                await self._abort(context, InternalError())
            raise AssertionError("unreachable: abort raises")

        return handle

    def _stream(
        self, op: Operation
    ) -> Callable[[Any, grpc.aio.ServicerContext[Any, Any]], AsyncIterator[ProtoMessage]]:
        out = response_class(op)

        async def handle(
            raw: Any, context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[ProtoMessage]:
            events: ServerStream | None = None
            hooks = _telemetry.active
            span = None
            if hooks is not None:
                span = hooks.grpc_start(op, _headers(context))
                _FAILED.set(None)
            last: Any = None
            failure: BaseException | None = None
            try:
                request, call = await self._prepare(op, raw, context)
                events = await self.service.open_stream(op, request, call)
                if hooks is not None:
                    hooks.stream_opened()
                async for event in events:
                    last = event
                    yield encode_value(out, self.codec.encode_event(event))
            except A2AError as exc:
                await self._abort(context, exc)
            except json_format.Error:
                logger.exception("gRPC %s: an event does not fit the proto", op.value)
                await self._abort(context, InternalError())
            except Exception:
                logger.exception("gRPC %s failed", op.value)
                await self._abort(context, InternalError())
            except BaseException as exc:
                failure = exc
                raise
            finally:
                if events is not None:
                    await events.aclose()
                    if hooks is not None:
                        hooks.stream_closed()
                if span is not None and hooks is not None:
                    hooks.grpc_end(span, op, last, _a2a_error(failure))

        return handle

    async def _traced(
        self,
        hooks: Any,
        op: Operation,
        raw: Any,
        context: grpc.aio.ServicerContext[Any, Any],
        answer: Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[ProtoMessage]],
    ) -> ProtoMessage:
        """A unary call inside its SERVER span (the caller's trace from the metadata)."""
        span = hooks.grpc_start(op, _headers(context))
        token = _RESULT.set(None)
        _FAILED.set(None)
        failure: BaseException | None = None
        try:
            return await answer(raw, context)
        except BaseException as exc:
            failure = exc
            raise
        finally:
            hooks.grpc_end(span, op, _RESULT.get(), _a2a_error(failure))
            _RESULT.reset(token)

    async def _abort(self, context: grpc.aio.ServicerContext[Any, Any], error: A2AError) -> None:
        if _telemetry.active is not None:
            _FAILED.set(error)
        name = error.grpc_status_for(self.mapping)
        code = GRPC_STATUS_CODES.get(name, GRPC_STATUS_CODES["INTERNAL"])
        context.set_trailing_metadata([(STATUS_DETAILS_KEY, encode_status(code, error))])
        await context.abort(_STATUS.get(name, grpc.StatusCode.INTERNAL), error.message)


def _peer_tls(context: grpc.aio.ServicerContext[Any, Any]) -> dict[str, Any] | None:
    """The call's verified client certificate, as the ASGI TLS extension states it."""
    facts = context.auth_context() or {}
    if list(facts.get("transport_security_type") or ()) != [b"ssl"]:
        return None
    pems = [pem.decode("ascii") for pem in facts.get("x509_pem_cert") or ()]
    return {
        "server_cert": None,
        "client_cert_chain": pems[:1],
        "client_cert_name": None,
        "client_cert_error": None,
        "tls_version": None,
        "cipher_suite": None,
    }


def _headers(context: grpc.aio.ServicerContext[Any, Any]) -> dict[str, str]:
    """Invocation metadata as lower-case headers (binary ``-bin`` keys are left out)."""
    headers: dict[str, str] = {}
    for key, value in context.invocation_metadata() or ():
        if isinstance(value, str):
            name = key.lower()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


class GrpcServer:
    """A ``grpc.aio`` server for one A2A app, on its own port.

    - ``host`` / ``port``: where to listen (port 0: a free port; ``port`` says
      which once bound).
    - ``max_message_bytes``: the largest request message (default 10 MiB, the
      HTTP body bound); larger ones are refused with RESOURCE_EXHAUSTED.
    - ``max_concurrent_streams``: HTTP/2 streams per connection (None: gRPC's default).
    - ``max_concurrent_rpcs``: calls served at once; more are refused with
      RESOURCE_EXHAUSTED (None: no bound).
    - ``status_mapping``: which revision's error -> status table ("1.0.1",
      or "1.0.0", which the conformance kit expects); None: the app's
      ``http_status_mapping``.
    - ``credentials``: ``grpc.ServerCredentials`` for TLS (None: plaintext).
    - ``client_certificates``: the ``credentials`` require and verify client
      certificates (``require_client_auth=True``): each call's certificate goes to
      the auth backends (``a2a_core.mtls.MutualTLSAuth``). Never set it for
      credentials that accept unverified certificates.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        max_message_bytes: int | None = None,
        max_concurrent_streams: int | None = None,
        max_concurrent_rpcs: int | None = None,
        status_mapping: HttpStatusMapping | str | None = None,
        credentials: grpc.ServerCredentials | None = None,
        client_certificates: bool = False,
    ) -> None:
        if client_certificates and credentials is None:
            raise ValueError("client_certificates needs TLS credentials that require them")
        if max_message_bytes is not None and max_message_bytes <= 0:
            raise ValueError("max_message_bytes must be > 0")
        self.host = host
        self.port = port
        self.status_mapping = HttpStatusMapping(status_mapping) if status_mapping else None
        self._max_message_bytes = max_message_bytes or DEFAULT_LIMITS.max_bytes
        self._max_concurrent_streams = max_concurrent_streams
        self._max_concurrent_rpcs = max_concurrent_rpcs
        self._credentials = credentials
        self._client_certificates = client_certificates
        self._server: grpc.aio.Server | None = None
        self._attached = False

    def bind(self) -> int:
        """Create the server and listen (not yet serving); returns the port."""
        if self._server is not None:
            return self.port
        options: list[tuple[str, Any]] = [
            ("grpc.max_receive_message_length", self._max_message_bytes),
            ("grpc.max_send_message_length", -1),
            ("grpc.so_reuseport", 0),
        ]
        if self._max_concurrent_streams is not None:
            options.append(("grpc.max_concurrent_streams", self._max_concurrent_streams))
        server = grpc.aio.server(options=options, maximum_concurrent_rpcs=self._max_concurrent_rpcs)
        address = grpc_address(self.host, self.port)
        try:
            if self._credentials is not None:
                port = server.add_secure_port(address, self._credentials)
            else:
                port = server.add_insecure_port(address)
        except RuntimeError as exc:
            raise OSError(f"gRPC could not listen on {address}: {exc}") from None
        if port == 0:
            raise OSError(f"gRPC could not listen on {address}")
        self._server = server
        self.port = port
        return port

    def attach(self, app: _HasEdge | Edge) -> int:
        """Serve ``app`` (an ``A2AApp`` or its ``Edge``); binds first if needed. The port."""
        if self._attached:
            raise RuntimeError("this GrpcServer already serves an app")
        port = self.bind()
        edge = app if isinstance(app, Edge) else app.edge
        mapping = self.status_mapping or HttpStatusMapping(
            getattr(app, "http_status_mapping", HttpStatusMapping.V1_0_1)
        )
        assert self._server is not None
        self._server.add_generic_rpc_handlers(
            (_Binding(edge, mapping, self._client_certificates).handler(),)
        )
        self._attached = True
        return port

    @property
    def address(self) -> str:
        """``host:port`` where the server listens."""
        return grpc_address(self.host, self.port)

    async def start(self) -> None:
        """Start serving the attached app's service on the bound port."""
        if self._server is None or not self._attached:
            raise RuntimeError("GrpcServer.attach(app) first")
        await self._server.start()

    async def stop(self, grace: float | None = None) -> None:
        """Refuse new calls, let running ones finish for ``grace`` seconds, then cancel them."""
        server, self._server = self._server, None
        if server is not None:
            await server.stop(grace)
