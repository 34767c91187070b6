"""Mounting an agent inside an existing Starlette or FastAPI application, in one call.

``mount(app, agent, path="/agents/echo")`` builds the agent's A2A app with
the one builder (every ``serve`` option works), routes ``path`` and
everything below it (card, JSON-RPC, HTTP+JSON, SSE) to it, and joins its
startup and shutdown to the host application's lifespan. The card lists
the routes under the origin each client used plus the mount path (or under
``public_url``), so ``A2AClient.connect("http://host/agents/echo")`` finds
it.

The core does not depend on Starlette: it is imported here, on first use,
from the host application's own installation. Other ASGI frameworks mount
``create_app(configure_service(agent))`` their own way and enter
``a2a_app.lifespan()`` from their lifespan.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping, MutableMapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, cast, overload

from ..errors import ConfigurationError
from ..server.asgi.app import A2AApp
from ..server.asgi.host import AgentHost
from ..server.asgi.http import Receive, Scope, Send
from ..server.options import keyword_names, parse_options
from .builder import CardLike, build_app, build_host

__all__ = ["mount"]

HostLifespan = Callable[[Any], AbstractAsyncContextManager[Any]]


@overload
def mount(  # pyright: ignore[reportOverlappingOverload] - a mapping is several agents
    host: Any,
    agent: Mapping[str, Any],
    *,
    path: str,
    card: CardLike | None = None,
    **options: Any,
) -> AgentHost: ...


@overload
def mount(
    host: Any, agent: Any, *, path: str, card: CardLike | None = None, **options: Any
) -> A2AApp: ...


def mount(
    host: Any, agent: Any, *, path: str, card: CardLike | None = None, **options: Any
) -> A2AApp | AgentHost:
    """Serve ``agent`` at ``path`` of the Starlette/FastAPI app ``host``; returns the A2A app.

    ``agent`` is anything ``serve`` takes: a function, an ``AgentExecutor``,
    a LangChain Runnable, a CrewAI Crew (through their plugins), an
    ``A2AService``, or an ``A2AApp`` built already (then without options).
    ``options`` are ``serve``'s (``public_url``, ``store_url``,
    ``bearer_tokens``, ``name``...); an unknown name is a ``TypeError``.
    A mapping of agents (``{"summarize": chain, "crew": crew}``) mounts them all
    below ``path`` (``/agents/summarize``...), sharing one store, with their AI
    Catalog at ``path + "/.well-known/ai-catalog.json"``; returns their ``AgentHost``.

    The A2A app starts and stops with the host: its startup (plugin
    lifespans) runs inside the host's lifespan, its shutdown (running tasks
    canceled, push delivery stopped, store closed) when the host's ends.
    """
    prefix = _mount_path(path)
    router = getattr(host, "router", None)
    if router is None or not hasattr(router, "routes") or not hasattr(router, "lifespan_context"):
        raise TypeError(
            f"mount() needs a Starlette or FastAPI application, not a {type(host).__name__}; "
            "with another framework, mount create_app(configure_service(agent)) yourself "
            "and enter its lifespan() from yours"
        )
    a2a_app: A2AApp | AgentHost
    if isinstance(agent, Mapping):
        if card is not None:
            raise TypeError("several agents: give each its card with HostedAgent(agent, card=...)")
        agents = cast("Mapping[str, Any]", agent)
        a2a_app = build_host(agents, options=options, explicit=keyword_names(mount))
    elif isinstance(agent, A2AApp):
        if options or card is not None:
            raise TypeError(
                "mount() of a ready A2AApp takes no card or options: build it with them"
            )
        a2a_app = agent
    else:
        parsed = parse_options(options, explicit=keyword_names(mount))
        a2a_app = build_app(agent, card=card, options=parsed)
    from starlette.routing import Mount, Route

    routes: list[Any] = router.routes
    if prefix:
        # Starlette's Mount answers below the path only; the path itself is the JSON-RPC URL.
        routes.append(Route(prefix, endpoint=_AtMountPath(a2a_app, prefix)))
    routes.append(Mount(prefix, app=a2a_app))
    router.lifespan_context = _joined(router.lifespan_context, a2a_app)
    return a2a_app


def _mount_path(path: str) -> str:
    """``"/agents/echo"`` (no trailing slash; ``""`` for the root), or a ConfigurationError."""
    cleaned = path.rstrip("/")
    if not path.startswith("/") or any(c in cleaned for c in "{}?#* "):
        raise ConfigurationError(
            f"mount path {path!r} must start with '/' and hold no parameters, query or spaces"
        )
    return cleaned


class _AtMountPath:
    """The mount path itself (``/agents/echo``, no slash), handed to the app as its root."""

    __slots__ = ("app", "prefix")

    def __init__(self, app: A2AApp | AgentHost, prefix: str) -> None:
        self.app = app
        self.prefix = prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        inner: MutableMapping[str, Any] = dict(scope)
        root = str(scope.get("root_path") or "")
        full = str(scope["path"])
        inner["root_path"] = (full if full.startswith(root) else root + full).rstrip("/")
        inner["path"] = inner["root_path"] + "/"
        await self.app(inner, receive, send)


def _joined(host_lifespan: HostLifespan, a2a_app: A2AApp | AgentHost) -> HostLifespan:
    """The host's lifespan with the A2A app's inside it (started after, stopped before)."""

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncGenerator[Any]:
        async with host_lifespan(app) as state, a2a_app.lifespan():
            yield state

    return lifespan
