"""Finding an agent's card: derive its URL, fetch it within bounds, cache it politely.

- The card lives at ``/.well-known/agent-card.json`` below the agent's URL
  (an agent mounted at a path), else at its origin; at each place the legacy
  ``/.well-known/agent.json`` (0.2 agents, still common) is tried when the
  first answers 404.
- The card is untrusted input: the body is read as a stream and the read
  stops at ``max_bytes``; JSON depth, string lengths, array lengths and the
  number of skills and interfaces are bounded; 1.0, 0.3 and hybrid cards are
  validated into the internal model.
- Caching follows HTTP: ``max-age`` keeps a card fresh without a request;
  after that an ``ETag`` / ``Last-Modified`` makes the refresh conditional,
  and a 304 reuses the cached card. ``no-store`` is honoured.
"""

from __future__ import annotations

import re
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import httpx

from ..errors import A2AError, InvalidAgentResponseError
from ..types import AgentCard
from ..wire._json import DecodeLimits
from ..wire.hybrid import card_from_any
from ._cardlocation import (
    CARD_PATH,
    DEFAULT_CARD_LIMITS,
    LEGACY_CARD_PATH,
    CardLimits,
    card_urls,
)
from .transports._http import error_from_response, is_web_page, parse_json, read_bounded
from .transports.errors import A2AConnectionError, A2ATimeoutError

__all__ = [
    "CARD_PATH",
    "LEGACY_CARD_PATH",
    "CachedCard",
    "CardCache",
    "CardLimits",
    "CardNotFoundError",
    "CardResolver",
    "card_urls",
    "check_card",
]

_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)\"?", re.IGNORECASE)


class CardNotFoundError(InvalidAgentResponseError):
    """No agent card at any of the places it may be published.

    ``data`` has the card URLs tried (``cardUrls``) and the HTTP status (``httpStatus``):
    404 or 410, or a success that was a web page (``contentType`` ``text/html``).
    """

    default_message = "No agent card found"


def check_json(value: Any, limits: CardLimits) -> None:
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if len(node) > limits.max_string_length:
                raise InvalidAgentResponseError(
                    f"Agent card has a string of {len(node)} characters "
                    f"(limit {limits.max_string_length})"
                )
        elif isinstance(node, dict):
            obj = cast(dict[str, Any], node)
            if len(obj) > limits.max_array_length:
                raise InvalidAgentResponseError(
                    f"Agent card has an object of {len(obj)} members "
                    f"(limit {limits.max_array_length})"
                )
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(node, list):
            items = cast(list[Any], node)
            if len(items) > limits.max_array_length:
                raise InvalidAgentResponseError(
                    f"Agent card has a list of {len(items)} items (limit {limits.max_array_length})"
                )
            stack.extend(items)


def check_card(card: AgentCard, limits: CardLimits = DEFAULT_CARD_LIMITS) -> AgentCard:
    """Refuse a card with more skills or interfaces than ``limits`` allow."""
    if len(card.skills) > limits.max_skills:
        raise InvalidAgentResponseError(
            f"Agent card lists {len(card.skills)} skills (limit {limits.max_skills})"
        )
    if len(card.supported_interfaces) > limits.max_interfaces:
        raise InvalidAgentResponseError(
            f"Agent card lists {len(card.supported_interfaces)} interfaces "
            f"(limit {limits.max_interfaces})"
        )
    return card


def parse_card(body: bytes, limits: CardLimits = DEFAULT_CARD_LIMITS) -> AgentCard:
    """Bounded bytes -> a validated card (1.0, 0.3 or hybrid)."""
    value = parse_json(body, DecodeLimits(max_bytes=limits.max_bytes, max_depth=limits.max_depth))
    check_json(value, limits)
    return check_card(card_from_any(value), limits)


@dataclass(frozen=True, slots=True)
class CachedCard:
    """A card and what is needed to keep it fresh."""

    card: AgentCard
    url: str
    etag: str | None
    last_modified: str | None
    expires_at: float
    """Clock time until which the card is used without asking the server."""


class CardCache:
    """A bounded in-memory card cache keyed by card URL (least recently used evicted)."""

    def __init__(self, max_entries: int = 256, clock: Callable[[], float] = time.monotonic) -> None:
        if max_entries <= 0:
            raise ValueError("max_entries must be > 0")
        self.max_entries = max_entries
        self.clock = clock
        self._entries: OrderedDict[str, CachedCard] = OrderedDict()

    def get(self, url: str) -> CachedCard | None:
        """The cached card for ``url``, or None when there is none or it has expired."""
        entry = self._entries.get(url)
        if entry is not None:
            self._entries.move_to_end(url)
        return entry

    def put(self, entry: CachedCard) -> None:
        """Keep a fetched card, dropping the oldest entry when the cache is full."""
        self._entries[entry.url] = entry
        self._entries.move_to_end(entry.url)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def discard(self, url: str) -> None:
        """Forget the card for ``url``, so the next lookup fetches it again."""
        self._entries.pop(url, None)

    def __len__(self) -> int:
        return len(self._entries)


