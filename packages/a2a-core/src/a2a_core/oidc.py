"""JWT bearer tokens from an OpenID Connect / OAuth 2.0 issuer (needs the ``[jwt]`` extra).

``JWTBearerAuth`` is an auth backend: it reads ``Authorization: Bearer <jwt>``,
checks the signature against the issuer's JWKS and the ``iss``, ``aud``,
``exp`` and ``nbf`` claims (with a bounded clock skew), and answers with a
``Principal`` whose id is a configurable claim (``sub`` by default) and whose
``scopes`` come from the ``scope`` / ``scp`` claims.

Keys come from the issuer's discovery document (``/.well-known/openid-configuration``
-> ``jwks_uri``) or from a JWKS URL given directly, fetched with httpx and cached.
A token signed with a key id the cache does not know refreshes the set once
(at most once per ``min_refresh_interval``), so a provider's key rotation is
picked up without letting unknown ids hammer it.

Only asymmetric algorithms are accepted (``RS*``, ``PS*``, ``ES*``, ``EdDSA``):
never ``none``, never an HMAC algorithm (a public key used as an HMAC secret
is the classic algorithm-confusion forgery), and the key's type must match the
token's algorithm. Every failure answers the same ``AuthenticationRequiredError``
("Invalid bearer token"); the reason is the exception's cause, which the
server logs once and never sends.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any, cast

import httpx

from .auth import header_value
from .errors import AuthenticationRequiredError
from .identity import Principal
from .types import (
    ClientCredentialsOAuthFlow,
    OAuth2SecurityScheme,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    SecurityScheme,
)

try:
    import jwt
    from jwt import PyJWK, PyJWKSet
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("a2a_core.oidc needs PyJWT: pip install 'a2a-adapters-core[jwt]'") from exc

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "DEFAULT_ALGORITHMS",
    "JWKSCache",
    "JWTBearerAuth",
    "discovery_url",
    "jwt_backend_from_options",
]

ASYMMETRIC_ALGORITHMS: Mapping[str, str] = {
    "RS256": "RSA",
    "RS384": "RSA",
    "RS512": "RSA",
    "PS256": "RSA",
    "PS384": "RSA",
    "PS512": "RSA",
    "ES256": "EC",
    "ES384": "EC",
    "ES512": "EC",
    "EdDSA": "OKP",
}
"""The algorithms a JWKS-verified token may use, with the key type each needs."""

DEFAULT_ALGORITHMS: tuple[str, ...] = ("RS256", "ES256", "PS256", "EdDSA")
"""Accepted unless configured otherwise (what common identity providers sign with)."""

MAX_LEEWAY = 300.0
"""The largest clock skew accepted for ``exp`` / ``nbf`` (seconds)."""

_DISCOVERY_PATH = "/.well-known/openid-configuration"
_MAX_DOCUMENT_BYTES = 256 * 1024


def discovery_url(issuer: str) -> str:
    """The OpenID Connect discovery document of ``issuer``."""
    return issuer.rstrip("/") + _DISCOVERY_PATH


class _KeyProblem(Exception):
    """Why a token's key could not be found (the cause of the rejection, for the log)."""


async def _get_json(client: httpx.AsyncClient, url: str) -> dict[str, Any]:
    response = await client.get(url, headers={"accept": "application/json"})
    response.raise_for_status()
    if len(response.content) > _MAX_DOCUMENT_BYTES:
        raise _KeyProblem(f"{url} answered more than {_MAX_DOCUMENT_BYTES} bytes")
    value = response.json()
    if not isinstance(value, dict):
        raise _KeyProblem(f"{url} did not answer a JSON object")
    return cast("dict[str, Any]", value)


