"""Finding the agents at a host: its AI Catalog (``/.well-known/ai-catalog.json``).

A service publishes one catalog listing the agents it hosts (``application/
ai-catalog+json``: entries pointing at agent cards). ``discover(url)`` reads
it, from the URL itself when it names a catalog, else below the URL's path
and then at its origin (as cards are looked up), and returns its entries;
``AgentCatalog.verify`` checks its ``signature`` (a detached JWS over the
JCS form of the catalog without it) with the ``CardVerifier`` that checks
signed cards. The catalog is untrusted input: read within bounds, its text
only ever shown or used to fetch the cards it names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

import httpx

from ..errors import InvalidAgentResponseError
from ..wire._json import DecodeLimits
from ._cardlocation import DEFAULT_CARD_LIMITS, CardLimits
from .transports._http import error_from_response, is_web_page, parse_json, read_bounded
from .transports.errors import A2AConnectionError, A2ATimeoutError

if TYPE_CHECKING:
    from ..signing import CardVerifier

__all__ = [
    "A2A_CARD_TYPE",
    "CATALOG_MEDIA_TYPE",
    "CATALOG_PATH",
    "AgentCatalog",
    "CatalogEntry",
    "CatalogNotFoundError",
    "catalog_urls",
    "discover",
    "discover_sync",
    "fetch_catalog",
    "parse_catalog",
]

CATALOG_PATH = "/.well-known/ai-catalog.json"
CATALOG_MEDIA_TYPE = "application/ai-catalog+json"
A2A_CARD_TYPE = "application/a2a-agent-card+json"
_MAX_ENTRIES = 1024


class CatalogNotFoundError(InvalidAgentResponseError):
    """No AI Catalog where one was looked for."""

    default_message = "No AI Catalog found"


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One entry of a catalog: an artifact (an agent card, for A2A) and where it is."""

    identifier: str
    type: str
    url: str | None
    display_name: str | None = None
    description: str | None = None
    tags: tuple[str, ...] = ()
    version: str | None = None

    @property
    def is_agent(self) -> bool:
        """Whether the entry is an A2A agent card fetched by URL."""
        return self.type == A2A_CARD_TYPE and self.url is not None

    @property
    def name(self) -> str:
        """A name to show: the display name, else the identifier's last part."""
        if self.display_name:
            return self.display_name
        return self.identifier.replace("/", ":").rsplit(":", 1)[-1]


@dataclass(frozen=True, slots=True)
class AgentCatalog:
    """A catalog as read: its entries, its signature (None: unsigned) and where it was."""

    url: str
    entries: tuple[CatalogEntry, ...]
    signature: str | None
    document: Mapping[str, Any]
    """The document as parsed (what the signature covers, without ``signature``)."""

    @property
    def agents(self) -> list[CatalogEntry]:
        """The A2A agents the catalog lists (entries of other kinds left out)."""
        return [entry for entry in self.entries if entry.is_agent]

    def verify(self, verifier: CardVerifier) -> str:
        """The ``kid`` whose signature over the catalog verifies; ``CardSignatureError``
        when it is unsigned, tampered with or signed by a key ``verifier`` does not trust."""
        from ..signing import CardSignatureError, canonical_json

        if not self.signature:
            raise CardSignatureError(f"the catalog at {self.url} is not signed")
        unsigned = {k: v for k, v in self.document.items() if k != "signature"}
        return verifier.verify_detached(
            canonical_json(unsigned), self.signature, what=f"the catalog at {self.url}"
        )

    async def averify(self, verifier: CardVerifier) -> str:
        """``verify``, fetching the verifier's pinned JWKS first when it has one."""
        await verifier.load()
        return self.verify(verifier)


