"""Every A2A and JSON-RPC error as a type with a stable identity.

An error keeps its identity from agent to caller: the service raises these,
the bindings encode them (JSON-RPC code, HTTP status, gRPC status), and the
client decodes them back into the same class with the same code and data.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

__all__ = [
    "A2AError",
    "AuthenticationRequiredError",
    "ConfigurationError",
    "ContentTypeNotSupportedError",
    "ExtendedAgentCardNotConfiguredError",
    "ExtensionSupportRequiredError",
    "HttpStatusMapping",
    "InternalError",
    "InvalidAgentResponseError",
    "InvalidParamsError",
    "InvalidRequestError",
    "JSONParseError",
    "MethodNotFoundError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "PushNotificationNotSupportedError",
    "ServerBusyError",
    "TaskNotCancelableError",
    "TaskNotFoundError",
    "UnrepresentableError",
    "UnsupportedOperationError",
    "VersionNotSupportedError",
    "all_error_classes",
    "error_class_for_code",
    "error_class_for_reason",
]

ERROR_DOMAIN = "a2a-protocol.org"


class ConfigurationError(ValueError):
    """The server was configured inconsistently (found at startup, never per request)."""


class HttpStatusMapping(StrEnum):
    """Which revision's error-to-HTTP mapping the HTTP+JSON binding uses.

    1.0.1 aligned the statuses with google.rpc.Code; the conformance kit
    snapshot still expects the 1.0.0 ones (409, 415, 502, UNIMPLEMENTED).
    """

    V1_0_1 = "1.0.1"
    V1_0_0 = "1.0.0"


class A2AError(Exception):
    """Base of every protocol error.

    ``data`` holds structured, JSON-serializable details (for example
    ``{"reason": "background_capacity_exhausted", "retryable": True}``).
    """

    code: int = -32603
    reason: ClassVar[str] = "INTERNAL"
    default_message: ClassVar[str] = "Internal error"
    http_status: ClassVar[int] = 500
    grpc_status: ClassVar[str] = "INTERNAL"
    # Where the 1.0.0 mapping differs from 1.0.1; None means the same.
    http_status_v1_0_0: ClassVar[int | None] = None
    grpc_status_v1_0_0: ClassVar[str | None] = None

    def __init__(
        self,
        message: str | None = None,
        *,
        data: dict[str, Any] | None = None,
        code: int | None = None,
    ) -> None:
        self.message = message or self.default_message
        self.data = data
        if code is not None:  # only for errors outside the known set
            self.code = code
        super().__init__(self.message)

    def http_status_for(self, mapping: HttpStatusMapping = HttpStatusMapping.V1_0_1) -> int:
        """The HTTP status of this error under the chosen mapping."""
        if mapping is HttpStatusMapping.V1_0_0 and self.http_status_v1_0_0 is not None:
            return self.http_status_v1_0_0
        return self.http_status

    def grpc_status_for(self, mapping: HttpStatusMapping = HttpStatusMapping.V1_0_1) -> str:
        """The gRPC status name of this error under the chosen mapping."""
        if mapping is HttpStatusMapping.V1_0_0 and self.grpc_status_v1_0_0 is not None:
            return self.grpc_status_v1_0_0
        return self.grpc_status

    @property
    def retryable(self) -> bool:
        """Whether the same call may succeed later."""
        return bool(self.data and self.data.get("retryable"))

    def __repr__(self) -> str:
        extra = f", data={self.data!r}" if self.data else ""
        return f"{type(self).__name__}({self.message!r}{extra})"

    def __eq__(self, other: object) -> bool:
        return (
            type(self) is type(other)
            and isinstance(other, A2AError)
            and (self.code, self.message, self.data) == (other.code, other.message, other.data)
        )

    def __hash__(self) -> int:
        return hash((type(self), self.code, self.message))


# JSON-RPC 2.0 standard errors ------------------------------------------------


class JSONParseError(A2AError):
    """The request body is not valid JSON (JSON-RPC -32700)."""

    code = -32700
    reason = "PARSE_ERROR"
    default_message = "Invalid JSON payload"
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"


class InvalidRequestError(A2AError):
    """The request is JSON but not a valid request: wrong shape, missing fields (-32600)."""

    code = -32600
    reason = "INVALID_REQUEST"
    default_message = "Request payload validation error"
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"


class MethodNotFoundError(A2AError):
    """No such method or route: an operation this server does not have (-32601)."""

    code = -32601
    reason = "METHOD_NOT_FOUND"
    default_message = "Method not found"
    http_status = 404
    grpc_status = "UNIMPLEMENTED"


class InvalidParamsError(A2AError):
    """The method exists but its parameters are wrong: a bad id, an invalid field value (-32602)."""

    code = -32602
    reason = "INVALID_PARAMS"
    default_message = "Invalid parameters"
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"


class InternalError(A2AError):
    """Something failed inside the server; the caller can only retry or report it (-32603)."""

    code = -32603
    reason = "INTERNAL"
    default_message = "Internal error"
    http_status = 500
    grpc_status = "INTERNAL"


class PayloadTooLargeError(InvalidRequestError):
    """The request body or a decoded structure exceeds a configured bound (HTTP 413)."""

    reason = "PAYLOAD_TOO_LARGE"
    default_message = "Request payload too large"
    http_status = 413
    grpc_status = "RESOURCE_EXHAUSTED"


class UnrepresentableError(InternalError):
    """A value has no representation in the peer's protocol version (never dropped silently)."""

    reason = "UNREPRESENTABLE_IN_VERSION"
    default_message = "The value cannot be represented in this protocol version"


