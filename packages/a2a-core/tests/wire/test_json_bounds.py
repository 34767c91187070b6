"""Bounded JSON decoding: size, depth and parts limits, and nothing but our errors on garbage."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from a2a_core import types as t
from a2a_core.errors import (
    InvalidRequestError,
    JSONParseError,
    PayloadTooLargeError,
)
from a2a_core.wire import DEFAULT_LIMITS, DecodeLimits, Operation, V10Codec, dumps, loads
from a2a_core.wire._json import may_overflow
from hypothesis import given, settings
from hypothesis import strategies as st

LOADS_ERRORS = (JSONParseError, InvalidRequestError)  # PayloadTooLargeError is a subclass


def _nested(depth: int, opener: str = "[", closer: str = "]") -> bytes:
    return (opener * depth + closer * depth).encode()


def _nested_objects(depth: int) -> bytes:
    return ('{"a":' * depth + "1" + "}" * depth).encode()


# garbage in ---------------------------------------------------------------------

VALID_DOCS = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=5), c, max_size=4),
    max_leaves=20,
).map(lambda v: json.dumps(v).encode())


@st.composite
def corrupted(draw: st.DrawFn) -> bytes:
    """A valid document with bytes flipped, cut or inserted."""
    doc = bytearray(draw(VALID_DOCS))
    for _ in range(draw(st.integers(1, 4))):
        action = draw(st.sampled_from(["flip", "cut", "insert"]))
        pos = draw(st.integers(0, len(doc)))
        if action == "flip" and pos < len(doc):
            doc[pos] = draw(st.integers(0, 255))
        elif action == "cut":
            del doc[pos:]
        else:
            doc[pos:pos] = draw(
                st.sampled_from([b"[", b"{", b'"', b"\\", b"\xff", b"\x00", b"1e999", b","])
            )
    return bytes(doc)


def _check_loads(data: bytes) -> None:
    try:
        value = loads(data)
    except LOADS_ERRORS as exc:
        code = exc.code
        assert code in (-32700, -32600)
        return
    # What we accept, the standard library accepts as the same value.
    assert json.loads(data) == value


@settings(max_examples=300)
@given(st.binary(max_size=200))
def test_loads_arbitrary_bytes(data: bytes) -> None:
    _check_loads(data)


@settings(max_examples=300)
@given(corrupted())
def test_loads_corrupted_json(data: bytes) -> None:
    _check_loads(data)


@settings(max_examples=200)
@given(VALID_DOCS)
def test_loads_valid_json(data: bytes) -> None:
    assert loads(data) == json.loads(data)


@pytest.mark.parametrize("data", [b"NaN", b"Infinity", b"-Infinity", b"[NaN]", b'{"a": Infinity}'])
def test_non_finite_literals_are_parse_errors(data: bytes) -> None:
    with pytest.raises(JSONParseError):
        loads(data)


@pytest.mark.parametrize(
    "data",
    [
        b'{"x": 1e400}',
        b"[-1E+999]",
        b'{"a": [{"b": 12.5e308}]}',
        b"1e309",
        b'{"x": -1' + b"0" * 400 + b".5}",
        b"[2" + b"0" * 308 + b".0]",
        b"[1" + b"0" * 269 + b"E40]",
    ],
)
def test_overflowing_number_is_refused(data: bytes) -> None:
    """A literal that overflows a double would become inf, which JSON cannot carry back."""
    with pytest.raises(JSONParseError):
        loads(data)


@pytest.mark.parametrize(
    "data",
    [
        b"1e308",
        b"[1e-400]",
        b'{"x": 1.5e100}',
        b'"1e400"',
        b"[1" + b"0" * 308 + b".0]",
        b"[1" + b"0" * 400 + b"]",
        b"[1" + b"0" * 269 + b"E30]",
        b'"' + b"9" * 400 + b'"',
    ],
)
def test_large_but_finite_numbers_pass(data: bytes) -> None:
    assert loads(data) == json.loads(data)


NUMBER_LITERALS = st.builds(
    lambda sign, whole, fraction, exponent: (
        sign + whole + (("." + fraction) if fraction else "") + exponent
    ).encode(),
    st.sampled_from(["", "-"]),
    st.just("0")
    | st.builds(
        lambda first, repeated, count: str(first) + str(repeated) * count,
        st.integers(1, 9),
        st.integers(0, 9),
        st.integers(0, 400),
    ),
    st.from_regex(r"[0-9]{0,5}", fullmatch=True),
    st.from_regex(r"([eE][+-]?[0-9]{1,5})?", fullmatch=True),
)


@given(NUMBER_LITERALS)
def test_every_overflowing_literal_is_suspected(literal: bytes) -> None:
    """``may_overflow`` (the cheap pre-check that decides whether to look for inf) never
    misses a literal that overflows a double."""
    value = json.loads(literal)
    if isinstance(value, float) and math.isinf(value):
        assert may_overflow(b'{"n": [' + literal + b"]}")
        with pytest.raises(JSONParseError):
            loads(literal)
    else:
        assert loads(literal) == value


@pytest.mark.parametrize(
    "data",
    [
        b'{"id": "3fa9e1234b7c"}',  # a hex id: "e" and digits, then a letter
        b'{"id": "6a9e123-4567"}',  # a dash after them (signs are dropped)
        b'{"id": "x1e999"}',  # digits up to the closing quote
        b'{"n": 1e99, "m": -2.5E+10}',
    ],
)
def test_ids_and_small_exponents_are_not_suspected(data: bytes) -> None:
    assert not may_overflow(data)
    loads(data)


@pytest.mark.parametrize("data", [b"1e999", b"[1e+0999 ]", b'{"n":-1.5E-1000}', b"[1e400\n]"])
def test_exponents_ending_a_number_are_suspected(data: bytes) -> None:
    assert may_overflow(data)


@pytest.mark.parametrize(
    "data",
    [b"", b" ", b"{", b'{"a":}', b"[1,]", b"\xff\xfe", b'"\\ud800"', b"'a'", b"{a:1}", b"1 2"],
)
def test_malformed_json_is_parse_error(data: bytes) -> None:
    with pytest.raises(JSONParseError) as info:
        loads(data)
    assert info.value.code == -32700
    assert info.value.http_status == 400


@pytest.mark.parametrize(
    "data", [b'{"a": [1]}', bytearray(b'{"a": [1]}'), memoryview(b'{"a": [1]}'), '{"a": [1]}']
)
def test_input_types(data: Any) -> None:
    assert loads(data) == {"a": [1]}


def test_duplicate_keys_last_wins() -> None:
    assert loads(b'{"a": 1, "a": 2}') == {"a": 2}


# size ---------------------------------------------------------------------------


@settings(max_examples=50)
@given(size=st.integers(2, 300), limit=st.integers(1, 300))
def test_size_bound(size: int, limit: int) -> None:
    data = b'"' + b"x" * (size - 2) + b'"'
    assert len(data) == size
    if size > limit:
        with pytest.raises(PayloadTooLargeError) as info:
            loads(data, DecodeLimits(max_bytes=limit))
        assert info.value.http_status == 413
        assert info.value.code == -32600
    else:
        assert loads(data, DecodeLimits(max_bytes=limit)) == "x" * (size - 2)


def test_size_bound_checked_before_parsing() -> None:
    limits = DecodeLimits(max_bytes=10)
    with pytest.raises(PayloadTooLargeError):
        loads(b"{" * 11, limits)  # too big wins over malformed


def test_default_size_bound_is_ten_mib() -> None:
    assert DEFAULT_LIMITS.max_bytes == 10 * 1024 * 1024
    with pytest.raises(PayloadTooLargeError):
        loads(b" " * (DEFAULT_LIMITS.max_bytes + 1))


# depth ----------------------------------------------------------------------------


@settings(max_examples=60)
@given(depth=st.integers(1, 120), limit=st.integers(1, 100), objects=st.booleans())
def test_depth_bound(depth: int, limit: int, objects: bool) -> None:
    data = _nested_objects(depth) if objects else _nested(depth)
    if depth > limit:
        with pytest.raises(InvalidRequestError) as info:
            loads(data, DecodeLimits(max_depth=limit))
        assert type(info.value) is InvalidRequestError
        assert info.value.code == -32600
    else:
        assert loads(data, DecodeLimits(max_depth=limit)) is not None


def test_default_depth_bound() -> None:
    assert loads(_nested(DEFAULT_LIMITS.max_depth)) is not None
    with pytest.raises(InvalidRequestError):
        loads(_nested(DEFAULT_LIMITS.max_depth + 1))


def test_depth_counts_containers_not_brackets_in_strings() -> None:
    data = json.dumps({"text": "[" * 500 + "{" * 500}).encode()
    assert loads(data, DecodeLimits(max_depth=2)) == {"text": "[" * 500 + "{" * 500}


def test_depth_of_mixed_containers() -> None:
    data = b'{"a": [{"b": [[{"c": 1}]]}]}'  # depth 6
    assert loads(data, DecodeLimits(max_depth=6))["a"][0]["b"][0][0]["c"] == 1
    with pytest.raises(InvalidRequestError):
        loads(data, DecodeLimits(max_depth=5))


@pytest.mark.parametrize("depth", [250, 5000, 100_000])
def test_very_deep_nesting_is_a_nesting_error(depth: int) -> None:
    """Past the parser's own recursion limit too, too deep is a nesting error, not bad JSON."""
    with pytest.raises(InvalidRequestError) as info:
        loads(_nested(depth))
    assert type(info.value) is InvalidRequestError
    with pytest.raises(InvalidRequestError):
        loads(_nested_objects(depth))


