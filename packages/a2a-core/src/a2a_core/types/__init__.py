"""The A2A 1.0 data model as pydantic v2 models (the one canonical internal model).

The models are built on first use: ``import a2a_core.types`` (and its
pydantic-free modules ``_enums`` and ``_time``) costs almost nothing, and the
first public name asked for builds every model at once (they refer to each
other), exactly as an eager import would. Code that never needs a model never
pays for pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._base import A2AModel, Base64Bytes, Struct, Timestamp, format_timestamp
    from ._card import (
        AgentCapabilities,
        AgentCard,
        AgentCardSignature,
        AgentExtension,
        AgentInterface,
        AgentProvider,
        AgentSkill,
        APIKeySecurityScheme,
        AuthorizationCodeOAuthFlow,
        ClientCredentialsOAuthFlow,
        DeviceCodeOAuthFlow,
        HTTPAuthSecurityScheme,
        ImplicitOAuthFlow,
        MutualTlsSecurityScheme,
        OAuth2SecurityScheme,
        OAuthFlows,
        OpenIdConnectSecurityScheme,
        PasswordOAuthFlow,
        SecurityRequirement,
        SecurityScheme,
        StringList,
        TransportProtocol,
    )
    from ._enums import INTERRUPTED_STATES, TERMINAL_STATES, Role, TaskState
    from ._messages import (
        Artifact,
        Message,
        Part,
        StreamEvent,
        StreamResponse,
        Task,
        TaskArtifactUpdateEvent,
        TaskStatus,
        TaskStatusUpdateEvent,
        new_id,
    )
    from ._push import AuthenticationInfo, TaskPushNotificationConfig
    from ._requests import (
        CancelTaskRequest,
        DeleteTaskPushNotificationConfigRequest,
        GetExtendedAgentCardRequest,
        GetTaskPushNotificationConfigRequest,
        GetTaskRequest,
        ListTaskPushNotificationConfigsRequest,
        ListTaskPushNotificationConfigsResponse,
        ListTasksRequest,
        ListTasksResponse,
        SendMessageConfiguration,
        SendMessageRequest,
        SendMessageResponse,
        SubscribeToTaskRequest,
    )

__all__ = [
    "INTERRUPTED_STATES",
    "TERMINAL_STATES",
    "A2AModel",
    "APIKeySecurityScheme",
    "AgentCapabilities",
    "AgentCard",
    "AgentCardSignature",
    "AgentExtension",
    "AgentInterface",
    "AgentProvider",
    "AgentSkill",
    "Artifact",
    "AuthenticationInfo",
    "AuthorizationCodeOAuthFlow",
    "Base64Bytes",
    "CancelTaskRequest",
    "ClientCredentialsOAuthFlow",
    "DeleteTaskPushNotificationConfigRequest",
    "DeviceCodeOAuthFlow",
    "GetExtendedAgentCardRequest",
    "GetTaskPushNotificationConfigRequest",
    "GetTaskRequest",
    "HTTPAuthSecurityScheme",
    "ImplicitOAuthFlow",
    "ListTaskPushNotificationConfigsRequest",
    "ListTaskPushNotificationConfigsResponse",
    "ListTasksRequest",
    "ListTasksResponse",
    "Message",
    "MutualTlsSecurityScheme",
    "OAuth2SecurityScheme",
    "OAuthFlows",
    "OpenIdConnectSecurityScheme",
    "Part",
    "PasswordOAuthFlow",
    "Role",
    "SecurityRequirement",
    "SecurityScheme",
    "SendMessageConfiguration",
    "SendMessageRequest",
    "SendMessageResponse",
    "StreamEvent",
    "StreamResponse",
    "StringList",
    "Struct",
    "SubscribeToTaskRequest",
    "Task",
    "TaskArtifactUpdateEvent",
    "TaskPushNotificationConfig",
    "TaskState",
    "TaskStatus",
    "TaskStatusUpdateEvent",
    "Timestamp",
    "TransportProtocol",
    "format_timestamp",
    "new_id",
]

_SOURCES = ("._base", "._enums", "._card", "._messages", "._push", "._requests")
_PUBLIC = frozenset(__all__)


def _load() -> None:
    """Build every model and publish the names here (once; later lookups are plain)."""
    import importlib

    from ..exports import publish

    found: dict[str, Any] = {}
    for source in _SOURCES:
        module = importlib.import_module(source, __name__)
        for name in module.__all__:
            if name in _PUBLIC:
                found[name] = getattr(module, name)
    missing = _PUBLIC - found.keys()
    if missing:  # pragma: no cover - a name added to __all__ but not to a module
        raise ImportError(f"a2a_core.types lists names no module defines: {sorted(missing)}")
    publish(__name__, list(found.values()))
    globals().update(found)


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    _load()
    return globals()[name]


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
