"""Several agents behind one origin: each A2A app at its own path, one catalog, one root page.

``AgentHost`` routes ``/NAME`` and everything below it to that agent's
``A2AApp`` (its card, bindings, streams and playground, as when it is served
alone, with the mount path as ``root_path``), and answers the rest itself:

- ``/.well-known/ai-catalog.json``: the AI Catalog listing every agent;
- ``/``: a page listing the agents, with links to their cards and playgrounds;
- ``/healthz`` and ``/readyz``: the probes (the agents share one store).

Its lifespan starts every agent's, and on the way out stops every agent
before any of them closes what they share (the store, the push service).
Build it with ``a2a_core.compose.builder.build_host`` (what ``serve({...})``,
``mount(app, {...})`` and ``a2a serve A B C`` use).
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from ...wire import dumps
from . import health
from .app import A2AApp
from .catalog_route import CATALOG_PATH, ListedAgent, PublishedCatalog
from .health import PROBE_PATHS
from .http import Receive, Scope, Send, header_map, send_bytes
from .landing import PAGE_METHODS
from .origin import TrustedProxies, request_base
from .playground import PLAYGROUND_PATH

__all__ = ["AgentHost"]

_PAGE_HEADERS = [
    (b"cache-control", b"no-cache"),
    (b"x-content-type-options", b"nosniff"),
    (b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'"),
    (b"vary", b"accept"),
]
_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:46rem;margin:3rem auto;padding:0 1rem;"
    "line-height:1.5;color:#222}code{background:#f3f3f3;padding:.1rem .3rem;border-radius:3px}"
    "li{margin:.6rem 0}small{color:#666}"
)


class AgentHost:
    """An ASGI app serving several ``A2AApp``s, each below its own path (``"/summarize"``)."""

    def __init__(
        self,
        apps: Mapping[str, A2AApp],
        *,
        public_url: str | None = None,
        trusted_proxies: Sequence[str] = (),
        card_signer: Callable[..., Any] | None = None,
        card_max_age: int = 300,
    ) -> None:
        if not apps:
            raise ValueError("a host needs at least one agent")
        self.apps: dict[str, A2AApp] = dict(apps)
        """Each agent's app by its path (``"/summarize"``), in the order given."""
        self._routes = sorted(self.apps.items(), key=lambda item: len(item[0]), reverse=True)
        self._proxies = TrustedProxies(trusted_proxies) if trusted_proxies else None
        listed = [
            ListedAgent(path.strip("/").replace("/", "-"), path, app.card)
            for path, app in self.apps.items()
        ]
        self.catalog = PublishedCatalog(
            listed,
            public_url=public_url,
            proxies=self._proxies,
            signer=card_signer,
            max_age=card_max_age,
        )
        for path, app in self.apps.items():
            app.list_in("../" * (path.count("/") + 1) + CATALOG_PATH.lstrip("/"))
        first = next(iter(self.apps.values()))
        self.max_header_bytes = max(a.max_header_bytes for a in self.apps.values())
        self.max_header_count = max(a.max_header_count for a in self.apps.values())
        self.service = first.service
        """The first agent's service (the agents share its store: probes read it)."""
        self._not_found = dumps(
            {"error": {"code": 404, "status": "NOT_FOUND", "message": "Not found"}}
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await _run_lifespan(self, receive, send)
            return
        if kind != "http":
            return
        root: str = scope.get("root_path", "")
        full: str = scope["path"]
        path = full[len(root) :] if root and full.startswith(root) else full
        for prefix, app in self._routes:
            if path == prefix or path.startswith(prefix + "/"):
                inner = dict(scope)
                inner["root_path"] = root + prefix
                await app(inner, receive, send)
                return
        method = scope["method"]
        if path == CATALOG_PATH:
            await self.catalog.respond(scope, send)
        elif path in PROBE_PATHS:
            await health.respond(self.service, scope, send, path)
        elif (path in ("/", "")) and method in PAGE_METHODS:
            await self._page(scope, send)
        else:
            await send_bytes(send, 404, self._not_found, b"application/json")

    async def _page(self, scope: Scope, send: Send) -> None:
        headers = header_map(scope["headers"])
        base = request_base(scope, headers, self._proxies)
        if "text/html" in (headers.get("accept") or "").lower():
            body, kind = self.html(base).encode(), b"text/html; charset=utf-8"
        else:
            body, kind = self.text(base).encode(), b"text/plain; charset=utf-8"
        start = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": start + _PAGE_HEADERS})
        await send(
            {"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body}
        )

    def text(self, base: str) -> str:
        """The root page as plain text: one agent a line, with its URL."""
        lines = [f"{len(self.apps)} A2A (Agent2Agent) agents", ""]
        for path, app in self.apps.items():
            lines.append(f"  {' '.join(app.card.name.split())}: {base}{path}")
        lines += ["", f"Catalog: {base}{CATALOG_PATH}", f"  a2a card {base}"]
        return "\n".join(lines) + "\n"

    def html(self, base: str) -> str:
        """The root page: each agent with its description and links (card text escaped)."""
        items: list[str] = []
        for path, app in self.apps.items():
            card = app.card
            url = html.escape(base + path)
            links = [f'<a href="{url}/.well-known/agent-card.json">card</a>']
            if app.options.playground:
                links.insert(0, f'<a href="{url}{PLAYGROUND_PATH}/">playground</a>')
            items.append(
                f"<li><strong>{html.escape(card.name)}</strong> <code>{url}</code><br>"
                f"{html.escape(card.description)}<br><small>{' · '.join(links)}</small></li>"
            )
        catalog = html.escape(base + CATALOG_PATH)
        return (
            '<!doctype html><html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>A2A agents</title><style>{_STYLE}</style></head><body>"
            f"<h1>{len(self.apps)} A2A agents</h1><ul>{''.join(items)}</ul>"
            f'<p>Catalog: <a href="{catalog}">{catalog}</a></p></body></html>'
        )

    async def stop_agents(self) -> None:
        """Refuse new work and stop every agent's running tasks (before the shared store
        closes)."""
        await asyncio.gather(*(app.stop_agents() for app in self.apps.values()))

    @asynccontextmanager
    async def lifespan(self) -> AsyncGenerator[AgentHost]:
        """Every agent's startup; at shutdown, every agent stops before any closes the store."""
        async with AsyncExitStack() as stack:
            for app in self.apps.values():
                await stack.enter_async_context(app.lifespan())
            try:
                yield self
            finally:
                await self.stop_agents()


async def _run_lifespan(host: AgentHost, receive: Receive, send: Send) -> None:
    """The ASGI lifespan protocol around ``host.lifespan()``."""
    manager = host.lifespan()
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            try:
                await manager.__aenter__()
            except Exception as exc:
                await send({"type": "lifespan.startup.failed", "message": repr(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            try:
                await manager.__aexit__(None, None, None)
            except Exception as exc:
                await send({"type": "lifespan.shutdown.failed", "message": repr(exc)})
            else:
                await send({"type": "lifespan.shutdown.complete"})
            return
