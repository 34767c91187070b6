"""The HTTP+JSON (REST) binding: 1.0 routes (optionally under ``/{tenant}``) and 0.3 ``/v1`` routes.

Routes are matched by splitting the path once; there is no regex table. The
1.0 routes speak 1.0 ProtoJSON unless the request says ``A2A-Version: 0.3``
(then the 0.3 HTTP+JSON shapes are used on the same paths); a request without
the header is 1.0 here, because 0.3 clients use the ``/v1`` routes, which are
0.3 whatever the header says. Path values (task id, config id, tenant) win
over the same fields in the body or the query string. Every path under
``/v1/`` belongs to 0.3, so ``v1`` cannot be a tenant.

Errors: 1.0 answers a ``google.rpc.Status`` body with the status of the
configured mapping (1.0.1 by default, 1.0.0 for the conformance kit); 0.3
answers ``{"code", "message", "data"?}`` with the statuses 0.3 SDKs used.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import Any, NamedTuple

from ...errors import (
    A2AError,
    AuthenticationRequiredError,
    ConfigurationError,
    ContentTypeNotSupportedError,
    HttpStatusMapping,
    InternalError,
    InvalidParamsError,
    MethodNotFoundError,
)
from ...types import AgentInterface, StreamEvent, TransportProtocol
from ...wire import Codec, Operation, V10Codec, dumps, loads
from ...wire.errors_wire import encode_rest_error_v03, encode_rest_error_v10
from ...wire.v03_rest import V03RestCodec, assemble_request
from ..authorization import InsufficientScopeError
from ..context import ServerCallContext
from ..options import AppOptions
from ..stream import ServerStream
from .access import ACCESS_KEY, AccessRecord, RecordedEvents
from .edge import Edge
from .files_route import BASE_URL_KEY
from .http import (
    ClientGone,
    Receive,
    Scope,
    Send,
    header_map,
    is_json_media,
    negotiate_version,
    query_map,
    read_body,
    requested_version,
    send_bytes,
)
from .routes import Route, RouteContext
from .sse import SSE_HEADERS, stream_sse

__all__ = ["SERVED", "RestBinding", "RestEndpoint", "RouteMatch", "match_route"]

logger = logging.getLogger("a2a_core.server.asgi")

_JSON = b"application/json"
_BODY_OPS = frozenset(
    {
        Operation.SEND_MESSAGE,
        Operation.SEND_STREAMING_MESSAGE,
        Operation.CANCEL_TASK,
        Operation.CREATE_PUSH_CONFIG,
    }
)
_PUSH_OPS = frozenset(
    {
        Operation.CREATE_PUSH_CONFIG,
        Operation.GET_PUSH_CONFIG,
        Operation.LIST_PUSH_CONFIGS,
        Operation.DELETE_PUSH_CONFIG,
    }
)

_SEND = {"POST": Operation.SEND_MESSAGE}
_STREAM = {"POST": Operation.SEND_STREAMING_MESSAGE}
_LIST = {"GET": Operation.LIST_TASKS}
_CARD = {"GET": Operation.GET_EXTENDED_CARD}
_GET = {"GET": Operation.GET_TASK}
_CANCEL = {"POST": Operation.CANCEL_TASK}
_SUBSCRIBE = {"GET": Operation.SUBSCRIBE_TO_TASK, "POST": Operation.SUBSCRIBE_TO_TASK}
_PUSH_CONFIGS = {"GET": Operation.LIST_PUSH_CONFIGS, "POST": Operation.CREATE_PUSH_CONFIG}
_PUSH_CONFIG = {"GET": Operation.GET_PUSH_CONFIG, "DELETE": Operation.DELETE_PUSH_CONFIG}


class RouteMatch(NamedTuple):
    """A matched path: the operation per HTTP method and the path values."""

    methods: dict[str, Operation]
    version: str | None
    """"0.3" for the ``/v1`` routes; None: negotiated (1.0 unless the header says 0.3)."""
    tenant: str | None
    task_id: str | None = None
    config_id: str | None = None


_Found = tuple[dict[str, Operation], str | None, str | None]


def _match(parts: list[str], legacy: bool) -> _Found | None:
    """(methods, task id, config id) of the path segments, or None."""
    n = len(parts)
    head = parts[0]
    if n == 1:
        if head == "message:send":
            return _SEND, None, None
        if head == "message:stream":
            return _STREAM, None, None
        if legacy:
            return (_CARD, None, None) if head == "card" else None
        if head == "tasks":
            return _LIST, None, None
        if head == "extendedAgentCard":
            return _CARD, None, None
        return None
    if head != "tasks" or not parts[1]:
        return None
    if n == 2:
        segment = parts[1]
        task_id, colon, verb = segment.rpartition(":")
        if colon and task_id:
            if verb == "cancel":
                return _CANCEL, task_id, None
            if verb == "subscribe":
                return _SUBSCRIBE, task_id, None
        return _GET, segment, None
    if parts[2] != "pushNotificationConfigs":
        return None
    if n == 3:
        return _PUSH_CONFIGS, parts[1], None
    if n == 4 and parts[3]:
        return _PUSH_CONFIG, parts[1], parts[3]
    return None


def match_route(path: str) -> RouteMatch | None:
    """Match a path (relative to the REST base) to a route of either version."""
    if len(path) > 1 and path.endswith("/"):
        path = path[:-1]
    if not path.startswith("/"):
        return None
    parts = path[1:].split("/")
    if len(parts) > 5:
        return None
    if parts[0] == "v1":  # the 0.3 namespace ("v1" cannot be a tenant)
        found = _match(parts[1:], legacy=True) if len(parts) > 1 else None
        return None if found is None else RouteMatch(found[0], "0.3", None, found[1], found[2])
    found = _match(parts, legacy=False)
    if found is not None:
        return RouteMatch(found[0], None, None, found[1], found[2])
    if len(parts) > 1 and parts[0]:
        found = _match(parts[1:], legacy=False)
        if found is not None:
            return RouteMatch(found[0], None, parts[0], found[1], found[2])
    return None


def _as_object(value: Any, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidParamsError(f"The {what} must be a JSON object")
    return dict(value)  # pyright: ignore[reportUnknownArgumentType]


def _assemble_v10(
    op: Operation, route: RouteMatch, query: dict[str, str], body: Any
) -> dict[str, Any]:
    """The 1.0 request message from the route's pieces (google.api.http transcoding)."""
    out = _as_object(body, "request body") if op in _BODY_OPS else dict[str, Any](query)
    if op in _PUSH_OPS:
        out["taskId"] = route.task_id
        if route.config_id is not None:
            out["id"] = route.config_id
    elif route.task_id is not None:
        out["id"] = route.task_id
    if route.tenant is not None:
        out["tenant"] = route.tenant
    return out


