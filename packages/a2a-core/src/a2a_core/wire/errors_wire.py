"""Error payloads on the wire, in both versions and both bindings.

- 1.0 JSON-RPC: ``{"code", "message", "data": [ErrorInfo, Struct?]}``, where
  ErrorInfo carries the reason and domain, and structured details ride in a
  ``google.protobuf.Struct`` entry so they survive the trip unchanged.
- 1.0 HTTP+JSON: a ``google.rpc.Status`` object ``{"error": {...}}``.
- 0.3 JSON-RPC: ``{"code", "message", "data"}`` with ``data`` the details.
"""

from __future__ import annotations

from typing import Any

from ..errors import (
    ERROR_DOMAIN,
    A2AError,
    HttpStatusMapping,
    error_class_for_code,
    error_class_for_reason,
)

__all__ = [
    "ERROR_INFO_TYPE",
    "STRUCT_TYPE",
    "decode_jsonrpc_error",
    "decode_rest_error",
    "encode_jsonrpc_error_v03",
    "encode_jsonrpc_error_v10",
    "encode_rest_error_v03",
    "encode_rest_error_v10",
]

ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
STRUCT_TYPE = "type.googleapis.com/google.protobuf.Struct"
_MAX_MESSAGE = 2000


def _error_info(error: A2AError) -> dict[str, Any]:
    info: dict[str, Any] = {"@type": ERROR_INFO_TYPE, "reason": error.reason, "domain": ERROR_DOMAIN}
    if error.data:
        info["metadata"] = {str(k): _stringify(v) for k, v in error.data.items()}
    return info


def _stringify(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _details(error: A2AError) -> list[dict[str, Any]]:
    details = [_error_info(error)]
    if error.data:
        details.append({"@type": STRUCT_TYPE, "value": error.data})
    return details


def encode_jsonrpc_error_v10(error: A2AError) -> dict[str, Any]:
    """The 1.0 JSON-RPC error object."""
    return {"code": error.code, "message": error.message, "data": _details(error)}


def encode_jsonrpc_error_v03(error: A2AError) -> dict[str, Any]:
    """The 0.3 JSON-RPC error object (``data`` is free-form: our details)."""
    obj: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data:
        obj["data"] = error.data
    return obj


def encode_rest_error_v10(
    error: A2AError, mapping: HttpStatusMapping = HttpStatusMapping.V1_0_1
) -> tuple[int, dict[str, Any]]:
    """(HTTP status, google.rpc.Status body) for the 1.0 HTTP+JSON binding."""
    status = error.http_status_for(mapping)
    body = {
        "error": {
            "code": status,
            "status": error.grpc_status_for(mapping),
            "message": error.message,
            "details": _details(error),
        }
    }
    return status, body


def encode_rest_error_v03(error: A2AError) -> tuple[int, dict[str, Any]]:
    """(HTTP status, body) for the 0.3 HTTP+JSON binding, as 0.3 SDKs answered."""
    status = error.http_status_for(HttpStatusMapping.V1_0_0)
    if error.code == -32602:
        status = 422
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data:
        body["data"] = error.data
    return status, body


def _from_parts(code: int | None, message: Any, details: Any) -> A2AError:
    reason: str | None = None
    data: dict[str, Any] | None = None
    if isinstance(details, list):
        for item in details:  # pyright: ignore[reportUnknownVariableType]
            if not isinstance(item, dict):
                continue
            kind = item.get("@type")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            if kind == ERROR_INFO_TYPE and isinstance(item.get("reason"), str):  # pyright: ignore[reportUnknownMemberType]
                reason = item["reason"]
                if data is None and isinstance(item.get("metadata"), dict):  # pyright: ignore[reportUnknownMemberType]
                    data = dict(item["metadata"])  # pyright: ignore[reportUnknownArgumentType]
            elif kind == STRUCT_TYPE and isinstance(item.get("value"), dict):  # pyright: ignore[reportUnknownMemberType]
                data = dict(item["value"])  # pyright: ignore[reportUnknownArgumentType]
    elif isinstance(details, dict):
        data = dict(details)  # pyright: ignore[reportUnknownArgumentType]
    cls = error_class_for_reason(reason) if reason else None
    if cls is None:
        cls = error_class_for_code(code) if isinstance(code, int) else A2AError
    text = str(message)[:_MAX_MESSAGE] if message is not None else None
    if cls is A2AError and isinstance(code, int):
        return A2AError(text, data=data, code=code)
    return cls(text, data=data)


def decode_jsonrpc_error(value: Any) -> A2AError:
    """A JSON-RPC error object of either version -> the typed error."""
    if not isinstance(value, dict):
        return A2AError("Malformed error object from peer")
    code = value.get("code")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return _from_parts(
        code if isinstance(code, int) and not isinstance(code, bool) else None,
        value.get("message"),  # pyright: ignore[reportUnknownMemberType]
        value.get("data"),  # pyright: ignore[reportUnknownMemberType]
    )


def decode_rest_error(status: int, value: Any) -> A2AError:
    """An HTTP+JSON error body of either version -> the typed error."""
    if isinstance(value, dict) and isinstance(value.get("error"), dict):  # pyright: ignore[reportUnknownMemberType]
        inner: dict[str, Any] = value["error"]
        return _from_parts(None, inner.get("message"), inner.get("details")) if inner.get(
            "details"
        ) else _by_status(status, inner.get("message"))
    if isinstance(value, dict) and isinstance(value.get("code"), int):  # pyright: ignore[reportUnknownMemberType]
        return decode_jsonrpc_error(value)
    message = value.get("message") if isinstance(value, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return _by_status(status, message)


def _by_status(status: int, message: Any) -> A2AError:
    from ..errors import (
        AuthenticationRequiredError,
        InternalError,
        InvalidParamsError,
        MethodNotFoundError,
        PayloadTooLargeError,
        PermissionDeniedError,
        TaskNotFoundError,
    )

    cls: type[A2AError] = {
        400: InvalidParamsError,
        401: AuthenticationRequiredError,
        403: PermissionDeniedError,
        404: TaskNotFoundError,
        405: MethodNotFoundError,
        413: PayloadTooLargeError,
        422: InvalidParamsError,
    }.get(status, InternalError)
    return cls(str(message)[:_MAX_MESSAGE] if message is not None else None)
