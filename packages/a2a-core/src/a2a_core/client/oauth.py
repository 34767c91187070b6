"""OAuth 2.0 client credentials for calling protected agents: an ``httpx.Auth``.

``ClientCredentials`` gets an access token from the token endpoint, caches
it, gets a new one shortly before it expires, and retries a request answered
``401`` once with a fresh token. The endpoint is configured (``token_url``),
found through OpenID Connect discovery (``discovery_url``), or read from the
agent card: ``A2AClient.connect`` hands it the card, whose ``oauth2`` scheme
names a client-credentials ``tokenUrl`` or whose ``openIdConnect`` scheme names
the discovery document. Give it as ``auth=`` to ``A2AClient.connect``, the
sync client, ``RemoteAgentSession`` (so the adapters' remote tools and crew
members) or the gateways. The secret never appears in its repr or in logs.

The client authenticates with HTTP Basic, the client id and secret each
form-encoded first (RFC 6749 section 2.3.1), so a secret with ``+``, ``/``,
``%`` or ``:`` reads the same at every issuer that follows the RFC. Every way
of not getting a token (the endpoint unreachable, a TLS failure, a refusal,
an answer that is not a token) is a ``TokenError``, an ``A2AError`` like every
other failure of a call.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import AsyncGenerator, Generator, Sequence
from typing import Any, cast
from urllib.parse import quote_plus

import httpx

from ..errors import InternalError
from ..types import AgentCard

__all__ = ["ClientCredentials", "TokenError"]

_MAX_DOCUMENT_BYTES = 256 * 1024


class TokenError(InternalError):
    """No access token: the token endpoint could not be reached (or not over trusted TLS),
    refused the client, or answered something that is not a token.

    An ``A2AError`` (the client's own failure, like ``A2AConnectionError``): a caller
    catching ``A2AError`` sees every failure of a call.
    """

    default_message = "Could not get an access token"


class ClientCredentials(httpx.Auth):
    """``Authorization: Bearer`` from the OAuth 2.0 client-credentials grant, cached.

    ``scopes`` and ``audience`` are sent with the token request;
    ``refresh_margin`` is how many seconds before expiry a token is replaced.
    """

    def __init__(
        self,
        client_id: str,
        client_secret: str,
        *,
        token_url: str | None = None,
        discovery_url: str | None = None,
        scopes: Sequence[str] = (),
        audience: str | None = None,
        refresh_margin: float = 30.0,
        timeout: float = 10.0,
    ) -> None:
        if not client_id or not client_secret:
            raise ValueError("client_id and client_secret must not be empty")
        self.client_id = client_id
        self._secret = client_secret
        self.token_url = token_url
        self.discovery_url = discovery_url
        self.scopes = tuple(scopes)
        self.audience = audience
        self.refresh_margin = refresh_margin
        self._timeout = timeout
        self._token: str | None = None
        self._expires_at = 0.0
        self._lock = threading.Lock()
        self._guard = threading.Lock()
        self._async_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        self.fetches = 0
        """How many tokens were fetched (for tests and metrics)."""

    # -- where the token endpoint is -----------------------------------------------------

    def use_card(self, card: AgentCard) -> None:
        """Take the token endpoint from the card's security schemes, unless configured."""
        if self.token_url or self.discovery_url:
            return
        for scheme in card.security_schemes.values():
            oauth = scheme.oauth2_security_scheme
            if oauth is not None and oauth.flows.client_credentials is not None:
                self.token_url = oauth.flows.client_credentials.token_url
                return
        for scheme in card.security_schemes.values():
            oidc = scheme.open_id_connect_security_scheme
            if oidc is not None:
                self.discovery_url = oidc.open_id_connect_url
                return

    @property
    def configured(self) -> bool:
        """Whether the token endpoint is known (else requests go without a token)."""
        return bool(self.token_url or self.discovery_url)

    # -- tokens ------------------------------------------------------------------------

    def _fresh(self) -> str | None:
        if self._token is not None and time.monotonic() < self._expires_at - self.refresh_margin:
            return self._token
        return None

    def _form(self) -> dict[str, str]:
        form = {"grant_type": "client_credentials"}
        if self.scopes:
            form["scope"] = " ".join(self.scopes)
        if self.audience:
            form["audience"] = self.audience
        return form

    def _basic(self) -> httpx.BasicAuth:
        """HTTP Basic with the id and secret form-encoded first (RFC 6749 section 2.3.1)."""
        return httpx.BasicAuth(quote_plus(self.client_id), quote_plus(self._secret))

    def _accept(self, response: httpx.Response) -> str:
        if response.status_code != 200:
            raise TokenError(
                f"the token endpoint {response.request.url} refused client {self.client_id!r}: "
                f"HTTP {response.status_code}{_oauth_error(response)}"
            )
        answer = _json_object(response, "the token endpoint")
        token = answer.get("access_token")
        if not isinstance(token, str) or not token:
            raise TokenError("the token endpoint answered no access_token")
        lifetime = answer.get("expires_in")
        seconds = float(lifetime) if isinstance(lifetime, int | float) else 300.0
        self._token = token
        self._expires_at = time.monotonic() + seconds
        self.fetches += 1
        return token

    def _endpoint_from(self, response: httpx.Response) -> str:
        found = _json_object(response, "the discovery document at").get("token_endpoint")
        if not isinstance(found, str) or not found:
            raise TokenError("the discovery document names no token_endpoint")
        self.token_url = found
        return found

    def _async_lock(self) -> asyncio.Lock:
        """One lock per event loop (an ``asyncio.Lock`` belongs to one loop; the sessions of
        the adapters call from their own loop and from the shared background loop)."""
        loop = asyncio.get_running_loop()
        with self._guard:
            lock = self._async_locks.get(loop)
            if lock is None:
                lock = self._async_locks[loop] = asyncio.Lock()
            return lock

    async def token(self, *, force: bool = False) -> str | None:
        """A valid access token (fetched when needed); None when no endpoint is known.

        Concurrent callers on one loop wait for one fetch and share its token.
        """
        if not force and (cached := self._fresh()) is not None:
            return cached
        if not self.configured:
            return None
        async with self._async_lock():
            if not force and (cached := self._fresh()) is not None:
                return cached
            return await self._fetch()

    async def _replace(self, refused: str) -> str:
        """A token other than ``refused`` (answered 401): fetched, unless a concurrent
        caller already replaced it."""
        async with self._async_lock():
            cached = self._fresh()
            if cached is not None and cached != refused:
                return cached
            return await self._fetch()

    async def _fetch(self) -> str:
        async with httpx.AsyncClient(timeout=self._timeout, follow_redirects=False) as http:
            url = self.token_url
            if url is None:
                assert self.discovery_url is not None
                try:
                    found = await http.get(self.discovery_url)
                except httpx.HTTPError as exc:
                    raise _unreachable(
                        "the discovery document at", self.discovery_url, exc
                    ) from exc
                url = self._endpoint_from(found)
            try:
                response = await http.post(url, data=self._form(), auth=self._basic())
            except httpx.HTTPError as exc:
                raise _unreachable("the token endpoint", url, exc) from exc
            return self._accept(response)

    def sync_token(self, *, force: bool = False) -> str | None:
        """``token`` for synchronous httpx clients."""
        with self._lock:
            if not force and (cached := self._fresh()) is not None:
                return cached
            if not self.configured:
                return None
            with httpx.Client(timeout=self._timeout, follow_redirects=False) as http:
                url = self.token_url
                if url is None:
                    assert self.discovery_url is not None
                    try:
                        found = http.get(self.discovery_url)
                    except httpx.HTTPError as exc:
                        where = "the discovery document at"
                        raise _unreachable(where, self.discovery_url, exc) from exc
                    url = self._endpoint_from(found)
                try:
                    response = http.post(url, data=self._form(), auth=self._basic())
                except httpx.HTTPError as exc:
                    raise _unreachable("the token endpoint", url, exc) from exc
                return self._accept(response)

    # -- httpx.Auth --------------------------------------------------------------------

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """Send with the cached token; on 401 once more with a fresh one."""
        token = await self.token()
        if token is None:
            yield request
            return
        request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        if response.status_code == 401:  # (httpx reads and closes the refused response)
            request.headers["Authorization"] = f"Bearer {await self._replace(token)}"
            yield request

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        """The synchronous twin of ``async_auth_flow``."""
        token = self.sync_token()
        if token is None:
            yield request
            return
        request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        if response.status_code == 401:
            request.headers["Authorization"] = f"Bearer {self.sync_token(force=True)}"
            yield request

    def __repr__(self) -> str:  # never the secret, never the token
        where = self.token_url or self.discovery_url or "from the agent card"
        return f"ClientCredentials(client_id={self.client_id!r}, token endpoint {where})"


def _unreachable(what: str, url: str, exc: httpx.HTTPError) -> TokenError:
    """The ``TokenError`` of a token (or discovery) request that got no answer."""
    if isinstance(exc, httpx.TimeoutException):
        return TokenError(f"{what} {url} did not answer in time")
    reason = " ".join(str(exc).split()) or type(exc).__name__
    if "SSL" in reason or "certificate" in reason.lower():
        return TokenError(f"{what} {url} failed TLS: {reason}")
    return TokenError(f"{what} {url} could not be reached: {reason}")


def _oauth_error(response: httpx.Response) -> str:
    """`` (invalid_client)``: the OAuth error code of a refusal, when it names a plain one."""
    try:
        code = _json_object(response, "the token endpoint").get("error")
    except TokenError:
        return ""
    if isinstance(code, str) and 0 < len(code) <= 64 and code.replace("_", "").isalnum():
        return f" ({code})"
    return ""


def _json_object(response: httpx.Response, what: str) -> dict[str, Any]:
    """The JSON object ``what`` (named before its URL in errors) answered."""
    where = f"{what} {response.request.url}"
    if len(response.content) > _MAX_DOCUMENT_BYTES:
        raise TokenError(f"{where} answered more than {_MAX_DOCUMENT_BYTES} bytes")
    try:
        value = response.json()
    except ValueError:
        raise TokenError(f"{where} did not answer JSON") from None
    if not isinstance(value, dict):
        raise TokenError(f"{where} did not answer a JSON object")
    return cast("dict[str, Any]", value)
