"""What both bindings share at the edge: authentication, extensions, codecs, limits.

Built once per app from the served card and the options; per request it
answers three questions with a few dictionary lookups: who is calling, which
extensions are activated (and is a required one missing), which codec reads
this version.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ...errors import (
    AuthenticationRequiredError,
    ExtensionSupportRequiredError,
    PermissionDeniedError,
)
from ...identity import Authenticator, Principal
from ...types import AgentCard
from ...wire import DecodeLimits
from ..authorization import auth_logger
from ..service import A2AService
from .sse import KeepAlive

__all__ = ["Authenticate", "Edge", "www_authenticate"]

Authenticate = Authenticator
"""``async def authenticate(headers) -> Principal | None`` (the shape of ``a2a_core.auth``).

``headers`` has lower-case names. Return None for "no (valid) credentials";
raise ``PermissionDeniedError`` / ``AuthenticationRequiredError`` to answer
403 / 401 with a message of your own.
"""

_NO_EXTENSIONS: frozenset[str] = frozenset()


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def www_authenticate(card: AgentCard) -> bytes:
    """The ``WWW-Authenticate`` challenges for the card's security schemes (RFC 9110 §11.6.1)."""
    realm = _quote(card.name or "a2a")
    challenges: list[str] = []
    for scheme in card.security_schemes.values():
        if scheme.http_auth_security_scheme is not None:
            name = scheme.http_auth_security_scheme.scheme.strip() or "Bearer"
            challenges.append(f"{name[:1].upper()}{name[1:]} realm={realm}")
        elif scheme.oauth2_security_scheme is not None or (
            scheme.open_id_connect_security_scheme is not None
        ):
            challenges.append(f"Bearer realm={realm}")
        elif scheme.api_key_security_scheme is not None:
            key = scheme.api_key_security_scheme
            challenges.append(
                f"ApiKey realm={realm}, name={_quote(key.name)}, in={_quote(key.location)}"
            )
    if not challenges:
        challenges.append(f"Bearer realm={realm}")
    return ", ".join(dict.fromkeys(challenges)).encode("latin-1", "replace")


def _split(value: str | None) -> list[str]:
    if not value:
        return []
    return [item.strip() for item in value.split(",") if item.strip()]


@dataclass(slots=True)
class Edge:
    """Per-app settings and the per-request checks both bindings run."""

    service: A2AService
    card: AgentCard
    limits: DecodeLimits
    max_body_bytes: int
    sse: KeepAlive
    authenticate: Authenticate | None = None
    require_auth: bool = False
    declared_extensions: frozenset[str] = field(default=frozenset[str]())
    required_extensions: frozenset[str] = field(default=frozenset[str]())
    challenge: list[tuple[bytes, bytes]] = field(default_factory=list[tuple[bytes, bytes]])

    @classmethod
    def build(
        cls,
        service: A2AService,
        card: AgentCard,
        *,
        limits: DecodeLimits,
        max_body_bytes: int,
        sse: KeepAlive,
        authenticate: Authenticate | None,
        require_auth: bool | None,
    ) -> Edge:
        extensions = card.capabilities.extensions
        if require_auth is None:
            require_auth = bool(card.security_requirements or card.security_schemes)
        return cls(
            service=service,
            card=card,
            limits=limits,
            max_body_bytes=max_body_bytes,
            sse=sse,
            authenticate=authenticate,
            require_auth=require_auth,
            declared_extensions=frozenset(e.uri for e in extensions),
            required_extensions=frozenset(e.uri for e in extensions if e.required),
            challenge=[(b"www-authenticate", www_authenticate(card))],
        )

    async def principal(self, headers: Mapping[str, str]) -> Principal | None:
        """The authenticated caller; AuthenticationRequiredError when one is required."""
        hook = self.authenticate
        try:
            principal = await hook(headers) if hook is not None else None
        except (AuthenticationRequiredError, PermissionDeniedError) as exc:
            cause = exc.__cause__
            reason = f"{type(cause).__name__}: {cause}" if cause is not None else exc.message
            auth_logger.warning("refused: %s (%s)", type(exc).__name__, reason[:200])
            raise
        if principal is None and self.require_auth:
            auth_logger.warning("refused: no credentials")
            raise AuthenticationRequiredError(
                "This agent requires authentication (see the agent card's securitySchemes)"
            )
        return principal

    def extensions(
        self, headers: Mapping[str, str]
    ) -> tuple[frozenset[str], list[tuple[bytes, bytes]]]:
        """(extensions the client asked for, response headers echoing the activated ones)."""
        current = headers.get("a2a-extensions")
        legacy = headers.get("x-a2a-extensions")
        if current is None and legacy is None:
            if self.required_extensions:
                self._missing(self.required_extensions)
            return _NO_EXTENSIONS, []
        requested = frozenset(_split(current) + _split(legacy))
        missing = self.required_extensions - requested
        if missing:
            self._missing(missing)
        activated = requested & self.declared_extensions
        if not activated:
            return requested, []
        value = ", ".join(sorted(activated)).encode("latin-1", "replace")
        echo = [(b"a2a-extensions", value)]
        if legacy is not None:
            echo.append((b"x-a2a-extensions", value))
        return requested, echo

    @staticmethod
    def _missing(missing: frozenset[str]) -> None:
        uris = sorted(missing)
        raise ExtensionSupportRequiredError(
            "The agent requires these extensions; activate them with the A2A-Extensions "
            "header: " + ", ".join(uris),
            data={"extensions": ",".join(uris)},
        )
