"""Authentication: backends that map a request's credentials to a ``Principal``.

A backend reads the request headers and answers with a ``Principal`` (these
credentials are mine and valid), None (no credentials of mine here), or raises
``AuthenticationRequiredError`` (credentials of mine, but invalid). Backends
come from the ``auth_backends`` option and from plugins
(``a2a_register_auth_backends``); each adds its security scheme to the agent
card. At startup they are composed once into one ``authenticate(headers)``:
the first principal wins; when none matches, the first rejection is raised,
and without any credentials the caller is anonymous (None).

Built in: ``BearerTokenAuth`` (``Authorization: Bearer <token>``) and
``APIKeyAuth`` (a key in a header), configured from static tokens or an async
``verify`` function; the built-in plugin builds them from the
``bearer_tokens`` and ``api_keys`` options.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeGuard

import pluggy

from .errors import AuthenticationRequiredError, ConfigurationError
from .hookspecs import AuthBackend, AuthBackendFactory, AuthBackendRegistrar
from .identity import Authenticator, Principal
from .plugins import PluginError, Registration, collect_registrations, get_plugin_manager
from .types import (
    AgentCard,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)

__all__ = [
    "APIKeyAuth",
    "AuthBackend",
    "AuthBackendFactory",
    "AuthBackendRegistrar",
    "Authenticator",
    "BearerTokenAuth",
    "CredentialVerifier",
    "api_key_backend_from_options",
    "auth_backends",
    "bearer_backend_from_options",
    "chain_authenticators",
    "compose_authenticator",
    "header_value",
    "registered_auth_backends",
    "with_security_schemes",
]

CredentialVerifier = Callable[[str], Awaitable[Principal | None]]
"""Checks one presented credential (a token, a key): the principal, or None when invalid."""


def header_value(headers: Mapping[str, str], name: str) -> str | None:
    """A header by case-insensitive name (ASGI lower-cases them; other callers may not)."""
    value = headers.get(name)
    if value is not None:
        return value
    lower = name.lower()
    value = headers.get(lower)
    if value is not None:
        return value
    for key, candidate in headers.items():
        if key.lower() == lower:
            return candidate
    return None


class _StaticCredentials:
    """Known secrets, kept only as SHA-256 digests and looked up without comparing strings."""

    def __init__(self, secrets: Mapping[str, str | Principal], scheme: str, what: str) -> None:
        self._principals: dict[bytes, Principal] = {}
        for secret, who in secrets.items():
            if not isinstance(secret, str) or not secret:  # pyright: ignore[reportUnnecessaryIsInstance]
                raise ValueError(f"{what} must be non-empty strings")
            principal = who if isinstance(who, Principal) else Principal(id=str(who), scheme=scheme)
            self._principals[_digest(secret)] = principal

    def __len__(self) -> int:
        return len(self._principals)

    def find(self, secret: str) -> Principal | None:
        return self._principals.get(_digest(secret))


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).digest()


class _CredentialBackend:
    """Shared logic: a credential found in the request is checked by table, then by ``verify``."""

    _what = "credential"

    def __init__(
        self,
        secrets: Mapping[str, str | Principal] | None,
        verify: CredentialVerifier | None,
        scheme_name: str,
    ) -> None:
        if not scheme_name:
            raise ValueError("scheme_name must not be empty")
        if not secrets and verify is None:
            raise ValueError(f"give the accepted {self._what}s, a verify function, or both")
        self._scheme_name = scheme_name
        self._static = _StaticCredentials(secrets or {}, scheme_name, f"{self._what}s")
        self._verify = verify

    @property
    def scheme_name(self) -> str:
        return self._scheme_name

    async def _check(self, credential: str) -> Principal:
        principal = self._static.find(credential)
        if principal is None and self._verify is not None:
            principal = await self._verify(credential)
        if principal is None:
            raise AuthenticationRequiredError(f"Invalid {self._what}")
        return principal

    def __repr__(self) -> str:  # never show secrets
        return (
            f"{type(self).__name__}(scheme_name={self._scheme_name!r}, known={len(self._static)})"
        )


class BearerTokenAuth(_CredentialBackend):
    """``Authorization: Bearer <token>``, checked against known tokens and/or ``verify``.

    ``tokens`` maps each accepted token to its principal (or principal id).
    """

    _what = "bearer token"

    def __init__(
        self,
        tokens: Mapping[str, str | Principal] | None = None,
        *,
        verify: CredentialVerifier | None = None,
        scheme_name: str = "bearer",
        bearer_format: str | None = None,
        description: str | None = None,
    ) -> None:
        super().__init__(tokens, verify, scheme_name)
        self._scheme = SecurityScheme(
            http_auth_security_scheme=HTTPAuthSecurityScheme(
                scheme="Bearer", bearer_format=bearer_format, description=description
            )
        )

    @property
    def security_scheme(self) -> SecurityScheme:
        """The HTTP bearer scheme, published in the agent card."""
        return self._scheme

    async def authenticate(self, headers: Mapping[str, str]) -> Principal | None:
        """The caller whose token is in ``Authorization: Bearer``; None without one."""
        value = header_value(headers, "authorization")
        if value is None:
            return None
        kind, _, token = value.strip().partition(" ")
        if kind.lower() != "bearer":
            return None  # another scheme's credentials (Basic, ...)
        token = token.strip()
        if not token:
            raise AuthenticationRequiredError("Empty bearer token")
        return await self._check(token)


class APIKeyAuth(_CredentialBackend):
    """An API key in a request header (``X-API-Key`` by default), checked like tokens."""

    _what = "API key"

    def __init__(
        self,
        keys: Mapping[str, str | Principal] | None = None,
        *,
        verify: CredentialVerifier | None = None,
        header: str = "X-API-Key",
        scheme_name: str = "apiKey",
        description: str | None = None,
    ) -> None:
        super().__init__(keys, verify, scheme_name)
        if not header:
            raise ValueError("header must not be empty")
        self.header = header
        self._scheme = SecurityScheme(
            api_key_security_scheme=APIKeySecurityScheme(
                location="header", name=header, description=description
            )
        )

    @property
    def security_scheme(self) -> SecurityScheme:
        """The API-key scheme (its header name), published in the agent card."""
        return self._scheme

    async def authenticate(self, headers: Mapping[str, str]) -> Principal | None:
        """The caller whose key is in the configured header; None without one."""
        value = header_value(headers, self.header)
        if value is None:
            return None
        key = value.strip()
        if not key:
            raise AuthenticationRequiredError("Empty API key")
        return await self._check(key)


# -- built-in factories (registered by the core's built-in auth plugin) ----------------


def bearer_backend_from_options(options: Mapping[str, Any]) -> AuthBackend | None:
    """``bearer_tokens={"token": "principal-id", ...}`` configures a ``BearerTokenAuth``."""
    tokens = options.get("bearer_tokens")
    if not tokens:
        return None
    if not isinstance(tokens, Mapping):
        raise TypeError("the bearer_tokens option must map each token to a principal id")
    return BearerTokenAuth(_secrets(tokens))  # pyright: ignore[reportUnknownArgumentType]


def api_key_backend_from_options(options: Mapping[str, Any]) -> AuthBackend | None:
    """``api_keys={"key": "principal-id"}`` (+ ``api_key_header``) configures an ``APIKeyAuth``."""
    keys = options.get("api_keys")
    if not keys:
        return None
    if not isinstance(keys, Mapping):
        raise TypeError("the api_keys option must map each key to a principal id")
    header = options.get("api_key_header") or "X-API-Key"
    return APIKeyAuth(_secrets(keys), header=str(header))  # pyright: ignore[reportUnknownArgumentType]


def _secrets(raw: Mapping[Any, Any]) -> dict[str, str | Principal]:
    return {str(k): v if isinstance(v, Principal) else str(v) for k, v in raw.items()}


# -- collecting and composing ----------------------------------------------------------


def _is_factory(value: object) -> TypeGuard[AuthBackendFactory]:
    return callable(value)


def registered_auth_backends(
    plugin_manager: pluggy.PluginManager | None = None,
) -> dict[str, Registration[AuthBackendFactory]]:
    """Every auth backend factory the plugins register, by (case-folded) name."""
    pm = plugin_manager if plugin_manager is not None else get_plugin_manager()
    return collect_registrations(
        pm,
        "a2a_register_auth_backends",
        "auth backend",
        _is_factory,
        "a callable factory(options) -> AuthBackend | None",
    )


def auth_backends(
    plugin_manager: pluggy.PluginManager | None, options: Mapping[str, Any]
) -> list[AuthBackend]:
    """The configured backends: the ``auth_backends`` option first, then the plugins' factories.

    A factory that fails or returns something else than a backend is a
    ``PluginError`` naming its plugin; two backends with one scheme name are
    a ``ConfigurationError``.
    """
    backends: list[AuthBackend] = []
    explicit: object = options.get("auth_backends") or ()
    if isinstance(explicit, AuthBackend) or not isinstance(explicit, Sequence):
        raise ConfigurationError("the auth_backends option must be a list of auth backends")
    for backend in explicit:  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(backend, AuthBackend):
            raise ConfigurationError(
                f"auth_backends holds a {type(backend).__name__}, not an auth backend "  # pyright: ignore[reportUnknownArgumentType]
                "(scheme_name, security_scheme, async authenticate(headers))"
            )
        backends.append(backend)
    for registration in registered_auth_backends(plugin_manager).values():
        try:
            backend = registration.value(options)
        except Exception as exc:
            raise PluginError(
                f"auth backend {registration.name!r} (plugin {registration.plugin!r}) "
                f"could not be configured: {type(exc).__name__}: {exc}",
                plugin=registration.plugin,
            ) from exc
        if backend is None:
            continue
        if not isinstance(backend, AuthBackend):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise PluginError(
                f"auth backend {registration.name!r} (plugin {registration.plugin!r}) returned "
                f"a {type(backend).__name__}, not an auth backend",
                plugin=registration.plugin,
            )
        backends.append(backend)
    names = [b.scheme_name for b in backends]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigurationError(
            f"several auth backends use the security scheme name(s) {', '.join(duplicates)}"
        )
    return backends


def chain_authenticators(backends: Sequence[AuthBackend]) -> Authenticator:
    """One ``authenticate(headers)`` over the backends, in order.

    The first principal wins. When no backend accepts, the first rejection
    (``AuthenticationRequiredError``) is raised; with no rejection either,
    the caller is anonymous (None).
    """
    chain = tuple(b.authenticate for b in backends)
    if len(chain) == 1:
        return chain[0]

    async def authenticate(headers: Mapping[str, str]) -> Principal | None:
        rejection: AuthenticationRequiredError | None = None
        for backend in chain:
            try:
                principal = await backend(headers)
            except AuthenticationRequiredError as exc:
                if rejection is None:
                    rejection = exc
                continue
            if principal is not None:
                return principal
        if rejection is not None:
            raise rejection
        return None

    return authenticate


def compose_authenticator(
    plugin_manager: pluggy.PluginManager | None = None, options: Mapping[str, Any] | None = None
) -> Authenticator | None:
    """The app's ``authenticate`` for these options, or None when no backend is configured.

    Call it once at startup with the options given to ``configure_service``
    (the card then declares the same schemes).
    """
    backends = auth_backends(plugin_manager, options or {})
    return chain_authenticators(backends) if backends else None


def with_security_schemes(
    card: AgentCard, backends: Sequence[AuthBackend], scopes: Iterable[str] = ()
) -> AgentCard:
    """The card declaring each backend's scheme, and requiring one of them.

    Each scheme not yet named by a card requirement is added as an
    alternative requirement. ``scopes`` (those of ``operation_scopes``) are
    listed in the requirement of each OAuth 2.0 / OpenID Connect scheme, so a
    client knows which scopes to ask its provider for; schemes without scopes
    (HTTP bearer, API keys) list none. A card declaring a *different* scheme
    under the same name is a ``ConfigurationError``.
    """
    listed = sorted(set(scopes))
    if not backends:
        return card
    schemes = dict(card.security_schemes)
    requirements = list(card.security_requirements)
    required = {name for r in requirements for name in r.schemes}
    for backend in backends:
        name = backend.scheme_name
        existing = schemes.get(name)
        if existing is not None and existing != backend.security_scheme:
            raise ConfigurationError(
                f"the agent card declares security scheme {name!r} differently from its "
                "auth backend; rename one of them"
            )
        schemes[name] = backend.security_scheme.model_copy(deep=True)
        if name not in required:
            scheme = backend.security_scheme
            scoped = (
                scheme.oauth2_security_scheme is not None
                or scheme.open_id_connect_security_scheme is not None
            )
            needed = StringList.model_validate({"list": listed if scoped else []})
            requirements.append(SecurityRequirement(schemes={name: needed}))
            required.add(name)
    return card.model_copy(
        update={"security_schemes": schemes, "security_requirements": requirements}
    )
