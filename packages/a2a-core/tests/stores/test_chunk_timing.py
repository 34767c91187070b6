"""A streamed chunk reaches every reader when the agent makes it, not when the next one comes.

Two instances on one Redis or PostgreSQL store (real sockets on 127.0.0.1), an
async generator agent on A that says "Searching flights...", works 2 s, then
says what it found: the streaming client on A, a subscriber on A and one on B
each get every chunk within 250 ms of its yield (before, each waited for the
next yield: the first line arrived 2 s late). The stored task holds the whole
answer, and every stream ends the artifact with one update carrying all of it
(``lastChunk``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest
from a2a_core.server import RequestContext
from a2a_core.testing.timing import Produced, chunk_arrivals
from a2a_core.types import TaskState
from store_support import POSTGRES_URL, REDIS_URL

pytestmark = pytest.mark.timeout(60)

BOUND = 0.250
"""How late a chunk may reach a reader (seconds after the agent yielded it): far below
the 2 s a chunk waited for the next one before, with room for a loaded two-core box."""
GAP = 2.0
CHUNKS = ["Searching flights...", " found 3.", " Cheapest: 120 EUR."]


def flight_search(
    produced: Produced, gate: asyncio.Event
) -> Callable[[RequestContext], AsyncIterator[str]]:
    async def search(context: RequestContext) -> AsyncIterator[str]:
        """Finds flights, saying what it does."""
        await gate.wait()
        for n, chunk in enumerate(CHUNKS):
            if n == 1:
                await asyncio.sleep(GAP)  # the search itself: the first line must not wait
            elif n:
                await asyncio.sleep(0.2)
            produced.mark(chunk)
            yield chunk

    return search


async def check_timing(store_url: str) -> None:
    produced, gate = Produced(), asyncio.Event()
    arrivals = await chunk_arrivals(flight_search(produced, gate), store_url, "Paris", gate.set)
    whole = "".join(CHUNKS)
    for reader, delays in arrivals.delays(produced).items():
        late = [round(d * 1000, 1) for d in delays if not 0 <= d <= BOUND]
        assert not late, f"{reader}: chunks arrived {late} ms after they were yielded"
        end, _ = arrivals.updates[reader][-1]
        assert (end.append, end.last_chunk) == (False, True), reader
        assert end.artifact.parts[0].text == whole, reader
    stored = arrivals.stored
    assert stored.status.state is TaskState.COMPLETED
    assert [[p.text for p in a.parts] for a in stored.artifacts] == [[whole]]


async def test_redis_chunks_reach_every_reader_when_yielded(redis_prefix: str) -> None:
    await check_timing(f"{REDIS_URL}?prefix={redis_prefix}")


async def test_postgres_chunks_reach_every_reader_when_yielded(postgres_schema: str) -> None:
    await check_timing(f"{POSTGRES_URL}?schema={postgres_schema}")
