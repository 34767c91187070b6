"""Errors keep their identity across the wire: 1.0 JSON-RPC, 0.3 JSON-RPC, REST Status."""

from __future__ import annotations

from typing import Any

import pytest
from a2a_core import errors as e
from a2a_core.errors import HttpStatusMapping
from a2a_core.wire import V10Codec, dumps, loads
from a2a_core.wire.errors_wire import (
    ERROR_INFO_TYPE,
    STRUCT_TYPE,
    decode_jsonrpc_error,
    decode_rest_error,
    encode_jsonrpc_error_v03,
    encode_jsonrpc_error_v10,
    encode_rest_error_v03,
    encode_rest_error_v10,
)
from google.protobuf import json_format, struct_pb2
from google.rpc import error_details_pb2, status_pb2
from hypothesis import given, settings
from hypothesis import strategies as st

CLASSES = list(e.all_error_classes())
IDS = [cls.__name__ for cls in CLASSES]
# Refinements share their parent's JSON-RPC code: only a reason can tell them apart.
REFINEMENTS = {
    e.PayloadTooLargeError: e.InvalidRequestError,
    e.UnrepresentableError: e.InternalError,
}
_ = (error_details_pb2, struct_pb2)  # registers ErrorInfo and Struct for Any resolution

DATA: list[dict[str, Any] | None] = [
    None,
    {"taskId": "t-1"},
    {"reason": "background_capacity_exhausted", "retryable": True, "retryAfterMs": 250},
    {"nested": {"list": [1, 2.5, None, "x", {"y": False}]}, "ünï": "😀"},
]


def _wire(value: Any) -> Any:
    return loads(dumps(value))


def _errors() -> list[e.A2AError]:
    made: list[e.A2AError] = []
    for cls in CLASSES:
        made.append(cls())
        for data in DATA[1:]:
            made.append(cls("custom message ✓", data=data))
    return made


ERRORS = _errors()
ERROR_IDS = [f"{type(x).__name__}-{i % (len(DATA))}" for i, x in enumerate(ERRORS)]


def _same(decoded: e.A2AError, original: e.A2AError) -> None:
    assert type(decoded) is type(original)
    assert decoded.code == original.code
    assert decoded.message == original.message
    assert decoded.data == original.data
    assert decoded == original


# 1.0 JSON-RPC -------------------------------------------------------------------


@pytest.mark.parametrize("error", ERRORS, ids=ERROR_IDS)
def test_jsonrpc_v10_roundtrip(error: e.A2AError) -> None:
    wire = _wire(encode_jsonrpc_error_v10(error))
    _same(decode_jsonrpc_error(wire), error)
    codec = V10Codec()
    _same(codec.decode_error(_wire(codec.encode_error(error))), error)


@pytest.mark.parametrize("error", ERRORS, ids=ERROR_IDS)
def test_jsonrpc_v10_shape(error: e.A2AError) -> None:
    wire = _wire(encode_jsonrpc_error_v10(error))
    assert wire["code"] == error.code
    assert wire["message"] == error.message
    info, *rest = wire["data"]
    assert info["@type"] == ERROR_INFO_TYPE
    assert info["reason"] == error.reason
    assert info["domain"] == "a2a-protocol.org"
    if error.data:
        assert set(info["metadata"]) == set(error.data)
        assert all(isinstance(v, str) for v in info["metadata"].values())
        assert rest == [{"@type": STRUCT_TYPE, "value": error.data}]
    else:
        assert "metadata" not in info
        assert rest == []


@pytest.mark.parametrize("error", ERRORS, ids=ERROR_IDS)
def test_v10_details_are_valid_google_rpc_any(error: e.A2AError) -> None:
    """The details parse as google.rpc.Status details with the official protos."""
    wire = _wire(encode_jsonrpc_error_v10(error))
    status = json_format.ParseDict(
        {"code": 3, "message": wire["message"], "details": wire["data"]}, status_pb2.Status()
    )
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert info.reason == error.reason
    assert info.domain == "a2a-protocol.org"


