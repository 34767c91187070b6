"""What the transport knows about a call: who is calling, in which protocol version."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..identity import Principal

__all__ = ["Principal", "ServerCallContext"]


@dataclass(slots=True)
class ServerCallContext:
    """Per-call facts from the edge (HTTP, in-process client, tests) for the service."""

    version: str = "1.0"
    principal: Principal | None = None
    tenant: str | None = None
    extensions: frozenset[str] = frozenset()
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    base_url: str | None = None
    """The agent's URL as this caller reached it (for links it serves; None: unknown)."""

    @property
    def owner(self) -> str | None:
        """The id tasks are scoped to (None: anonymous, shared scope)."""
        return self.principal.id if self.principal is not None else None
