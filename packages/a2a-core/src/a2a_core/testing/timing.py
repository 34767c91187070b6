"""When each streamed chunk reaches its readers, on two instances sharing a store.

``chunk_arrivals`` serves one agent on two instances (A and B, real sockets on
127.0.0.1) over one shared store (``redis://``, ``postgresql://``), streams a
message to A and, once the task exists, subscribes to it on A and on B. Then
it calls ``release()`` (the agent waits for it before its first chunk, so
every reader follows the task from the start) and records when each artifact
update reached each reader. The agent notes when it produced each chunk
(``Produced.mark``, in the same process, so the clocks agree); ``delays``
pairs the two.

Used by the tests of issue 44 ("a streamed chunk reaches the client when the
agent makes it") in the core and both adapters.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Generator, Mapping
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..client import A2AClient
from ..compose.serve import running_server
from ..types import StreamEvent, Task, TaskArtifactUpdateEvent

__all__ = ["SHARED_STORES", "Arrivals", "Produced", "chunk_arrivals", "shared_store"]

SHARED_STORES = ("redis", "postgresql")
"""The backends several instances can share (``shared_store``'s kinds)."""
_REDIS = ("127.0.0.1", 6379)
_POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"

READERS = ("stream on A", "subscriber on A", "subscriber on B")


@dataclass
class Produced:
    """What the agent produced and when (``time.monotonic()``); thread-safe enough for
    one producer (a list append)."""

    chunks: list[tuple[str, float]] = field(default_factory=list[tuple[str, float]])

    def mark(self, text: str) -> None:
        """Call right before the chunk leaves the agent (a yield, a model token)."""
        self.chunks.append((text, time.monotonic()))


@dataclass
class Arrivals:
    """Each reader's artifact updates with the time each arrived, and the stored task."""

    updates: dict[str, list[tuple[TaskArtifactUpdateEvent, float]]]
    stored: Task

    def delays(self, produced: Produced) -> dict[str, list[float]]:
        """Per reader, seconds from each produced chunk to the update carrying it.

        Updates are matched to chunks in order, by text: the n-th produced chunk is
        the first update after the previous match whose text is that chunk's.
        """
        out: dict[str, list[float]] = {}
        for reader, updates in self.updates.items():
            delays: list[float] = []
            at = 0
            for text, made in produced.chunks:
                while at < len(updates) and _text(updates[at][0]) != text:
                    at += 1
                if at == len(updates):
                    raise AssertionError(f"{reader} never got the chunk {text!r}")
                delays.append(updates[at][1] - made)
                at += 1
            out[reader] = delays
        return out


@contextmanager
def shared_store(kind: str) -> Generator[str]:
    """A store URL on the local Redis (127.0.0.1:6379, a fresh key prefix) or PostgreSQL
    (127.0.0.1:5432, database ``test``, a fresh schema), emptied afterwards; the test is
    skipped when the server does not answer."""
    import pytest

    name = f"a2a-timing-{uuid.uuid4().hex[:12]}"
    if kind == "redis":
        import redis

        client: Any = redis.Redis(host=_REDIS[0], port=_REDIS[1], socket_timeout=5)
        try:
            client.ping()
        except redis.RedisError as exc:
            client.close()
            pytest.skip(f"no Redis on {_REDIS[0]}:{_REDIS[1]} ({exc})")
        try:
            yield f"redis://{_REDIS[0]}:{_REDIS[1]}/0?prefix={name}"
        finally:
            keys: list[Any] = list(client.scan_iter(match=f"{name}:*", count=500))
            if keys:
                client.delete(*keys)
            client.close()
        return
    import psycopg
    from psycopg import sql

    schema = name.replace("-", "_")
    try:
        psycopg.connect(_POSTGRES, connect_timeout=2).close()
    except psycopg.Error as exc:
        pytest.skip(f"no PostgreSQL at {_POSTGRES} ({exc})")
    try:
        yield f"{_POSTGRES}?schema={schema}"
    finally:
        with psycopg.connect(_POSTGRES, autocommit=True, connect_timeout=5) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def _text(event: TaskArtifactUpdateEvent) -> str:
    return "".join(p.text or "" for p in event.artifact.parts)


async def _read(
    events: Any, into: list[tuple[TaskArtifactUpdateEvent, float]], first: asyncio.Event
) -> None:
    async for event in events:
        now = time.monotonic()
        first.set()
        if isinstance(event, TaskArtifactUpdateEvent):
            into.append((event, now))


async def chunk_arrivals(
    agent: Any,
    store_url: str,
    text: str,
    release: Callable[[], None],
    *,
    wait_seconds: float = 60.0,
    options: Mapping[str, Any] | None = None,
) -> Arrivals:
    """Serve ``agent`` on two instances of ``store_url`` and time its chunks (see the module
    docstring). ``options`` go to both ``running_server`` calls."""
    updates: dict[str, list[tuple[TaskArtifactUpdateEvent, float]]] = {r: [] for r in READERS}
    async with AsyncExitStack() as stack:
        servers = [
            await stack.enter_async_context(
                running_server(agent, store_url=store_url, **dict(options or {}))
            )
            for _ in range(2)
        ]
        clients = [
            await stack.enter_async_context(await A2AClient.connect(servers[i].url))
            for i in (0, 0, 1)
        ]
        stream = await stack.enter_async_context(clients[0].stream(text))
        first: StreamEvent = await asyncio.wait_for(anext(stream), wait_seconds)
        assert isinstance(first, Task), f"the stream must start with the task, not {first!r}"
        task_id = first.id
        readers: list[asyncio.Task[None]] = []
        started = [asyncio.Event() for _ in READERS]
        started[0].set()
        readers.append(asyncio.ensure_future(_read(stream, updates[READERS[0]], asyncio.Event())))
        for n, (reader, client) in enumerate(zip(READERS[1:], clients[1:], strict=True), 1):
            subscription = await stack.enter_async_context(client.subscribe(task_id))
            readers.append(asyncio.ensure_future(_read(subscription, updates[reader], started[n])))
        try:
            for event in started:  # every subscriber has the task: now it may produce
                await asyncio.wait_for(event.wait(), wait_seconds)
            release()
            await asyncio.wait_for(asyncio.gather(*readers), wait_seconds)
        finally:
            for reader in readers:
                reader.cancel()
        stored = await clients[2].get_task(task_id)  # read through B: the shared store
    return Arrivals(updates, stored)
