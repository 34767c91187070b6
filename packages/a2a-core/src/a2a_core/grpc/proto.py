"""The ``lf.a2a.v1`` messages, and conversion between them and the internal model.

The messages live in a private descriptor pool built from our compiled
``a2a.proto``, so they never collide with another library's copy of the
same contract in the process (the official SDK registers ``lf.a2a.v1`` in
the default pool). Conversion goes through ProtoJSON, which the 1.0 codec
already speaks: model -> ProtoJSON value -> ``json_format.ParseDict`` ->
message, and back with ``MessageToDict``. One path, the same validation as
the HTTP bindings; the binary encoding is protobuf's own.

Errors travel as a ``google.rpc.Status`` in the ``grpc-status-details-bin``
trailer: an ErrorInfo (reason, domain ``a2a-protocol.org``) and, when the
error has data, a ``google.protobuf.Struct`` holding it, exactly the details
the HTTP bindings send as JSON.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import pydantic_core
from google.protobuf import (
    descriptor_pb2,
    descriptor_pool,
    empty_pb2,
    json_format,
    message_factory,
    struct_pb2,
    timestamp_pb2,
)
from google.protobuf.message import DecodeError
from google.protobuf.message import Message as ProtoMessage
from google.rpc import (  # pyright: ignore[reportMissingTypeStubs]
    error_details_pb2,  # pyright: ignore[reportUnknownVariableType]
    status_pb2,  # pyright: ignore[reportUnknownVariableType]
)

from ..errors import A2AError, InvalidAgentResponseError, InvalidParamsError
from ..wire._json import DecodeLimits, check_depth
from ..wire.errors_wire import error_details, error_from_details
from ..wire.operations import Operation
from ._descriptor import FILE_DESCRIPTOR_SET

__all__ = [
    "GRPC_STATUS_CODES",
    "PACKAGE",
    "SERVICE",
    "STATUS_DETAILS_KEY",
    "decode_message",
    "decode_status",
    "encode_status",
    "encode_value",
    "request_class",
    "response_class",
]

PACKAGE = "lf.a2a.v1"
SERVICE = f"{PACKAGE}.A2AService"
STATUS_DETAILS_KEY = "grpc-status-details-bin"

GRPC_STATUS_CODES: dict[str, int] = {
    "OK": 0,
    "CANCELLED": 1,
    "UNKNOWN": 2,
    "INVALID_ARGUMENT": 3,
    "DEADLINE_EXCEEDED": 4,
    "NOT_FOUND": 5,
    "ALREADY_EXISTS": 6,
    "PERMISSION_DENIED": 7,
    "RESOURCE_EXHAUSTED": 8,
    "FAILED_PRECONDITION": 9,
    "ABORTED": 10,
    "OUT_OF_RANGE": 11,
    "UNIMPLEMENTED": 12,
    "INTERNAL": 13,
    "UNAVAILABLE": 14,
    "DATA_LOSS": 15,
    "UNAUTHENTICATED": 16,
}
"""``google.rpc.Code`` numbers by name (the names ``A2AError.grpc_status`` uses)."""

# Imported for their registration in the default pool: google.rpc.Status, and
# google.rpc.ErrorInfo for unpacking the Any in its details.
_ = (error_details_pb2, status_pb2)
_Status = message_factory.GetMessageClass(
    descriptor_pool.Default().FindMessageTypeByName("google.rpc.Status")
)


def _build_pool() -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    for module in (empty_pb2, struct_pb2, timestamp_pb2):
        pool.AddSerializedFile(module.DESCRIPTOR.serialized_pb)
    files = descriptor_pb2.FileDescriptorSet.FromString(base64.b64decode(FILE_DESCRIPTOR_SET))
    for file in files.file:
        pool.Add(file)
    return pool


POOL = _build_pool()
_SERVICE = POOL.FindServiceByName(SERVICE)


def _class(full_name: str) -> type[ProtoMessage]:
    return message_factory.GetMessageClass(POOL.FindMessageTypeByName(full_name))


_REQUESTS: dict[Operation, type[ProtoMessage]] = {}
_RESPONSES: dict[Operation, type[ProtoMessage]] = {}
for _op in Operation:
    _method = _SERVICE.methods_by_name[_op.value]
    _REQUESTS[_op] = _class(_method.input_type.full_name)
    _RESPONSES[_op] = _class(_method.output_type.full_name)


def request_class(op: Operation) -> type[ProtoMessage]:
    """The request message of ``op``."""
    return _REQUESTS[op]


def response_class(op: Operation) -> type[ProtoMessage]:
    """The response message of ``op`` (streams: of each streamed item)."""
    return _RESPONSES[op]


def encode_value(cls: type[ProtoMessage], value: Any) -> ProtoMessage:
    """A ProtoJSON value (plain JSON or our models) -> the message ``cls``.

    Fields the proto does not have (the 0.3 additions of a hybrid card) are
    dropped; values the proto cannot hold raise ``json_format.ParseError``.
    """
    plain = pydantic_core.to_jsonable_python(value, by_alias=True)
    return json_format.ParseDict(plain, cls(), ignore_unknown_fields=True)


def decode_message(message: ProtoMessage, limits: DecodeLimits | None = None) -> dict[str, Any]:
    """A message -> its ProtoJSON object (camelCase, enum names), nesting bounded by ``limits``."""
    value = json_format.MessageToDict(message, preserving_proto_field_name=False)
    if limits is not None:
        check_depth(value, limits.max_depth)
    return value


def parse(cls: type[ProtoMessage], data: bytes) -> ProtoMessage:
    """Untrusted bytes -> a message; garbage is InvalidParamsError."""
    try:
        return cls.FromString(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise InvalidParamsError(f"Invalid protobuf payload: {type(exc).__name__}") from None


def parse_response(cls: type[ProtoMessage], data: bytes) -> ProtoMessage:
    """The agent's bytes -> a message; garbage is InvalidAgentResponseError."""
    try:
        return cls.FromString(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise InvalidAgentResponseError(
            f"The agent sent an invalid protobuf payload: {type(exc).__name__}"
        ) from None


def encode_status(code: int, error: A2AError) -> bytes:
    """The serialized ``google.rpc.Status`` of ``error`` (for ``grpc-status-details-bin``)."""
    status = json_format.ParseDict(
        {"code": code, "message": error.message, "details": error_details(error)},
        _Status(),
    )
    return status.SerializeToString()


def decode_status(
    code_name: str, message: str | None, trailers: Mapping[str, str | bytes] | None
) -> A2AError:
    """A failed call's status (and its rich details, when sent) -> the typed error."""
    raw = trailers.get(STATUS_DETAILS_KEY) if trailers is not None else None
    if isinstance(raw, bytes):
        try:
            status = json_format.MessageToDict(_Status.FromString(raw))
        except (DecodeError, json_format.Error, RuntimeError, ValueError, TypeError):
            status = {}
        details: Any = status.get("details")
        if details:
            return error_from_details(None, status.get("message") or message, details)
    return _by_code(code_name, message)


def _by_code(code_name: str, message: str | None) -> A2AError:
    """A bare gRPC status (no ErrorInfo) -> the closest typed error."""
    from ..errors import (
        AuthenticationRequiredError,
        InternalError,
        InvalidParamsError,
        MethodNotFoundError,
        PayloadTooLargeError,
        PermissionDeniedError,
        ServerBusyError,
        TaskNotFoundError,
        UnsupportedOperationError,
    )

    if code_name == "RESOURCE_EXHAUSTED" and message and "concurrent rpc limit" in message.lower():
        # grpc's own refusal past the server's max_concurrent_rpcs: busy, not too large.
        return ServerBusyError(
            "The agent is serving as many calls as it allows; retry later",
            data={"reason": "concurrent_rpc_limit", "retryable": True},
        )
    cls: type[A2AError] = {
        "INVALID_ARGUMENT": InvalidParamsError,
        "NOT_FOUND": TaskNotFoundError,
        "PERMISSION_DENIED": PermissionDeniedError,
        "UNAUTHENTICATED": AuthenticationRequiredError,
        "RESOURCE_EXHAUSTED": PayloadTooLargeError,
        "FAILED_PRECONDITION": UnsupportedOperationError,
        "UNIMPLEMENTED": MethodNotFoundError,
        "UNAVAILABLE": ServerBusyError,
    }.get(code_name, InternalError)
    return cls(message[:2000] if message else None)
