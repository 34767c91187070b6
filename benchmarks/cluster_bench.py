"""Cluster benchmark: memory:// against redis:// and postgresql://, one instance against two.

Real servers on 127.0.0.1 (in this process, one event loop) and our client:

- stream events/s: one task streaming ``--chunks`` artifact chunks as fast as the
  agent can, read through the instance running it (a streaming send), or (two
  instances) through the other one with SubscribeToTask;
- blocking sends/s: sequential blocking SendMessage calls to an echo agent (two
  instances: the calls alternate between them);
- cancel latency: an agent that never reports runs on A; the time from a
  CancelTask sent to B until the agent on A has stopped (median of ``--cancels``);
- orphan settling: ``--orphans`` tasks run on A, followed through B; A stops
  renewing its leases (as a killed instance would); the time from then until
  B's subscribers see each task FAILED (median and max), with short leases
  (``--lease`` seconds, renewals and sweeps every fifth of it). Shared backends only.

Run: ``uv run --no-sync python benchmarks/cluster_bench.py`` (needs Redis on
127.0.0.1:6379 and PostgreSQL on 127.0.0.1:5432, database ``test``, for their rows;
``--backends`` picks some). Redis keys live under a random prefix and PostgreSQL
tables in a random schema, both deleted after.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import httpx
from a2a_core.adapters import open_task_store
from a2a_core.client import A2AClient, EventStream
from a2a_core.compose.builder import configure_service
from a2a_core.compose.serve import running_server
from a2a_core.server.executor import AgentExecutor, RequestContext
from a2a_core.server.leases import LeaseKeeper
from a2a_core.server.manager import ManagerConfig
from a2a_core.server.service import A2AService
from a2a_core.server.updater import TaskUpdater
from a2a_core.types import TaskState

REDIS = "redis://127.0.0.1:6379/0"
POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"


class BenchAgent(AgentExecutor):
    """ "stream N": N chunks; "slow": waits until cancelled; anything else: echoes."""

    def __init__(self) -> None:
        self.stopped: asyncio.Event = asyncio.Event()
        self.stopped_at = 0.0
        self.started = asyncio.Event()
        self.go = asyncio.Event()
        self.service: A2AService | None = None
        """The service serving this agent (set by ``cluster``)."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        text = context.text
        if text.startswith(("stream ", "gated ")):
            count = int(text.split()[1])
            await updater.start_work()
            if text.startswith("gated"):  # wait until the reader on the other instance is there
                await self.go.wait()
                self.go.clear()
            for i in range(count):
                await updater.add_artifact("tok ", artifact_id="a", append=i > 0)
            await updater.complete()
        elif text == "slow":
            try:
                await updater.start_work()
                self.started.set()
                await asyncio.Event().wait()
            finally:
                self.stopped_at = time.perf_counter()
                self.stopped.set()
        else:
            await updater.finish_with("echo: " + text)


@asynccontextmanager
async def cluster(
    url: str, count: int, config: ManagerConfig | None = None
) -> AsyncIterator[list[tuple[BenchAgent, A2AClient]]]:
    async with AsyncExitStack() as stack:
        shared = open_task_store(url) if url.startswith("memory") else None
        nodes: list[tuple[BenchAgent, A2AClient]] = []
        for _ in range(count):
            agent = BenchAgent()
            store = shared if shared is not None else open_task_store(url)
            service = configure_service(agent, name="bench", store=store, config=config)
            agent.service = service
            server = await stack.enter_async_context(running_server(service))
            http = await stack.enter_async_context(httpx.AsyncClient(timeout=60))
            client = await A2AClient.connect(server.url, http_client=http)
            stack.push_async_callback(client.aclose)
            nodes.append((agent, client))
        yield nodes


async def stream_rate(url: str, count: int, chunks: int, rounds: int) -> float:
    async with cluster(url, count) as nodes:
        (agent_a, a), (_, reader) = nodes[0], nodes[-1]
        rates: list[float] = []
        for _ in range(rounds):
            if count == 1:
                start = time.perf_counter()
                n = 0
                async for _ in a.stream(f"stream {chunks}"):
                    n += 1
            else:
                result = await a.send(f"gated {chunks}", blocking=False)
                assert result.task is not None
                stream = reader.subscribe(result.task.id)
                await anext(stream)  # the snapshot: following from here
                start = time.perf_counter()
                agent_a.go.set()
                n = 0
                async for _ in stream:
                    n += 1
            rates.append(n / (time.perf_counter() - start))
        return statistics.median(rates)


