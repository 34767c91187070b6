"""The HTTP+JSON (REST) binding: 1.0 routes, or the 0.3 ``/v1/`` routes.

1.0 bodies are the same ProtoJSON as JSON-RPC params and results; path
parameters and, for GET, query parameters come from the request model, and a
``tenant`` becomes a path prefix. 0.3 uses the 0.3 proto's ProtoJSON and its
resource names (``V03RestCodec`` + ``split_request``). Subscribe is POSTed
and retried with GET when the server answers 405 (the proto says GET, the
spec text and most SDKs POST). Error bodies of both versions
(``google.rpc.Status`` or a bare ``{code, message}``) decode to the same
typed errors the server raised.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, NamedTuple, cast
from urllib.parse import quote

import httpx
import pydantic_core
from pydantic import BaseModel, ValidationError

from ...errors import UnsupportedOperationError
from ...types import AgentInterface, SendMessageResponse
from ...wire._json import DecodeLimits, dumps
from ...wire.codec import RESULT_TYPES, Codec
from ...wire.errors_wire import decode_rest_error
from ...wire.operations import Operation
from ...wire.v03_rest import V03RestCodec, split_request
from ...wire.v10 import V10Codec
from ._http import (
    VERSION_HEADER,
    HttpSettings,
    error_from_response,
    is_event_stream,
    new_http_client,
    parse_json,
    read_bounded,
    request_extensions,
    request_headers,
    safe_to_repeat,
    send,
    sse_values,
    validate_json_directly,
)
from ._streams import peeked, single
from .base import CallOptions, EventIterator, TransportConfig

__all__ = ["RestTransport", "from_interface"]

_EVENT_STREAM = "text/event-stream"
_EVENT_MEMBERS = ("task", "message", "statusUpdate", "artifactUpdate", "msg")
_URLS_KEPT = 64


class _Route(NamedTuple):
    method: str
    path: str
    query: dict[str, str]
    body: Any
    """The JSON body: Python values, or ready bytes."""


def _segment(value: str) -> str:
    return quote(value, safe="")


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _route_v10(op: Operation, request: BaseModel) -> _Route:
    if op in (Operation.SEND_MESSAGE, Operation.SEND_STREAMING_MESSAGE):
        # The body is the request without its tenant, encoded once (not dumped to
        # Python values, then encoded).
        tenant = getattr(request, "tenant", None)
        prefix = f"/{_segment(tenant)}" if tenant else ""
        verb = "send" if op is Operation.SEND_MESSAGE else "stream"
        body = pydantic_core.to_json(request, by_alias=True, exclude={"tenant"})
        return _Route("POST", f"{prefix}/message:{verb}", {}, body)
    fields: dict[str, Any] = request.model_dump(mode="json", by_alias=True)
    tenant = fields.pop("tenant", None)
    prefix = f"/{_segment(tenant)}" if tenant else ""
    if op is Operation.GET_EXTENDED_CARD:
        return _Route("GET", f"{prefix}/extendedAgentCard", {}, None)
    if op is Operation.LIST_TASKS:
        return _Route("GET", f"{prefix}/tasks", _query(fields), None)
    if op in (Operation.GET_TASK, Operation.CANCEL_TASK, Operation.SUBSCRIBE_TO_TASK):
        task = f"{prefix}/tasks/{_segment(fields.pop('id'))}"
        if op is Operation.GET_TASK:
            return _Route("GET", task, _query(fields), None)
        if op is Operation.CANCEL_TASK:
            return _Route("POST", f"{task}:cancel", {}, fields)
        return _Route("POST", f"{task}:subscribe", {}, None)
    configs = f"{prefix}/tasks/{_segment(fields.pop('taskId', '') or '')}/pushNotificationConfigs"
    if op is Operation.CREATE_PUSH_CONFIG:
        body = request.model_dump(mode="json", by_alias=True)
        body.pop("tenant", None)
        return _Route("POST", configs, {}, body)
    if op is Operation.LIST_PUSH_CONFIGS:
        return _Route("GET", configs, _query(fields), None)
    config = f"{configs}/{_segment(fields.pop('id', '') or '')}"
    if op is Operation.GET_PUSH_CONFIG:
        return _Route("GET", config, {}, None)
    if op is Operation.DELETE_PUSH_CONFIG:
        return _Route("DELETE", config, {}, None)
    raise UnsupportedOperationError(f"{op.value} has no A2A 1.0 HTTP+JSON route")


def _query(fields: dict[str, Any]) -> dict[str, str]:
    return {k: _query_value(v) for k, v in fields.items() if v is not None}


class RestTransport:
    """HTTP+JSON calls relative to one base URL."""

    binding = "HTTP+JSON"
    can_cancel_in_flight = True
    concurrent_calls = True

    def __init__(
        self,
        url: str,
        *,
        version: str = "1.0",
        http: httpx.AsyncClient | None = None,
        settings: HttpSettings | None = None,
    ) -> None:
        if version not in ("1.0", "0.3"):
            raise ValueError(f"Unsupported A2A protocol version {version!r} (expected 1.0 or 0.3)")
        self.url = url
        self.base = url.rstrip("/")
        self.version = version
        self.settings = settings or HttpSettings()
        self._codec: Codec = V10Codec() if version == "1.0" else V03RestCodec()
        self._owns_http = http is None
        self._http = http if http is not None else new_http_client()
        headers = dict(self.settings.headers)
        if version != "0.3":
            headers[VERSION_HEADER] = version
        self._headers = headers
        self._content_type = "application/a2a+json" if version != "0.3" else "application/json"
        self._limits = self.settings.limits
        self._urls: dict[str, httpx.URL] = {}

    def _url(self, path: str) -> httpx.URL:
        """The call's URL, parsed once per distinct URL (not on every call); the few
        most recent are kept."""
        text = self.base + path
        url = self._urls.get(text)
        if url is None:
            url = httpx.URL(text)
            if len(self._urls) >= _URLS_KEPT:
                del self._urls[next(iter(self._urls))]
            self._urls[text] = url
        return url

    def _route(self, op: Operation, request: BaseModel) -> _Route:
        if self.version == "1.0":
            return _route_v10(op, request)
        encoded = self._codec.encode_request(op, request)
        method, path, query, body = split_request(op, encoded)
        return _Route(method, path, query, body)

    def _build(
        self, route: _Route, options: CallOptions | None, stream: bool, method: str | None = None
    ) -> httpx.Request:
        accept = _EVENT_STREAM if stream else None
        headers = request_headers(self._headers, self.version, options, accept)
        content: bytes | None = None
        if route.body is not None and (method or route.method) != "GET":
            headers["Content-Type"] = self._content_type
            content = route.body if isinstance(route.body, bytes) else dumps(route.body)
        return self._http.build_request(
            method or route.method,
            self._url(route.path),
            params=route.query or None,
            content=content,
            headers=headers,
            extensions=request_extensions(self.settings, options, stream),
        )

    async def call(
        self, op: Operation, request: BaseModel, options: CallOptions | None = None
    ) -> Any:
        """Send one HTTP+JSON request and decode its result (see ``ClientTransport.call``)."""
        route = self._route(op, request)
        repeatable = safe_to_repeat(op, request)
        response = await send(
            self._http, self._build(route, options, stream=False), repeatable=repeatable
        )
        body = await read_bounded(response, self._limits.max_bytes)
        if not 200 <= response.status_code < 300:
            raise error_from_response(response.status_code, body, self._limits)
        if self.version == "1.0":
            fast = _fast_result(op, body, self._limits)
            if fast is not _MISSING:
                return fast
        value: Any = parse_json(body, self._limits) if body.strip() else {}
        return self._codec.decode_result(op, value)

    async def open_stream(
        self, op: Operation, request: BaseModel, options: CallOptions | None = None
    ) -> EventIterator:
        """Send a streaming HTTP+JSON request and read its server-sent events."""
        route = self._route(op, request)
        repeatable = safe_to_repeat(op, request)
        response = await send(
            self._http, self._build(route, options, stream=True), repeatable=repeatable
        )
        if response.status_code == 405 and op is Operation.SUBSCRIBE_TO_TASK:
            await response.aclose()
            retry = self._build(route, options, stream=True, method="GET")
            response = await send(self._http, retry, repeatable=repeatable)
        if not 200 <= response.status_code < 300:
            body = await read_bounded(response, self._limits.max_bytes)
            raise error_from_response(response.status_code, body, self._limits)
        if not is_event_stream(response):
            body = await read_bounded(response, self._limits.max_bytes)
            return single(self._decode_event(parse_json(body, self._limits)))
        position = options.position if options is not None else None
        return await peeked(self._events(sse_values(response, self._limits, position)))

    async def _events(self, values: AsyncIterator[Any]) -> EventIterator:
        try:
            async for value in values:
                yield self._decode_event(value)
        finally:
            await cast(Any, values).aclose()

    def _decode_event(self, value: Any) -> Any:
        if isinstance(value, dict):
            frame = cast(dict[str, Any], value)
            if "error" in frame and not any(m in frame for m in _EVENT_MEMBERS):
                raise decode_rest_error(500, frame)
        return self._codec.decode_event(value)

    async def aclose(self) -> None:
        """Close the HTTP client, unless it was given by the caller."""
        if self._owns_http:
            await self._http.aclose()


_MISSING: Any = object()


def _fast_result(op: Operation, body: bytes, limits: DecodeLimits) -> Any:
    """A 1.0 result validated into its model straight from the bytes (no parse, then
    validate); anything unusual (``_MISSING``) goes the general way, which says what is
    wrong."""
    if op.streaming or op is Operation.DELETE_PUSH_CONFIG:
        return _MISSING
    if not body or not validate_json_directly(body, limits):
        return _MISSING
    try:
        if op is Operation.SEND_MESSAGE:
            return SendMessageResponse.model_validate_json(body).result
        model: type[BaseModel] = RESULT_TYPES[op]
        return model.model_validate_json(body)
    except ValidationError:
        return _MISSING


def from_interface(interface: AgentInterface, config: TransportConfig) -> RestTransport:
    """The ``TransportFactory`` registered for this binding in ``a2a_core.bindings``."""
    return RestTransport(
        interface.url,
        version=interface.protocol_version,
        http=config.http,
        settings=config.settings,
    )
