"""What both HTTP transports share: sending, bounded reading, SSE frames, error mapping.

Idle connections and retries. A server closes a connection idle for its
keep-alive (5 s for uvicorn, so ``a2a serve``, and Node.js); a call sent just
then meets a closed connection. Our own HTTP client (``new_http_client``) drops
a connection idle for ``IDLE_SECONDS``, before the usual server does. For a
server with a shorter keep-alive (or a proxy in between), ``send`` retries once,
on a fresh connection, a request that is safe to repeat (``safe_to_repeat``:
reads, cancels, deletes, and sends that carry a ``messageId``, which servers
keeping sends answer with the first send's task) when it failed on the network
before its answer came; never after a timeout, which may mean the agent is
still at work.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, cast

import httpx

from ...errors import (
    A2AError,
    InvalidAgentResponseError,
    InvalidRequestError,
    PayloadTooLargeError,
)
from ...wire._json import DEFAULT_LIMITS, DecodeLimits, loads, may_overflow
from ...wire.errors_wire import decode_rest_error
from ...wire.operations import Operation
from ._early import answer_early, drop_idle
from .base import CallOptions, StreamPosition
from .errors import A2AConnectionError, A2ATimeoutError

__all__ = [
    "IDLE_SECONDS",
    "HttpSettings",
    "error_from_response",
    "is_web_page",
    "new_http_client",
    "parse_json",
    "read_bounded",
    "refine_by_status",
    "request_headers",
    "safe_to_repeat",
    "send",
    "sse_values",
]

VERSION_HEADER = "A2A-Version"

IDLE_SECONDS = 4.0
"""How long our client keeps an idle connection: below the 5 s most servers keep one."""
_LIMITS = httpx.Limits(
    max_connections=100, max_keepalive_connections=20, keepalive_expiry=IDLE_SECONDS
)
_REPEATABLE = frozenset(
    {
        Operation.GET_TASK,
        Operation.LIST_TASKS,
        Operation.CANCEL_TASK,
        Operation.SUBSCRIBE_TO_TASK,
        Operation.GET_PUSH_CONFIG,
        Operation.LIST_PUSH_CONFIGS,
        Operation.DELETE_PUSH_CONFIG,
        Operation.GET_EXTENDED_CARD,
    }
)


def is_web_page(response: httpx.Response) -> bool:
    """Whether ``response`` is an HTML page: a web site that answers every path with one
    has no agent card or catalog there, whatever its status says."""
    kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    return kind == "text/html"


def new_http_client(**options: Any) -> httpx.AsyncClient:
    """The httpx client the A2A client makes for itself (``options`` go to httpx):
    idle connections dropped after ``IDLE_SECONDS``, early answers read (``answer_early``)."""
    return answer_early(httpx.AsyncClient(limits=_LIMITS, **options))


def safe_to_repeat(op: Operation, request: Any) -> bool:
    """Whether sending ``request`` twice does what sending it once does.

    Reads, cancels and deletes do; a send does when its message has a ``messageId``
    (a retried send: the first one's task, from a server that keeps sends).
    """
    if op in _REPEATABLE:
        return True
    if op in (Operation.SEND_MESSAGE, Operation.SEND_STREAMING_MESSAGE):
        message = getattr(request, "message", None)
        return bool(getattr(message, "message_id", None))
    return False


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """Timeouts and bounds of an HTTP transport."""

    timeout: float | None = 60.0
    """Seconds for a unary call (None: wait as long as the agent takes)."""
    stream_timeout: float | None = None
    """Seconds between two stream events (None: streams may idle indefinitely)."""
    connect_timeout: float = 10.0
    limits: DecodeLimits = DEFAULT_LIMITS
    """Response size and JSON nesting bounds (``max_bytes`` bounds one body or one event)."""
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    """Headers sent with every call (e.g. authentication)."""


def request_headers(
    base: dict[str, str], version: str, options: CallOptions | None, accept: str | None = None
) -> dict[str, str]:
    """The headers of one call: the transport's, the version's, the call's."""
    headers = dict(base)
    if accept is not None:
        headers["Accept"] = accept
    if options is not None:
        if options.extensions:
            name = "A2A-Extensions" if version != "0.3" else "X-A2A-Extensions"
            headers[name] = ",".join(options.extensions)
        if options.headers:
            headers.update(options.headers)
        if options.credential is not None:
            for name in [k for k in headers if k.lower() == "authorization"]:
                del headers[name]
            headers["Authorization"] = options.credential.authorization
    return headers


FORWARDED = "a2a_core.forwarded_credential"
"""The httpx request extension marking a call that carries a forwarded credential."""


def request_extensions(
    settings: HttpSettings, options: CallOptions | None, stream: bool
) -> dict[str, Any]:
    """The httpx extensions of one call: its timeout, and the passthrough mark when it
    forwards a credential.

    The timeout is given ready as the extension httpx would make of it: passing
    ``timeout=`` to ``build_request`` costs a ``Timeout`` copy and ``as_dict`` per call.
    """
    seconds = _seconds(settings, options, stream)
    extensions: dict[str, Any] = {"timeout": _timeout_dict(seconds, settings.connect_timeout)}
    if options is not None and options.credential is not None:
        extensions[FORWARDED] = True
    return extensions


def _seconds(settings: HttpSettings, options: CallOptions | None, stream: bool) -> float | None:
    seconds = options.timeout if options is not None and options.timeout is not None else None
    if seconds is None:
        seconds = settings.stream_timeout if stream else settings.timeout
    return seconds


@functools.lru_cache(maxsize=64)
def _timeout(seconds: float | None, connect: float) -> httpx.Timeout:
    return httpx.Timeout(seconds, connect=min(connect, seconds) if seconds is not None else connect)


@functools.lru_cache(maxsize=64)
def _timeout_dict(seconds: float | None, connect: float) -> dict[str, float | None]:
    return _timeout(seconds, connect).as_dict()  # read, never changed, by httpcore


async def send(
    http: httpx.AsyncClient, request: httpx.Request, *, repeatable: bool = False
) -> httpx.Response:
    """Send, mapping network failures to our error types; the body is left unread.

    ``repeatable`` (see ``safe_to_repeat``): a request that failed on the network
    before its answer came is sent once more, on a fresh connection.
    """
    try:
        try:
            return await _send(http, request)
        except (httpx.NetworkError, httpx.RemoteProtocolError):
            if not repeatable:
                raise
        # Most likely a connection the server closed as we sent (its keep-alive ran
        # out): the other idle ones may be as old, so the retry gets a new one.
        await drop_idle(http)
        return await _send(http, request)
    except httpx.TimeoutException as exc:
        raise A2ATimeoutError(f"The agent at {request.url} did not answer in time") from exc
    except httpx.HTTPError as exc:
        raise A2AConnectionError(
            f"Could not reach the agent at {request.url}: {type(exc).__name__}"
        ) from exc


async def _send(http: httpx.AsyncClient, request: httpx.Request) -> httpx.Response:
    if request.extensions.get(FORWARDED):
        # A forwarded caller's credential: the client's own auth must not replace it
        # (nor retry a 401 with the client's own token).
        return await http.send(request, stream=True, auth=None)
    return await http.send(request, stream=True)


async def read_bounded(response: httpx.Response, limit: int) -> bytes:
    """The whole body, refusing more than ``limit`` bytes (stops reading early)."""
    declared = response.headers.get("content-length", "")
    size = int(declared) if declared.isdigit() else None
    if size is not None and size > limit:
        await response.aclose()
        raise InvalidAgentResponseError(
            f"The agent's response of {size} bytes exceeds the limit of {limit} bytes"
        )
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    try:
        if size is not None and encoding == "identity":
            # Uncompressed, the HTTP layer stops at the declared length, so one read is
            # bounded. A compressed body may inflate far beyond it: counted below instead.
            return await response.aread()
        return await _read_counted(response, limit)
    except httpx.TimeoutException as exc:
        raise A2ATimeoutError("The agent did not finish its answer in time") from exc
    except httpx.HTTPError as exc:
        raise A2AConnectionError(
            f"The connection broke while reading the answer: {type(exc).__name__}"
        ) from exc
    finally:
        await response.aclose()


async def _read_counted(response: httpx.Response, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise InvalidAgentResponseError(
                f"The agent's response exceeds the limit of {limit} bytes"
            )
        chunks.append(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def parse_json(body: bytes | str, limits: DecodeLimits) -> Any:
    """Untrusted JSON from the agent; garbage is InvalidAgentResponseError."""
    try:
        return loads(body, limits)
    except A2AError as exc:
        raise InvalidAgentResponseError(f"The agent sent invalid JSON: {exc.message}") from None


def validate_json_directly(body: bytes, limits: DecodeLimits) -> bool:
    """Whether ``body`` may be validated into models straight from its bytes.

    ``parse_json`` then model validation refuses what is too deep and any
    NaN, Infinity or number out of range; the direct path (one pass, no
    Python dicts in between) is taken only when none of those can be there, so
    both answer alike. Anything else goes the general way.
    """
    return (
        body.count(b"{") + body.count(b"[") <= limits.max_depth
        and b"NaN" not in body
        and b"Infinity" not in body
        and not may_overflow(body)
    )


def error_from_response(status: int, body: bytes, limits: DecodeLimits) -> A2AError:
    """The typed error of a non-success HTTP answer (JSON error body or bare status).

    A server error (5xx) whose body is no A2A error (a proxy's HTML page, a crash's
    text) says the status and the body's first line, not a bare "Internal error".
    """
    value: Any = None
    if body:
        try:
            value = loads(body, limits)
        except A2AError:
            value = None
    error = refine_by_status(decode_rest_error(status, value), status)
    if status >= 500 and not _is_error_body(value):
        error.message = http_status_text(status, body)
        error.args = (error.message,)
    return error


def _is_error_body(value: Any) -> bool:
    """Whether ``value`` is an error object of a binding (JSON-RPC, google.rpc.Status)."""
    if not isinstance(value, dict):
        return False
    obj = cast(dict[str, Any], value)
    return isinstance(obj.get("error"), dict) or isinstance(obj.get("code"), int)


_FIRST_LINE_CHARS = 200


def http_status_text(status: int, body: bytes) -> str:
    """``HTTP 502 Bad Gateway: <the body's first non-blank line>`` (cleaned, bounded)."""
    try:
        phrase = " " + HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    text = body[: _FIRST_LINE_CHARS * 8].decode("utf-8", "replace")
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = "".join(c if c.isprintable() else " " for c in line)
    if len(line) > _FIRST_LINE_CHARS:
        line = line[: _FIRST_LINE_CHARS - 1] + "\u2026"
    return f"HTTP {status}{phrase}: {line}" if line else f"HTTP {status}{phrase} (empty body)"


def refine_by_status(error: A2AError, status: int) -> A2AError:
    """PayloadTooLargeError for a 413 whose body says only InvalidRequestError.

    0.3 has no error reason to tell the two apart (they share -32600); the
    HTTP status does.
    """
    if status == 413 and type(error) is InvalidRequestError:
        return PayloadTooLargeError(error.message, data=error.data)
    return error


def is_event_stream(response: httpx.Response) -> bool:
    return response.headers.get("content-type", "").startswith("text/event-stream")


async def sse_values(
    response: httpx.Response, limits: DecodeLimits, position: StreamPosition | None = None
) -> AsyncIterator[Any]:
    """The JSON value of each ``data`` event of an SSE response, in order.

    ``position`` gets each event's ``id`` as the event is handed on.
    """
    from ._sse import SSEParser  # here: a client that never streams never loads it

    parser = SSEParser(limits.max_bytes)
    try:
        async for chunk in response.aiter_bytes():
            for event in parser.feed(chunk):
                value = parse_json(event.data, limits)
                if position is not None and event.id is not None:
                    position.last_event_id = event.id
                yield value
    except httpx.TimeoutException as exc:
        raise A2ATimeoutError("The agent's stream went quiet for too long") from exc
    except httpx.HTTPError as exc:
        raise A2AConnectionError(f"The stream broke: {type(exc).__name__}") from exc
    finally:
        await response.aclose()
