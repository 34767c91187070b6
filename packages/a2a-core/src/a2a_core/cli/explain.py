"""Plain words for the two failures a first session meets most: nothing listens at the
URL, or something does but it is not an A2A agent (a plain web server, a wrong path).

``a2a`` shows these instead of the client's exception names (``ConnectError``,
``CardNotFoundError -32006``); anything else keeps the generic wording in ``main``.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from urllib.parse import urlsplit

__all__ = ["card_not_found", "connection_failure"]


def connection_failure(exc: BaseException) -> str | None:
    """``could not connect to HOST:PORT: connection refused`` (or the OS's reason), else None.

    Only for a connection that was never made; a broken stream or a timeout is not one.
    """
    import httpx

    connect = next((e for e in _chain(exc) if isinstance(e, httpx.ConnectError)), None)
    if connect is None:
        return None
    try:
        url = connect.request.url
    except RuntimeError:  # an error raised without its request
        return None
    port = url.port or (443 if url.scheme == "https" else 80)
    host = f"[{url.host}]" if ":" in url.host else url.host
    return f"could not connect to {host}:{port}: {_reason(connect)}"


def card_not_found(exc: BaseException, agent_url: str | None) -> str | None:
    """``no agent card was found at URL ...`` with the paths tried and their HTTP status."""
    from ..client import CardNotFoundError

    if not isinstance(exc, CardNotFoundError):
        return None
    data = exc.data or {}
    tried = [str(url) for url in data.get("cardUrls") or ()]
    status = data.get("httpStatus", 404)
    where = agent_url or (tried[0] if tried else "the URL")
    paths = [urlsplit(url).path for url in tried] or ["the card's paths"]
    listed = paths[0] if len(paths) == 1 else f"{', '.join(paths[:-1])} and {paths[-1]}"
    page = " with a web page" if data.get("contentType") == "text/html" else ""
    return (
        f"no agent card was found at {where}: {listed} answered HTTP {status}{page} "
        "(is this the URL of an A2A agent?)"
    )


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _reason(exc: BaseException) -> str:
    """The innermost OS-level reason, lower case: ``connection refused``."""
    for cause in reversed(list(_chain(exc))):
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, ssl.SSLError):
            return f"the TLS handshake failed ({cause.reason or cause})"
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror[0].lower() + cause.strerror[1:]
    return str(exc) or type(exc).__name__