class JWKSCache:
    """An issuer's signing keys, by key id, fetched over HTTP and refreshed on rotation.

    Give ``jwks_url``, or ``issuer`` to find it through discovery. Keys are
    refetched after ``max_age`` seconds, and when a token names an unknown key
    id, at most once per ``min_refresh_interval`` seconds.
    """

    def __init__(
        self,
        *,
        issuer: str | None = None,
        jwks_url: str | None = None,
        client: httpx.AsyncClient | None = None,
        max_age: float = 3600.0,
        min_refresh_interval: float = 30.0,
        timeout: float = 10.0,
    ) -> None:
        if not issuer and not jwks_url:
            raise ValueError("give the issuer (for discovery) or the JWKS URL")
        self.issuer = issuer
        self._jwks_url = jwks_url
        self._client = client
        self.max_age = max_age
        self.min_refresh_interval = min_refresh_interval
        self._timeout = timeout
        self._keys: dict[str | None, PyJWK] = {}
        self._algs: dict[str | None, str] = {}
        self._fetched_at: float | None = None
        self._lock = asyncio.Lock()
        self.fetches = 0
        """How many times the key set was fetched (for tests and metrics)."""

    async def _fetch(self, url: str) -> dict[str, Any]:
        # Fetches are rare (discovery once, keys on rotation): without a client of the
        # caller's, each uses a short-lived one, so nothing is left open at shutdown.
        if self._client is not None:
            return await _get_json(self._client, url)
        async with httpx.AsyncClient(timeout=self._timeout, follow_redirects=False) as client:
            return await _get_json(client, url)

    async def jwks_url(self) -> str:
        """The JWKS URL: configured, or read from the issuer's discovery document."""
        if self._jwks_url is None:
            assert self.issuer is not None
            document = await self._fetch(discovery_url(self.issuer))
            found = document.get("jwks_uri")
            if not isinstance(found, str) or not found:
                raise _KeyProblem("the discovery document has no jwks_uri")
            self._jwks_url = found
        return self._jwks_url

    async def _refresh(self) -> None:
        document = await self._fetch(await self.jwks_url())
        self.fetches += 1
        self._fetched_at = time.monotonic()
        keys: dict[str | None, PyJWK] = {}
        try:
            key_set = PyJWKSet.from_dict(document)
        except jwt.PyJWTError as exc:
            raise _KeyProblem(f"the JWKS holds no usable key ({exc})") from None
        for key in key_set.keys:
            if key.public_key_use in (None, "sig"):
                keys[key.key_id] = key
        # What each key says it is for ("alg"), read from the document: PyJWK keeps
        # only a default it infers when the key declares none.
        algs: dict[str | None, str] = {}
        for raw in document.get("keys") or ():
            if isinstance(raw, dict):
                entry = cast("dict[str, Any]", raw)
                declared = entry.get("alg")
                if isinstance(declared, str):
                    algs[entry.get("kid")] = declared
        self._keys, self._algs = keys, algs

    async def key(self, kid: str | None) -> PyJWK:
        """The key with this id (None: the only key of a one-key set); ``_KeyProblem`` if none."""
        now = time.monotonic()
        stale = self._fetched_at is None or now - self._fetched_at > self.max_age
        if stale or kid not in self._keys:
            async with self._lock:
                fetched = self._fetched_at
                now = time.monotonic()
                if fetched is None or now - fetched > self.max_age:
                    await self._refresh()
                elif kid not in self._keys and now - fetched >= self.min_refresh_interval:
                    await self._refresh()  # an unknown key id: maybe the issuer rotated
        if kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))
        found = self._keys.get(kid)
        if found is None:
            raise _KeyProblem(f"no key with id {kid!r} in the issuer's key set")
        return found

    def declared_algorithm(self, key: PyJWK) -> str | None:
        """The ``alg`` the key set declares for ``key`` (None: it declares none)."""
        return self._algs.get(key.key_id)


def _scopes(claims: Mapping[str, Any]) -> frozenset[str]:
    found: set[str] = set()
    for claim in ("scope", "scp"):
        value = claims.get(claim)
        if isinstance(value, str):
            found.update(value.split())
        elif isinstance(value, list):
            found.update(str(v) for v in cast("list[Any]", value))
    return frozenset(found)


