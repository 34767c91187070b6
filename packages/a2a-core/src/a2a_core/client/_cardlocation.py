"""Where an agent's card is published and how large it may be (no pydantic here).

Used by ``discovery`` (which validates the card into the model) and the client.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["CARD_PATH", "DEFAULT_CARD_LIMITS", "LEGACY_CARD_PATH", "CardLimits", "card_urls"]

CARD_PATH = "/.well-known/agent-card.json"
LEGACY_CARD_PATH = "/.well-known/agent.json"


@dataclass(frozen=True, slots=True)
class CardLimits:
    """Bounds applied to a fetched card (it comes from a party we do not control)."""

    max_bytes: int = 1024 * 1024
    max_depth: int = 24
    max_string_length: int = 16 * 1024
    max_array_length: int = 1024
    max_skills: int = 256
    max_interfaces: int = 32


DEFAULT_CARD_LIMITS = CardLimits()


def card_urls(agent_url: str) -> list[str]:
    """Where to look for the card of the agent at ``agent_url``, in order.

    A URL that already points into ``/.well-known/`` is taken as the card URL.
    A URL with a path (``http://host/agents/echo``) is looked up below that
    path first, then at the origin.
    """
    parts = urlsplit(agent_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"Not an http(s) URL: {agent_url!r}")
    if "/.well-known/" in parts.path:
        return [agent_url]
    origin = f"{parts.scheme}://{parts.netloc}"
    at_origin = [origin + CARD_PATH, origin + LEGACY_CARD_PATH]
    path = parts.path.rstrip("/")
    if not path:
        return at_origin
    # An agent mounted below a path (a2a_core.mount, the official SDK's apps) keeps its card
    # there; the path is tried first so another agent at the origin is never taken for it.
    return [origin + path + CARD_PATH, origin + path + LEGACY_CARD_PATH, *at_origin]
