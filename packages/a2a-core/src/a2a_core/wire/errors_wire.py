"""Error payloads on the wire, in both versions and both bindings.

- 1.0 JSON-RPC: ``{"code", "message", "data": [ErrorInfo, Struct?]}``, where
  ErrorInfo carries the reason and domain, and structured details ride in a
  ``google.protobuf.Struct`` entry so they survive the trip unchanged.
- 1.0 HTTP+JSON: a ``google.rpc.Status`` object ``{"error": {...}}``.
- 0.3 JSON-RPC: ``{"code", "message", "data"}`` with ``data`` the details.
"""

from __future__ import annotations

from typing import Any, cast

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
    "error_details",
    "error_from_details",
]

ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
STRUCT_TYPE = "type.googleapis.com/google.protobuf.Struct"
_MAX_MESSAGE = 2000


def _error_info(error: A2AError) -> dict[str, Any]:
    info: dict[str, Any] = {
        "@type": ERROR_INFO_TYPE,
        "reason": error.reason,
        "domain": ERROR_DOMAIN,
    }
    if error.data:
        info["metadata"] = {str(k): _stringify(v) for k, v in error.data.items()}
    return info


def _stringify(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def error_details(error: A2AError) -> list[dict[str, Any]]:
    """The 1.0 ``details`` of ``error``: an ErrorInfo, and a Struct of its data when it has any."""
    details = [_error_info(error)]
    if error.data:
        details.append({"@type": STRUCT_TYPE, "value": error.data})
    return details


def encode_jsonrpc_error_v10(error: A2AError) -> dict[str, Any]:
    """The 1.0 JSON-RPC error object."""
    return {"code": error.code, "message": error.message, "data": error_details(error)}


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
            "details": error_details(error),
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


def _as_dict(value: Any) -> dict[str, Any] | None:
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def error_from_details(code: int | None, message: Any, details: Any) -> A2AError:
    """The typed error of a (JSON-RPC code, message, 1.0 details) triple; ``code`` may be None."""
    reason: str | None = None
    data: dict[str, Any] | None = None
    if isinstance(details, list):
        for raw in cast("list[Any]", details):
            item = _as_dict(raw)
            if item is None:
                continue
            kind = item.get("@type")
            if kind == ERROR_INFO_TYPE and isinstance(item.get("reason"), str):
                reason = str(item["reason"])
                metadata = _as_dict(item.get("metadata"))
                if data is None and metadata is not None:
                    data = dict(metadata)
            elif kind == STRUCT_TYPE:
                value = _as_dict(item.get("value"))
                if value is not None:
                    data = dict(value)
    else:
        as_dict = _as_dict(details)
        if as_dict is not None:
            data = dict(as_dict)
    cls = error_class_for_reason(reason) if reason else None
    if cls is not None and code is not None and cls.code != code:
        cls = None  # the code is authoritative; the reason only refines it
    if cls is None:
        cls = error_class_for_code(code) if code is not None else A2AError
    text = str(message)[:_MAX_MESSAGE] if message is not None else None
    if cls is A2AError and code is not None:
        return A2AError(text, data=data, code=code)
    return cls(text, data=data)


def decode_jsonrpc_error(value: Any) -> A2AError:
    """A JSON-RPC error object of either version -> the typed error."""
    obj = _as_dict(value)
    if obj is None:
        return A2AError("Malformed error object from peer")
    code = obj.get("code")
    return error_from_details(
        code if isinstance(code, int) and not isinstance(code, bool) else None,
        obj.get("message"),
        obj.get("data"),
    )


def decode_rest_error(status: int, value: Any) -> A2AError:
    """An HTTP+JSON error body of either version -> the typed error."""
    obj = _as_dict(value)
    if obj is None:
        return _by_status(status, None)
    inner = _as_dict(obj.get("error"))
    if inner is not None:
        if inner.get("details"):
            return error_from_details(None, inner.get("message"), inner.get("details"))
        return _by_status(status, inner.get("message"))
    if isinstance(obj.get("code"), int):
        return decode_jsonrpc_error(obj)
    return _by_status(status, obj.get("message"))


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
