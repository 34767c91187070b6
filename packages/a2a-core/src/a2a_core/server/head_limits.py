"""Bounds on the request head (request line and headers), before the app runs.

The body has its own cap (``max_body_bytes``); without this one a client could
still make the server buffer megabytes of headers per connection. Two layers:

- ``head_too_large`` is checked by ``A2AApp`` on every request, so any ASGI
  server (and a host app that mounts ours) answers 431; it counts the request
  line (method, target, version) with the headers;
- ``uvicorn_http_options`` makes the uvicorn that ``serve`` starts stop
  reading a head as soon as it is too large, instead of buffering it first
  (httptools has no limit of its own; h11 gets ``h11_max_incomplete_event_size``).
  A head that arrives whole in one read is counted as the parser hands over
  its target and headers, so a long request target is refused however it comes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

__all__ = [
    "DEFAULT_MAX_HEADER_BYTES",
    "DEFAULT_MAX_HEADER_COUNT",
    "head_too_large",
    "request_line_bytes",
    "uvicorn_http_options",
]

DEFAULT_MAX_HEADER_BYTES = 16 * 1024
"""Request line plus headers, as h11 and most servers bound them (nginx 8-32 KiB)."""
DEFAULT_MAX_HEADER_COUNT = 100
"""Header fields per request (Apache's LimitRequestFields)."""

_LINGER_SECONDS = 2.0
"""How long a refused connection keeps discarding input before it closes."""

_431_BODY = (
    b'{"error":{"code":431,"status":"REQUEST_HEADER_FIELDS_TOO_LARGE",'
    b'"message":"Request header fields too large"}}'
)


def head_too_large(
    headers: Iterable[tuple[bytes, bytes]], max_bytes: int, max_count: int, line: int = 0
) -> bool:
    """Whether ASGI ``headers`` exceed ``max_count`` fields, or they and the request line
    (``line`` bytes) exceed ``max_bytes``."""
    count = 0
    size = line
    for name, value in headers:
        count += 1
        size += len(name) + len(value) + 4  # ": " and CRLF, as on the wire
    return count > max_count or size > max_bytes


def request_line_bytes(scope: Any) -> int:
    """The size of an ASGI HTTP request's request line, as on the wire."""
    query: bytes = scope.get("query_string") or b""
    raw: bytes | None = scope.get("raw_path")
    target = len(raw) if raw is not None else len(scope["path"].encode("utf-8", "surrogatepass"))
    # "METHOD TARGET[?QUERY] HTTP/1.1" CRLF
    return len(scope["method"]) + target + (len(query) + 1 if query else 0) + 12


def _raw_431() -> bytes:
    return (
        b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
        b"content-type: application/json\r\n"
        b"content-length: " + str(len(_431_BODY)).encode() + b"\r\n"
        b"connection: close\r\n\r\n" + _431_BODY
    )


class _HeadTooLarge(Exception):
    """Raised from a parser callback to stop parsing an oversized head."""


def _httptools_protocol(max_bytes: int, max_count: int) -> type[asyncio.Protocol] | None:
    """uvicorn's httptools protocol, counting the head as the parser delivers it."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # httptools is not installed
        return None

    class BoundedHttpToolsProtocol(HttpToolsProtocol):
        # httptools hands over a header only once the next one starts, so the
        # bytes of a head still arriving are counted as they are received.
        _in_head = True
        _head_bytes = 0
        _head_fields = 0
        _head_parsed = 0  # the target and the headers the parser handed over
        _head_over = False
        _head_refused = False

        def data_received(self, data: bytes) -> None:
            if self._head_refused:
                return  # lingering: discard what the client still sends
            if self._in_head:
                self._head_bytes += len(data)
            super().data_received(data)
            if self._in_head and self._head_bytes > max_bytes and not self._head_refused:
                self._refuse()

        def on_message_begin(self) -> None:
            self._in_head = True
            super().on_message_begin()

        def on_url(self, url: bytes) -> None:
            self._parsed(len(url))
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._head_fields += 1
            if self._head_fields > max_count:
                self._head_over = True
                raise _HeadTooLarge()  # httptools reports it as a parser error
            self._parsed(len(name) + len(value) + 4)
            super().on_header(name, value)

        def _parsed(self, size: int) -> None:
            """Count what the parser handed over: a head that came in one read is
            only seen here (``data_received`` finds it complete)."""
            self._head_parsed += size
            if self._head_parsed > max_bytes:
                self._head_over = True
                raise _HeadTooLarge()

        def on_headers_complete(self) -> None:
            self._in_head = False
            self._head_bytes = 0
            self._head_fields = 0
            self._head_parsed = 0
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._in_head = True
            super().on_message_complete()

        def send_400_response(self, msg: str) -> None:
            if self._head_over:
                self._refuse()
            else:
                super().send_400_response(msg)

        def _refuse(self) -> None:
            """431, then a lingering close: half-close, discard input for a moment.

            Closing with unread input would reset the connection and the client
            could lose the answer before reading it.
            """
            self._head_refused = True
            self.transport.write(_raw_431())
            if self.transport.can_write_eof():
                self.transport.write_eof()
            asyncio.get_running_loop().call_later(_LINGER_SECONDS, self.transport.close)

        def eof_received(self) -> None:
            if self._head_refused:
                self.transport.close()
                return
            super().eof_received()

    return BoundedHttpToolsProtocol


def uvicorn_http_options(max_bytes: int, max_count: int) -> dict[str, Any]:
    """``uvicorn.Config`` keywords that bound the request head at the protocol level."""
    protocol = _httptools_protocol(max_bytes, max_count)
    if protocol is not None:
        return {"http": protocol}
    return {"http": "h11", "h11_max_incomplete_event_size": max_bytes}