def test_custom_code_survives_jsonrpc_v10() -> None:
    """An error outside the known set keeps its code (its ErrorInfo reason says INTERNAL)."""
    error = e.A2AError("custom", code=-32042, data={"a": 1})
    _same(decode_jsonrpc_error(_wire(encode_jsonrpc_error_v10(error))), error)


# 0.3 JSON-RPC ----------------------------------------------------------------------


@pytest.mark.parametrize("error", ERRORS, ids=ERROR_IDS)
def test_jsonrpc_v03_roundtrip(error: e.A2AError) -> None:
    wire = _wire(encode_jsonrpc_error_v03(error))
    assert wire["code"] == error.code
    assert wire.get("data") == (error.data or None)
    decoded = decode_jsonrpc_error(wire)
    parent = REFINEMENTS.get(type(error))
    if parent is None:
        _same(decoded, error)
    else:  # 0.3 carries no reason: the refinement decodes as its parent, all else equal
        assert type(decoded) is parent
        assert (decoded.code, decoded.message, decoded.data) == (
            error.code,
            error.message,
            error.data,
        )


def test_custom_code_survives_jsonrpc_v03() -> None:
    error = e.A2AError("custom", code=-32042, data={"a": 1})
    _same(decode_jsonrpc_error(_wire(encode_jsonrpc_error_v03(error))), error)


# REST -------------------------------------------------------------------------------


@pytest.mark.parametrize("mapping", list(HttpStatusMapping))
@pytest.mark.parametrize("error", ERRORS, ids=ERROR_IDS)
def test_rest_v10_roundtrip(error: e.A2AError, mapping: HttpStatusMapping) -> None:
    status, body = encode_rest_error_v10(error, mapping)
    body = _wire(body)
    assert status == error.http_status_for(mapping)
    assert set(body) == {"error"}
    inner = body["error"]
    assert inner["code"] == status
    assert inner["status"] == error.grpc_status_for(mapping)
    assert inner["message"] == error.message
    assert inner["details"][0]["@type"] == ERROR_INFO_TYPE  # MUST for HTTP+JSON
    _same(decode_rest_error(status, body), error)
    parsed = json_format.ParseDict(
        {"code": 3, "message": inner["message"], "details": inner["details"]}, status_pb2.Status()
    )
    assert len(parsed.details) == len(inner["details"])


@pytest.mark.parametrize(
    ("error", "v101", "v100"),
    [
        (e.TaskNotCancelableError(), 400, 409),
        (e.ContentTypeNotSupportedError(), 400, 415),
        (e.InvalidAgentResponseError(), 500, 502),
        (e.TaskNotFoundError(), 404, 404),
    ],
)
def test_rest_status_follows_mapping(error: e.A2AError, v101: int, v100: int) -> None:
    assert encode_rest_error_v10(error)[0] == v101
    assert encode_rest_error_v10(error, HttpStatusMapping.V1_0_1)[0] == v101
    assert encode_rest_error_v10(error, HttpStatusMapping.V1_0_0)[0] == v100


@pytest.mark.parametrize("error", ERRORS, ids=ERROR_IDS)
def test_rest_v03_roundtrip(error: e.A2AError) -> None:
    status, body = encode_rest_error_v03(error)
    expected = 422 if error.code == -32602 else error.http_status_for(HttpStatusMapping.V1_0_0)
    assert status == expected
    decoded = decode_rest_error(status, _wire(body))
    parent = REFINEMENTS.get(type(error))
    assert type(decoded) is (parent or type(error))
    assert (decoded.code, decoded.message, decoded.data) == (error.code, error.message, error.data)


