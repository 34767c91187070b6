"""The JSON-RPC 2.0 binding over HTTP, in A2A 1.0 or 0.3.

Every answer is checked before it is believed: ``jsonrpc`` is "2.0", the id
is the one sent, exactly one of ``result`` / ``error`` is present, and the
result has the operation's shape (the codec's ``decode_result``). Errors
come back as the same A2AError subclasses the agent's server raised.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from typing import Any, cast

import httpx
from pydantic import BaseModel, ValidationError, create_model

from ...errors import InvalidAgentResponseError, UnsupportedOperationError
from ...types import AgentInterface, SendMessageResponse
from ...wire._json import DecodeLimits, dumps
from ...wire.codec import RESULT_TYPES, Codec
from ...wire.operations import Operation
from ...wire.v03 import V03JsonRpcCodec
from ...wire.v10 import V10Codec
from ._http import (
    VERSION_HEADER,
    HttpSettings,
    error_from_response,
    is_event_stream,
    new_http_client,
    parse_json,
    read_bounded,
    refine_by_status,
    request_extensions,
    request_headers,
    safe_to_repeat,
    send,
    sse_values,
    validate_json_directly,
)
from ._streams import peeked, single
from .base import CallOptions, EventIterator, TransportConfig

__all__ = ["JsonRpcTransport", "decode_answer", "from_interface"]

_EVENT_STREAM = "text/event-stream"


def codec_for(version: str) -> Codec:
    if version == "1.0":
        return V10Codec()
    if version == "0.3":
        return V03JsonRpcCodec()
    raise ValueError(f"Unsupported A2A protocol version {version!r} (expected 1.0 or 0.3)")


class JsonRpcTransport:
    """JSON-RPC requests to one URL; SSE for the streaming operations."""

    binding = "JSONRPC"
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
        self.url = url
        self._parsed: tuple[str, httpx.URL] | None = None
        self.version = version
        self.settings = settings or HttpSettings()
        self._codec = codec_for(version)
        self._owns_http = http is None
        self._http = http if http is not None else new_http_client()
        self._ids = itertools.count(1)
        headers = {"Content-Type": "application/json", **self.settings.headers}
        if version != "0.3":
            headers[VERSION_HEADER] = version
        self._headers = headers
        self._limits = self.settings.limits

    def _parsed_url(self) -> httpx.URL:
        """``url`` parsed once, not on every call (and again if it is changed)."""
        parsed = self._parsed
        if parsed is None or parsed[0] is not self.url:
            parsed = self._parsed = (self.url, httpx.URL(self.url))
        return parsed[1]

    def _method(self, op: Operation) -> str:
        method = op.method(self.version)
        if method is None:
            raise UnsupportedOperationError(f"{op.value} has no A2A {self.version} JSON-RPC method")
        return method

    def _build(
        self, op: Operation, request: BaseModel, options: CallOptions | None, stream: bool
    ) -> tuple[int, httpx.Request]:
        method = self._method(op)
        # 1.0 params are the request model itself, serialized once with the envelope.
        params = request if self.version == "1.0" else self._codec.encode_request(op, request)
        request_id = next(self._ids)
        envelope: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            envelope["params"] = params
        http_request = self._http.build_request(
            "POST",
            self._parsed_url(),
            content=dumps(envelope),
            headers=request_headers(
                self._headers, self.version, options, _EVENT_STREAM if stream else None
            ),
            extensions=request_extensions(self.settings, options, stream),
        )
        return request_id, http_request

    async def call(
        self, op: Operation, request: BaseModel, options: CallOptions | None = None
    ) -> Any:
        """Send one JSON-RPC request and decode its result (see ``ClientTransport.call``)."""
        request_id, http_request = self._build(op, request, options, stream=False)
        response = await send(self._http, http_request, repeatable=safe_to_repeat(op, request))
        body = await read_bounded(response, self._limits.max_bytes)
        return decode_answer(self._codec, op, response.status_code, body, request_id, self._limits)

    async def open_stream(
        self, op: Operation, request: BaseModel, options: CallOptions | None = None
    ) -> EventIterator:
        """Send a streaming JSON-RPC request and read its server-sent events."""
        request_id, http_request = self._build(op, request, options, stream=True)
        response = await send(self._http, http_request, repeatable=safe_to_repeat(op, request))
        if not 200 <= response.status_code < 300:
            body = await read_bounded(response, self._limits.max_bytes)
            raise _http_error(self._codec, response.status_code, body, self._limits)
        if not is_event_stream(response):
            # A plain JSON-RPC answer: an error, or (leniently) a single result.
            body = await read_bounded(response, self._limits.max_bytes)
            result = _unwrap(self._codec, parse_json(body, self._limits), request_id)
            return single(self._codec.decode_event(result))
        position = options.position if options is not None else None
        events = self._events(sse_values(response, self._limits, position), request_id)
        return await peeked(events)

    async def _events(self, values: AsyncIterator[Any], request_id: int) -> EventIterator:
        try:
            async for value in values:
                yield self._codec.decode_event(_unwrap(self._codec, value, request_id))
        finally:
            await cast(Any, values).aclose()

    async def aclose(self) -> None:
        """Close the HTTP client, unless it was given by the caller."""
        if self._owns_http:
            await self._http.aclose()


_MISSING: Any = object()
_ENVELOPES: dict[Operation, type[BaseModel] | None] = {}


def decode_answer(
    codec: Codec, op: Operation, status: int, body: bytes, request_id: int, limits: DecodeLimits
) -> Any:
    """The result of a unary call from its HTTP status and whole body, or the error it holds.

    What ``JsonRpcTransport.call`` does once the answer is read.
    """
    if not 200 <= status < 300:
        raise _http_error(codec, status, body, limits)
    if codec.version == "1.0":
        fast = _fast_result(op, body, request_id, limits)
        if fast is not _MISSING:
            return fast
    result = _unwrap(codec, parse_json(body, limits), request_id)
    return codec.decode_result(op, result)


def _fast_result(op: Operation, body: bytes, request_id: int, limits: DecodeLimits) -> Any:
    """The common case in one pass: a well-formed 1.0 success validated from the bytes.

    Anything else (an error, a bad envelope, a deep document, a result of the
    wrong shape) goes the general way, which says precisely what is wrong.
    """
    envelope = _envelope_model(op)
    if envelope is None or not validate_json_directly(body, limits):
        return _MISSING
    try:
        parsed = envelope.model_validate_json(body)
    except ValidationError:
        return _MISSING
    values = cast(Any, parsed)
    if values.jsonrpc != "2.0" or values.error is not None:
        return _MISSING
    if not _same_id(values.id, request_id):
        return _MISSING
    result = values.result
    return result.result if isinstance(result, SendMessageResponse) else result


def _http_error(codec: Codec, status: int, body: bytes, limits: DecodeLimits) -> Exception:
    """A JSON-RPC error sent with a non-2xx status, or an error by HTTP status."""
    try:
        value = parse_json(body, limits) if body else None
    except InvalidAgentResponseError:
        value = None
    if isinstance(value, dict):
        envelope = cast(dict[str, Any], value)
        if "error" in envelope and envelope.get("jsonrpc") == "2.0":
            return refine_by_status(codec.decode_error(envelope["error"]), status)
    return error_from_response(status, body, limits)


def _unwrap(codec: Codec, value: Any, request_id: int) -> Any:
    """Validate a JSON-RPC response envelope; its result, or raise its error."""
    if not isinstance(value, dict):
        raise InvalidAgentResponseError("The agent's JSON-RPC response is not an object")
    envelope = cast(dict[str, Any], value)
    if envelope.get("jsonrpc") != "2.0":
        raise InvalidAgentResponseError('The agent\'s JSON-RPC response lacks "jsonrpc": "2.0"')
    has_result = "result" in envelope
    error = envelope.get("error")
    if has_result == (error is not None):
        raise InvalidAgentResponseError(
            "The agent's JSON-RPC response must hold exactly one of result or error"
        )
    answered = envelope.get("id", _MISSING)
    if error is not None:
        if answered is not None and not _same_id(answered, request_id):
            raise InvalidAgentResponseError(
                "The agent's JSON-RPC error answers a different request id"
            )
        raise codec.decode_error(error)
    if not _same_id(answered, request_id):
        raise InvalidAgentResponseError("The agent's JSON-RPC response has the wrong id")
    return envelope["result"]


def _envelope_model(op: Operation) -> type[BaseModel] | None:
    """A JSON-RPC response model whose ``result`` is the operation's 1.0 result type."""
    if op in _ENVELOPES:
        return _ENVELOPES[op]
    model: type[BaseModel] | None = None
    if not op.streaming and op is not Operation.DELETE_PUSH_CONFIG:
        result_type: Any = SendMessageResponse if op is Operation.SEND_MESSAGE else RESULT_TYPES[op]
        model = create_model(
            f"JsonRpc{op.value}Response",
            jsonrpc=(str, ...),
            id=(Any, None),
            result=(result_type, ...),
            error=(Any, None),
        )
    _ENVELOPES[op] = model
    return model


def _same_id(answered: Any, request_id: int) -> bool:
    return type(answered) is int and answered == request_id


def from_interface(interface: AgentInterface, config: TransportConfig) -> JsonRpcTransport:
    """The ``TransportFactory`` registered for this binding in ``a2a_core.bindings``."""
    return JsonRpcTransport(
        interface.url,
        version=interface.protocol_version,
        http=config.http,
        settings=config.settings,
    )
