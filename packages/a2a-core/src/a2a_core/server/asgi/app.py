"""The A2A ASGI application: the card and each HTTP binding's routes over one ``A2AService``.

Plain ASGI (no framework): it runs under any ASGI server and mounts inside
Starlette or FastAPI (``app.mount("/agent", a2a_app)``; the host app then
owns the lifespan, so enter ``a2a_app.lifespan()`` from it). Dispatch is a
comparison or two on the path; everything per-app (the bindings' routes and
codecs, the encoded card, extension sets) is prepared here, once. The
routes come from the binding table (``a2a_core.bindings``): JSON-RPC and
HTTP+JSON are registrations there like any other HTTP binding.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any

from ...card import with_default_skill
from ...errors import A2AError, ConfigurationError, HttpStatusMapping, InternalError
from ...identity import connection_tls
from ...types import AgentCard
from ...wire import DEFAULT_LIMITS, DecodeLimits, dumps
from ..head_limits import (
    DEFAULT_MAX_HEADER_BYTES,
    DEFAULT_MAX_HEADER_COUNT,
    head_too_large,
    request_line_bytes,
)
from ..options import AppOptions, refuse_unknown_keywords
from ..service import A2AService
from . import health
from .access import ACCESS_KEY, label, logged
from .access import wanted as access_wanted
from .card_route import CARD_PATHS, CardDocument, PublishedCard, card_document
from .catalog_route import CATALOG_PATH, ListedAgent, PublishedCatalog, slug
from .edge import Authenticate, Edge
from .files_route import BASE_URL_KEY, FILES_PATH, file_base, serve_file
from .health import PROBE_PATHS
from .http import Receive, Scope, Send, header_map, send_bytes
from .landing import PAGE_METHODS, LandingPage
from .origin import TrustedProxies, rebase_card
from .playground import PLAYGROUND_PATH, PlaygroundFiles, browser_wants_html
from .routes import RouteContext, Router, published_interfaces
from .sse import KeepAlive, SseConfig

__all__ = ["A2AApp", "Lifespan", "create_app"]

logger = logging.getLogger("a2a_core.server.asgi")

Lifespan = Callable[[Any], AbstractAsyncContextManager[Any]]
"""Extra startup/shutdown work: ``lifespan(app)`` is entered at startup, exited at shutdown."""


class A2AApp:
    """An ASGI app serving one A2A service. Build it with ``create_app``."""

    def __init__(
        self,
        service: A2AService,
        *,
        card: AgentCard | None = None,
        options: AppOptions | None = None,
        served_base: str | None = None,
    ) -> None:
        opts = options if options is not None else AppOptions()
        limits, max_body_bytes = opts.limits, opts.max_body_bytes
        authenticate = opts.authenticate if opts.authenticate is not None else service.authenticate
        lifespan = opts.lifespan if opts.lifespan is not None else service.lifespan
        self.options = opts
        body_limit = max_body_bytes if max_body_bytes is not None else limits.max_bytes
        if body_limit <= 0:
            raise ConfigurationError("max_body_bytes must be > 0")
        if opts.max_header_bytes <= 0 or opts.max_header_count <= 0:
            raise ConfigurationError("max_header_bytes and max_header_count must be > 0")
        self.max_header_bytes = opts.max_header_bytes
        self.max_header_count = opts.max_header_count
        self.http_status_mapping = HttpStatusMapping(opts.http_status_mapping)
        self.service = service
        self._extra_lifespan = lifespan
        # A published card always lists a skill (1.0 requires one).
        self.card = with_default_skill(card) if card is not None else service.card
        self.edge = Edge.build(
            service,
            self.card,
            limits=limits,
            max_body_bytes=body_limit,
            sse=KeepAlive(SseConfig(opts.sse_ping_interval, opts.sse_send_timeout)),
            authenticate=authenticate,
            require_auth=opts.require_auth,
        )
        if self.edge.require_auth and authenticate is None:
            raise ConfigurationError(
                "The agent card declares security but no authenticate hook was given "
                "(pass authenticate=..., or require_auth=False when a proxy authenticates)"
            )
        # Each HTTP binding of the table (a2a_core.bindings) adds its routes.
        self.router = Router(RouteContext(self.edge, opts))
        self.published = _published(self.card, opts, served_base)
        self.card_document = self.published.fixed or CardDocument(
            card_document(self.card, opts.card_signer),
            max_age=opts.card_max_age,
            modified_at=time.time(),
        )
        self._landing = LandingPage(self.card, playground=opts.playground)
        self._proxies = TrustedProxies(opts.trusted_proxies) if opts.trusted_proxies else None
        self.catalog = PublishedCatalog(
            [ListedAgent(slug(self.card.name), "", self.card)],
            public_url=opts.public_url,
            proxies=self._proxies,
            signer=opts.card_signer,
            max_age=opts.card_max_age,
        )
        """The AI Catalog this app publishes alone (one entry: itself); a host of several
        agents publishes one listing them all instead."""
        self._playground = PlaygroundFiles() if opts.playground else None
        self._not_found = dumps(
            {"error": {"code": 404, "status": "NOT_FOUND", "message": "Not found"}}
        )
        self._head_too_large = dumps(
            {
                "error": {
                    "code": 431,
                    "status": "REQUEST_HEADER_FIELDS_TOO_LARGE",
                    "message": "Request header fields too large",
                }
            }
        )

    # -- ASGI -----------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind != "http":
            if kind == "lifespan":
                await self._lifespan(receive, send)
            return  # websockets are not part of A2A: the server closes them
        extensions = scope.get("extensions")
        # The connection's TLS facts (a verified client certificate) for the auth backends.
        token = connection_tls.set(extensions.get("tls") if extensions else None)
        try:
            await self._http(scope, receive, send)
        finally:
            connection_tls.reset(token)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        probe = _probe_path(scope)
        if probe is not None:  # before authentication, the access log and tracing: probes
            await health.respond(self.service, scope, send, probe)  # repeat every few seconds
            return
        if ACCESS_KEY not in scope and access_wanted():
            await logged(self, scope, receive, send)  # comes back here, with a record
            return
        line = request_line_bytes(scope)
        if head_too_large(scope["headers"], self.max_header_bytes, self.max_header_count, line):
            await send_bytes(
                send, 431, self._head_too_large, b"application/json", [(b"connection", b"close")]
            )
            return
        path: str = scope["path"]
        root: str = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
        try:
            files = self.service.files
            if files is not None:
                if path.startswith(FILES_PATH):
                    await serve_file(files, self.edge, scope, send, path[len(FILES_PATH) :])
                    return
                scope[BASE_URL_KEY] = file_base(scope, self.options.public_url, self._proxies)
            route = self.router.exact.get(path)
            if route is not None:
                if route.page and scope["method"] in PAGE_METHODS and self._page_wanted(scope):
                    await self._page(scope, send)
                else:
                    await route.handler(scope, receive, send, "")
            elif path in CARD_PATHS:
                await self._card(scope, send)
            elif path == CATALOG_PATH:
                await self.catalog.respond(scope, send)
            elif path == "/" and scope["method"] in PAGE_METHODS and self._page_wanted(scope):
                await self._page(scope, send)
            elif self._playground is not None and (
                path == PLAYGROUND_PATH or path.startswith(PLAYGROUND_PATH + "/")
            ):
                await self._playground.respond(scope, send, path[len(PLAYGROUND_PATH) :])
            elif (route := self.router.prefixed(path)) is not None:
                await route.handler(scope, receive, send, path[len(route.path) :])
            else:
                await send_bytes(send, 404, self._not_found, b"application/json")
        except OSError as exc:
            # The connection went away under us (the server raises on send):
            # nothing left to answer.
            logger.debug("response not delivered: %r", exc)
        except A2AError as exc:  # pragma: no cover - the endpoints answer their own errors
            logger.error("unhandled A2A error at the edge: %r", exc)
        except Exception:  # pragma: no cover - last resort: never let a request crash the server
            logger.exception("request failed")
            try:
                body = dumps({"error": {"code": 500, "message": InternalError().message}})
                await send_bytes(send, 500, body, b"application/json")
            except Exception:
                pass

    def list_in(self, catalog: str) -> None:
        """Point the playground at the catalog of the host serving this app (a URL relative
        to the page), so it offers the other agents there."""
        if self._playground is not None:
            self._playground = PlaygroundFiles(catalog=catalog)

    async def stop_agents(self) -> None:
        """Refuse new work and cancel the running tasks (the server calls it before draining
        connections, so open streams end at once)."""
        await self.service.manager.stop()

    def _page_wanted(self, scope: Scope) -> bool:
        """A GET of the agent's URL: a person (or curl), unless the client wants JSON only."""
        accept = None
        for key, value in scope["headers"]:
            if key == b"accept":
                accept = value.decode("latin-1")
        return self._landing.wanted(accept)

    async def _page(self, scope: Scope, send: Send) -> None:
        """A person at the agent's URL: a browser goes to the playground (when served),
        anything else gets the landing page."""
        if self._playground is not None:
            accept = header_map(scope["headers"]).get("accept")
            if browser_wants_html(accept):
                await self._playground.redirect(scope, send)
                return
        await self._landing.respond(scope, send)

    async def _card(self, scope: Scope, send: Send) -> None:
        label(scope, "card")
        method = scope["method"]
        if method not in ("GET", "HEAD"):
            body = dumps({"error": {"code": 405, "message": "The agent card is read-only"}})
            await send_bytes(send, 405, body, b"application/json", [(b"allow", b"GET, HEAD")])
            return
        headers = header_map(scope["headers"])
        document = self.published.document(scope, headers)
        await document.respond(send, headers, head=method == "HEAD")

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """The ASGI lifespan protocol: ``startup`` enters ``lifespan()``, ``shutdown`` exits it."""
        manager = self.lifespan()
        while True:
            message = await receive()
            kind = message["type"]
            if kind == "lifespan.startup":
                try:
                    await manager.__aenter__()
                except Exception as exc:
                    logger.exception("starting the A2A app failed")
                    await send({"type": "lifespan.startup.failed", "message": repr(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif kind == "lifespan.shutdown":
                try:
                    await manager.__aexit__(None, None, None)
                except Exception as exc:
                    logger.exception("closing the A2A service failed")
                    await send({"type": "lifespan.shutdown.failed", "message": repr(exc)})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                return

    @asynccontextmanager
    async def lifespan(self) -> AsyncGenerator[A2AApp]:
        """Startup and shutdown, for servers and for host apps that mount this one.

        Enters the ``lifespan`` option (plugin lifespans), and on the way out
        closes the service (cancels running agents, stops push delivery,
        closes the store), then exits that option.
        """
        async with AsyncExitStack() as stack:
            if self._extra_lifespan is not None:
                await stack.enter_async_context(self._extra_lifespan(self))
            # Lease renewal and the orphan sweeper run while the app serves.
            self.service.manager.start_background()
            try:
                yield self
            finally:
                await self.service.aclose()


def _probe_path(scope: Scope) -> str | None:
    """``/healthz`` or ``/readyz`` when the request is for one (below the mount path)."""
    path: str = scope["path"]
    if not path.endswith(("/healthz", "/readyz")):
        return None
    root: str = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root) :]
    return path if path in PROBE_PATHS else None


def _published(card: AgentCard, opts: AppOptions, served_base: str | None) -> PublishedCard:
    """What the card route answers: interface URLs for the public URL, as the card lists
    them, or for the origin of each request.

    Interfaces "served here" are those of a card that lists none (this app's
    routes, relative to wherever it is mounted) and those under ``served_base``
    (the URL ``serve`` guessed from its host and port). A public URL replaces
    their base once; without one they follow each request's origin.
    """
    template, base = card, served_base
    if not card.supported_interfaces:
        here = published_interfaces("", opts)
        template, base = card.model_copy(update={"supported_interfaces": here}), ""
    if opts.public_url and base is not None:
        template, base = rebase_card(template, base, opts.public_url.rstrip("/")), None
    proxies = TrustedProxies(opts.trusted_proxies) if opts.trusted_proxies else None
    return PublishedCard(
        template,
        served_base=base,
        max_age=opts.card_max_age,
        proxies=proxies,
        signer=opts.card_signer,
    )


@refuse_unknown_keywords
def create_app(
    service: A2AService,
    *,
    card: AgentCard | None = None,
    jsonrpc_path: str | None = "/",
    rest: bool = True,
    rest_prefix: str = "",
    http_status_mapping: HttpStatusMapping | str = HttpStatusMapping.V1_0_1,
    rest_content_type: str = "application/json",
    max_body_bytes: int | None = None,
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES,
    max_header_count: int = DEFAULT_MAX_HEADER_COUNT,
    limits: DecodeLimits = DEFAULT_LIMITS,
    card_max_age: int = 300,
    card_signer: Callable[[AgentCard], AgentCard] | None = None,
    authenticate: Authenticate | None = None,
    require_auth: bool | None = None,
    sse_ping_interval: float | None = 15.0,
    sse_send_timeout: float | None = 30.0,
    lifespan: Lifespan | None = None,
    public_url: str | None = None,
    trusted_proxies: Sequence[str] = (),
    playground: bool = True,
) -> A2AApp:
    """The ASGI app for ``service``.

    - ``card``: the card to publish (default ``service.card``). When it lists
      no interfaces, the app publishes its own routes: under ``public_url``
      when given, else under the origin each client used (scheme, ``Host``,
      mount path), so the card always matches where it was fetched from.
    - ``public_url``: the URL clients use (a proxy's, say); always wins.
    - ``trusted_proxies``: addresses/networks (or ``"*"``) whose ``Forwarded``
      / ``X-Forwarded-*`` headers say the origin; others' are ignored.
    - ``jsonrpc_path``: where JSON-RPC is answered (None: no JSON-RPC).
    - ``rest`` / ``rest_prefix``: the HTTP+JSON routes, below ``rest_prefix``.
    - ``http_status_mapping``: HTTP statuses of 1.0 HTTP+JSON errors
      ("1.0.1", the default, or "1.0.0", which the conformance kit expects).
    - ``rest_content_type``: "application/json" (default) or "application/a2a+json".
    - ``max_body_bytes`` (default ``limits.max_bytes``, 10 MiB) and ``limits``
      (JSON depth, parts, history): bounds on what a client can send.
    - ``max_header_bytes`` (16 KiB) / ``max_header_count`` (100): bounds on the
      request headers; beyond them the answer is 431.
    - ``card_max_age``: ``Cache-Control: max-age`` of the card, in seconds.
    - ``card_signer``: signs the served card (``a2a_core.signing.CardSigner``).
    - ``authenticate``: ``async (headers) -> Principal | None`` (headers lower-cased);
      default: the service's own (``configure_service`` composes it from the
      auth options). When the card declares security (``require_auth`` None
      derives it from the card), None means 401.
    - ``sse_ping_interval`` / ``sse_send_timeout``: keep-alive comments on
      silent streams, and how long a client may stop reading before it is
      dropped (None disables either).
    - ``lifespan``: ``lifespan(app)`` -> async context manager entered at
      startup; default: the service's own (the plugins' ``a2a_lifespan``
      when ``configure_service`` built it).
    - ``playground``: serve the browser playground at ``/playground/`` (a browser
      opening the agent's URL is sent there); False turns it off (production).
    """
    options = AppOptions(
        jsonrpc_path=jsonrpc_path,
        rest=rest,
        rest_prefix=rest_prefix,
        http_status_mapping=http_status_mapping,
        rest_content_type=rest_content_type,
        max_body_bytes=max_body_bytes,
        max_header_bytes=max_header_bytes,
        max_header_count=max_header_count,
        limits=limits,
        card_max_age=card_max_age,
        card_signer=card_signer,
        authenticate=authenticate,
        require_auth=require_auth,
        sse_ping_interval=sse_ping_interval,
        sse_send_timeout=sse_send_timeout,
        lifespan=lifespan,
        public_url=public_url,
        trusted_proxies=tuple(trusted_proxies),
        playground=playground,
    )
    return A2AApp(service, card=card, options=options)