def test_very_deep_nesting_is_refused_safely() -> None:
    """Whatever the class, a hostile depth ends as one of our 4xx errors, not a crash."""
    for depth in (300, 100_000):
        with pytest.raises(LOADS_ERRORS) as info:
            loads(_nested(depth))
        assert info.value.http_status == 400


@pytest.mark.parametrize("field", ["max_bytes", "max_depth", "max_parts", "max_history"])
@pytest.mark.parametrize("value", [0, -1])
def test_limits_must_be_positive(field: str, value: int) -> None:
    with pytest.raises(ValueError, match=field):
        DecodeLimits(**{field: value})


# parts --------------------------------------------------------------------------


def _send(count: int) -> dict[str, Any]:
    return {
        "message": {
            "messageId": "m",
            "role": "ROLE_USER",
            "parts": [{"text": str(i)} for i in range(count)],
        }
    }


@pytest.mark.parametrize("op", [Operation.SEND_MESSAGE, Operation.SEND_STREAMING_MESSAGE])
@pytest.mark.parametrize("count", [1, 3, 4, 50])
def test_parts_bound(op: Operation, count: int) -> None:
    codec = V10Codec(DecodeLimits(max_parts=3))
    if count > 3:
        with pytest.raises(PayloadTooLargeError) as info:
            codec.decode_request(op, _send(count))
        assert info.value.http_status == 413
    else:
        request = codec.decode_request(op, _send(count))
        assert isinstance(request, t.SendMessageRequest)
        assert len(request.message.parts) == count


def test_default_parts_bound() -> None:
    codec = V10Codec()
    limit = DEFAULT_LIMITS.max_parts
    assert len(codec.decode_request(Operation.SEND_MESSAGE, _send(limit)).message.parts) == limit  # type: ignore[attr-defined]
    with pytest.raises(PayloadTooLargeError):
        codec.decode_request(Operation.SEND_MESSAGE, _send(limit + 1))


def test_bounds_compose_through_bytes() -> None:
    """The usual server path: bounded bytes -> bounded params."""
    limits = DecodeLimits(max_bytes=4096, max_depth=8, max_parts=2)
    codec = V10Codec(limits)
    body = dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": _send(2)})
    request = codec.decode_request(Operation.SEND_MESSAGE, loads(body, limits)["params"])
    assert isinstance(request, t.SendMessageRequest)
    nested: Any = 1
    for _ in range(7):
        nested = {"k": nested}
    deep = dumps({"params": {**_send(1), "metadata": nested}})  # 2 + 7 = depth 9
    with pytest.raises(InvalidRequestError):
        loads(deep, limits)