async def send_rate(url: str, count: int, calls: int) -> float:
    async with cluster(url, count) as nodes:
        clients = [c for _, c in nodes]
        for c in clients:
            await c.send("warm")
        start = time.perf_counter()
        for i in range(calls):
            await clients[i % len(clients)].send("hi")
        return calls / (time.perf_counter() - start)


async def cancel_latency(url: str, cancels: int) -> float:
    async with cluster(url, 2) as nodes:
        (agent_a, a), (_, b) = nodes
        times: list[float] = []
        for _ in range(cancels):
            agent_a.started.clear()
            agent_a.stopped.clear()
            result = await a.send("slow", blocking=False)
            assert result.task is not None
            await agent_a.started.wait()
            start = time.perf_counter()
            await b.cancel(result.task.id)
            await agent_a.stopped.wait()
            times.append((agent_a.stopped_at - start) * 1000)
        return statistics.median(times)


async def orphan_settling(url: str, tasks: int, lease: float) -> tuple[float, float]:
    """Seconds from A's last renewal attempt to B's subscribers seeing FAILED: (p50, max)."""
    config = ManagerConfig(
        instance_id=None,
        lease_seconds=lease,
        lease_renew_seconds=lease / 5,
        orphan_sweep_seconds=lease / 5,
        shutdown_grace_seconds=1.0,
    )
    async with cluster(url, 2, config) as nodes:
        (agent_a, a), (_, b) = nodes
        ids: list[str] = []
        for _ in range(tasks):
            agent_a.started.clear()
            result = await a.send("slow", blocking=False)
            assert result.task is not None
            await agent_a.started.wait()
            ids.append(result.task.id)
        streams = [b.subscribe(task_id) for task_id in ids]
        for stream in streams:
            await anext(stream)  # the snapshot: following from here
        assert agent_a.service is not None
        keeper = agent_a.service.manager.leases
        assert isinstance(keeper, LeaseKeeper)
        ends: list[float] = []

        async def until_failed(stream: EventStream) -> None:
            async for event in stream:
                status = getattr(event, "status", None)
                if status is not None and status.state is TaskState.FAILED:
                    ends.append(time.perf_counter())

        start = time.perf_counter()
        keeper.stop_renewing()  # A "dies": no more renewals or sweeps
        await asyncio.wait_for(asyncio.gather(*(until_failed(s) for s in streams)), 60)
        waits = [end - start for end in ends]
        assert len(waits) == tasks
        return statistics.median(waits), max(waits)


def _cleanup(prefix: str, schema: str) -> None:
    import redis

    client = redis.Redis(host="127.0.0.1", port=6379, db=0)
    keys = list(client.scan_iter(match=f"{prefix}:*", count=500))
    if keys:
        client.delete(*keys)
    client.close()
    import psycopg
    from psycopg import sql

    with psycopg.connect(POSTGRES, autocommit=True, connect_timeout=5) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


async def main(args: argparse.Namespace) -> None:
    tag = uuid.uuid4().hex[:8]
    prefix, schema = f"a2a-bench-{tag}", f"a2a_bench_{tag}"
    urls = {
        "memory://": "memory://",
        "redis://": f"{REDIS}?prefix={prefix}",
        "postgresql://": f"{POSTGRES}?schema={schema}",
    }
    chosen = [b.strip().rstrip(":/") + "://" for b in args.backends.split(",")]
    rows: list[tuple[str, str, str]] = []
    try:
        for name in chosen:
            url = urls[name]
            for count in (1, 2):
                label = f"{name} x{count}"
                rate = await stream_rate(url, count, args.chunks, args.rounds)
                rows.append((label, "stream events/s", f"{rate:,.0f}"))
                rate = await send_rate(url, count, args.calls)
                rows.append((label, "blocking sends/s", f"{rate:,.0f}"))
            ms = await cancel_latency(url, args.cancels)
            rows.append((f"{name} x2", "cancel on B -> agent on A stopped (ms, p50)", f"{ms:.2f}"))
            if name != "memory://":
                p50, worst = await orphan_settling(url, args.orphans, args.lease)
                rows.append(
                    (
                        f"{name} x2",
                        f"orphans settled after A stopped, lease {args.lease:g} s "
                        f"({args.orphans} tasks; s, p50 / max)",
                        f"{p50:.2f} / {worst:.2f}",
                    )
                )
    finally:
        _cleanup(prefix, schema)
    print("| backend, instances | measure | value |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description="Cluster benchmark: memory:// against redis:// and postgresql://"
    )
    parser.add_argument("--chunks", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--cancels", type=int, default=10)
    parser.add_argument("--orphans", type=int, default=20)
    parser.add_argument("--lease", type=float, default=2.0)
    parser.add_argument("--backends", default="memory,redis,postgresql")
    asyncio.run(main(parser.parse_args()))
