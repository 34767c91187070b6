"""An httpx transport that connects only to addresses the URL policy allows.

Checking a URL and then letting the HTTP client resolve the name again leaves
a window: a DNS answer with a zero TTL can change between the two (DNS
rebinding). This transport resolves the host itself, vets every address, and
connects to a vetted address, so what was checked is what is contacted. TLS
still verifies the certificate against the host name (the connection origin
keeps the name; only the socket goes to the vetted IP). Proxies from the
environment are ignored: they would connect on our behalf, unchecked.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterable
from typing import Any, cast

import httpcore
import httpx

from .url_policy import ResolutionError, UrlPolicy

__all__ = ["VettedTransport"]


class _VettingBackend(httpcore.AsyncNetworkBackend):
    """Opens TCP connections only to addresses ``policy`` allows."""

    def __init__(self, policy: UrlPolicy, inner: httpcore.AsyncNetworkBackend) -> None:
        self._policy = policy
        self._inner = inner

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's signature
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            addresses = await self._policy.vetted_addresses(host, port)
        except ResolutionError as exc:
            raise httpcore.ConnectError(str(exc)) from None
        if addresses is None:  # allowlisted: let the backend resolve
            return await self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        failure: Exception | None = None
        for ip in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(ip), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None  # vetted_addresses never returns an empty list
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's signature
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not webhook targets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def _default_backend() -> httpcore.AsyncNetworkBackend:
    # httpcore declares AnyIOBackend conditionally, which hides its base class from checkers.
    return cast(httpcore.AsyncNetworkBackend, httpcore.AnyIOBackend())


class VettedTransport(httpx.AsyncHTTPTransport):
    """``httpx.AsyncHTTPTransport`` whose connections go only where ``policy`` allows."""

    def __init__(
        self,
        policy: UrlPolicy,
        *,
        verify: ssl.SSLContext | bool = True,
        limits: httpx.Limits | None = None,
    ) -> None:
        limits = limits or httpx.Limits(max_connections=32, max_keepalive_connections=8)
        super().__init__(verify=verify, trust_env=False, limits=limits)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify, trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=_VettingBackend(policy, _default_backend()),
        )
