"""The route that serves stored answer files (``GET {agent}/_a2a/files/{token}``).

The app puts the agent's base URL, as this request reached it, into the
scope under ``BASE_URL_KEY`` when a file store is configured; the JSON-RPC
and HTTP+JSON endpoints hand it to the service (``ServerCallContext.base_url``)
so large files of the answer get links that work for this caller.

A file is answered only for a valid, fresh token whose task still exists,
and, when its task has an owner, only to that owner (``FileStore.get``);
anything else is 404, so a token's existence is never revealed. Responses are attachments with
``nosniff`` and no caching by shared caches.
"""

from __future__ import annotations

import logging
from typing import Any

from ...errors import A2AError
from ...wire import dumps
from ..files import FILES_PATH, FileStore, valid_token
from .access import label
from .edge import Edge
from .http import Scope, Send, header_map, send_bytes
from .origin import TrustedProxies, request_base

__all__ = ["BASE_URL_KEY", "FILES_PATH", "file_base", "serve_file"]

BASE_URL_KEY = "a2a.base_url"
"""Scope key of the agent's base URL as the request reached it."""

logger = logging.getLogger("a2a_core.server.asgi")

_NOT_FOUND = dumps({"error": {"code": 404, "status": "NOT_FOUND", "message": "Not found"}})
_NOT_ALLOWED = dumps({"error": {"code": 405, "message": "Files are read-only"}})


def _content_disposition(filename: str | None) -> bytes:
    if not filename:
        return b"attachment"
    ascii_name = "".join(c if 32 < ord(c) < 127 and c not in '"\\;' else "_" for c in filename)
    return f'attachment; filename="{ascii_name[:120]}"'.encode("latin-1")


def file_base(scope: Scope, public_url: str | None, proxies: TrustedProxies | None) -> str:
    """The agent's base URL for file links: the public URL, else as this request came."""
    if public_url:
        return public_url.rstrip("/")
    if proxies is not None:  # forwarded headers may name another origin per request
        return request_base(scope, header_map(scope["headers"]), proxies)
    hosts = tuple(value for name, value in scope["headers"] if name == b"host")
    key = (scope.get("scheme"), hosts, scope.get("root_path"), scope.get("server"))
    found = _bases.get(key)
    if found is None:
        headers = {"host": ", ".join(h.decode("latin-1") for h in hosts)} if hosts else {}
        found = request_base(scope, headers, None)
        if len(_bases) >= _BASES_KEPT:
            _bases.clear()
        _bases[key] = found
    return found


_bases: dict[tuple[Any, ...], str] = {}
"""Base URLs by what decides them without trusted proxies (scheme, Host, mount, listener):
every request asks, and a server is reached under a few names."""
_BASES_KEPT = 256
"""At most this many (names come from the client): past it the cache starts again."""


async def serve_file(store: FileStore, edge: Edge, scope: Scope, send: Send, token: str) -> None:
    """Answer one file request (the path below ``FILES_PATH`` is ``token``)."""
    label(scope, "file")
    method = scope["method"]
    if method not in ("GET", "HEAD"):
        await send_bytes(send, 405, _NOT_ALLOWED, b"application/json", [(b"allow", b"GET, HEAD")])
        return
    owner: str | None = None
    if edge.authenticate is not None:
        try:
            principal = await edge.authenticate(header_map(scope["headers"]))
        except A2AError:
            principal = None
        owner = principal.id if principal is not None else None
    found = await store.get(token, owner) if valid_token(token) else None
    if found is None:
        await send_bytes(send, 404, _NOT_FOUND, b"application/json")
        return
    headers = [
        (b"content-disposition", _content_disposition(found.filename)),
        (b"x-content-type-options", b"nosniff"),
        (b"cache-control", b"private, no-store"),
    ]
    # The ASGI server leaves the body out of a HEAD answer; the length stays right.
    await send_bytes(send, 200, found.data, found.media_type.encode("latin-1", "replace"), headers)
