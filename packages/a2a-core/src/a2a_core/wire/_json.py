"""Bounded JSON decoding of untrusted bytes and fast encoding.

Every failure becomes one of our error types: malformed JSON is a parse
error (-32700); a body over the size bound or a structure nested too deeply
is a PayloadTooLargeError / InvalidRequestError. Nothing else escapes.
"""

from __future__ import annotations

import math
import re
from typing import Any, cast

import pydantic_core

from ..errors import InvalidRequestError, JSONParseError, PayloadTooLargeError
from ._limits import DEFAULT_LIMITS, DecodeLimits

__all__ = ["DEFAULT_LIMITS", "DecodeLimits", "check_depth", "dumps", "loads"]


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
    if _BIG_EXPONENT.search(data if isinstance(data, bytes | bytearray) else data.encode()):
        _refuse_infinity(value)
    return value


# A number literal with a 3+ digit exponent may overflow to inf (which JSON cannot carry).
_BIG_EXPONENT = re.compile(rb"[0-9.][eE][+-]?[0-9]{3}")


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
