"""The local server of ``a2a playground URL``: the playground page, and a proxy to one agent.

A browser page may only call its own origin (the page's CSP says so, and
CORS would refuse most agents anyway), so the page calls ``/proxy/...`` here
and this app forwards each call to the agent's origin, the same path below
it. It forwards nowhere else: the target URL is always the agent's scheme,
host and port with the request's path, checked again after it is built;
redirects are not followed (a ``Location`` on the agent's origin is
rewritten to the proxy, any other is refused).

Bounds: request bodies up to ``max_body_bytes`` (413 beyond), complete
answers up to ``max_response_bytes`` (502 beyond); event streams pass
through chunk by chunk as they arrive. The app answers only requests whose
``Host`` is the loopback address it serves (no DNS rebinding), and proxied
calls must carry ``X-A2A-Playground: 1``, which a cross-site form cannot send.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

import httpx

from ..server.asgi.playground import PLAYGROUND_PATH, PlaygroundFiles

__all__ = ["PROXY_HEADER", "PROXY_PATH", "PlaygroundProxy"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

PROXY_PATH = "/proxy"
"""Calls below this path go to the agent's origin (``/proxy/rest/x`` -> ``ORIGIN/rest/x``)."""

PROXY_HEADER = "x-a2a-playground"
"""The header every proxied call carries (the page sends it; forms cannot)."""

_DROP_REQUEST = frozenset(
    {
        "host",
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "content-length",
        "accept-encoding",
        "cookie",
        "origin",
        "referer",
        PROXY_HEADER,
    }
)
_KEEP_RESPONSE = frozenset(
    {
        "content-type",
        "cache-control",
        "etag",
        "last-modified",
        "www-authenticate",
        "retry-after",
        "a2a-version",
        "a2a-extensions",
        "allow",
    }
)


class PlaygroundProxy:
    """ASGI app: ``/playground/`` (the page), ``/proxy/...`` (to ``agent_url``'s origin)."""

    def __init__(
        self,
        agent_url: str,
        *,
        allowed_hosts: tuple[str, ...] = (),
        headers: dict[str, str] | None = None,
        max_body_bytes: int = 10 * 1024 * 1024,
        max_response_bytes: int = 32 * 1024 * 1024,
        timeout: float = 300.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        parts = urlsplit(agent_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {agent_url!r}")
        self.origin = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
        self._target = httpx.URL(self.origin)
        path = parts.path.rstrip("/")
        self.files = PlaygroundFiles(agent=f"{PROXY_PATH}{path}/", remote=self.origin)
        self.allowed_hosts = allowed_hosts
        self.headers = dict(headers or {})
        self.max_body_bytes = max_body_bytes
        self.max_response_bytes = max_response_bytes
        self._client = httpx.AsyncClient(
            follow_redirects=False,
            timeout=httpx.Timeout(timeout, connect=10.0),
            transport=transport,
            trust_env=False,
        )

    async def aclose(self) -> None:
        """Close the connections to the agent."""
        await self._client.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send, self.aclose)
            return
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        if self.allowed_hosts and headers.get("host") not in self.allowed_hosts:
            await _error(send, 403, "this playground answers its own address only")
            return
        path: str = scope["path"]
        if path == PLAYGROUND_PATH or path.startswith(PLAYGROUND_PATH + "/"):
            await self.files.respond(scope, send, path[len(PLAYGROUND_PATH) :])
        elif path == "/" and scope["method"] in ("GET", "HEAD"):
            await self.files.redirect(scope, send)
        elif path == PROXY_PATH or path.startswith(PROXY_PATH + "/"):
            if headers.get(PROXY_HEADER) != "1":
                await _error(send, 403, f"proxied calls carry {PROXY_HEADER}: 1")
                return
            await self._forward(scope, receive, send, headers)
        else:
            await _error(send, 404, "not found")

    def target(self, scope: Scope) -> httpx.URL:
        """The agent URL a ``/proxy/...`` request goes to: always on the agent's origin."""
        raw: bytes = scope.get("raw_path") or scope["path"].encode()
        raw = raw[len(PROXY_PATH) :] or b"/"
        query: bytes = scope.get("query_string", b"")
        url = self._target.copy_with(raw_path=raw + (b"?" + query if query else b""))
        if (url.scheme, url.host, url.port) != (
            self._target.scheme,
            self._target.host,
            self._target.port,
        ):  # pragma: no cover - copy_with keeps the origin; checked all the same
            raise ValueError("a proxied URL left the agent's origin")
        return url

    async def _forward(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]
    ) -> None:
        body = await _read_body(receive, self.max_body_bytes)
        if body is None:
            await _error(send, 413, f"request bodies are limited to {self.max_body_bytes} bytes")
            return
        forward = {
            k: v for k, v in headers.items() if k not in _DROP_REQUEST and not k.startswith("sec-")
        }
        forward.update(self.headers)
        request = self._client.build_request(
            scope["method"], self.target(scope), headers=forward, content=body or None
        )
        try:
            response = await self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            await _error(send, 502, f"the agent at {self.origin} could not be reached: {exc}")
            return
        try:
            await self._relay(response, send)
        finally:
            await response.aclose()

    async def _relay(self, response: httpx.Response, send: Send) -> None:
        out: list[tuple[bytes, bytes]] = []
        for name, value in response.headers.items():
            if name in _KEEP_RESPONSE:
                out.append((name.encode("latin-1"), value.encode("latin-1")))
        location = response.headers.get("location")
        if location is not None:
            moved = response.url.join(location)
            if (moved.scheme, moved.host, moved.port) != (
                self._target.scheme,
                self._target.host,
                self._target.port,
            ):
                await _error(send, 502, f"the agent redirected away from {self.origin}")
                return
            out.append((b"location", PROXY_PATH.encode() + moved.raw_path))
        kind = response.headers.get("content-type", "")
        if kind.startswith("text/event-stream"):
            out.append((b"cache-control", b"no-cache"))
            await send(
                {"type": "http.response.start", "status": response.status_code, "headers": out}
            )
            try:
                async for chunk in response.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            except httpx.HTTPError:
                pass  # the agent closed the stream: end ours too
            await send({"type": "http.response.body", "body": b""})
            return
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > self.max_response_bytes:
                    await _error(send, 502, "the agent's answer is larger than the proxy allows")
                    return
                chunks.append(chunk)
        except httpx.HTTPError as exc:
            await _error(send, 502, f"the agent's answer broke off: {exc}")
            return
        body = b"".join(chunks)
        out.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": response.status_code, "headers": out})
        await send({"type": "http.response.body", "body": body})


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b""
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def _error(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": {"code": status, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Receive, send: Send, close: Callable[[], Awaitable[None]]) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await close()  # the connections to the agent
            await send({"type": "lifespan.shutdown.complete"})
            return