def catalog_urls(url: str) -> list[str]:
    """Where to look for the catalog of ``url``: the URL itself when it names a JSON
    document under ``/.well-known/``, else below its path, then at its origin."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"Not an http(s) URL: {url!r}")
    if parts.path.endswith(".json"):
        return [url]
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    return (
        [origin + path + CATALOG_PATH, origin + CATALOG_PATH] if path else [origin + CATALOG_PATH]
    )


def _text(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidAgentResponseError(f"Catalog entry {what} is not a string")
    return value


def parse_catalog(body: bytes, url: str, limits: CardLimits = DEFAULT_CARD_LIMITS) -> AgentCatalog:
    """Bounded bytes -> a catalog (``InvalidAgentResponseError`` when it is not one)."""
    from .discovery import check_json

    value = parse_json(body, DecodeLimits(max_bytes=limits.max_bytes, max_depth=limits.max_depth))
    check_json(value, limits)
    if not isinstance(value, dict):
        raise InvalidAgentResponseError(f"The catalog at {url} is not a JSON object")
    document = cast("dict[str, Any]", value)
    version = document.get("specVersion")
    if not isinstance(version, str) or version.split(".", 1)[0] not in ("0", "1"):
        raise InvalidAgentResponseError(
            f"The catalog at {url} has specVersion {str(version)[:20]!r} (supported: 1.x)"
        )
    raw: Any = document.get("entries")
    if not isinstance(raw, list):
        raise InvalidAgentResponseError(f"The catalog at {url} has no entries list")
    items = cast("list[Any]", raw)
    if len(items) > _MAX_ENTRIES:
        raise InvalidAgentResponseError(
            f"The catalog at {url} lists {len(items)} entries (limit {_MAX_ENTRIES})"
        )
    entries: list[CatalogEntry] = []
    for item in items:
        if not isinstance(item, dict):
            raise InvalidAgentResponseError(
                f"The catalog at {url} has an entry that is not an object"
            )
        entry = cast("dict[str, Any]", item)
        identifier, kind = entry.get("identifier"), entry.get("type")
        if not isinstance(identifier, str) or not isinstance(kind, str):
            raise InvalidAgentResponseError(
                f"The catalog at {url} has an entry without identifier or type"
            )
        tags_raw: Any = entry.get("tags") or []
        tags = cast("list[Any]", tags_raw) if isinstance(tags_raw, list) else []
        entries.append(
            CatalogEntry(
                identifier=identifier,
                type=kind,
                url=_text(entry.get("url"), "url"),
                display_name=_text(entry.get("displayName"), "displayName"),
                description=_text(entry.get("description"), "description"),
                tags=tuple(t for t in tags if isinstance(t, str)),
                version=_text(entry.get("version"), "version"),
            )
        )
    signature = document.get("signature")
    return AgentCatalog(
        url, tuple(entries), signature if isinstance(signature, str) else None, document
    )


async def fetch_catalog(
    url: str,
    *,
    http: httpx.AsyncClient | None = None,
    headers: Mapping[str, str] | None = None,
    limits: CardLimits = DEFAULT_CARD_LIMITS,
    timeout: float = 10.0,  # noqa: ASYNC109 - an HTTP timeout
) -> AgentCatalog | None:
    """The catalog at exactly ``url``; None when the server says there is none (404/410)
    or answers with a web page."""
    client = http if http is not None else httpx.AsyncClient()
    try:
        request = client.build_request(
            "GET",
            url,
            headers={"Accept": f"{CATALOG_MEDIA_TYPE}, application/json", **(headers or {})},
            timeout=httpx.Timeout(timeout),
        )
        try:
            response = await client.send(request, stream=True, follow_redirects=True)
        except httpx.TimeoutException as exc:
            raise A2ATimeoutError(f"The catalog at {url} did not arrive in time") from exc
        except httpx.HTTPError as exc:
            raise A2AConnectionError(
                f"Could not fetch the catalog at {url}: {type(exc).__name__}"
            ) from exc
        if response.status_code in (404, 410) or is_web_page(response):
            await response.aclose()
            return None
        body = await read_bounded(response, limits.max_bytes)
        if not 200 <= response.status_code < 300:
            error = error_from_response(response.status_code, body, DecodeLimits())
            error.message = f"Fetching the catalog at {url} failed: {error.message}"
            raise error
        return parse_catalog(body, url, limits)
    finally:
        if http is None:
            await client.aclose()


async def discover(
    url: str,
    *,
    http: httpx.AsyncClient | None = None,
    headers: Mapping[str, str] | None = None,
    verify_catalog: CardVerifier | None = None,
    limits: CardLimits = DEFAULT_CARD_LIMITS,
) -> AgentCatalog:
    """The catalog of the host (or catalog URL) ``url``; ``CatalogNotFoundError`` when there
    is none. ``verify_catalog``: require a signature that verifies with a trusted key."""
    tried: list[str] = []
    for candidate in catalog_urls(url):
        found = await fetch_catalog(candidate, http=http, headers=headers, limits=limits)
        if found is not None:
            if verify_catalog is not None:
                await found.averify(verify_catalog)
            return found
        tried.append(candidate)
    raise CatalogNotFoundError(f"No AI Catalog at {' or '.join(tried)} (HTTP 404)")


def discover_sync(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    verify_catalog: CardVerifier | None = None,
) -> AgentCatalog:
    """``discover`` from sync code (on a private thread, so it works under a running loop)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="a2a-catalog") as pool:
        coroutine = discover(url, headers=headers, verify_catalog=verify_catalog)
        return pool.submit(asyncio.run, coroutine).result()
