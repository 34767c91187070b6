"""Serve an agent (or an ``A2AService``) over HTTP with uvicorn.

``serve(agent, card=...)`` is the one-liner: it resolves the agent through
the plugins (framework adapters, auth backends, card hooks, task stores),
fills the card's interfaces from where it listens when the card lists none,
and runs uvicorn until interrupted. ``running_server`` is the same as an
async context manager that starts in the background and stops on exit, for
tests and embedding; ``serve_async`` runs in an existing event loop.

Every keyword option goes to the one builder (``compose.builder``), which
sorts them (``server.options``: HTTP app, service, agent options) and refuses
a name nothing takes.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import socket
import sys
from collections.abc import AsyncGenerator, Generator, Mapping
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlsplit

import uvicorn

from ..bindings import Listener
from ..server.asgi.access import use_log_level
from ..server.asgi.app import A2AApp
from ..server.asgi.host import AgentHost
from ..server.head_limits import uvicorn_http_options
from ..server.options import keyword_names, parse_options
from ..server.push_api import PushNotifier
from ..server.service import A2AService
from ..server.tls import ServerTLS, with_tls_extension
from .builder import CardLike, build_app, build_host, interfaces_for

__all__ = [
    "RunningServer",
    "freeze_startup_objects",
    "interfaces_for",
    "public_base_url",
    "public_grpc_address",
    "running_server",
    "serve",
    "serve_async",
]

logger = logging.getLogger("a2a_core.server")

_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "0.0.0.0", "::", "::1", "", "localhost"})


@dataclass(frozen=True, slots=True)
class RunningServer:
    """A server started by ``running_server``: where it listens and what it serves."""

    url: str
    """The base URL clients use (``http://localhost:PORT`` for loopback hosts)."""
    host: str
    port: int
    app: A2AApp
    """The agent's app (the first agent's, when several are served: see ``hosted``)."""
    service: A2AService
    """The agent's service (the first agent's, when several are served)."""
    server: uvicorn.Server
    grpc_address: str | None = None
    """``host:port`` of the gRPC binding, when started (``grpc_port=``)."""
    hosted: AgentHost | None = None
    """The host of every agent, when several are served (``running_server({...})``)."""


def public_base_url(
    host: str, port: int, public_url: str | None = None, *, scheme: str = "http"
) -> str:
    """The server's URL: ``public_url``, else ``http://host:port`` (``https`` over TLS).

    Loopback and wildcard hosts are named ``localhost``. Without
    ``public_url``, the card's interfaces follow the origin each client
    used instead (``http://127.0.0.1:PORT`` for a client that came that way).
    """
    if public_url:
        return public_url.rstrip("/")
    name = "localhost" if host in _LOOPBACK_HOSTS else host
    if ":" in name:
        name = f"[{name}]"
    return f"{scheme}://{name}:{port}"


def public_grpc_address(
    host: str, port: int, public_url: str | None = None, *, secure: bool = False
) -> str:
    """The ``host:port`` published for the gRPC interface (loopback shown as ``localhost``).

    With ``public_url``, its host name (as given) with the gRPC port; ``secure``
    (served over TLS): ``grpcs://host:port``.
    """
    name = urlsplit(public_url).hostname if public_url else None
    if not name:
        name = "localhost" if host in _LOOPBACK_HOSTS else host
    address = f"[{name}]:{port}" if ":" in name else f"{name}:{port}"
    return f"grpcs://{address}" if secure else address


class _GrpcSide:
    """The gRPC listener started beside uvicorn (the ``GRPC`` entry of ``a2a_core.bindings``)."""

    def __init__(self, host: str, port: int, options: Mapping[str, Any]) -> None:
        from ..bindings import binding

        entry = binding("GRPC")
        if entry is None:  # pragma: no cover - a built-in registration
            raise RuntimeError("no GRPC binding is registered")
        factory = entry.server_factory()
        self.server: Listener = factory(host, port, **options)
        self.port: int = self.server.bind()

    async def start(self, app: A2AApp) -> None:
        self.server.attach(app)
        await self.server.start()

    async def stop(self, grace: float | None) -> None:
        await self.server.stop(grace)


def _grpc_side(
    host: str,
    grpc_port: int | None,
    public_url: str | None,
    grpc_options: Mapping[str, Any] | None,
    tls: ServerTLS | None = None,
) -> tuple[_GrpcSide | None, str | None]:
    """The gRPC listener (bound, not started) and its published address, when asked for.

    With ``tls`` (and no ``credentials`` of its own), it serves TLS with the same
    certificate and client CA.
    """
    if grpc_port is None:
        return None, None
    options = dict(grpc_options or {})
    if tls is not None and "credentials" not in options:
        options.update(tls.grpc_options())
    side = _GrpcSide(host, grpc_port, options)
    secure = options.get("credentials") is not None
    return side, public_grpc_address(host, side.port, public_url, secure=secure)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto must say TCP: asyncio only sets TCP_NODELAY on connections whose socket
    # says so, and without it small responses wait for the peer's delayed ACKs.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _build(
    agent_or_service: Any | Mapping[str, Any],
    card: CardLike | None,
    base_url: str,
    public_url: str | None,
    push: bool | PushNotifier,
    allow_private_push_targets: bool,
    options: Mapping[str, Any],
    grpc_address: str | None = None,
    tls: ServerTLS | None = None,
    *,
    own_keywords: frozenset[str] = frozenset(),
) -> A2AApp | AgentHost:
    """The app through the one builder; ``own_keywords``: the caller's keyword parameters
    (listed and suggested when an option is unknown). A mapping of agents (path name ->
    agent) is served by one ``AgentHost``."""
    given = dict(options)
    if tls is not None and tls.mutual:
        from ..mtls import MutualTLSAuth

        explicit: Any = given.get("auth_backends") or []
        given["auth_backends"] = [*explicit, MutualTLSAuth(tls.principal_field)]
    if public_url:
        given["public_url"] = public_url
    if push is not False:
        given["push"] = push
    if allow_private_push_targets:
        given["allow_private_push_targets"] = True
    if isinstance(agent_or_service, Mapping):
        if card is not None:
            raise TypeError("several agents: give each its card with HostedAgent(agent, card=...)")
        if grpc_address is not None:
            raise TypeError("grpc_port serves one agent; several agents are served over HTTP")
        agents = cast("Mapping[str, Any]", agent_or_service)
        return build_host(agents, options=given, base_url=base_url, explicit=own_keywords)
    return build_app(
        agent_or_service,
        card=card,
        options=parse_options(given, explicit=own_keywords),
        base_url=base_url,
        grpc_address=grpc_address,
    )


