"""Every error class carries the code, reason, HTTP and gRPC status of the spec (§5)."""

from __future__ import annotations

import pytest
from a2a_core import errors as e
from a2a_core.errors import HttpStatusMapping

V101 = HttpStatusMapping.V1_0_1
V100 = HttpStatusMapping.V1_0_0

# class, JSON-RPC code, reason, (HTTP, gRPC) under 1.0.1, (HTTP, gRPC) under 1.0.0
SPEC: list[tuple[type[e.A2AError], int, str, tuple[int, str], tuple[int, str]]] = [
    # A2A errors, reference/a2a-spec.md §5.1
    (e.TaskNotFoundError, -32001, "TASK_NOT_FOUND", (404, "NOT_FOUND"), (404, "NOT_FOUND")),
    (
        e.TaskNotCancelableError,
        -32002,
        "TASK_NOT_CANCELABLE",
        (400, "FAILED_PRECONDITION"),
        (409, "FAILED_PRECONDITION"),
    ),
    (
        e.PushNotificationNotSupportedError,
        -32003,
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
        (400, "FAILED_PRECONDITION"),
        (400, "UNIMPLEMENTED"),
    ),
    (
        e.UnsupportedOperationError,
        -32004,
        "UNSUPPORTED_OPERATION",
        (400, "FAILED_PRECONDITION"),
        (400, "UNIMPLEMENTED"),
    ),
    (
        e.ContentTypeNotSupportedError,
        -32005,
        "CONTENT_TYPE_NOT_SUPPORTED",
        (400, "INVALID_ARGUMENT"),
        (415, "INVALID_ARGUMENT"),
    ),
    (
        e.InvalidAgentResponseError,
        -32006,
        "INVALID_AGENT_RESPONSE",
        (500, "INTERNAL"),
        (502, "INTERNAL"),
    ),
    (
        e.ExtendedAgentCardNotConfiguredError,
        -32007,
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
        (400, "FAILED_PRECONDITION"),
        (400, "FAILED_PRECONDITION"),
    ),
    (
        e.ExtensionSupportRequiredError,
        -32008,
        "EXTENSION_SUPPORT_REQUIRED",
        (400, "FAILED_PRECONDITION"),
        (400, "FAILED_PRECONDITION"),
    ),
    (
        e.VersionNotSupportedError,
        -32009,
        "VERSION_NOT_SUPPORTED",
        (400, "FAILED_PRECONDITION"),
        (400, "UNIMPLEMENTED"),
    ),
    # JSON-RPC standard errors; validation is 400/INVALID_ARGUMENT, system 500/INTERNAL (§5.1)
    (e.JSONParseError, -32700, "PARSE_ERROR", (400, "INVALID_ARGUMENT"), (400, "INVALID_ARGUMENT")),
    (
        e.InvalidRequestError,
        -32600,
        "INVALID_REQUEST",
        (400, "INVALID_ARGUMENT"),
        (400, "INVALID_ARGUMENT"),
    ),
    (
        e.MethodNotFoundError,
        -32601,
        "METHOD_NOT_FOUND",
        (404, "UNIMPLEMENTED"),
        (404, "UNIMPLEMENTED"),
    ),
    (
        e.InvalidParamsError,
        -32602,
        "INVALID_PARAMS",
        (400, "INVALID_ARGUMENT"),
        (400, "INVALID_ARGUMENT"),
    ),
    (e.InternalError, -32603, "INTERNAL", (500, "INTERNAL"), (500, "INTERNAL")),
    # Other categories (§5.1: authentication, authorization, system) with our custom codes
    (
        e.AuthenticationRequiredError,
        -32051,
        "UNAUTHENTICATED",
        (401, "UNAUTHENTICATED"),
        (401, "UNAUTHENTICATED"),
    ),
    (
        e.PermissionDeniedError,
        -32052,
        "PERMISSION_DENIED",
        (403, "PERMISSION_DENIED"),
        (403, "PERMISSION_DENIED"),
    ),
    (e.ServerBusyError, -32050, "SERVER_BUSY", (503, "UNAVAILABLE"), (503, "UNAVAILABLE")),
    # Refinements that keep their parent's JSON-RPC code
    (
        e.PayloadTooLargeError,
        -32600,
        "PAYLOAD_TOO_LARGE",
        (413, "RESOURCE_EXHAUSTED"),
        (413, "RESOURCE_EXHAUSTED"),
    ),
    (
        e.UnrepresentableError,
        -32603,
        "UNREPRESENTABLE_IN_VERSION",
        (500, "INTERNAL"),
        (500, "INTERNAL"),
    ),
]
IDS = [row[0].__name__ for row in SPEC]


