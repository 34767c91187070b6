"""Redis publish cost: events/s a task's run applies on ``redis://``, and commands per event.

Each applied event is saved (the task at a new version) and published on the
task channel (the event in the task's stream). The agent emits ``--events``
artifact chunks in one blocking SendMessage, with nobody streaming, so the
time is the run's own per-event cost. Round trips are counted in this
process (each write of a command, or of a pipeline, to a Redis connection is
one; a Lua script with all its commands is one). Real server on 127.0.0.1,
our client, one instance.

Run: ``uv run --no-sync python benchmarks/redis_publish_bench.py`` (needs Redis
on 127.0.0.1:6379; its keys live under a random prefix, deleted after).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from typing import Any

import httpx
import redis
import redis.asyncio.connection as redis_connection
from a2a_core.adapters import open_task_store
from a2a_core.client import A2AClient
from a2a_core.compose.builder import configure_service
from a2a_core.compose.serve import running_server
from a2a_core.server.executor import AgentExecutor, RequestContext
from a2a_core.server.updater import TaskUpdater

REDIS = "redis://127.0.0.1:6379/0"


class ChunkAgent(AgentExecutor):
    """ "N": N artifact chunks, then completes."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        count = int(context.text)
        await updater.start_work()
        for i in range(count):
            await updater.add_artifact("tok ", artifact_id="a", append=i > 0)
        await updater.complete()


class RoundTrips:
    """Counts what redis-py's async connections send: one count per round trip."""

    def __init__(self) -> None:
        self.count = 0
        cls = redis_connection.AbstractConnection
        original = cls.send_packed_command
        counter = self

        async def counted(self: Any, command: Any, check_health: bool = True) -> None:
            counter.count += 1
            await original(self, command, check_health)

        cls.send_packed_command = counted  # type: ignore[method-assign]


async def measure(events: int, rounds: int) -> tuple[float, float]:
    prefix = f"a2a-bench-{uuid.uuid4().hex[:8]}"
    sync = redis.Redis(host="127.0.0.1", port=6379, db=0)
    trips = RoundTrips()
    try:
        store = open_task_store(f"{REDIS}?prefix={prefix}")
        service = configure_service(ChunkAgent(), name="bench", store=store)
        async with (
            running_server(service) as server,
            httpx.AsyncClient(timeout=120) as http,
        ):
            client = await A2AClient.connect(server.url, http_client=http)
            await client.send("3")  # warm: scripts loaded, connections open
            rates: list[float] = []
            per_event: list[float] = []
            for _ in range(rounds):
                before = trips.count
                start = time.perf_counter()
                await client.send(str(events))
                elapsed = time.perf_counter() - start
                issued = trips.count - before
                rates.append((events + 2) / elapsed)  # the chunks, WORKING and COMPLETED
                per_event.append(issued / (events + 2))
            await client.aclose()
        return statistics.median(rates), statistics.median(per_event)
    finally:
        keys = list(sync.scan_iter(match=f"{prefix}:*", count=500))
        if keys:
            sync.delete(*keys)
        sync.close()


async def main(args: argparse.Namespace) -> None:
    rate, per_event = await measure(args.events, args.rounds)
    print(
        f"redis:// one instance: {rate:,.0f} events/s; {per_event:.2f} Redis round trips per event"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Redis publish cost per applied event")
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(main(parser.parse_args()))
