"""Cluster benchmark: memory:// against redis://, one instance against two on one backend.

Real servers on 127.0.0.1 (in this process, one event loop) and our client:

- stream events/s: one task streaming ``--chunks`` artifact chunks as fast as the
  agent can, read through the instance running it (a streaming send), or (two
  instances) through the other one with SubscribeToTask;
- blocking sends/s: sequential blocking SendMessage calls to an echo agent (two
  instances: the calls alternate between them);
- cancel latency: an agent that never reports runs on A; the time from a
  CancelTask sent to B until the agent on A has stopped (median of ``--cancels``).

Run: ``uv run --no-sync python benchmarks/cluster_bench.py`` (needs Redis on
127.0.0.1:6379 for the redis rows; its keys live under a random prefix, deleted after).
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
from a2a_core.client import A2AClient
from a2a_core.server.builder import configure_service
from a2a_core.server.executor import AgentExecutor, RequestContext
from a2a_core.server.serve import running_server
from a2a_core.server.updater import TaskUpdater

REDIS = "redis://127.0.0.1:6379/0"


class BenchAgent(AgentExecutor):
    """ "stream N": N chunks; "slow": waits until cancelled; anything else: echoes."""

    def __init__(self) -> None:
        self.stopped: asyncio.Event = asyncio.Event()
        self.stopped_at = 0.0
        self.started = asyncio.Event()
        self.go = asyncio.Event()

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
async def cluster(url: str, count: int) -> AsyncIterator[list[tuple[BenchAgent, A2AClient]]]:
    async with AsyncExitStack() as stack:
        shared = open_task_store(url) if url.startswith("memory") else None
        nodes: list[tuple[BenchAgent, A2AClient]] = []
        for _ in range(count):
            agent = BenchAgent()
            store = shared if shared is not None else open_task_store(url)
            service = configure_service(agent, name="bench", store=store)
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


def _cleanup(prefix: str) -> None:
    import redis

    client = redis.Redis(host="127.0.0.1", port=6379, db=0)
    keys = list(client.scan_iter(match=f"{prefix}:*", count=500))
    if keys:
        client.delete(*keys)
    client.close()


async def main(args: argparse.Namespace) -> None:
    prefix = f"a2a-bench-{uuid.uuid4().hex[:8]}"
    urls = {"memory://": "memory://", "redis://": f"{REDIS}?prefix={prefix}"}
    rows: list[tuple[str, str, str]] = []
    try:
        for name, url in urls.items():
            for count in (1, 2):
                label = f"{name} x{count}"
                rate = await stream_rate(url, count, args.chunks, args.rounds)
                rows.append((label, "stream events/s", f"{rate:,.0f}"))
                rate = await send_rate(url, count, args.calls)
                rows.append((label, "blocking sends/s", f"{rate:,.0f}"))
            ms = await cancel_latency(url, args.cancels)
            rows.append((f"{name} x2", "cancel on B -> agent on A stopped (ms, p50)", f"{ms:.2f}"))
    finally:
        _cleanup(prefix)
    print("| backend, instances | measure | value |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Cluster benchmark: memory:// against redis://")
    parser.add_argument("--chunks", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--cancels", type=int, default=10)
    asyncio.run(main(parser.parse_args()))