_frozen = False


def freeze_startup_objects() -> None:
    """Exempt every object that exists now from the garbage collector's full passes.

    Only for code that owns its process (``serve()``, ``a2a serve``): ``gc.freeze()``
    is process-wide, so a library entry point (``create_app``, ``mount``,
    ``running_server``) never calls it. What exists once a server has started
    (modules, classes, the models' pydantic validators, the app) lives as long as the
    process, yet each full collection would walk all of it again, and pydantic-core's
    validators are costly to walk (``benchmarks/results/2026-12-03-gc.md``). Objects
    made later are collected as before. Only the first call in a process freezes: a
    later server's startup objects may be an earlier one's garbage. The cost: a
    frozen object that later becomes unreachable in a reference cycle is never freed.
    """
    global _frozen
    if _frozen:
        return
    _frozen = True
    gc.collect()  # what is garbage already goes now, not into the frozen set
    gc.freeze()


class _A2AServer(uvicorn.Server):
    """uvicorn, stopping the agents before it drains connections.

    Otherwise a blocking send or an open stream holds the shutdown for the whole
    grace period (the service is closed only in the lifespan, after the drain).
    """

    grpc: _GrpcSide | None = None
    """The gRPC listener beside this server: stopped with it, before the service closes."""
    owns_process = False
    """True under ``serve()``: once started, the startup objects are frozen."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.owns_process and self.started:
            freeze_startup_objects()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        app = self.config.app
        if isinstance(app, A2AApp | AgentHost):
            try:
                await app.stop_agents()
            except Exception:
                logger.exception("stopping the agents failed")
        if self.grpc is not None:
            try:
                await self.grpc.stop(self.config.timeout_graceful_shutdown)
            except Exception:
                logger.exception("stopping the gRPC server failed")
        await super().shutdown(sockets)


class _EmbeddedServer(_A2AServer):
    """A uvicorn server that leaves the process's signal handlers alone."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        yield


def _config(
    app: A2AApp | AgentHost, log_level: str, graceful: int | None, tls: ServerTLS | None = None
) -> uvicorn.Config:
    use_log_level(log_level)  # a2a_core's loggers too; the access log is ours (access_log=False)
    http = uvicorn_http_options(app.max_header_bytes, app.max_header_count)
    secure: dict[str, Any] = {}
    if tls is not None:
        secure = tls.uvicorn_options()
        protocol = http["http"]
        if isinstance(protocol, str):  # h11 (httptools is not installed)
            from uvicorn.protocols.http.h11_impl import H11Protocol

            protocol = H11Protocol
        http["http"] = with_tls_extension(protocol)
    return uvicorn.Config(
        app,
        lifespan="on",
        log_level=log_level,
        timeout_graceful_shutdown=graceful,
        access_log=False,
        proxy_headers=False,  # the app reads forwarded headers, from trusted_proxies only
        **http,
        **secure,
    )