def _freshness(headers: httpx.Headers) -> tuple[bool, float]:
    """(may store, seconds fresh) from Cache-Control / Age."""
    control = headers.get("cache-control", "")
    lowered = control.lower()
    if "no-store" in lowered:
        return False, 0.0
    if "no-cache" in lowered:
        return True, 0.0
    found = _MAX_AGE.search(control)
    if found is None:
        return True, 0.0
    age = headers.get("age", "0")
    seconds = int(found.group(1)) - (int(age) if age.isdigit() else 0)
    return True, float(max(0, seconds))


class CardResolver:
    """Fetches agent cards over HTTP with bounds, legacy fallback and conditional requests."""

    def __init__(
        self,
        http: httpx.AsyncClient | None = None,
        *,
        cache: CardCache | None = None,
        limits: CardLimits = DEFAULT_CARD_LIMITS,
        headers: Mapping[str, str] | None = None,
        timeout: float = 10.0,
    ) -> None:
        self._owns_http = http is None
        self.http = http if http is not None else httpx.AsyncClient()
        self.cache = cache if cache is not None else CardCache()
        self.limits = limits
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.last_url: str | None = None
        """The URL the last resolved card came from (base for relative interface URLs)."""

    async def resolve(
        self, agent_url: str | None = None, *, card_url: str | None = None, refresh: bool = False
    ) -> AgentCard:
        """The card of the agent at ``agent_url`` (or the card at ``card_url``).

        ``refresh`` ignores freshness and asks the server (still conditionally).
        """
        if card_url is not None:
            candidates = [card_url]
        elif agent_url is not None:
            candidates = card_urls(agent_url)
        else:
            raise ValueError("Give the agent's URL or its card's URL")
        tried: list[str] = []
        status = 404
        for url in candidates:
            found = await self._fetch(url, refresh=refresh)
            if isinstance(found, AgentCard):
                return found
            tried.append(url)
            status = found
        raise CardNotFoundError(
            f"No agent card at {' or '.join(tried)} (HTTP {status})",
            data={"cardUrls": tried, "httpStatus": status},
        )

    async def fetch(self, url: str, *, refresh: bool = False) -> AgentCard | None:
        """The card at ``url``; None when the server says there is none (404 / 410)."""
        found = await self._fetch(url, refresh=refresh)
        return found if isinstance(found, AgentCard) else None

    async def _fetch(self, url: str, *, refresh: bool) -> AgentCard | int:
        """The card at ``url``, or the status (404 or 410) that says there is none."""
        cached = self.cache.get(url)
        now = self.cache.clock()
        if cached is not None and not refresh and now < cached.expires_at:
            self.last_url = url
            return cached.card
        headers = {"Accept": "application/json", **self.headers}
        if cached is not None:
            if cached.etag:
                headers["If-None-Match"] = cached.etag
            if cached.last_modified:
                headers["If-Modified-Since"] = cached.last_modified
        request = self.http.build_request(
            "GET", url, headers=headers, timeout=httpx.Timeout(self.timeout)
        )
        try:
            response = await self.http.send(request, stream=True, follow_redirects=True)
        except httpx.TimeoutException as exc:
            raise A2ATimeoutError(f"The agent card at {url} did not arrive in time") from exc
        except httpx.HTTPError as exc:
            raise A2AConnectionError(
                f"Could not fetch the agent card at {url}: {type(exc).__name__}"
            ) from exc
        status = response.status_code
        if status == 304 and cached is not None:
            await response.aclose()
            may_store, seconds = _freshness(response.headers)
            entry = CachedCard(
                cached.card,
                url,
                response.headers.get("etag", cached.etag),
                response.headers.get("last-modified", cached.last_modified),
                self.cache.clock() + seconds,
            )
            if may_store:
                self.cache.put(entry)
            else:
                self.cache.discard(url)
            self.last_url = url
            return cached.card
        if status in (404, 410):
            await response.aclose()
            self.cache.discard(url)
            return status
        body = await read_bounded(response, self.limits.max_bytes)
        if not 200 <= status < 300:
            error = error_from_response(status, body, DecodeLimits())
            raise _card_error(error, url, status)
        if is_web_page(response):
            raise CardNotFoundError(
                f"No agent card at {url}: HTTP {status} with a web page (text/html)",
                data={"cardUrls": [url], "httpStatus": status, "contentType": "text/html"},
            )
        card = parse_card(body, self.limits)
        may_store, seconds = _freshness(response.headers)
        if may_store:
            self.cache.put(
                CachedCard(
                    card,
                    url,
                    response.headers.get("etag"),
                    response.headers.get("last-modified"),
                    self.cache.clock() + seconds,
                )
            )
        else:
            self.cache.discard(url)
        self.last_url = url
        return card

    async def aclose(self) -> None:
        """Close the HTTP client, when the resolver created it."""
        if self._owns_http:
            await self.http.aclose()


def _card_error(error: A2AError, url: str, status: int) -> A2AError:
    said = error.message
    if said.startswith(f"HTTP {status}"):  # the status and the body's first line already
        error.message = f"Fetching the agent card at {url} failed: {said}"
    else:
        error.message = f"Fetching the agent card at {url} failed (HTTP {status}): {said}"
    error.args = (error.message,)
    return error
