"""The browser playground: a page that tries the agent from a browser, served beside it.

The page (``playground_static/``: one HTML file, plain ES modules, one
stylesheet) ships inside the wheel and is served as it is: no build step,
nothing fetched from elsewhere. It reads the card and calls the agent with
the same requests any client sends, so it needs nothing from the server but
these files. Every answer carries a strict Content-Security-Policy: scripts
and styles only from these files, requests only to this origin, no frames.

``PlaygroundFiles`` answers ``/playground/`` and its files; ``a2a playground
URL`` (``cli.playground``) serves the same files in front of a proxy, naming
the proxy in the page's ``<meta>`` tags.
"""

from __future__ import annotations

import hashlib
import html
from importlib import resources

from .access import label
from .http import Scope, Send, header_map, send_bytes

__all__ = ["CSP", "PLAYGROUND_PATH", "PlaygroundFiles", "browser_wants_html"]

PLAYGROUND_PATH = "/playground"
"""Where an app serves the page (below its mount path)."""

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
)
"""The page's Content-Security-Policy: its own files only, no inline code, no frames."""

_TYPES = {
    ".html": b"text/html; charset=utf-8",
    ".js": b"text/javascript; charset=utf-8",
    ".css": b"text/css; charset=utf-8",
}
_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-cache"),
]
_AGENT_META = '<meta name="a2a-agent" content="../">'
_REMOTE_META = '<meta name="a2a-remote" content="">'
_CATALOG_META = '<meta name="a2a-catalog" content="../.well-known/ai-catalog.json">'


def _load() -> dict[str, bytes]:
    folder = resources.files(__package__ or "a2a_core.server.asgi") / "playground_static"
    return {
        item.name: item.read_bytes()
        for item in folder.iterdir()
        if item.is_file() and any(item.name.endswith(ext) for ext in _TYPES)
    }


class _File:
    __slots__ = ("body", "etag", "kind")

    def __init__(self, name: str, body: bytes) -> None:
        self.body = body
        self.kind = next(kind for ext, kind in _TYPES.items() if name.endswith(ext))
        self.etag = b'"' + hashlib.sha256(body).hexdigest()[:20].encode() + b'"'


class PlaygroundFiles:
    """The page's files, read once; ``agent`` / ``remote`` fill the page's ``<meta>`` tags.

    ``agent``: the agent's URL relative to the page (default ``../``: the app the
    page is mounted in). ``remote``: the origin a proxy forwards to (empty: none).
    ``catalog``: the AI Catalog listing the agents the page can switch between (default:
    the app's own; a host of several agents names its own).
    """

    def __init__(self, *, agent: str = "../", remote: str = "", catalog: str | None = None) -> None:
        files = _load()
        index = files["index.html"].decode()
        index = index.replace(
            _AGENT_META, f'<meta name="a2a-agent" content="{html.escape(agent)}">'
        )
        index = index.replace(
            _REMOTE_META, f'<meta name="a2a-remote" content="{html.escape(remote)}">'
        )
        if catalog is not None:
            index = index.replace(
                _CATALOG_META, f'<meta name="a2a-catalog" content="{html.escape(catalog)}">'
            )
        files["index.html"] = index.encode()
        self.files = {name: _File(name, body) for name, body in files.items()}

    async def respond(self, scope: Scope, send: Send, subpath: str) -> None:
        """Answer ``subpath`` (the path below ``/playground``: ``""``, ``/``, ``/app.js``...)."""
        label(scope, "playground")
        method = scope["method"]
        if method not in ("GET", "HEAD"):
            await send_bytes(
                send, 405, b"Method not allowed\n", b"text/plain", [(b"allow", b"GET, HEAD")]
            )
            return
        if subpath == "":
            await self.redirect(scope, send)
            return
        name = subpath.lstrip("/") or "index.html"
        file = self.files.get(name)
        if file is None or "/" in name:
            await send_bytes(send, 404, b"Not found\n", b"text/plain", _HEADERS)
            return
        headers = header_map(scope["headers"])
        if headers.get("if-none-match") == file.etag.decode():
            await send_bytes(send, 304, b"", file.kind, [(b"etag", file.etag), *_HEADERS])
            return
        start = [
            (b"content-type", file.kind),
            (b"content-length", str(len(file.body)).encode()),
            (b"etag", file.etag),
            *_HEADERS,
        ]
        await send({"type": "http.response.start", "status": 200, "headers": start})
        await send({"type": "http.response.body", "body": b"" if method == "HEAD" else file.body})

    async def redirect(self, scope: Scope, send: Send) -> None:
        """Send a browser to the page (below the mount path, so relative links resolve)."""
        label(scope, "playground")
        location = (scope.get("root_path", "") + PLAYGROUND_PATH + "/").encode("latin-1")
        await send_bytes(
            send,
            303,
            b"See " + location + b"\n",
            b"text/plain",
            [(b"location", location), (b"cache-control", b"no-cache"), (b"vary", b"accept")],
        )


def browser_wants_html(accept: str | None) -> bool:
    """Whether a GET comes from a browser navigating (it lists ``text/html``)."""
    return accept is not None and "text/html" in accept.lower()
