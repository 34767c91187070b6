"""The public agent card at the well-known paths, serialized once (per origin), with HTTP caching.

The document is the hybrid card (the 1.0 card plus the 0.3 top-level fields,
see ``wire.hybrid``) so clients of either version can read it. It is encoded
once; each request is a dictionary lookup, an optional conditional check and
one send. ``ETag`` is a strong validator (a hash of the exact bytes),
``Last-Modified`` the time the app was built; ``If-None-Match`` wins over
``If-Modified-Since`` (RFC 9110 §13.2.2).

``PublishedCard`` picks the document: one for every request when the
interface URLs are fixed (a configured public URL, or interfaces the card
lists), else one per origin the clients use (``origin.request_base``), each
with its own ETag and ``Vary`` on the headers the origin came from.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from email.utils import formatdate, parsedate_to_datetime
from typing import Any

from ...types import AgentCard
from ...wire import dumps
from .http import Scope, Send
from .origin import TrustedProxies, rebase_card, request_base

__all__ = ["CARD_PATHS", "CardDocument", "PublishedCard"]

CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
"""The current well-known path and the legacy (0.2) one; both serve the same document."""


def card_document(
    card: AgentCard, signer: Callable[[AgentCard], AgentCard] | None = None
) -> dict[str, Any]:
    """The JSON document published for ``card`` (hybrid when it lists 0.3 interfaces),
    signed by ``signer`` (``a2a_core.signing.CardSigner``) when given."""
    from ...wire.hybrid import hybrid_card

    if signer is not None:
        card = signer(card)

    return hybrid_card(card)


class CardDocument:
    """The encoded card and its caching headers."""

    __slots__ = ("_headers", "_not_modified", "body", "etag", "last_modified", "modified_at")

    def __init__(
        self,
        document: Any,
        *,
        max_age: int = 300,
        modified_at: float | None = None,
        vary: bytes | None = None,
        content_type: bytes = b"application/json",
    ) -> None:
        if max_age < 0:
            raise ValueError("max_age must be >= 0")
        self.body = dumps(document)
        self.modified_at = int(modified_at if modified_at is not None else time.time())
        self.etag = '"' + hashlib.sha256(self.body).hexdigest()[:32] + '"'
        self.last_modified = formatdate(self.modified_at, usegmt=True)
        caching = [
            (b"cache-control", f"public, max-age={max_age}".encode()),
            (b"etag", self.etag.encode()),
            (b"last-modified", self.last_modified.encode()),
        ]
        if vary is not None:  # the document depends on these request headers (its origin)
            caching.append((b"vary", vary))
        self._headers = [
            (b"content-type", content_type),
            (b"content-length", str(len(self.body)).encode()),
            *caching,
        ]
        self._not_modified = caching

    def is_fresh(self, headers: dict[str, str]) -> bool:
        """Whether the client's cached copy is current (answer 304)."""
        if_none_match = headers.get("if-none-match")
        if if_none_match is not None:
            return self._etag_matches(if_none_match)
        since = headers.get("if-modified-since")
        if since is not None:
            try:
                stamp = parsedate_to_datetime(since).timestamp()
            except (TypeError, ValueError, IndexError, OverflowError):
                return False
            return self.modified_at <= stamp
        return False

    def _etag_matches(self, value: str) -> bool:
        mine = self.etag
        for candidate in value.split(","):
            tag = candidate.strip()
            if tag == "*":
                return True
            if tag.startswith("W/"):  # weak comparison (RFC 9110 §8.8.3.2)
                tag = tag[2:]
            if tag == mine:
                return True
        return False

    async def respond(self, send: Send, headers: dict[str, str], *, head: bool = False) -> None:
        """Answer a GET (or HEAD) of the card."""
        if self.is_fresh(headers):
            await send(
                {"type": "http.response.start", "status": 304, "headers": self._not_modified}
            )
            await send({"type": "http.response.body", "body": b""})
            return
        await send({"type": "http.response.start", "status": 200, "headers": self._headers})
        await send({"type": "http.response.body", "body": b"" if head else self.body})


_MAX_ORIGINS = 64
"""Documents kept for distinct origins; the Host header is the client's to choose."""


class PublishedCard:
    """The card document an app answers with, fixed or per request origin.

    ``served_base`` is the URL prefix in the card's interfaces that stands
    for "this app, wherever it is reached" (``""`` for relative templates);
    None means the interface URLs are fixed.
    """

    __slots__ = (
        "_documents",
        "_fixed",
        "_max_age",
        "_modified_at",
        "_proxies",
        "_served_base",
        "_signer",
        "_vary",
        "card",
    )

    def __init__(
        self,
        card: AgentCard,
        *,
        served_base: str | None,
        max_age: int,
        proxies: TrustedProxies | None = None,
        signer: Callable[[AgentCard], AgentCard] | None = None,
    ) -> None:
        self.card = card
        self._signer = signer
        self._max_age = max_age
        self._modified_at = time.time()
        self._proxies = proxies if proxies else None
        self._served_base = served_base
        vary = b"host"
        if self._proxies is not None:
            vary += b", forwarded, x-forwarded-proto, x-forwarded-host, x-forwarded-prefix"
        self._vary = vary
        self._documents: dict[str, CardDocument] = {}
        self._fixed = (
            CardDocument(
                card_document(card, signer), max_age=max_age, modified_at=self._modified_at
            )
            if served_base is None
            else None
        )

    @property
    def fixed(self) -> CardDocument | None:
        """The one document when the URLs do not depend on the request, else None."""
        return self._fixed

    def document(self, scope: Scope, headers: dict[str, str]) -> CardDocument:
        """The document for this request's origin (built once per origin, bounded)."""
        if self._fixed is not None:
            return self._fixed
        base = request_base(scope, headers, self._proxies)
        found = self._documents.get(base)
        if found is None:
            if len(self._documents) >= _MAX_ORIGINS:
                self._documents.pop(next(iter(self._documents)))
            card = rebase_card(self.card, self._served_base or "", base)
            found = CardDocument(
                card_document(card, self._signer),
                max_age=self._max_age,
                modified_at=self._modified_at,
                vary=self._vary,
            )
            self._documents[base] = found
        return found
