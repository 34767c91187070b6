"""The JSON-RPC 2.0 binding: one POST endpoint, both protocol versions.

Per request: authenticate (if configured), check the media type, read the
body within the size bound, parse it within the depth bound, validate the
envelope, pick the codec from the method name and ``A2A-Version``, decode,
call the service and answer with one response (or an event stream).

Decisions:
- Version: ``A2A-Version`` header, else the ``A2A-Version`` query parameter;
  absent or empty is 0.3. Either version's method names are accepted; the
  method name decides the codec (``operation_for_method``).
- Content-Type must be JSON (``application/json``, ``application/a2a+json`` or
  any ``+json`` type; an absent header is accepted). Anything else is
  ContentTypeNotSupportedError (-32005) with id null, checked before the body
  is read (the body may not even be JSON).
- JSON-RPC errors use HTTP 200, except: an oversized body (413), missing or
  invalid credentials (401 with ``WWW-Authenticate``) and a denied caller (403).
- A request without an ``id`` member is a notification: it runs and is
  answered with 204 and no body, whatever the outcome of running it. A
  notification that cannot run at all (unknown method, invalid params) gets
  its error with id null, as the 0.3 conformance kit requires.
- Batches are refused (-32600).
- Streaming methods answer ``text/event-stream``. An error before the first
  event (unknown task, terminal task, bad params) is a plain JSON-RPC error
  response for 1.0 callers: a stream that never started is not a stream, and
  the 1.0 conformance kit requires it. 0.3 callers that list
  ``text/event-stream`` in ``Accept`` get an event stream holding the one error
  instead, as 0.3 SSE clients (and the 0.3 kit) can read nothing else.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import Any, cast

from ...errors import (
    A2AError,
    AuthenticationRequiredError,
    ConfigurationError,
    ContentTypeNotSupportedError,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
)
from ...types import AgentInterface, StreamEvent, TransportProtocol
from ...wire import Codec, dumps, loads, operation_for_method
from ..authorization import InsufficientScopeError
from ..context import ServerCallContext
from ..options import AppOptions
from ..stream import ServerStream, close_stream
from .access import ACCESS_KEY, AccessRecord, RecordedEvents
from .edge import Edge
from .files_route import BASE_URL_KEY
from .http import (
    ClientGone,
    Receive,
    Scope,
    Send,
    accepts_event_stream,
    header_map,
    is_json_media,
    negotiate_version,
    read_body,
    requested_version,
    send_bytes,
)
from .routes import Route, RouteContext
from .sse import SSE_HEADERS, send_sse_error, stream_sse

__all__ = ["SERVED", "JsonRpcBinding", "JsonRpcEndpoint"]

logger = logging.getLogger("a2a_core.server.asgi")

_JSON = b"application/json"
_NO_CONTENT_START: dict[str, Any] = {"type": "http.response.start", "status": 204, "headers": []}
_EMPTY_BODY: dict[str, Any] = {"type": "http.response.body", "body": b""}
_MAX_METHOD_SHOWN = 64


def _encode_id(rid: Any) -> bytes:
    return str(rid).encode() if type(rid) is int else dumps(rid)


def _valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


class JsonRpcEndpoint:
    """The JSON-RPC endpoint (an ASGI callable for one path)."""

    def __init__(self, edge: Edge, codecs: dict[str, Codec]) -> None:
        self.edge = edge
        self.codecs = codecs
        self._v10 = codecs["1.0"]
        self._v03 = codecs["0.3"]

    async def __call__(self, scope: Scope, receive: Receive, send: Send, _rest: str = "") -> None:
        if scope["method"] != "POST":
            body = self._error_body(
                self._v10, None, InvalidRequestError("JSON-RPC requests must use POST")
            )
            await send_bytes(send, 405, body, _JSON, [(b"allow", b"POST")])
            return
        edge = self.edge
        headers = header_map(scope["headers"])
        access: AccessRecord | None = scope.get(ACCESS_KEY)
        if access is not None:
            access.binding = "JSONRPC"
        codec: Codec | None = None
        rid: Any = None
        notification = False
        executing = False  # a notification's errors are silent only once it ran
        streaming = False
        extra: list[tuple[bytes, bytes]] = []
        try:
            principal = (
                await edge.principal(headers)
                if edge.authenticate is not None or edge.require_auth
                else None
            )
            if not is_json_media(headers.get("content-type")):
                raise ContentTypeNotSupportedError(
                    "JSON-RPC requests must be sent as application/json"
                )
            parsed = loads(await read_body(receive, edge.max_body_bytes, headers), edge.limits)
            if not isinstance(parsed, dict):
                if isinstance(parsed, list):
                    raise InvalidRequestError("Batch requests are not supported")
                raise InvalidRequestError("A JSON-RPC request must be a JSON object")
            doc = cast("dict[str, Any]", parsed)
            if "id" in doc:
                if not _valid_id(doc["id"]):
                    raise InvalidRequestError("The request id must be a string, a number or null")
                rid = doc["id"]
            else:
                notification = True
            if doc.get("jsonrpc") != "2.0":
                notification = False
                raise InvalidRequestError('The "jsonrpc" member must be exactly "2.0"')
            method = doc.get("method")
            if not isinstance(method, str):
                notification = False
                raise InvalidRequestError('The "method" member must be a string')
            params = doc.get("params")
            if params is not None and not isinstance(params, dict):
                raise InvalidParamsError("params must be a JSON object")
            version = negotiate_version(requested_version(headers, scope["query_string"]))
            found = operation_for_method(method, version)
            if found is None:
                shown = method if len(method) <= _MAX_METHOD_SHOWN else method[:_MAX_METHOD_SHOWN]
                raise MethodNotFoundError(f"Method {shown!r} not found")
            op, name_version = found
            codec = self.codecs[name_version]
            streaming = op.streaming
            extensions, extra = edge.extensions(headers)
            if access is not None:
                access.method, access.version = method, name_version
                access.operation = op.value
            request = codec.decode_request(op, params)
            if access is not None:
                access.request(request)
            call = ServerCallContext(
                name_version,
                principal,
                getattr(request, "tenant", None),
                extensions,
                headers,
                scope.get(BASE_URL_KEY),
            )
            executing = True
            if streaming:
                events = await edge.service.open_stream(op, request, call)
                if access is not None:
                    events = RecordedEvents(events, access)
            else:
                result = await edge.service.handle(op, request, call)
                if access is not None:
                    access.result(result)
                if notification:
                    await send(_NO_CONTENT_START)
                    await send(_EMPTY_BODY)
                    return
                body = b"".join(
                    (
                        b'{"jsonrpc":"2.0","id":',
                        _encode_id(rid),
                        b',"result":',
                        codec.encode_result_json(op, result),
                        b"}",
                    )
                )
                await send_bytes(send, 200, body, _JSON, extra)
                return
        except ClientGone:
            return
        except A2AError as exc:
            if access is not None:
                access.error = exc.code
            silent = notification and executing
            await self._fail(send, headers, scope, codec, rid, exc, silent, streaming, extra)
            return
        except Exception:
            logger.exception("JSON-RPC request failed")
            if access is not None:
                access.error = InternalError.code
            silent = notification and executing
            await self._fail(
                send, headers, scope, codec, rid, InternalError(), silent, streaming, extra
            )
            return
        if notification:
            await close_stream(events)
            await send(_NO_CONTENT_START)
            await send(_EMPTY_BODY)
            return
        # An open stream may last hours: let the request's JSON and decoded model go now
        # (what the run needs of them, it holds itself).
        del parsed, doc, params, request
        await self._stream(receive, send, codec, rid, events, extra)

    def _stream(
        self,
        receive: Receive,
        send: Send,
        codec: Codec,
        rid: Any,
        events: ServerStream,
        extra: list[tuple[bytes, bytes]],
    ) -> Coroutine[Any, Any, None]:
        """The SSE pump's coroutine, for the caller to await: no coroutine of this one's
        own around it, kept alive for as long as the stream is open."""
        prefix = b'data: {"jsonrpc":"2.0","id":' + _encode_id(rid) + b',"result":'

        def frame(event: StreamEvent, encoded: bytes | None) -> bytes:
            return prefix + codec.encode_event_json(event, encoded) + b"}\n\n"

        def encode_error(error: A2AError) -> bytes:
            return b"data: " + self._error_body(codec, rid, error) + b"\n\n"

        headers = SSE_HEADERS + extra if extra else SSE_HEADERS
        return stream_sse(receive, send, events, frame, encode_error, headers, self.edge.sse)

    def _error_body(self, codec: Codec, rid: Any, error: A2AError) -> bytes:
        return dumps({"jsonrpc": "2.0", "id": rid, "error": codec.encode_error(error)})

    def _fallback_codec(self, headers: dict[str, str], scope: Scope) -> Codec:
        """The error shape before the method is known: the requested version's."""
        try:
            version = negotiate_version(requested_version(headers, scope["query_string"]))
        except A2AError:
            return self._v10
        return self.codecs[version]

    async def _fail(
        self,
        send: Send,
        headers: dict[str, str],
        scope: Scope,
        codec: Codec | None,
        rid: Any,
        error: A2AError,
        notification: bool,
        streaming: bool,
        extra: list[tuple[bytes, bytes]],
    ) -> None:
        status = 200
        more: list[tuple[bytes, bytes]] = list(extra)
        if isinstance(error, PayloadTooLargeError):
            status = 413
            more.append((b"connection", b"close"))
        elif isinstance(error, AuthenticationRequiredError):
            status = 401
            more.extend(self.edge.challenge)
        elif isinstance(error, PermissionDeniedError):
            status = 403
            if isinstance(error, InsufficientScopeError):
                more.append((b"www-authenticate", error.challenge(self.edge.card.name or "a2a")))
        if notification and status == 200:
            await send(_NO_CONTENT_START)
            await send(_EMPTY_BODY)
            return
        codec = codec or self._fallback_codec(headers, scope)
        body = self._error_body(codec, rid, error)
        if streaming and status == 200 and codec.version == "0.3" and accepts_event_stream(headers):
            await send_sse_error(send, b"data: " + body + b"\n\n", SSE_HEADERS + more)
            return
        await send_bytes(send, status, body, _JSON, more)


