"""Small async-generator helpers for event streams."""

from __future__ import annotations

from ...types import StreamEvent
from .base import EventIterator

__all__ = ["empty", "peeked", "prepend", "single"]


async def single(event: StreamEvent) -> EventIterator:
    yield event


async def peeked(events: EventIterator) -> EventIterator:
    """Read the first event now, so an error frame is raised when the stream opens."""
    try:
        first = await events.__anext__()
    except StopAsyncIteration:
        return empty()
    except BaseException:
        await events.aclose()
        raise
    return prepend(first, events)


async def empty() -> EventIterator:
    return
    yield  # pragma: no cover


async def prepend(first: StreamEvent, rest: EventIterator) -> EventIterator:
    try:
        yield first
        async for event in rest:
            yield event
    finally:
        await rest.aclose()