class RestEndpoint:
    """Routes and answers HTTP+JSON requests of both versions."""

    def __init__(
        self,
        edge: Edge,
        v10: Codec,
        v03: Codec,
        *,
        mapping: HttpStatusMapping = HttpStatusMapping.V1_0_1,
        content_type: str = "application/json",
    ) -> None:
        self.edge = edge
        self.v10 = v10
        self.v03 = v03
        self.mapping = mapping
        self.content_type = content_type.encode("latin-1")

    async def __call__(self, scope: Scope, receive: Receive, send: Send, path: str) -> None:
        access: AccessRecord | None = scope.get(ACCESS_KEY)
        if access is not None:
            access.binding = "HTTP+JSON"
        route = match_route(path)
        if route is None:
            legacy = path.startswith("/v1/")
            error = MethodNotFoundError(f"No A2A route for {scope['method']} {path[:200]}")
            await self._error(send, error, "0.3" if legacy else "1.0", [], status=404)
            return
        method = scope["method"]
        op = route.methods.get(method)
        if op is None:
            allow = ", ".join(sorted(route.methods)).encode()
            error = MethodNotFoundError(f"{method} is not allowed here; use {allow.decode()}")
            await self._error(send, error, route.version or "1.0", [(b"allow", allow)], status=405)
            return
        await self._handle(scope, receive, send, route, op)

    async def _handle(
        self, scope: Scope, receive: Receive, send: Send, route: RouteMatch, op: Operation
    ) -> None:
        edge = self.edge
        headers = header_map(scope["headers"])
        version = route.version or "1.0"
        extra: list[tuple[bytes, bytes]] = []
        access: AccessRecord | None = scope.get(ACCESS_KEY)
        if access is not None:
            access.method = access.operation = op.value
        try:
            principal = (
                await edge.principal(headers)
                if edge.authenticate is not None or edge.require_auth
                else None
            )
            if route.version is None:
                raw = requested_version(headers, scope["query_string"])
                if raw is not None and raw.strip():
                    version = negotiate_version(raw)
            codec = self.v03 if version == "0.3" else self.v10
            extensions, extra = edge.extensions(headers)
            body: Any = None
            raw_body = b""
            if op in _BODY_OPS:
                raw_body = await read_body(receive, edge.max_body_bytes, headers)
                if raw_body.strip():
                    if not is_json_media(headers.get("content-type")):
                        raise ContentTypeNotSupportedError(
                            "HTTP+JSON request bodies must be application/json"
                        )
                    body = loads(raw_body, edge.limits)
            query = query_map(scope["query_string"])
            if version == "0.3":
                assembled = assemble_request(
                    op, task_id=route.task_id, config_id=route.config_id, query=query, body=body
                )
            else:
                assembled = _assemble_v10(op, route, query, body)
            request = codec.decode_request(op, assembled)
            if access is not None:
                access.version = version
                access.request(request)
            call = ServerCallContext(
                version, principal, route.tenant, extensions, headers, scope.get(BASE_URL_KEY)
            )
            if op.streaming:
                events = await edge.service.open_stream(op, request, call)
                if access is not None:
                    events = RecordedEvents(events, access)
            else:
                result = await edge.service.handle(op, request, call)
                if access is not None:
                    access.result(result)
                payload = codec.encode_result_json(op, result)
                content_type = self.content_type if version == "1.0" else _JSON
                await send_bytes(send, 200, payload, content_type, extra)
                return
        except ClientGone:
            return
        except A2AError as exc:
            if access is not None:
                access.error = exc.code
            await self._error(send, exc, version, extra)
            return
        except Exception:
            logger.exception("HTTP+JSON request failed")
            if access is not None:
                access.error = InternalError.code
            await self._error(send, InternalError(), version, extra)
            return
        # An open stream may last hours: let the request's body and decoded model go now
        # (what the run needs of them, it holds itself).
        del raw_body, body, assembled, request
        await self._stream(receive, send, codec, version, events, extra)

    def _stream(
        self,
        receive: Receive,
        send: Send,
        codec: Codec,
        version: str,
        events: ServerStream,
        extra: list[tuple[bytes, bytes]],
    ) -> Coroutine[Any, Any, None]:
        """The SSE pump's coroutine, for the caller to await: no coroutine of this one's
        own around it, kept alive for as long as the stream is open."""

        def frame(event: StreamEvent, encoded: bytes | None) -> bytes:
            return b"data: " + codec.encode_event_json(event, encoded) + b"\n\n"

        def encode_error(error: A2AError) -> bytes:
            return b"data: " + dumps(self._error_payload(error, version)[1]) + b"\n\n"

        headers = SSE_HEADERS + extra if extra else SSE_HEADERS
        return stream_sse(receive, send, events, frame, encode_error, headers, self.edge.sse)

    def _error_payload(self, error: A2AError, version: str) -> tuple[int, dict[str, Any]]:
        if version == "0.3":
            return encode_rest_error_v03(error)
        return encode_rest_error_v10(error, self.mapping)

    async def _error(
        self,
        send: Send,
        error: A2AError,
        version: str,
        extra: list[tuple[bytes, bytes]],
        *,
        status: int | None = None,
    ) -> None:
        code, payload = self._error_payload(error, version)
        if status is not None:
            code = status
            inner = payload.get("error")
            if isinstance(inner, dict):
                inner["code"] = status  # pyright: ignore[reportUnknownMemberType]
                inner["status"] = "NOT_FOUND" if status == 404 else "UNIMPLEMENTED"  # pyright: ignore[reportUnknownMemberType]
        more = list(extra)
        if isinstance(error, AuthenticationRequiredError):
            more.extend(self.edge.challenge)
        elif isinstance(error, InsufficientScopeError):
            more.append((b"www-authenticate", error.challenge(self.edge.card.name or "a2a")))
        if code == 413:
            more.append((b"connection", b"close"))
        await send_bytes(send, code, dumps(payload), _JSON, more)


