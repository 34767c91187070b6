"""Built-in plugin: bearer-token and API-key backends, configured from server options.

``bearer_tokens={"token": "principal-id"}`` and ``api_keys={"key": "principal-id"}``
(with ``api_key_header``, default ``X-API-Key``); ``oidc_issuer`` and
``oidc_audience`` (and the other ``oidc_*`` options) a ``JWTBearerAuth``; without those options the
factories return None and nothing is required of callers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..auth import (
    AuthBackend,
    AuthBackendRegistrar,
    api_key_backend_from_options,
    bearer_backend_from_options,
)
from ..hookspecs import hookimpl

A2A_OPTIONS = (
    "bearer_tokens",
    "api_keys",
    "api_key_header",
    "oidc_issuer",
    "oidc_audience",
    "oidc_jwks_url",
    "oidc_algorithms",
    "oidc_principal_claim",
    "oidc_leeway",
    "oidc_token_url",
)
"""The server options these backends read."""


def _jwt_backend_from_options(options: Mapping[str, Any]) -> AuthBackend | None:
    """``oidc_issuer`` + ``oidc_audience``: a ``JWTBearerAuth`` (imported only then: PyJWT)."""
    if not options.get("oidc_issuer"):
        return None
    from ..oidc import jwt_backend_from_options

    return jwt_backend_from_options(options)


@hookimpl
def a2a_register_auth_backends(register: AuthBackendRegistrar) -> None:
    register("bearer", bearer_backend_from_options)
    register("api_key", api_key_backend_from_options)
    register("oidc", _jwt_backend_from_options)
