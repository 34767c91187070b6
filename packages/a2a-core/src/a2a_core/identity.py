"""Who is calling: the identity types the server, the auth backends and the client share.

Kept apart from ``server`` so the client can name a ``Principal`` (for its
in-process transport) without importing the server.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Authenticator",
    "Credential",
    "MissingCredentialError",
    "Principal",
    "connection_tls",
]


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller. Tasks are scoped to ``id`` (and the request's tenant).

    ``scopes``: what the credential grants (OAuth scopes of a JWT), checked
    against the ``operation_scopes`` option; None when the scheme has no scopes.
    """

    id: str
    scheme: str | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict[str, Any])
    scopes: frozenset[str] | None = None


Authenticator = Callable[[Mapping[str, str]], Awaitable[Principal | None]]
"""``authenticate(headers) -> Principal | None`` (headers lower-cased): what the edge calls
per request. Raise ``AuthenticationRequiredError`` for invalid credentials."""


connection_tls: ContextVar[Mapping[str, Any] | None] = ContextVar(
    "a2a_connection_tls", default=None
)
"""The TLS facts of the connection the current request came on, as the ASGI TLS extension
(``scope["extensions"]["tls"]``) states them, or None (not TLS, or a server that does not
say). Set per request by the A2A app (and the gRPC server) before authenticating, so
backends that take only headers (``MutualTLSAuth``) can read the verified peer certificate."""


@dataclass(frozen=True, slots=True)
class Credential:
    """A caller's bearer token, to forward on the caller's behalf (token passthrough).

    The token never appears in ``repr`` or ``str``. Build one with
    ``Credential.bearer(token)``; a server hands the one its caller presented
    as ``RequestContext.credential``. Forwarding is always opt-in: see
    ``RemoteAgentSession(passthrough=True)`` and docs/security.md.
    """

    token: str = field(repr=False)
    scheme: str = "Bearer"

    def __post_init__(self) -> None:
        if not self.token or any(c in self.token for c in "\r\n\0 "):
            raise ValueError("a credential is a non-empty token without spaces or line breaks")
        if self.scheme.lower() != "bearer":
            raise ValueError("only bearer tokens are forwarded")

    @classmethod
    def bearer(cls, token: str) -> Credential:
        """A bearer token (``Authorization: Bearer <token>``)."""
        return cls(token)

    @classmethod
    def from_authorization(cls, value: str | None) -> Credential | None:
        """The bearer token of an ``Authorization`` header value (None: none, or another scheme)."""
        if not value:
            return None
        kind, _, token = value.strip().partition(" ")
        token = token.strip()
        if kind.lower() != "bearer" or not token:
            return None
        try:
            return cls(token)
        except ValueError:
            return None

    @property
    def authorization(self) -> str:
        """The ``Authorization`` header value."""
        return f"Bearer {self.token}"

    @property
    def fingerprint(self) -> str:
        """A short digest of the token (to tell callers apart without keeping their tokens)."""
        return hashlib.sha256(self.token.encode("utf-8", "surrogatepass")).hexdigest()[:24]

    def __str__(self) -> str:
        return "Bearer <redacted>"


class MissingCredentialError(Exception):
    """Passthrough is on, but the call carries no caller credential to forward.

    Raised instead of falling back to the forwarder's own credentials (or to
    none): a call that must act for its caller never acts for anyone else.
    """
