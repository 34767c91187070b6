"""Choosing which of a card's interfaces to talk to.

The card lists its interfaces, preferred first. We pick the first protocol
version in ``preferred_versions`` (1.0, then 0.3) that the card offers with a
binding we speak (registered in ``a2a_core.bindings``, with its extra installed,
for that version), and within a version the card's own order, unless
``preferred_bindings`` is given, which then also orders the bindings.
Version spellings ("1.0.0", "0.3.0") and binding spellings ("jsonrpc",
"REST") are normalized.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from ..bindings import binding as registered_binding
from ..bindings import bindings, normalize_binding
from ..errors import UnsupportedOperationError

if TYPE_CHECKING:
    from ..types import AgentCard, AgentInterface

__all__ = [
    "DEFAULT_VERSIONS",
    "NoCompatibleInterfaceError",
    "choose_interface",
    "normalize_binding",
    "normalize_version",
    "select_interface",
    "supported_bindings",
]

DEFAULT_VERSIONS: tuple[str, ...] = ("1.0", "0.3")


class NoCompatibleInterfaceError(UnsupportedOperationError):
    """The card offers no interface with a version and binding this client speaks."""

    default_message = "The agent offers no interface this client supports"


def normalize_version(version: str) -> str:
    """``"1.0.0"`` -> ``"1.0"``, ``"0.3.0"`` -> ``"0.3"``, ``"1"`` -> ``"1.0"``."""
    pieces = version.strip().lstrip("vV").split(".")
    major = pieces[0] or "0"
    minor = pieces[1] if len(pieces) > 1 and pieces[1] else "0"
    return f"{major}.{minor}"


def supported_bindings() -> tuple[str, ...]:
    """The bindings this client can speak now (registered, with their extras installed)."""
    return tuple(b.name for b in bindings() if b.available)


def _wanted(
    preferred_versions: Sequence[str], preferred_bindings: Sequence[str] | None
) -> tuple[list[str], list[str], list[str]]:
    """(versions, usable bindings, wanted bindings whose extra is missing), normalized."""
    versions = [normalize_version(v) for v in preferred_versions]
    wanted = (
        [normalize_binding(b) for b in preferred_bindings]
        if preferred_bindings is not None
        else list(supported_bindings())
    )
    usable = [b for b in wanted if (entry := registered_binding(b)) and entry.available]
    missing = [b for b in wanted if (entry := registered_binding(b)) and not entry.available]
    return versions, usable, missing


def choose_interface(
    offered: Sequence[tuple[str, str | None]],
    *,
    preferred_versions: Sequence[str] = DEFAULT_VERSIONS,
    preferred_bindings: Sequence[str] | None = None,
) -> tuple[int, str, str, bool] | None:
    """Which of ``offered`` (binding, version) pairs ``select_interface`` takes, or None.

    The answer is (index, normalized version, normalized binding, whether its URL may
    be relative to the card's). It works on plain pairs, the card's own as they are.
    """
    versions, usable, _ = _wanted(preferred_versions, preferred_bindings)
    best: tuple[int, int, int] | None = None
    chosen: tuple[int, str, str, bool] | None = None
    for index, (offered_binding, offered_version) in enumerate(offered):
        version = normalize_version(offered_version or "0.3")
        binding = normalize_binding(offered_binding)
        if version not in versions or binding not in usable:
            continue
        entry = registered_binding(binding)
        if entry is None or version not in entry.versions:
            continue
        rank_binding = usable.index(binding) if preferred_bindings is not None else 0
        key = (versions.index(version), rank_binding, index)
        if best is None or key < best:
            best = key
            chosen = (index, version, binding, entry.relative_urls)
    return chosen


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
    offered = [(i.protocol_binding, i.protocol_version) for i in card.supported_interfaces]
    choice = choose_interface(
        offered, preferred_versions=preferred_versions, preferred_bindings=preferred_bindings
    )
    if choice is None:
        versions, usable, missing = _wanted(preferred_versions, preferred_bindings)
        offered_text = ", ".join(
            f"{i.protocol_binding} {i.protocol_version}" for i in card.supported_interfaces[:10]
        )
        hint = "".join(
            f"; {name} needs a2a-adapters-core[{entry.extra}]"
            for name in missing
            if (entry := registered_binding(name)) is not None and entry.extra
        )
        raise NoCompatibleInterfaceError(
            f"Agent {card.name[:80]!r} offers [{offered_text or 'no interfaces'}]; this client "
            f"speaks {'/'.join(usable) or 'no binding'} in versions {', '.join(versions)}{hint}"
        )
    index, version, binding, relative_urls = choice
    iface = card.supported_interfaces[index]
    return iface.model_copy(
        update={
            "protocol_version": version,
            "protocol_binding": binding,
            "url": urljoin(base_url, iface.url) if base_url and relative_urls else iface.url,
        }
    )
