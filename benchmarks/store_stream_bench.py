"""Streaming a 100-token answer onto each store: store writes per answer, events/s, CPU.

    uv run python benchmarks/store_stream_bench.py [--streams 30] [--runs 3]
        [--stores memory,sqlite,redis,postgresql,reference] [--coalesce 0.005]

One process calls an ``A2AService`` in process (``A2AClient.in_process``: no HTTP, the same
for every store) whose agent streams 100 artifact chunks into one artifact, then completes:
102 events per stream. For each store it runs ``--streams`` streams one after another, with
the chunks saved together (``ManagerConfig.store_coalesce_seconds``, 5 ms by default) and
with every event saved (``0``, as before coalescing), and reports the median over ``--runs``
of: store writes per answer (``create`` + ``save`` + ``save_at`` calls, and redis://'s
``save_and_then``, a save with its event, counted on the store object once per write),
publishes alone per answer (redis:// and postgresql://: events sent to the shared channel
without a save: each streamed chunk, saved later with others), events/s (wall) and this
process's CPU per stream (``time.process_time``; the Redis or PostgreSQL server's own CPU
is not in it). Redis (127.0.0.1:6379) and PostgreSQL (127.0.0.1:5432, database ``test``)
are used with a fresh key prefix / schema, removed afterwards; a store that cannot be
reached is reported and skipped.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from a2a_core import AgentCardBuilder
from a2a_core.adapters import open_task_store
from a2a_core.client import A2AClient
from a2a_core.server import (
    A2AService,
    AgentExecutor,
    ManagerConfig,
    RequestContext,
    TaskUpdater,
)
from a2a_core.stores import MemoryTaskStore, TaskStore

CHUNKS = 100
REDIS = "redis://127.0.0.1:6379/0"
POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"


class Tokens(AgentExecutor):
    """100 chunks appended to one artifact, then COMPLETED (102 streamed events)."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        for i in range(CHUNKS):
            await updater.add_artifact(f"tok{i} ", artifact_id="a", append=i > 0)
        await updater.complete()


def _card() -> Any:
    return (
        AgentCardBuilder("tokens", description="streams tokens", version="1")
        .skill("t", "T", "tokens", tags=["t"])
        .jsonrpc("http://127.0.0.1/")
        .streaming()
        .build()
    )


_depth: ContextVar[int] = ContextVar("write_depth", default=0)


def _count_writes(store: TaskStore) -> list[int]:
    """Count the store's task writes; one that calls another (redis://: ``save`` runs
    ``save_and_then``, which also saves a run's event with its task) counts once."""
    counter = [0]

    def counted(method: Callable[..., Any]) -> Callable[..., Any]:
        async def call(*args: Any, **kwargs: Any) -> Any:
            depth = _depth.get()
            if depth == 0:
                counter[0] += 1
            token = _depth.set(depth + 1)
            try:
                return await method(*args, **kwargs)
            finally:
                _depth.reset(token)

        return call

    for name in ("create", "save", "save_at", "save_and_then"):
        if hasattr(store, name):
            setattr(store, name, counted(getattr(store, name)))
    return counter


def _count_publishes(store: TaskStore) -> list[int]:
    """Count events published to the store's own channel without a save."""
    counter = [0]
    channel = store.event_channel()
    if channel is None:
        return counter
    publish = channel.publish

    async def counted(*args: Any, **kwargs: Any) -> Any:
        counter[0] += 1
        return await publish(*args, **kwargs)

    channel.publish = counted  # type: ignore[method-assign]
    return counter


def _open(kind: str, scratch: str) -> tuple[TaskStore, Callable[[], None]]:
    tag = uuid.uuid4().hex[:10]
    if kind == "memory":
        return open_task_store("memory://"), lambda: None
    if kind == "reference":  # the reference MemoryTaskStore: one write per event
        return MemoryTaskStore(), lambda: None
    if kind == "sqlite":
        return open_task_store(f"sqlite:///{scratch}/{tag}.db"), lambda: None
    if kind == "redis":
        prefix = f"a2a-bench-{tag}"

        def drop_keys() -> None:
            import redis

            client = redis.Redis(host="127.0.0.1", port=6379, db=0)
            keys = list(client.scan_iter(match=f"{prefix}:*", count=500))
            if keys:
                client.delete(*keys)
            client.close()

        return open_task_store(f"{REDIS}?prefix={prefix}"), drop_keys
    schema = f"a2a_bench_{tag}"

    def drop_schema() -> None:
        import psycopg
        from psycopg import sql

        with psycopg.connect(POSTGRES, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))

    return open_task_store(f"{POSTGRES}?schema={schema}"), drop_schema


async def _measure(kind: str, coalesce: float, streams: int, scratch: str) -> dict[str, float]:
    store, cleanup = _open(kind, scratch)
    try:
        writes = _count_writes(store)
        publishes = _count_publishes(store)
        config = ManagerConfig(store_coalesce_seconds=coalesce)
        service = A2AService(Tokens(), _card(), store=store, config=config)
        async with A2AClient.in_process(service) as client:
            async for _ in client.stream("warm up"):
                pass
            writes[0] = publishes[0] = 0
            events = 0
            cpu, wall = time.process_time(), time.perf_counter()
            for _ in range(streams):
                async for _ in client.stream("go"):
                    events += 1
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        await service.aclose()
        await store.aclose()
    finally:
        cleanup()
    return {
        "writes": writes[0] / streams,
        "publishes": publishes[0] / streams,
        "events_s": events / wall,
        "cpu_us": cpu / streams * 1e6,
        "events": events / streams,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--streams", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--stores", default="memory,sqlite,redis,postgresql")
    parser.add_argument("--coalesce", type=float, default=ManagerConfig().store_coalesce_seconds)
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="a2a-store-bench-")
    print(
        f"{args.streams} streams x {args.runs} runs, {CHUNKS} chunks each; medians; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(
        "| store | saves | writes / answer | publishes alone / answer | events / stream"
        " | events/s | process CPU µs / stream |"
    )
    print("|---|---|---|---|---|---|---|")
    for kind in args.stores.split(","):
        for label, coalesce in (
            ("every event", 0.0),
            (f"{args.coalesce * 1000:g} ms", args.coalesce),
        ):
            try:
                runs = [
                    asyncio.run(_measure(kind, coalesce, args.streams, scratch))
                    for _ in range(args.runs)
                ]
            except Exception as exc:  # an unreachable Redis or PostgreSQL
                print(f"| {kind} | {label} | unavailable: {type(exc).__name__}: {exc} | | | | |")
                break
            med = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
            print(
                f"| {kind}:// | {label} | {med['writes']:.1f} | {med['publishes']:.1f}"
                f" | {med['events']:.0f} | "
                f"{med['events_s']:,.0f} | {med['cpu_us']:,.0f} |"
            )


if __name__ == "__main__":
    main()
