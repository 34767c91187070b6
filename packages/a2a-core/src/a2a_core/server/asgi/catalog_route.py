"""``/.well-known/ai-catalog.json``: the AI Catalog of the agents a service hosts.

The AI Catalog (``application/ai-catalog+json``) is where the A2A working
group leaves discovery: a list of entries, each pointing at an agent card.
A service publishes one entry per agent it hosts (one for a single-agent
service): an ``urn:air`` identifier from the host name and the agent's
path, the card's name, description, version and its skills' tags, and the
card's URL. With a card-signing key the catalog carries a ``signature``: a
detached JWS over its RFC 8785 form without that member, made by the same
key as the cards (``a2a_core.signing``). Like the card, the document is
encoded once per origin the clients use (or once, under a public URL).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ...types import AgentCard
from .access import label
from .card_route import CARD_PATHS, CardDocument
from .http import Scope, Send, header_map, send_bytes
from .origin import TrustedProxies, request_base

__all__ = [
    "A2A_CARD_TYPE",
    "CATALOG_MEDIA_TYPE",
    "CATALOG_PATH",
    "CATALOG_SPEC_VERSION",
    "ListedAgent",
    "PublishedCatalog",
    "catalog_document",
    "slug",
]

CATALOG_PATH = "/.well-known/ai-catalog.json"
CATALOG_MEDIA_TYPE = "application/ai-catalog+json"
CATALOG_SPEC_VERSION = "1.0"
A2A_CARD_TYPE = "application/a2a-agent-card+json"
_CARD_PATH = CARD_PATHS[0]
_MAX_ORIGINS = 64
_NOT_SLUG = re.compile(r"[^a-z0-9._-]+")


def slug(text: str) -> str:
    """A name fit for a URL path segment and an identifier (``"My Agent"`` -> ``my-agent``)."""
    return _NOT_SLUG.sub("-", text.lower()).strip("-.") or "agent"


@dataclass(frozen=True, slots=True)
class ListedAgent:
    """One agent of the catalog: its name (the identifier's last part), its path below the
    service's base URL (``""`` for an agent at the root) and its card."""

    name: str
    path: str
    card: AgentCard


def catalog_document(
    agents: Sequence[ListedAgent], base: str, signer: Callable[..., Any] | None = None
) -> dict[str, Any]:
    """The catalog for ``agents`` served at ``base``; signed when ``signer`` (a
    ``CardSigner``) can make detached signatures."""
    host = urlsplit(base).hostname or "localhost"
    entries: list[dict[str, Any]] = []
    for agent in agents:
        card = agent.card
        entry: dict[str, Any] = {
            "identifier": f"urn:air:{host}:a2a:{agent.name}",
            "displayName": card.name,
            "type": A2A_CARD_TYPE,
            "url": base + agent.path + _CARD_PATH,
        }
        if card.description:
            entry["description"] = card.description
        tags = sorted({tag for skill in card.skills for tag in skill.tags if tag})
        if tags:
            entry["tags"] = tags
        if card.version:
            entry["version"] = card.version
        entries.append(entry)
    document: dict[str, Any] = {"specVersion": CATALOG_SPEC_VERSION, "entries": entries}
    detached = getattr(signer, "detached", None)
    if callable(detached):
        from ...signing import canonical_json

        document["signature"] = detached(canonical_json(document))
    return document


class PublishedCatalog:
    """The catalog document a service answers with: fixed under a public URL, else one per
    request origin (bounded), each with the card's caching headers."""

    __slots__ = (
        "_documents",
        "_fixed",
        "_max_age",
        "_modified_at",
        "_proxies",
        "_signer",
        "agents",
    )

    def __init__(
        self,
        agents: Sequence[ListedAgent],
        *,
        public_url: str | None = None,
        proxies: TrustedProxies | None = None,
        signer: Callable[..., Any] | None = None,
        max_age: int = 300,
    ) -> None:
        self.agents = tuple(agents)
        self._signer = signer
        self._max_age = max_age
        self._modified_at = time.time()
        self._proxies = proxies if proxies else None
        self._documents: dict[str, CardDocument] = {}
        self._fixed = self._build(public_url.rstrip("/"), None) if public_url else None

    def _build(self, base: str, vary: bytes | None) -> CardDocument:
        return CardDocument(
            catalog_document(self.agents, base, self._signer),
            max_age=self._max_age,
            modified_at=self._modified_at,
            vary=vary,
            content_type=CATALOG_MEDIA_TYPE.encode(),
        )

    def document(self, scope: Scope, headers: dict[str, str]) -> CardDocument:
        """The document for this request's origin (built once per origin)."""
        if self._fixed is not None:
            return self._fixed
        base = request_base(scope, headers, self._proxies)
        found = self._documents.get(base)
        if found is None:
            if len(self._documents) >= _MAX_ORIGINS:
                self._documents.pop(next(iter(self._documents)))
            found = self._documents[base] = self._build(base, b"host")
        return found

    async def respond(self, scope: Scope, send: Send) -> None:
        """Answer a GET (or HEAD) of the catalog."""
        label(scope, "catalog")
        method = scope["method"]
        if method not in ("GET", "HEAD"):
            body = b'{"error":{"code":405,"message":"The catalog is read-only"}}'
            await send_bytes(send, 405, body, b"application/json", [(b"allow", b"GET, HEAD")])
            return
        headers = header_map(scope["headers"])
        await self.document(scope, headers).respond(send, headers, head=method == "HEAD")
