"""Small ASGI request/response helpers: headers, bounded body reads, version negotiation.

Kept to plain functions over the ASGI scope so the hot path allocates little:
headers are decoded once into one dict, bodies are read without copies when
they arrive in one chunk, and a response is one start plus one body message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

from ...errors import PayloadTooLargeError, VersionNotSupportedError

__all__ = [
    "DRAIN_MAX_BYTES",
    "DRAIN_MAX_SECONDS",
    "SUPPORTED_VERSIONS",
    "ClientGone",
    "Receive",
    "Scope",
    "Send",
    "accepts_event_stream",
    "drain_body",
    "header_map",
    "is_json_media",
    "negotiate_version",
    "query_map",
    "read_body",
    "requested_version",
    "send_bytes",
]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

SUPPORTED_VERSIONS: dict[tuple[int, int], str] = {(1, 0): "1.0", (0, 3): "0.3"}
"""Protocol versions this server speaks, by (major, minor)."""


class ClientGone(Exception):
    """The client disconnected before the request body was complete: answer nothing."""


def header_map(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """ASGI headers (lower-case names) -> one dict; repeated headers are joined by ", "."""
    out: dict[str, str] = {}
    for key, value in raw:
        name = key.decode("latin-1")
        text = value.decode("latin-1")
        previous = out.get(name)
        out[name] = text if previous is None else previous + ", " + text
    return out


def query_map(query_string: bytes) -> dict[str, str]:
    """The query string as a dict (last value wins), or {} when there is none."""
    if not query_string:
        return {}
    return dict(parse_qsl(query_string.decode("latin-1"), keep_blank_values=True))


def negotiate_version(value: str | None) -> str:
    """The protocol version a request asks for: "1.0" or "0.3".

    Absent or empty means 0.3 (spec §3.6). Versions are Major.Minor; a patch
    number is tolerated and ignored ("1.0.1" is 1.0, "0.3.0" is 0.3, as 0.3
    cards spelled it) and a bare major means minor 0 ("1" is 1.0). Anything
    else, or a version this server does not speak, is VersionNotSupportedError.
    """
    if value is None:
        return "0.3"
    text = value.strip()
    if not text:
        return "0.3"
    if text == "1.0":
        return "1.0"
    pieces = text.split(".")
    if len(pieces) <= 3 and all(p.isdigit() and p.isascii() for p in pieces):
        major = int(pieces[0])
        minor = int(pieces[1]) if len(pieces) > 1 else 0
        found = SUPPORTED_VERSIONS.get((major, minor))
        if found is not None:
            return found
    shown = text if len(text) <= 32 else text[:32] + "..."
    raise VersionNotSupportedError(
        f"A2A protocol version {shown!r} is not supported (supported: 1.0, 0.3)",
        data={"requested": shown, "supported": "1.0,0.3"},
    )


def requested_version(headers: dict[str, str], query_string: bytes) -> str | None:
    """The raw ``A2A-Version`` header, else the ``A2A-Version`` query parameter."""
    value = headers.get("a2a-version")
    if value is not None:
        return value
    if query_string and b"2a-version=" in query_string.lower():
        query = query_map(query_string)
        return query.get("A2A-Version", query.get("a2a-version"))
    return None


def is_json_media(content_type: str | None) -> bool:
    """Whether a Content-Type names JSON (absent counts as JSON: be liberal in what we accept)."""
    if content_type is None or content_type == "application/json":
        return True
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json") or media == ""


def accepts_event_stream(headers: dict[str, str]) -> bool:
    """Whether the client listed ``text/event-stream`` in ``Accept`` (it reads SSE errors)."""
    accept = headers.get("accept")
    return accept is not None and "text/event-stream" in accept.lower()


DRAIN_MAX_BYTES = 128 * 1024 * 1024
"""How much of a refused body is still read (and discarded) so the 413 reaches the client."""
DRAIN_MAX_SECONDS = 10.0
"""How long draining a refused body may take."""


async def drain_body(
    receive: Receive,
    *,
    max_bytes: int = DRAIN_MAX_BYTES,
    max_seconds: float = DRAIN_MAX_SECONDS,
) -> bool:
    """Read and discard the rest of a request body, within ``max_bytes`` and ``max_seconds``.

    A server that answers early and closes with unread input makes the kernel
    reset the connection, and the client, still uploading, loses the answer.
    Mature servers linger the same way (nginx ``lingering_close``). True when
    the body ended (the connection stays usable), False when a bound stopped it.
    """
    drained = 0
    try:
        async with asyncio.timeout(max_seconds):
            while drained <= max_bytes:
                message = await receive()
                if message["type"] != "http.request":
                    return False
                drained += len(message.get("body", b""))
                if not message.get("more_body", False):
                    return True
    except TimeoutError:
        pass
    return False


def _too_large(limit: int, size: int | None = None) -> PayloadTooLargeError:
    if size is not None:
        return PayloadTooLargeError(
            f"Request body of {size} bytes exceeds the limit of {limit} bytes"
        )
    return PayloadTooLargeError(f"Request body exceeds the limit of {limit} bytes")


async def read_body(receive: Receive, limit: int, headers: dict[str, str]) -> bytes:
    """The request body, read incrementally and refused as soon as it exceeds ``limit``.

    A refused body is drained (``drain_body``) before the error is raised, when
    its declared size leaves any chance of reaching its end.
    """
    declared = headers.get("content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            size = -1
        if size > limit:
            if size <= DRAIN_MAX_BYTES:
                await drain_body(receive)
            raise _too_large(limit, size)
    message = await receive()
    if message["type"] != "http.request":
        raise ClientGone()
    body: bytes = message.get("body", b"")
    if not message.get("more_body", False):
        if len(body) > limit:
            raise _too_large(limit)
        return body
    chunks = [body]
    total = len(body)
    while True:
        if total > limit:
            chunks.clear()
            await drain_body(receive)
            raise _too_large(limit)
        message = await receive()
        if message["type"] != "http.request":
            raise ClientGone()
        chunk: bytes = message.get("body", b"")
        if chunk:
            chunks.append(chunk)
            total += len(chunk)
        if not message.get("more_body", False):
            break
    if total > limit:
        raise _too_large(limit)
    return b"".join(chunks)


async def send_bytes(
    send: Send,
    status: int,
    body: bytes,
    content_type: bytes,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    """One complete response: a start message and one body message."""
    headers = [
        (b"content-type", content_type),
        (b"content-length", str(len(body)).encode()),
    ]
    if extra:
        headers.extend(extra)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