def _scheme(tls: ServerTLS | None) -> str:
    if tls is None:
        return "http"
    tls.check()
    return "https"


async def serve_async(
    agent_or_service: Any,
    *,
    card: CardLike | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    public_url: str | None = None,
    log_level: str = "warning",
    push: bool | PushNotifier = False,
    allow_private_push_targets: bool = False,
    graceful_shutdown: int | None = 5,
    announce: bool = False,
    grpc_port: int | None = None,
    grpc_options: Mapping[str, Any] | None = None,
    tls: ServerTLS | None = None,
    **options: Any,
) -> None:
    """Serve until cancelled or interrupted (Ctrl+C), in the running event loop.

    ``announce`` prints the agent's URL (and its playground's) to stderr once bound. The
    process is left as it was (no ``gc.freeze()``): the loop may run other work.
    """
    await _serve(
        agent_or_service,
        card=card,
        host=host,
        port=port,
        public_url=public_url,
        log_level=log_level,
        push=push,
        allow_private_push_targets=allow_private_push_targets,
        graceful_shutdown=graceful_shutdown,
        announce=announce,
        grpc_port=grpc_port,
        grpc_options=grpc_options,
        tls=tls,
        owns_process=False,
        **options,
    )


async def _serve(
    agent_or_service: Any,
    *,
    card: CardLike | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    public_url: str | None = None,
    log_level: str = "warning",
    push: bool | PushNotifier = False,
    allow_private_push_targets: bool = False,
    graceful_shutdown: int | None = 5,
    announce: bool = False,
    grpc_port: int | None = None,
    grpc_options: Mapping[str, Any] | None = None,
    tls: ServerTLS | None = None,
    owns_process: bool,
    **options: Any,
) -> None:
    scheme = _scheme(tls)
    sock = _bind(host, port)
    grpc: _GrpcSide | None = None
    try:
        port = sock.getsockname()[1]
        base = public_base_url(host, port, public_url, scheme=scheme)
        grpc, grpc_address = _grpc_side(host, grpc_port, public_url, grpc_options, tls)
        app = _build(
            agent_or_service,
            card,
            public_base_url(host, port, scheme=scheme),
            public_url,
            push,
            allow_private_push_targets,
            options,
            grpc_address,
            tls,
            own_keywords=keyword_names(serve_async),  # serve's are a subset
        )
        server = _A2AServer(_config(app, log_level, graceful_shutdown, tls))
        server.owns_process = owns_process
        if grpc is not None and isinstance(app, A2AApp):
            await grpc.start(app)
            server.grpc = grpc
        if announce:
            where = f"{base} and gRPC {grpc_address}" if grpc_address else base
            if isinstance(app, AgentHost):
                what = f"{len(app.apps)} A2A agents ({', '.join(app.apps)})"
                playgrounds = [
                    f"{base}{path}/playground/"
                    for path, one in app.apps.items()
                    if one.options.playground
                ]
            else:
                what = f"A2A agent {app.card.name!r}"
                playgrounds = [f"{base}/playground/"] if app.options.playground else []
            print(f"{what} at {where} (Ctrl+C to stop)", file=sys.stderr)
            for page in playgrounds:  # as `a2a serve` says it
                print(f"Playground: {page}", file=sys.stderr)
        await server.serve(sockets=[sock])
    finally:
        if grpc is not None:
            await grpc.stop(0)
        sock.close()


