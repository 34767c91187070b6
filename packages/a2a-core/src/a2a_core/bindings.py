"""The protocol bindings this package speaks, registered in one table.

A binding is one entry here: the name cards use for it, the other spellings
clients and the CLI accept, the protocol versions it carries, where its
client transport lives and how a server serves it: as routes of the ASGI
app (``routes``: JSON-RPC, HTTP+JSON) or on a port of its own (``server``:
gRPC). Each is named by import path and loaded only when used, so an
optional binding (gRPC, behind the ``grpc`` extra) costs nothing until then,
and a missing extra is reported by name. Interface selection, ``A2AClient``,
the CLI, ``A2AApp`` and the card's interfaces all read this table; a new
binding is one module and one ``register_binding`` call.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, cast

__all__ = [
    "Binding",
    "BindingUnavailableError",
    "Listener",
    "binding",
    "bindings",
    "cli_bindings",
    "normalize_binding",
    "register_binding",
    "unregister_binding",
]


class Listener(Protocol):
    """A binding served on its own port beside the ASGI app (the shape of ``GrpcServer``)."""

    port: int

    @property
    def address(self) -> str:
        """``host:port`` it listens on."""
        ...

    def bind(self) -> int:
        """Listen (not yet serving); the bound port."""
        ...

    def attach(self, app: Any) -> int:
        """Serve ``app``'s service (an ``A2AApp``); the bound port."""
        ...

    async def start(self) -> None:
        """Start serving on the bound port."""

    async def stop(self, grace: float | None = None) -> None:
        """Stop serving, letting calls under way finish within ``grace`` seconds."""


class BindingUnavailableError(ImportError):
    """The binding's client or server needs an optional extra that is not installed."""


@dataclass(frozen=True, slots=True)
class Binding:
    """One protocol binding: its names, versions, client transport and server side."""

    name: str
    """The name in ``AgentInterface.protocol_binding`` ("JSONRPC", "HTTP+JSON", "GRPC")."""
    aliases: tuple[str, ...] = ()
    """Other accepted spellings (compared upper-cased)."""
    cli_names: tuple[str, ...] = ()
    """``--binding`` spellings of the CLI (lower-case)."""
    versions: tuple[str, ...] = ("1.0", "0.3")
    """The protocol versions it carries."""
    client: str | None = None
    """``"module:attribute"`` of the client transport factory (None: no client transport):
    ``factory(interface, config) -> ClientTransport``, typed as
    ``a2a_core.client.transports.TransportFactory``."""
    server: str | None = None
    """``"module:attribute"`` of a listener class, for a binding served on its own port
    beside the ASGI app (gRPC); None for bindings that are routes of the app."""
    extra: str | None = None
    """The optional extra the binding needs (named when its import fails)."""
    relative_urls: bool = True
    """Whether a card's interface URL may be relative to the card's own URL (HTTP bindings)."""
    requires: tuple[str, ...] = ()
    """Modules that must be importable for the binding to be usable (the extra's)."""
    routes: str | None = None
    """``"module:attribute"`` of the binding's ``ServedBinding`` (``a2a_core.server.asgi``):
    the routes it adds to the ASGI app and the interfaces it publishes; None for bindings
    that are not routes of the app."""

    @property
    def available(self) -> bool:
        """Whether the client transport can be loaded (its extra's modules are installed)."""
        return self.client is not None and all(_installed(m) for m in self.requires)

    def transport_factory(self) -> Callable[..., Any]:
        """The client transport factory, imported now (the client types it: this table sits
        below both the client and the server, and names neither)."""
        if self.client is None:
            raise BindingUnavailableError(f"The {self.name} binding has no client transport")
        return cast("Callable[..., Any]", self.load(self.client))

    def server_factory(self) -> Callable[..., Listener]:
        """The listener class of a binding served on its own port, imported now."""
        if self.server is None:
            raise BindingUnavailableError(f"The {self.name} binding has no listener of its own")
        return cast("Callable[..., Listener]", self.load(self.server))

    def load(self, path: str) -> Any:
        """The object a ``"module:attribute"`` path of this binding names, imported now.

        ``a2a_core.server.asgi.routes`` loads ``routes`` with it (typed there, where the
        ``ServedBinding`` protocol lives); a missing extra is reported by name."""
        module_name, _, attribute = path.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            hint = f" (install a2a-adapters-core[{self.extra}])" if self.extra is not None else ""
            raise BindingUnavailableError(
                f"The {self.name} binding is not available: {exc}{hint}"
            ) from exc
        return getattr(module, attribute)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


_REGISTRY: dict[str, Binding] = {}
_ALIASES: dict[str, str] = {}


def register_binding(entry: Binding) -> None:
    """Add (or replace) a binding; its name and aliases become accepted spellings."""
    _REGISTRY[entry.name] = entry
    for spelling in (entry.name, *entry.aliases):
        _ALIASES[spelling.strip().upper()] = entry.name


def unregister_binding(name: str) -> Binding | None:
    """Remove a binding (any accepted spelling) and its spellings; the removed entry, or None."""
    entry = _REGISTRY.pop(normalize_binding(name), None)
    if entry is not None:
        for spelling in [s for s, n in _ALIASES.items() if n == entry.name]:
            del _ALIASES[spelling]
    return entry


def bindings() -> tuple[Binding, ...]:
    """Every registered binding, in registration order (the default preference)."""
    return tuple(_REGISTRY.values())


def normalize_binding(name: str) -> str:
    """The canonical binding name (an unknown, e.g. custom URI, binding is kept as is)."""
    return _ALIASES.get(name.strip().upper(), name.strip())


def binding(name: str) -> Binding | None:
    """The registered binding called ``name`` (any accepted spelling), or None."""
    return _REGISTRY.get(normalize_binding(name))


def cli_bindings() -> dict[str, str]:
    """CLI ``--binding`` spellings -> binding names."""
    return {cli: entry.name for entry in _REGISTRY.values() for cli in entry.cli_names}


def _builtin(**kwargs: Any) -> None:
    register_binding(Binding(**kwargs))


_builtin(
    name="JSONRPC",
    aliases=("JSON-RPC", "JSONRPC2"),
    cli_names=("jsonrpc",),
    client="a2a_core.client.transports.jsonrpc:from_interface",
    routes="a2a_core.server.asgi.jsonrpc:SERVED",
)
_builtin(
    name="HTTP+JSON",
    aliases=("HTTP_JSON", "HTTPJSON", "REST"),
    cli_names=("http+json", "rest"),
    client="a2a_core.client.transports.rest:from_interface",
    routes="a2a_core.server.asgi.rest:SERVED",
)
_builtin(
    name="GRPC",
    cli_names=("grpc",),
    versions=("1.0",),
    client="a2a_core.grpc.client:from_interface",
    server="a2a_core.grpc.server:GrpcServer",
    extra="grpc",
    relative_urls=False,
    requires=("grpc", "google.protobuf", "google.rpc"),
)
