"""Who is calling: the identity types the server, the auth backends and the client share.

Kept apart from ``server`` so the client can name a ``Principal`` (for its
in-process transport) without importing the server.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Authenticator", "Principal", "connection_tls"]


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