def test_table_covers_every_error_class() -> None:
    assert {row[0] for row in SPEC} == set(e.all_error_classes())
    assert len(e.all_error_classes()) == len(set(e.all_error_classes()))


@pytest.mark.parametrize(("cls", "code", "reason", "v101", "v100"), SPEC, ids=IDS)
def test_error_identity(
    cls: type[e.A2AError], code: int, reason: str, v101: tuple[int, str], v100: tuple[int, str]
) -> None:
    error = cls()
    assert isinstance(error, e.A2AError)
    assert error.code == code
    assert error.reason == reason
    assert (error.http_status, error.grpc_status) == v101
    assert (error.http_status_for(), error.grpc_status_for()) == v101
    assert (error.http_status_for(V101), error.grpc_status_for(V101)) == v101
    assert (error.http_status_for(V100), error.grpc_status_for(V100)) == v100
    assert error.message == cls.default_message
    assert error.message  # never empty
    assert str(error) == error.message


@pytest.mark.parametrize(("cls", "code", "reason", "v101", "v100"), SPEC, ids=IDS)
def test_lookup_by_code_and_reason(
    cls: type[e.A2AError], code: int, reason: str, v101: tuple[int, str], v100: tuple[int, str]
) -> None:
    assert e.error_class_for_reason(reason) is cls
    by_code = e.error_class_for_code(code)
    # A refinement shares its parent's code; the code alone finds the parent.
    assert by_code is cls or (issubclass(cls, by_code) and by_code.code == code)


def test_a2a_codes_are_in_the_a2a_range() -> None:
    standard = {-32700, -32600, -32601, -32602, -32603}
    for cls in e.all_error_classes():
        assert cls.code in standard or -32099 <= cls.code <= -32001, cls


def test_unknown_code_and_reason() -> None:
    assert e.error_class_for_code(-32099) is e.A2AError
    assert e.error_class_for_code(0) is e.A2AError
    assert e.error_class_for_reason("NOT_A_REASON") is None
    custom = e.A2AError("odd", code=-32077)
    assert custom.code == -32077
    assert e.A2AError.code == -32603  # the instance override does not leak into the class


def test_message_data_and_equality() -> None:
    error = e.TaskNotFoundError("no task t-1", data={"taskId": "t-1"})
    assert error.message == "no task t-1"
    assert error.data == {"taskId": "t-1"}
    assert error == e.TaskNotFoundError("no task t-1", data={"taskId": "t-1"})
    assert error != e.TaskNotFoundError("no task t-1")
    assert error != e.TaskNotFoundError("other", data={"taskId": "t-1"})
    assert error != e.TaskNotCancelableError("no task t-1", data={"taskId": "t-1"})
    assert hash(error) == hash(e.TaskNotFoundError("no task t-1", data={"other": 1}))
    assert "taskId" in repr(error)
    assert repr(e.InternalError()) == "InternalError('Internal error')"


def test_retryable() -> None:
    assert e.ServerBusyError(data={"retryable": True}).retryable
    assert not e.ServerBusyError().retryable
    assert not e.TaskNotFoundError(data={"retryable": False}).retryable


def test_errors_are_exceptions() -> None:
    with pytest.raises(e.InvalidRequestError):
        raise e.PayloadTooLargeError()
    with pytest.raises(e.InternalError):
        raise e.UnrepresentableError()