def serve(
    agent_or_service: Any,
    *,
    card: CardLike | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    public_url: str | None = None,
    log_level: str = "warning",
    push: bool | PushNotifier = False,
    allow_private_push_targets: bool = False,
    graceful_shutdown: int | None = 5,
    grpc_port: int | None = None,
    grpc_options: Mapping[str, Any] | None = None,
    tls: ServerTLS | None = None,
    **options: Any,
) -> None:
    """Serve an agent (any object a plugin or the core can serve) or an ``A2AService``;
    or several agents, as a mapping of path names to agents (``serve({"summarize": chain,
    "crew": crew})``: each below ``/NAME`` with its own card and playground, one store,
    push service and auth for all, an AI Catalog at ``/.well-known/ai-catalog.json``;
    a ``HostedAgent`` gives one its own card and options).

    - ``card``: an ``AgentCard`` or an ``AgentCardBuilder``; without
      interfaces, JSON-RPC and HTTP+JSON (1.0 and 0.3) at ``public_url`` (or
      ``http://host:port``, loopback shown as ``localhost``) are filled in.
      Without a card, one is made from the agent's name and docstring.
    - ``push``: True for the built-in webhook sender (``allow_private_push_targets``
      lets it call loopback/private hosts, for tests), or a ``PushNotifier``.
    - ``grpc_port``: also serve the gRPC binding on this port (0: a free one;
      needs the ``grpc`` extra), in the same event loop, listed in the card as
      ``host:port``; ``grpc_options`` go to ``a2a_core.grpc.GrpcServer``
      (``max_message_bytes``, ``max_concurrent_streams``, ``max_concurrent_rpcs``,
      ``status_mapping``, ``credentials``). It stops with the HTTP server.
    - ``tls``: serve HTTPS with a ``ServerTLS`` (``a2a_core.server.tls``); with its
      ``client_ca``, clients must present a certificate from that CA and its subject
      (``principal_field``, default CN) is the caller (mutual TLS, docs/security.md).
    - ``options``: app, service and agent options (``server.options``); an
      unknown name is a ``TypeError`` listing the valid ones. ``playground=False``
      turns off the browser playground served at ``/playground/`` (docs/playground.md).

    Blocks until interrupted. ``serve`` owns its process: once the server has started,
    it exempts the objects of that moment from garbage collection
    (``freeze_startup_objects``).
    """
    asyncio.run(
        _serve(
            agent_or_service,
            card=card,
            host=host,
            port=port,
            public_url=public_url,
            log_level=log_level,
            push=push,
            allow_private_push_targets=allow_private_push_targets,
            graceful_shutdown=graceful_shutdown,
            announce=True,
            grpc_port=grpc_port,
            grpc_options=grpc_options,
            tls=tls,
            owns_process=True,
            **options,
        )
    )


@contextlib.asynccontextmanager
async def running_server(
    agent_or_service: Any,
    *,
    card: CardLike | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    public_url: str | None = None,
    log_level: str = "warning",
    push: bool | PushNotifier = False,
    allow_private_push_targets: bool = False,
    graceful_shutdown: int | None = 2,
    startup_timeout: float = 10.0,
    grpc_port: int | None = None,
    grpc_options: Mapping[str, Any] | None = None,
    tls: ServerTLS | None = None,
    **options: Any,
) -> AsyncGenerator[RunningServer]:
    """Start a server in the background (port 0: a free port) and stop it on exit.

    Signal handlers are left alone; the lifespan runs (the service is closed
    on exit). Raises RuntimeError when the server does not start in time.
    ``grpc_port`` / ``grpc_options`` / ``tls``: as for ``serve`` (``RunningServer.grpc_address``).
    """
    scheme = _scheme(tls)
    sock = _bind(host, port)
    bound_port: int = sock.getsockname()[1]
    task: asyncio.Task[None] | None = None
    server: _EmbeddedServer | None = None
    grpc: _GrpcSide | None = None
    try:
        base = public_base_url(host, bound_port, public_url, scheme=scheme)
        grpc, grpc_address = _grpc_side(host, grpc_port, public_url, grpc_options, tls)
        app = _build(
            agent_or_service,
            card,
            public_base_url(host, bound_port, scheme=scheme),
            public_url,
            push,
            allow_private_push_targets,
            options,
            grpc_address,
            tls,
            own_keywords=keyword_names(running_server),
        )
        server = _EmbeddedServer(_config(app, log_level, graceful_shutdown, tls))
        if grpc is not None and isinstance(app, A2AApp):
            await grpc.start(app)
            server.grpc = grpc
        task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
        deadline = asyncio.get_running_loop().time() + startup_timeout
        while not server.started:
            if task.done():
                task.result()  # raises the startup failure
                raise RuntimeError("the server stopped during startup")
            if asyncio.get_running_loop().time() > deadline:
                raise RuntimeError(f"the server did not start within {startup_timeout} s")
            await asyncio.sleep(0.005)
        first = app if isinstance(app, A2AApp) else next(iter(app.apps.values()))
        yield RunningServer(
            base,
            host,
            bound_port,
            first,
            first.service,
            server,
            grpc_address=grpc.server.address if grpc is not None else None,
            hosted=app if isinstance(app, AgentHost) else None,
        )
    finally:
        if task is not None and not task.done():
            await _stop(task, server, graceful_shutdown)
        if grpc is not None:
            await grpc.stop(0)
        sock.close()


async def _stop(
    task: asyncio.Task[None], server: uvicorn.Server | None, graceful: int | None
) -> None:
    if server is not None:
        server.should_exit = True
    limit = (graceful or 0.0) + 10.0
    try:
        await asyncio.wait_for(asyncio.shield(task), timeout=limit)
    except TimeoutError:
        if server is not None:
            server.force_exit = True
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
    except Exception:
        logger.exception("the server failed while stopping")
