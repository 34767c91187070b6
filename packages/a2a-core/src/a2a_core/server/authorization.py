"""Which scopes each A2A operation needs: the ``operation_scopes`` option.

Operations fall into four groups: ``read`` (get, list, subscribe, the
extended card), ``send`` (send, stream), ``cancel`` and ``push`` (the four
push-config calls); ``*`` stands for every group not named. A group mapped to
scopes is allowed to a caller whose credential grants at least one of them
(``Principal.scopes``, filled by ``JWTBearerAuth`` from the token's ``scope`` /
``scp`` claims); a group left out is not restricted by scope. The check runs
before the operation touches a task, so a refusal says nothing about tasks.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from ..errors import AuthenticationRequiredError, PermissionDeniedError
from ..identity import Principal
from ..wire.operations import Operation

__all__ = ["OPERATION_GROUPS", "InsufficientScopeError", "OperationScopes", "auth_logger"]

auth_logger = logging.getLogger("a2a_core.auth")
"""Where every refused request is logged, once, at WARNING (never with its credentials)."""

OPERATION_GROUPS: Mapping[Operation, str] = {
    Operation.SEND_MESSAGE: "send",
    Operation.SEND_STREAMING_MESSAGE: "send",
    Operation.GET_TASK: "read",
    Operation.LIST_TASKS: "read",
    Operation.SUBSCRIBE_TO_TASK: "read",
    Operation.GET_EXTENDED_CARD: "read",
    Operation.CANCEL_TASK: "cancel",
    Operation.CREATE_PUSH_CONFIG: "push",
    Operation.GET_PUSH_CONFIG: "push",
    Operation.LIST_PUSH_CONFIGS: "push",
    Operation.DELETE_PUSH_CONFIG: "push",
}
"""The group of each operation, as ``operation_scopes`` names them."""

_GROUPS = frozenset({*OPERATION_GROUPS.values(), "*"})


class InsufficientScopeError(PermissionDeniedError):
    """A 403 because the credential lacks a scope: HTTP answers carry
    ``WWW-Authenticate: Bearer error="insufficient_scope", scope="..."`` (RFC 6750 §3.1).

    On the wire it is a ``PermissionDeniedError`` (same code and reason).
    """

    def __init__(self, message: str, scopes: frozenset[str]) -> None:
        super().__init__(message)
        self.scopes = scopes
        """The scopes of which the operation needs one."""

    def challenge(self, realm: str) -> bytes:
        """The ``WWW-Authenticate`` value naming the missing scopes."""
        scope = " ".join(sorted(self.scopes))
        return (
            f'Bearer realm={_quote(realm)}, error="insufficient_scope", scope={_quote(scope)}'
        ).encode("latin-1", "replace")


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class OperationScopes:
    """Group -> accepted scopes (any one suffices), e.g. ``{"send": "a2a.send", "read": ...}``."""

    def __init__(self, mapping: Mapping[str, str | Sequence[str]]) -> None:
        unknown = sorted(set(mapping) - _GROUPS)
        if unknown:
            raise ValueError(
                f"operation_scopes: unknown group(s) {', '.join(unknown)}; "
                f"the groups are {', '.join(sorted(_GROUPS))}"
            )
        self._by_group: dict[str, frozenset[str]] = {}
        for group, scopes in mapping.items():
            values = frozenset([scopes] if isinstance(scopes, str) else scopes)
            if not values or not all(values):
                raise ValueError(f"operation_scopes[{group!r}] must name at least one scope")
            self._by_group[group] = values

    def required(self, op: Operation) -> frozenset[str] | None:
        """The scopes of which ``op`` needs one; None when it needs none."""
        group = OPERATION_GROUPS.get(op, "*")
        return self._by_group.get(group, self._by_group.get("*"))

    def scopes(self) -> frozenset[str]:
        """Every scope named (for the card's OAuth flow)."""
        return frozenset(s for values in self._by_group.values() for s in values)

    def check(self, op: Operation, principal: Principal | None) -> None:
        """Raise 401 (anonymous) or 403 (scope missing) when ``principal`` may not run ``op``."""
        needed = self.required(op)
        if needed is None:
            return
        if principal is None:
            auth_logger.warning("refused %s: no credentials (a scope is required)", op.value)
            raise AuthenticationRequiredError("This operation requires authentication")
        granted = principal.scopes or frozenset[str]()
        if not needed & granted:
            auth_logger.warning(
                "refused %s for %r: none of the scopes %s granted",
                op.value,
                principal.id,
                ", ".join(sorted(needed)),
            )
            raise InsufficientScopeError("The credential does not allow this operation", needed)

    def __repr__(self) -> str:
        return f"OperationScopes({ {g: sorted(s) for g, s in self._by_group.items()}!r})"
