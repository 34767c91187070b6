"""What an event stream gives its writer: ``ServerStream``.

The service's streaming operations return one (``A2AService.open_stream``); the
SSE writer, the access log and the gRPC binding read it. Besides the events, a
stream tells its writer about the event it returned last: its id (the SSE
``id``) and its JSON as the event bus encoded it at publish, so that a frame
carries those bytes instead of encoding the event again. It also hands over the
events already waiting (``next_ready``, read without a coroutine each, so a
burst goes out in one write) and says when the event returned last is its last
(``ends``: that frame ends the response). ``plain_stream`` makes one of a plain
async generator, which has none of this.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from typing import Protocol

from ..types import StreamEvent

__all__ = ["ServerStream", "close_stream", "plain_stream"]

logger = logging.getLogger("a2a_core.server")


class ServerStream(Protocol):
    """An async iterator of stream events that knows what its writer needs.

    ``aclose()`` releases what the stream holds (a subscription), whether or not
    it was ever iterated.
    """

    def __aiter__(self) -> ServerStream: ...

    async def __anext__(self) -> StreamEvent: ...

    @property
    def event_id(self) -> int | None:
        """The id of the event last returned (None: it has none, e.g. a direct reply)."""
        ...

    @property
    def encoded(self) -> bytes | None:
        """The event last returned as the bus encoded it (``event_json``; None: it was not)."""
        ...

    def next_ready(self) -> StreamEvent | None:
        """The next event if it can be read without waiting, else None (read on)."""
        ...

    def ends(self) -> bool:
        """Whether the event last returned is the stream's last."""
        ...

    async def aclose(self) -> None: ...


class _Plain:
    """A plain async generator as a ``ServerStream``: no ids, no bytes, no batches."""

    __slots__ = ("_events", "_started")

    def __init__(self, events: AsyncGenerator[StreamEvent]) -> None:
        self._events = events
        self._started = False

    def __aiter__(self) -> _Plain:
        return self

    async def __anext__(self) -> StreamEvent:
        self._started = True
        return await anext(self._events)

    @property
    def event_id(self) -> None:
        return None

    @property
    def encoded(self) -> None:
        return None

    def next_ready(self) -> StreamEvent | None:
        return None

    def ends(self) -> bool:
        return False

    async def aclose(self) -> None:
        """Close the generator so that its cleanup runs.

        ``aclose()`` on an async generator that never ran does not execute its
        ``finally`` blocks, so one that was never iterated is run to its first
        suspension and cancelled there.
        """
        events = self._events
        if not self._started:
            self._started = True
            step = asyncio.ensure_future(anext(events))
            await asyncio.sleep(0)
            if not step.done():
                step.cancel()
            await asyncio.wait({step})
            if not step.cancelled():
                step.exception()  # retrieved: a failing first step is not our concern here
        await events.aclose()


def plain_stream(events: AsyncGenerator[StreamEvent]) -> ServerStream:
    """The async generator ``events`` as a ``ServerStream`` (its writer encodes each event)."""
    return _Plain(events)


async def close_stream(stream: ServerStream) -> None:
    """``stream.aclose()``, logging (not raising) what goes wrong: the response is over."""
    try:
        await stream.aclose()
    except Exception:
        logger.debug("closing an event stream failed", exc_info=True)
