"""Choosing which of a card's interfaces to talk to.

The card lists its interfaces, preferred first. We pick the first protocol
version in ``preferred_versions`` (1.0, then 0.3) that the card offers with a
binding we speak, and within a version the card's own order, unless
``preferred_bindings`` is given, which then also orders the bindings.
Version spellings ("1.0.0", "0.3.0") and binding spellings ("jsonrpc",
"REST") are normalized.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urljoin

from ..errors import UnsupportedOperationError
from ..types import AgentCard, AgentInterface

__all__ = [
    "DEFAULT_VERSIONS",
    "SUPPORTED_BINDINGS",
    "NoCompatibleInterfaceError",
    "normalize_binding",
    "normalize_version",
    "select_interface",
]

DEFAULT_VERSIONS: tuple[str, ...] = ("1.0", "0.3")
SUPPORTED_BINDINGS: tuple[str, ...] = ("JSONRPC", "HTTP+JSON")
_BINDING_ALIASES = {
    "JSONRPC": "JSONRPC",
    "JSON-RPC": "JSONRPC",
    "JSONRPC2": "JSONRPC",
    "HTTP+JSON": "HTTP+JSON",
    "HTTP_JSON": "HTTP+JSON",
    "HTTPJSON": "HTTP+JSON",
    "REST": "HTTP+JSON",
    "GRPC": "GRPC",
}


class NoCompatibleInterfaceError(UnsupportedOperationError):
    """The card offers no interface with a version and binding this client speaks."""

    default_message = "The agent offers no interface this client supports"


def normalize_version(version: str) -> str:
    """``"1.0.0"`` -> ``"1.0"``, ``"0.3.0"`` -> ``"0.3"``, ``"1"`` -> ``"1.0"``."""
    pieces = version.strip().lstrip("vV").split(".")
    major = pieces[0] or "0"
    minor = pieces[1] if len(pieces) > 1 and pieces[1] else "0"
    return f"{major}.{minor}"


def normalize_binding(binding: str) -> str:
    """The canonical binding name (custom URI bindings are kept as they are)."""
    key = binding.strip().upper()
    return _BINDING_ALIASES.get(key, binding.strip())


def select_interface(
    card: AgentCard,
    *,
    preferred_versions: Sequence[str] = DEFAULT_VERSIONS,
    preferred_bindings: Sequence[str] | None = None,
    base_url: str | None = None,
) -> AgentInterface:
    """The best interface of ``card``, with normalized version / binding and absolute URL.

    ``base_url`` (where the card came from) resolves relative interface URLs.
    """
    versions = [normalize_version(v) for v in preferred_versions]
    bindings = (
        [normalize_binding(b) for b in preferred_bindings]
        if preferred_bindings is not None
        else list(SUPPORTED_BINDINGS)
    )
    usable = [b for b in bindings if b in SUPPORTED_BINDINGS]
    best: tuple[int, int, int] | None = None
    chosen: AgentInterface | None = None
    for index, iface in enumerate(card.supported_interfaces):
        version = normalize_version(iface.protocol_version or "0.3")
        binding = normalize_binding(iface.protocol_binding)
        if version not in versions or binding not in usable:
            continue
        rank_binding = usable.index(binding) if preferred_bindings is not None else 0
        key = (versions.index(version), rank_binding, index)
        if best is None or key < best:
            best = key
            chosen = iface.model_copy(
                update={
                    "protocol_version": version,
                    "protocol_binding": binding,
                    "url": urljoin(base_url, iface.url) if base_url else iface.url,
                }
            )
    if chosen is None:
        offered = ", ".join(
            f"{i.protocol_binding} {i.protocol_version}" for i in card.supported_interfaces[:10]
        )
        raise NoCompatibleInterfaceError(
            f"Agent {card.name[:80]!r} offers [{offered or 'no interfaces'}]; this client speaks "
            f"{'/'.join(usable) or 'no binding'} in versions {', '.join(versions)}"
        )
    return chosen
