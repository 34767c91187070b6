"""The server side of the HTTP bindings: routes of the ASGI app, read from the binding table.

An HTTP binding (JSON-RPC, HTTP+JSON, or a third party's) registers, beside
its client transport, a ``ServedBinding`` (``Binding.routes`` in
``a2a_core.bindings``): given the app's options it names the interfaces it
publishes, and given the app's ``Edge`` it builds its routes. ``A2AApp``
dispatches to those routes and the card publishes those interfaces, so a new
binding is one module and one ``register_binding`` call, for client and server.
Bindings served on a port of their own (gRPC) publish one interface per
version at the address they listen on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

from ...bindings import BindingUnavailableError, bindings
from ...errors import ConfigurationError
from ...types import AgentInterface
from ..options import AppOptions
from .http import Receive, Scope, Send

if TYPE_CHECKING:
    from ...bindings import Binding
    from .edge import Edge

__all__ = [
    "Route",
    "RouteContext",
    "RouteHandler",
    "Router",
    "ServedBinding",
    "published_interfaces",
    "served_bindings",
]

RouteHandler = Callable[[Scope, Receive, Send, str], Awaitable[None]]
"""``handler(scope, receive, send, rest)``: ``rest`` is the path after a prefix route's
prefix ("" for an exact route)."""


@dataclass(frozen=True, slots=True)
class Route:
    """One path (or path prefix) of the app a binding answers."""

    path: str
    """The path below the app's mount point, or a prefix ("" with ``prefix``: every path)."""
    handler: RouteHandler
    prefix: bool = False
    """Answer ``path`` + ``"/..."`` too (the longest matching prefix wins, after exact
    paths and the card)."""
    page: bool = False
    """A browser's GET here gets the agent's landing page instead (the JSON-RPC endpoint)."""


@dataclass(frozen=True, slots=True)
class RouteContext:
    """What a binding's routes are built from: the app's edge (auth, limits, service)
    and its options."""

    edge: Edge
    options: AppOptions


class ServedBinding(Protocol):
    """The server side of an HTTP binding, as registered in the binding table."""

    def interfaces(self, base_url: str, options: AppOptions) -> list[AgentInterface]:
        """The interfaces an app at ``base_url`` with ``options`` publishes ([]: not served)."""
        ...

    def routes(self, context: RouteContext) -> Sequence[Route]:
        """The app's routes for this binding (none when the options turn it off)."""
        ...


def _served(entry: Binding) -> ServedBinding:
    """The server side of a binding served as routes of the app, imported now."""
    if entry.routes is None:
        raise BindingUnavailableError(f"The {entry.name} binding has no routes in the app")
    return cast(ServedBinding, entry.load(entry.routes))


def served_bindings() -> list[tuple[Binding, ServedBinding]]:
    """The registered bindings served as routes of the app, in registration order."""
    return [(entry, _served(entry)) for entry in bindings() if entry.routes is not None]


def published_interfaces(
    base_url: str, options: AppOptions, listeners: Mapping[str, str] | None = None
) -> list[AgentInterface]:
    """Every interface an app at ``base_url`` serves, in the binding table's order.

    ``listeners`` maps a binding served on its own port (``"GRPC"``) to the
    ``host:port`` it listens on; it is published once per protocol version.
    """
    listening = dict(listeners or {})
    out: list[AgentInterface] = []
    for entry in bindings():
        if entry.routes is not None:
            out.extend(_served(entry).interfaces(base_url, options))
        address = listening.get(entry.name)
        if address is not None:
            out.extend(
                AgentInterface(url=address, protocol_binding=entry.name, protocol_version=v)
                for v in entry.versions
            )
    return out


class Router:
    """The routes of every served binding, matched by path: exact paths first, then
    (after the app's own card and page) prefixes, longest first."""

    __slots__ = ("exact", "prefixes")

    def __init__(self, context: RouteContext) -> None:
        exact: dict[str, Route] = {}
        prefixes: list[Route] = []
        for entry, served in served_bindings():
            for route in served.routes(context):
                if route.prefix:
                    if any(r.path == route.path for r in prefixes):
                        raise ConfigurationError(
                            f"{entry.name}: two bindings serve the prefix {route.path!r}"
                        )
                    prefixes.append(route)
                elif route.path in exact:
                    raise ConfigurationError(
                        f"{entry.name}: two bindings serve the path {route.path!r}"
                    )
                else:
                    exact[route.path] = route
        if not exact and not prefixes:
            raise ConfigurationError(
                "the app would serve no binding (jsonrpc_path=None, rest=False)"
            )
        prefixes.sort(key=lambda r: len(r.path), reverse=True)
        self.exact = exact
        self.prefixes = tuple(prefixes)

    def prefixed(self, path: str) -> Route | None:
        """The prefix route answering ``path``, or None."""
        for route in self.prefixes:
            if not route.path or path.startswith(route.path + "/"):
                return route
        return None