# foreign and malformed input ------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "cls", "data"),
    [
        ({"code": -32001, "message": "gone"}, e.TaskNotFoundError, None),
        (
            {
                "code": -32001,
                "message": "m",
                "data": [
                    {"@type": ERROR_INFO_TYPE, "reason": "SOMETHING_NEW", "metadata": {"a": "1"}}
                ],
            },
            e.TaskNotFoundError,
            {"a": "1"},
        ),
        (  # the code is authoritative: a reason of another code does not change the class
            {
                "code": -32603,
                "message": "m",
                "data": [{"@type": ERROR_INFO_TYPE, "reason": "TASK_NOT_FOUND"}],
            },
            e.InternalError,
            None,
        ),
        (  # a reason refines its own code
            {
                "code": -32600,
                "message": "m",
                "data": [{"@type": ERROR_INFO_TYPE, "reason": "PAYLOAD_TOO_LARGE"}],
            },
            e.PayloadTooLargeError,
            None,
        ),
        (  # a reason alone (no usable code) still identifies the error
            {
                "message": "m",
                "data": [{"@type": ERROR_INFO_TYPE, "reason": "TASK_NOT_FOUND"}],
            },
            e.TaskNotFoundError,
            None,
        ),
        (
            {"code": -32002, "message": "m", "data": {"taskId": "t"}},
            e.TaskNotCancelableError,
            {"taskId": "t"},
        ),
        ({"code": -32002, "message": "m", "data": "free text"}, e.TaskNotCancelableError, None),
        ({"code": -32002, "message": "m", "data": [1, "x", None]}, e.TaskNotCancelableError, None),
        ({"code": -31000, "message": "m"}, e.A2AError, None),
        ({"code": True, "message": "m"}, e.A2AError, None),
        ({"message": "no code"}, e.A2AError, None),
        ("not an object", e.A2AError, None),
        (None, e.A2AError, None),
    ],
)
def test_decode_foreign_jsonrpc_errors(value: Any, cls: type[e.A2AError], data: Any) -> None:
    decoded = decode_jsonrpc_error(value)
    assert type(decoded) is cls
    assert decoded.data == data
    assert isinstance(decoded.message, str)
    assert decoded.message


def test_decode_keeps_unknown_codes() -> None:
    decoded = decode_jsonrpc_error({"code": -31000, "message": "m"})
    assert decoded.code == -31000


def test_decoded_message_is_bounded() -> None:
    decoded = decode_jsonrpc_error({"code": -32603, "message": "x" * 100_000})
    assert len(decoded.message) <= 2000


@pytest.mark.parametrize(
    ("status", "body", "cls"),
    [
        (404, {"error": {"code": 404, "message": "nope"}}, e.TaskNotFoundError),
        (401, {"error": {"code": 401, "message": "who"}}, e.AuthenticationRequiredError),
        (403, {"message": "no"}, e.PermissionDeniedError),
        (413, None, e.PayloadTooLargeError),
        (422, {"message": "bad"}, e.InvalidParamsError),
        (502, "<html>bad gateway</html>", e.InternalError),
        (409, {"code": -32002, "message": "0.3 style"}, e.TaskNotCancelableError),
    ],
)
def test_decode_foreign_rest_errors(status: int, body: Any, cls: type[e.A2AError]) -> None:
    assert type(decode_rest_error(status, body)) is cls


@settings(max_examples=100)
@given(
    cls=st.sampled_from(CLASSES),
    message=st.text(min_size=1, max_size=200),
    data=st.one_of(
        st.none(),
        st.dictionaries(
            st.text(max_size=8),
            st.recursive(
                st.none()
                | st.booleans()
                | st.integers(-(2**53), 2**53)
                | st.floats(allow_nan=False, allow_infinity=False)
                | st.text(max_size=8),
                lambda c: (
                    st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3)
                ),
                max_leaves=8,
            ),
            min_size=1,
            max_size=4,
        ),
    ),
)
def test_roundtrip_property(
    cls: type[e.A2AError], message: str, data: dict[str, Any] | None
) -> None:
    error = cls(message, data=data)
    _same(decode_jsonrpc_error(_wire(encode_jsonrpc_error_v10(error))), error)
    for mapping in HttpStatusMapping:
        status, body = encode_rest_error_v10(error, mapping)
        _same(decode_rest_error(status, _wire(body)), error)
    if cls not in REFINEMENTS:
        _same(decode_jsonrpc_error(_wire(encode_jsonrpc_error_v03(error))), error)
