"""Bounded JSON decoding of untrusted bytes and fast encoding.

Every failure becomes one of our error types: malformed JSON is a parse
error (-32700); a body over the size bound or a structure nested too deeply
is a PayloadTooLargeError / InvalidRequestError. Nothing else escapes.
"""

from __future__ import annotations

import math
from typing import Any, cast

import pydantic_core

from ..errors import InvalidRequestError, JSONParseError, PayloadTooLargeError
from ._limits import DEFAULT_LIMITS, DecodeLimits

__all__ = ["DEFAULT_LIMITS", "DecodeLimits", "check_depth", "dumps", "loads", "may_overflow"]


def loads(data: bytes | bytearray | memoryview | str, limits: DecodeLimits = DEFAULT_LIMITS) -> Any:
    """Parse JSON from untrusted input within ``limits``."""
    if len(data) > limits.max_bytes:
        raise PayloadTooLargeError(
            f"Payload of {len(data)} bytes exceeds the limit of {limits.max_bytes} bytes"
        )
    if isinstance(data, memoryview):
        data = bytes(data)
    try:
        value = pydantic_core.from_json(data, allow_inf_nan=False)
    except ValueError as exc:
        if "recursion limit" in str(exc):
            raise InvalidRequestError(
                f"JSON nesting exceeds the limit of {limits.max_depth} levels"
            ) from None
        raise JSONParseError(f"Invalid JSON payload: {exc}") from None
    except Exception as exc:  # defensive: a parser bug must not escape as a 500
        raise JSONParseError(f"Invalid JSON payload: {type(exc).__name__}") from None
    # Cheap pre-check: a document with fewer openers than the bound cannot be too deep.
    openers = (
        data.count("{") + data.count("[")
        if isinstance(data, str)
        else (data.count(b"{") + data.count(b"["))
    )
    if openers > limits.max_depth:
        check_depth(value, limits.max_depth)
    if may_overflow(data if isinstance(data, bytes | bytearray) else data.encode()):
        _refuse_infinity(value)
    return value


# Digits and "." read as "0", "e" and "E" as "e", what may end a number ("," "]" "}" and
# JSON whitespace) as ",", signs dropped, any other byte as "x": the number shapes that may
# overflow a double become fixed byte strings, found by plain searches (a regular
# expression trying every digit of the ids and timestamps cost several times more).
_NUMBER_SHAPE = bytes(
    ord("0") if c in b"0123456789."
    else ord("e") if c in b"eE"
    else ord(",") if c in b",]} \t\n\r"
    else ord("x")
    for c in range(256)
)  # fmt: skip
_EXPONENT = b"0e000"
_DIGIT = ord("0")
_END = ord(",")
_MANY_DIGITS = b"0" * 210
"""A double's largest finite value has 309 digits before its point: 210 digits times an
exponent of at most 99 (two digits) may reach it."""


def may_overflow(data: bytes | bytearray) -> bool:
    """Whether ``data`` may hold a number literal that overflows a double to inf (which
    JSON cannot carry): one with a 3+ digit exponent, or so many digits that a two-digit
    exponent, or none, may take it out of range. False means it surely holds none; True is
    only a maybe. An exponent must end where a number may end: ids such as
    ``"9e1234ab"`` are not suspected."""
    shape = data.translate(_NUMBER_SHAPE, b"+-")
    if _MANY_DIGITS in shape:
        return True
    size = len(shape)
    at = shape.find(_EXPONENT)
    while at >= 0:
        end = at + len(_EXPONENT)
        while end < size and shape[end] == _DIGIT:
            end += 1
        if end == size or shape[end] == _END:
            return True
        at = shape.find(_EXPONENT, end)
    return False


def _refuse_infinity(value: Any) -> None:
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, float):
            if math.isinf(node):
                raise JSONParseError("Invalid JSON payload: number out of range")
        elif isinstance(node, dict):
            stack.extend(cast("dict[str, Any]", node).values())
        elif isinstance(node, list):
            stack.extend(cast("list[Any]", node))


def check_depth(value: Any, max_depth: int) -> None:
    """Raise InvalidRequestError when containers nest deeper than ``max_depth``."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            if depth > max_depth:
                raise InvalidRequestError(f"JSON nesting exceeds the limit of {max_depth} levels")
            stack.extend((child, depth + 1) for child in node.values())  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType, reportUnknownMemberType]
        elif isinstance(node, list):
            if depth > max_depth:
                raise InvalidRequestError(f"JSON nesting exceeds the limit of {max_depth} levels")
            stack.extend((child, depth + 1) for child in node)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON; pydantic models are serialized by alias."""
    return pydantic_core.to_json(value, by_alias=True)