class JsonRpcBinding:
    """The JSON-RPC binding's server side (its ``ServedBinding`` in ``a2a_core.bindings``):
    one endpoint at ``jsonrpc_path`` for both versions; ``jsonrpc_path=None`` turns it off."""

    def interfaces(self, base_url: str, options: AppOptions) -> list[AgentInterface]:
        """1.0 then 0.3 at ``jsonrpc_path`` under ``base_url``."""
        path = options.jsonrpc_path
        if path is None:
            return []
        url = base_url if path == "/" else base_url + path
        return [
            AgentInterface(
                url=url, protocol_binding=TransportProtocol.JSONRPC, protocol_version=version
            )
            for version in ("1.0", "0.3")
        ]

    def routes(self, context: RouteContext) -> list[Route]:
        """The endpoint (a browser's GET there gets the landing page)."""
        path = context.options.jsonrpc_path
        if path is None:
            return []
        if not path.startswith("/"):
            raise ConfigurationError("jsonrpc_path must start with '/'")
        from ...wire import V10Codec
        from ...wire.v03 import V03JsonRpcCodec

        limits = context.options.limits
        codecs: dict[str, Codec] = {"1.0": V10Codec(limits), "0.3": V03JsonRpcCodec(limits)}
        return [Route(path, JsonRpcEndpoint(context.edge, codecs), page=True)]


SERVED = JsonRpcBinding()
"""Registered as ``routes`` of the ``JSONRPC`` binding."""
