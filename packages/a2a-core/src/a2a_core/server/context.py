"""What the transport knows about a call: who is calling, in which protocol version."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from ..identity import Credential, Principal

__all__ = ["Credential", "Principal", "ServerCallContext", "owner_key", "owner_principal"]

_SCOPED = "\x1f"  # unit separator: never the start of an ordinary principal id


def owner_key(principal_id: str | None, tenant: str | None, scope: str | None = None) -> str | None:
    """The store's owner scope for a caller in a tenant (``TaskStore`` keeps one string).

    Without a tenant it is the principal id itself (None: anonymous), as before
    tenants scoped tasks; with one, both are encoded together, so a task of
    tenant A is not found under tenant B for the same principal. The encoding
    is injective: no principal id alone can equal a (tenant, principal) key.
    ``scope`` (the agent of a service hosting several, ``A2AService.task_scope``) is a
    third member, so a task of one agent is not found through another.
    """
    if scope:
        return _SCOPED + json.dumps([tenant or None, principal_id, scope])
    if not tenant:
        if principal_id is not None and principal_id.startswith(_SCOPED):
            return _SCOPED + json.dumps([None, principal_id])
        return principal_id
    return _SCOPED + json.dumps([tenant, principal_id])


def owner_principal(owner: str | None) -> str | None:
    """The principal id inside an ``owner_key`` (None: anonymous)."""
    if owner is None or not owner.startswith(_SCOPED):
        return owner
    decoded = cast("list[Any]", json.loads(owner[1:]))
    return cast("str | None", decoded[1])


@dataclass(slots=True)
class ServerCallContext:
    """Per-call facts from the edge (HTTP, in-process client, tests) for the service."""

    version: str = "1.0"
    principal: Principal | None = None
    tenant: str | None = None
    extensions: frozenset[str] = frozenset()
    headers: Mapping[str, str] = field(default_factory=dict[str, str], repr=False)
    """The request's headers (lower-case names); not in the repr: they carry credentials."""
    base_url: str | None = None
    """The agent's URL as this caller reached it (for links it serves; None: unknown)."""
    scope: str | None = None
    """The agent whose tasks this call sees, in a service hosting several (set by the
    service from its ``task_scope``; None: the only agent)."""

    @property
    def owner(self) -> str | None:
        """The scope tasks are kept in: the principal and the tenant (None: anonymous, no
        tenant); see ``owner_key``."""
        principal = self.principal.id if self.principal is not None else None
        return owner_key(principal, self.tenant, self.scope)

    @property
    def credential(self) -> Credential | None:
        """The bearer token this call was authenticated with, to forward on the caller's
        behalf (token passthrough, opt-in where it is used).

        None for an anonymous call: a token the server did not accept is never
        handed on. Not stored with the task, and never in a ``repr``.
        """
        if self.principal is None:
            return None
        value = self.headers.get("authorization")
        if value is None:
            value = next((v for k, v in self.headers.items() if k.lower() == "authorization"), None)
        return Credential.from_authorization(value)
