"""Fetching file parts given by URL: bounded in size, and only from where they may come.

An agent may answer a large file with a URL instead of its bytes. Following
any URL an agent names would let it point the caller at its own network
(SSRF) or make it read without end, so a download:

- goes to the agent's own origin (scheme, host and port of the interface the
  client talks to) with the client's own connection and headers, which is
  where a served file store lives; any other origin must be listed in
  ``allowed_origins`` and then passes the SSRF URL policy that push delivery
  uses too (``a2a_core.net.UrlPolicy``: public addresses only unless opened,
  checked on the address actually connected to), without the client's
  headers, which are for the agent only;
- never follows redirects (one could leave the allowed origin);
- stops at ``max_bytes`` (the declared length is checked first, then what
  arrives).

Refusals raise ``FileRefusedError`` with a sentence that says why.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

import httpx

from ..files import FileRefusedError
from ..types import Part

if TYPE_CHECKING:
    from ..net.url_policy import UrlPolicy

__all__ = ["DEFAULT_MAX_DOWNLOAD_BYTES", "fetch_part", "origin_of"]

DEFAULT_MAX_DOWNLOAD_BYTES = 32 * 1024 * 1024
"""The largest file a client downloads by default (32 MiB)."""

_TIMEOUT = httpx.Timeout(30.0, connect=10.0)


def origin_of(url: str) -> str | None:
    """``scheme://host:port`` of an http(s) URL (default ports made explicit), else None."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError):
        return None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        return None
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    host = parsed.host.lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{parsed.scheme}://{host}:{port}"


async def _read(
    http: httpx.AsyncClient, url: str, headers: Mapping[str, str], max_bytes: int
) -> tuple[bytes, str | None]:
    try:
        return await _read_bounded(http, url, headers, max_bytes)
    except httpx.HTTPError as exc:
        raise FileRefusedError(f"the file could not be downloaded ({type(exc).__name__})") from None


async def _read_bounded(
    http: httpx.AsyncClient, url: str, headers: Mapping[str, str], max_bytes: int
) -> tuple[bytes, str | None]:
    async with http.stream("GET", url, headers=dict(headers), follow_redirects=False) as response:
        if response.status_code != 200:
            raise FileRefusedError(f"the file URL answered HTTP {response.status_code}")
        declared = response.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > max_bytes:
            raise FileRefusedError(
                f"the file is {declared} bytes, more than the {max_bytes} bytes allowed"
            )
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > max_bytes:
                raise FileRefusedError(f"the file is larger than the {max_bytes} bytes allowed")
            chunks.append(chunk)
        media = response.headers.get("content-type")
    return b"".join(chunks), media


async def fetch_part(
    part: Part,
    *,
    own_origin: str | None,
    http: httpx.AsyncClient | None = None,
    headers: Mapping[str, str] | None = None,
    max_bytes: int = DEFAULT_MAX_DOWNLOAD_BYTES,
    allowed_origins: Collection[str] = (),
    url_policy: UrlPolicy | None = None,
) -> Part:
    """``part`` with its URL's bytes as ``raw`` (name, type and metadata kept).

    ``own_origin``: the agent's origin (see ``origin_of``), fetched with
    ``http`` and ``headers``; ``allowed_origins``: other origins that may be
    fetched (``"*"``: any), through ``url_policy`` (default: public addresses only).
    A part that already has its bytes is returned as is.
    """
    if part.url is None:
        return part
    origin = origin_of(part.url)
    if origin is None:
        raise FileRefusedError("the file URL is not an http(s) URL")
    if own_origin is not None and origin == own_origin:
        if http is not None:
            raw, media = await _read(http, part.url, headers or {}, max_bytes)
        else:
            async with httpx.AsyncClient(timeout=_TIMEOUT, trust_env=False) as own:
                raw, media = await _read(own, part.url, headers or {}, max_bytes)
    elif "*" in allowed_origins or origin in {o for o in map(origin_of, allowed_origins) if o}:
        raw, media = await _vetted_read(part.url, max_bytes, url_policy)
    else:
        raise FileRefusedError(
            f"the file URL is not on the agent's own origin ({origin}); "
            "allow that origin explicitly to download from it"
        )
    media_type = part.media_type or (media.split(";", 1)[0].strip() if media else None)
    return Part(raw=raw, filename=part.filename, media_type=media_type, metadata=part.metadata)


async def _vetted_read(
    url: str, max_bytes: int, url_policy: UrlPolicy | None
) -> tuple[bytes, str | None]:
    # One rule for every URL the library follows on someone else's word: the
    # same policy and transport as push delivery (loaded when first needed).
    from ..net.url_policy import TargetRefusedError, UrlPolicy
    from ..net.vetted_transport import VettedTransport

    policy = url_policy or UrlPolicy()
    try:
        target = policy.parse(url)
        await policy.vetted_addresses(target.host, target.port)
    except (TargetRefusedError, OSError) as exc:
        raise FileRefusedError(f"the file URL is refused: {exc}") from None
    transport = VettedTransport(policy)
    async with httpx.AsyncClient(transport=transport, timeout=_TIMEOUT, trust_env=False) as http:
        return await _read(http, url, {}, max_bytes)