# A2A errors (-32001 ... -32009) -----------------------------------------------


class TaskNotFoundError(A2AError):
    """No task with that id, or not one this caller may see (-32001)."""

    code = -32001
    reason = "TASK_NOT_FOUND"
    default_message = "Task not found"
    http_status = 404
    grpc_status = "NOT_FOUND"

    @classmethod
    def for_task(cls, task_id: str) -> TaskNotFoundError:
        """The error for ``task_id``: exactly "Task not found" (the text both official SDKs
        send, and clients such as fasta2a check), the id in ``data``."""
        return cls(data={"taskId": task_id})


class TaskNotCancelableError(A2AError):
    """The task exists but can no longer be canceled: it has already finished (-32002)."""

    code = -32002
    reason = "TASK_NOT_CANCELABLE"
    default_message = "Task cannot be canceled"
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"
    http_status_v1_0_0 = 409


class PushNotificationNotSupportedError(A2AError):
    """The agent does not do push notifications (its card says so) (-32003)."""

    code = -32003
    reason = "PUSH_NOTIFICATION_NOT_SUPPORTED"
    default_message = "Push notifications are not supported"
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"
    grpc_status_v1_0_0 = "UNIMPLEMENTED"


class UnsupportedOperationError(A2AError):
    """The agent does not offer this operation, e.g. streaming when its card does not (-32004)."""

    code = -32004
    reason = "UNSUPPORTED_OPERATION"
    default_message = "This operation is not supported"
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"
    grpc_status_v1_0_0 = "UNIMPLEMENTED"


class ContentTypeNotSupportedError(A2AError):
    """A part's media type is not one the agent accepts (-32005)."""

    code = -32005
    reason = "CONTENT_TYPE_NOT_SUPPORTED"
    default_message = "Incompatible content types"
    http_status = 400
    grpc_status = "INVALID_ARGUMENT"
    http_status_v1_0_0 = 415


class InvalidAgentResponseError(A2AError):
    """The agent answered with something the protocol does not allow (-32006)."""

    code = -32006
    reason = "INVALID_AGENT_RESPONSE"
    default_message = "Invalid agent response"
    http_status = 500
    grpc_status = "INTERNAL"
    http_status_v1_0_0 = 502


class ExtendedAgentCardNotConfiguredError(A2AError):
    """The caller asked for the extended agent card, and there is none (-32007)."""

    code = -32007
    reason = "EXTENDED_AGENT_CARD_NOT_CONFIGURED"
    default_message = "Extended agent card is not configured"
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"


class ExtensionSupportRequiredError(A2AError):
    """The agent requires a protocol extension the caller did not declare (-32008)."""

    code = -32008
    reason = "EXTENSION_SUPPORT_REQUIRED"
    default_message = "A required extension was not activated by the client"
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"


class VersionNotSupportedError(A2AError):
    """The caller asked for a protocol version this server does not speak (-32009)."""

    code = -32009
    reason = "VERSION_NOT_SUPPORTED"
    default_message = "This A2A protocol version is not supported"
    http_status = 400
    grpc_status = "FAILED_PRECONDITION"
    grpc_status_v1_0_0 = "UNIMPLEMENTED"


# Implementation-defined errors in the A2A range ------------------------------


class ServerBusyError(A2AError):
    """The server is at capacity; the call may succeed later (``retryable``)."""

    code = -32050
    reason = "SERVER_BUSY"
    default_message = "The server is at capacity; retry later"
    http_status = 503
    grpc_status = "UNAVAILABLE"


class AuthenticationRequiredError(A2AError):
    """The request carries no valid credentials (HTTP 401)."""

    code = -32051
    reason = "UNAUTHENTICATED"
    default_message = "Authentication required"
    http_status = 401
    grpc_status = "UNAUTHENTICATED"


class PermissionDeniedError(A2AError):
    """The caller is known but may not do this (HTTP 403)."""

    code = -32052
    reason = "PERMISSION_DENIED"
    default_message = "Permission denied"
    http_status = 403
    grpc_status = "PERMISSION_DENIED"


_ALL: tuple[type[A2AError], ...] = (
    JSONParseError,
    InvalidRequestError,
    MethodNotFoundError,
    InvalidParamsError,
    InternalError,
    TaskNotFoundError,
    TaskNotCancelableError,
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
    ContentTypeNotSupportedError,
    InvalidAgentResponseError,
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    VersionNotSupportedError,
    ServerBusyError,
    AuthenticationRequiredError,
    PermissionDeniedError,
)
_BY_CODE: dict[int, type[A2AError]] = {cls.code: cls for cls in _ALL}
_BY_REASON: dict[str, type[A2AError]] = {
    cls.reason: cls for cls in (*_ALL, PayloadTooLargeError, UnrepresentableError)
}


def error_class_for_code(code: int) -> type[A2AError]:
    """The error class for a JSON-RPC code (``A2AError`` itself when unknown)."""
    return _BY_CODE.get(code, A2AError)


def error_class_for_reason(reason: str) -> type[A2AError] | None:
    """The error class for a google.rpc.ErrorInfo reason, if it is one of ours."""
    return _BY_REASON.get(reason)


def all_error_classes() -> tuple[type[A2AError], ...]:
    """Every concrete error class, for tests and documentation."""
    return (*_ALL, PayloadTooLargeError, UnrepresentableError)