class JWTBearerAuth:
    """``Authorization: Bearer <JWT>`` issued by ``issuer`` for ``audience``.

    ``principal_claim`` names the caller (``sub``); ``leeway`` is the accepted
    clock skew in seconds (at most ``MAX_LEEWAY``); ``algorithms`` is the
    allow-list (asymmetric only). The card declares OpenID Connect discovery,
    or, with ``token_url``, an OAuth 2.0 client-credentials flow whose
    ``scopes`` are listed. A token that is not a JWT at all (three dot-separated
    parts) is left to the other backends.
    """

    def __init__(
        self,
        issuer: str,
        audience: str | Sequence[str],
        *,
        jwks_url: str | None = None,
        algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
        principal_claim: str = "sub",
        leeway: float = 60.0,
        scheme_name: str = "oidc",
        token_url: str | None = None,
        scopes: Mapping[str, str] | None = None,
        description: str | None = None,
        client: httpx.AsyncClient | None = None,
        max_age: float = 3600.0,
        min_refresh_interval: float = 30.0,
    ) -> None:
        if not issuer:
            raise ValueError("issuer must not be empty")
        audiences = [audience] if isinstance(audience, str) else list(audience)
        if not audiences or not all(audiences):
            raise ValueError("audience must name this agent (non-empty)")
        bad = [a for a in algorithms if a not in ASYMMETRIC_ALGORITHMS]
        if bad or not algorithms:
            raise ValueError(
                f"algorithms must be asymmetric ones of {', '.join(ASYMMETRIC_ALGORITHMS)}; "
                f"refused: {', '.join(bad) or '(none given)'}"
            )
        if not 0 <= leeway <= MAX_LEEWAY:
            raise ValueError(f"leeway must be between 0 and {MAX_LEEWAY:g} seconds")
        if not principal_claim:
            raise ValueError("principal_claim must not be empty")
        self.issuer = issuer
        self.audience = audiences
        self.algorithms = tuple(algorithms)
        self.principal_claim = principal_claim
        self.leeway = leeway
        self._scheme_name = scheme_name
        self.keys = JWKSCache(
            issuer=issuer,
            jwks_url=jwks_url,
            client=client,
            max_age=max_age,
            min_refresh_interval=min_refresh_interval,
        )
        if token_url:
            self._scheme = SecurityScheme(
                oauth2_security_scheme=OAuth2SecurityScheme(
                    description=description,
                    flows=OAuthFlows(
                        client_credentials=ClientCredentialsOAuthFlow(
                            token_url=token_url, scopes=dict(scopes or {})
                        )
                    ),
                    oauth2_metadata_url=discovery_url(issuer),
                )
            )
        else:
            self._scheme = SecurityScheme(
                open_id_connect_security_scheme=OpenIdConnectSecurityScheme(
                    description=description, open_id_connect_url=discovery_url(issuer)
                )
            )

    @property
    def scheme_name(self) -> str:
        """The scheme's name in the card (``oidc`` by default)."""
        return self._scheme_name

    @property
    def security_scheme(self) -> SecurityScheme:
        """OpenID Connect discovery, or OAuth 2.0 client credentials when a token URL is set."""
        return self._scheme

    async def authenticate(self, headers: Mapping[str, str]) -> Principal | None:
        """The caller named by a valid token; None without a bearer JWT."""
        value = header_value(headers, "authorization")
        if value is None:
            return None
        kind, _, token = value.strip().partition(" ")
        token = token.strip()
        if kind.lower() != "bearer" or token.count(".") != 2:
            return None  # not a JWT: another backend's credentials
        try:
            claims = await self.verify(token)
        except jwt.PyJWTError as exc:
            raise AuthenticationRequiredError("Invalid bearer token") from exc
        except (_KeyProblem, httpx.HTTPError) as exc:
            raise AuthenticationRequiredError("Invalid bearer token") from exc
        who = claims.get(self.principal_claim)
        if not isinstance(who, str) or not who:
            raise AuthenticationRequiredError("Invalid bearer token") from _KeyProblem(
                f"the token has no {self.principal_claim!r} claim"
            )
        return Principal(
            id=who,
            scheme=self._scheme_name,
            attributes={"claims": claims},
            scopes=_scopes(claims),
        )

    async def verify(self, token: str) -> dict[str, Any]:
        """The token's claims once every check passed; raises ``jwt.PyJWTError`` otherwise."""
        header = jwt.get_unverified_header(token)
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise jwt.InvalidAlgorithmError(f"algorithm {str(alg)[:16]!r} is not allowed")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise jwt.InvalidTokenError("the kid header is not a string")
        key = await self.keys.key(kid)
        if key.key_type != ASYMMETRIC_ALGORITHMS[alg]:
            raise jwt.InvalidAlgorithmError(f"a {key.key_type} key cannot verify {alg}")
        declared = self.keys.declared_algorithm(key)
        if declared is not None and declared != alg:
            raise jwt.InvalidAlgorithmError(f"the key is for {declared}, the token says {alg}")
        return jwt.decode(
            token,
            key=key.key,
            algorithms=[alg],
            audience=self.audience,
            issuer=self.issuer,
            leeway=self.leeway,
            options={"require": ["exp", "iss", "aud"]},
        )

    def __repr__(self) -> str:
        return (
            f"JWTBearerAuth(issuer={self.issuer!r}, audience={self.audience!r}, "
            f"scheme_name={self._scheme_name!r})"
        )


def jwt_backend_from_options(options: Mapping[str, Any]) -> JWTBearerAuth | None:
    """``oidc_issuer`` + ``oidc_audience`` (and the other ``oidc_*`` options) configure one."""
    issuer = options.get("oidc_issuer")
    if not issuer:
        return None
    audience = options.get("oidc_audience")
    if not audience:
        raise ValueError("oidc_issuer needs oidc_audience (the audience this agent accepts)")
    kwargs: dict[str, Any] = {}
    for option, name in (
        ("oidc_jwks_url", "jwks_url"),
        ("oidc_algorithms", "algorithms"),
        ("oidc_principal_claim", "principal_claim"),
        ("oidc_leeway", "leeway"),
        ("oidc_token_url", "token_url"),
    ):
        if options.get(option) is not None:
            kwargs[name] = options[option]
    scopes = options.get("operation_scopes")
    if kwargs.get("token_url") and isinstance(scopes, Mapping):
        listed: dict[str, str] = {}
        for category, value in cast("Mapping[str, Any]", scopes).items():
            for scope in [value] if isinstance(value, str) else list(value):
                listed[str(scope)] = f"A2A {category} operations"
        kwargs["scopes"] = listed
    return JWTBearerAuth(str(issuer), audience, **kwargs)
