"""Timestamps on the wire: RFC 3339 in, UTC out (no pydantic here).

Used by the ``Timestamp`` model type and by ``TaskStatus.now``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

__all__ = ["format_timestamp", "parse_timestamp"]


def format_timestamp(value: datetime) -> str:
    """RFC 3339 in UTC with a ``Z`` suffix; milliseconds unless finer precision is set."""
    if value.tzinfo is not UTC:
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    # isoformat (C) ends in "+00:00" for UTC: cheaper than formatting the fields.
    # Microseconds that are not whole milliseconds are never 0: plain isoformat() shows
    # all six digits then, and is cheaper than with a ``timespec`` keyword.
    if value.microsecond % 1000:
        return value.isoformat()[:-6] + "Z"
    return value.isoformat(timespec="milliseconds")[:-6] + "Z"


def _to_utc(value: Any) -> Any:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        try:
            return value.astimezone(UTC)
        except OverflowError:
            raise ValueError("timestamp is outside the representable range") from None
    return value


def parse_timestamp(value: Any) -> Any:
    """An RFC 3339 string (``Z`` or an offset; naive means UTC) as an aware UTC datetime.

    Other values pass through (a datetime is moved to UTC); a bad string raises ValueError.
    """
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("z", "Z")):
            text = text[:-1] + "+00:00"
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError as exc:
            raise ValueError("invalid RFC 3339 timestamp") from exc
        return _to_utc(parsed)
    return _to_utc(value)