_MEDIA_TYPES = ("application/json", "application/a2a+json")


class RestBinding:
    """The HTTP+JSON binding's server side (its ``ServedBinding`` in ``a2a_core.bindings``):
    every path below ``rest_prefix`` ("" : every path the app answers no other way);
    ``rest=False`` turns it off."""

    def interfaces(self, base_url: str, options: AppOptions) -> list[AgentInterface]:
        """1.0 then 0.3 at ``rest_prefix`` under ``base_url``."""
        if not options.rest:
            return []
        return [
            AgentInterface(
                url=base_url + options.rest_prefix,
                protocol_binding=TransportProtocol.HTTP_JSON,
                protocol_version=version,
            )
            for version in ("1.0", "0.3")
        ]

    def routes(self, context: RouteContext) -> list[Route]:
        """One prefix route for both versions' paths."""
        opts = context.options
        if opts.rest_content_type not in _MEDIA_TYPES:
            raise ConfigurationError(f"rest_content_type must be one of {', '.join(_MEDIA_TYPES)}")
        prefix = opts.rest_prefix
        if prefix and (not prefix.startswith("/") or prefix.endswith("/")):
            raise ConfigurationError("rest_prefix must start with '/' and not end with '/'")
        if not opts.rest:
            return []
        endpoint = RestEndpoint(
            context.edge,
            V10Codec(opts.limits),
            V03RestCodec(opts.limits),
            mapping=HttpStatusMapping(opts.http_status_mapping),
            content_type=opts.rest_content_type,
        )
        return [Route(prefix, endpoint, prefix=True)]


SERVED = RestBinding()
"""Registered as ``routes`` of the ``HTTP+JSON`` binding."""
