"""Scale, cluster part (issue #40): does the cost of a cluster grow with the work, or with more?

Two real instances (A and B) serve one shared store (``redis://`` or ``postgresql://``
on 127.0.0.1), each a server process of its own started from this file
(``scale_cluster.py node``); the client is this process (one event loop, httpx).

- **cross-instance latency p50 / p99** (ms): ``n`` tasks stream concurrently on A,
  each followed by a subscriber through B; per event, the time from the agent on A
  emitting it (its wall clock, carried in the chunk) to the subscriber reading it.
  The aggregate rate is kept near 400 events/s (``interval = max(20 ms, n / 400 s)``, the
  tasks' starts staggered over one interval), so the latency is the path's, not a backlog's.
  Target: p50 <= 10 ms, p99 <= 50 ms.
  (Context: the official SDK's cluster mode polls its store every 0.5 s.)
- **remote fan-out latency p50 / p99** (ms) and **database transactions per event**
  (``postgresql://`` only): one task on A emits 20 events 50 ms apart, followed by ``n``
  subscribers through B; the latency as above, over every subscriber's events, and the
  database's committed transactions (``pg_stat_database``, read after its statistics
  are flushed) during those events, per event. Many followers of one task on an instance
  should not cost the database a read each.
- **relay events/s**: ``n`` tasks on A emit as fast as they can, all followed through B;
  events read by the client per second (first to last read).
- **lease renewals/s**, **lease round trips/s**, **lease CPU** (% of one core): ``n``
  idle running tasks on A (default lease settings: a 30 s lease renewed every 10 s,
  orphans swept every 10 s); A's process CPU over a fixed window against the same
  window with no task running. Leases renewed and lease calls are counted inside A.
  Target: < 5 % of one core at 1,000.
- **orphan settling p50 / max** (s): then every task is followed through B, A is killed
  with SIGKILL, and each subscriber on B waits for FAILED; seconds from the kill.

Run: ``uv run --no-sync python benchmarks/scale_cluster.py [--quick] [--out FILE.jsonl]
[--label before|after]`` (``--quick``: the smallest sizes, and a 2 s lease so it ends
within a minute). Redis keys live under a random prefix and PostgreSQL tables in a random
schema, both deleted after.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import signal
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

REDIS = "redis://127.0.0.1:6379/0"
POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
PART = "cluster"
HERE = Path(__file__).resolve()
_TICK = os.sysconf("SC_CLK_TCK")
_STATS_FLUSH_SECONDS = 11.0
"""PostgreSQL flushes an idle backend's statistics within 10 s."""
_LEASE_CALLS = (
    "acquire_lease",
    "renew_leases",
    "release_lease",
    "expired_leases",
    "take_expired_lease",
    "lease_of",
)


# -- the server node (a process of its own) -----------------------------------------------
def _node_agent() -> Any:
    from a2a_core.server.executor import AgentExecutor, RequestContext
    from a2a_core.server.updater import TaskUpdater

    class ScaleAgent(AgentExecutor):
        """ "emit N INTERVAL START": N chunks carrying their emit time (epoch seconds),
        ``INTERVAL`` s apart, from epoch ``START``; "slow": works until cancelled."""

        async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
            words = context.text.split()
            await updater.start_work()
            if words[0] == "slow":
                await asyncio.Event().wait()
                return
            count, interval, start = int(words[1]), float(words[2]), float(words[3])
            await asyncio.sleep(max(0.0, start - time.time()))
            for i in range(count):
                await updater.add_artifact(repr(time.time()), artifact_id="a", append=i > 0)
                if interval:
                    await asyncio.sleep(interval)
            await updater.complete()

    return ScaleAgent()


def _count_lease_calls(store: Any, counts: dict[str, int]) -> None:
    """Wrap the store's lease methods (on this instance only) to count calls and leases renewed."""
    for name in _LEASE_CALLS:
        original = getattr(store, name)

        def counted(*args: Any, _name: str = name, _original: Any = original) -> Any:
            counts[_name] = counts.get(_name, 0) + 1
            if _name == "renew_leases":
                counts["renewed"] = counts.get("renewed", 0) + len(args[1])
            return _original(*args)

        setattr(store, name, counted)


async def _serve(store_url: str, lease: float | None) -> None:
    from a2a_core.adapters import open_task_store
    from a2a_core.compose.builder import configure_service
    from a2a_core.compose.serve import running_server
    from a2a_core.server.config import ManagerConfig

    config = ManagerConfig(max_background_tasks=4096)
    if lease is not None:  # --quick: short leases so a kill settles within seconds
        config = dataclasses.replace(
            config,
            lease_seconds=lease,
            lease_renew_seconds=lease / 3,
            orphan_sweep_seconds=lease / 3,
        )
    store = open_task_store(store_url)
    counts: dict[str, int] = {}
    _count_lease_calls(store, counts)
    service = configure_service(_node_agent(), name="scale", store=store, config=config)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    async with running_server(service) as server:
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        loop.add_signal_handler(signal.SIGINT, stop.set)
        loop.add_signal_handler(
            signal.SIGUSR1, lambda: print("STATS", json.dumps(counts), flush=True)
        )
        print("READY", server.url, flush=True)
        await stop.wait()


class Node:
    """A server process serving the shared store (started by ``node``)."""

    def __init__(self, proc: asyncio.subprocess.Process, url: str) -> None:
        self.proc = proc
        self.url = url

    @classmethod
    async def start(cls, store_url: str, lease: float | None, log: Path) -> Node:
        argv = [sys.executable, str(HERE), "node", store_url]
        if lease is not None:
            argv += ["--lease", str(lease)]
        err = log.open("ab")
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, stdout=asyncio.subprocess.PIPE, stderr=err
            )
        finally:
            err.close()
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
        if not line.startswith(b"READY "):
            proc.kill()
            raise RuntimeError(f"node did not start: {line!r}; see {log}")
        return cls(proc, line.split()[1].decode())

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / _TICK  # utime + stime

    async def stats(self) -> dict[str, int]:
        assert self.proc.stdout is not None
        self.proc.send_signal(signal.SIGUSR1)
        while True:
            line = await asyncio.wait_for(self.proc.stdout.readline(), 10)
            if line.startswith(b"STATS "):
                return json.loads(line[6:])

    def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()

    async def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 20)
            except TimeoutError:
                self.proc.kill()
        await self.proc.wait()


# -- the client side -------------------------------------------------------------------
@dataclass
class Env:
    backend: str
    url: str
    label: str
    quick: bool
    logs: Path
    rows: list[dict[str, Any]]
    failures: list[str]

    def point(
        self,
        case: str,
        n: int,
        value: float,
        unit: str,
        target: float | None = None,
        note: str = "",
    ) -> None:
        row = {
            "part": PART,
            "case": case,
            "impl": "ours",
            "backend": self.backend,
            "n": n,
            "value": round(value, 3),
            "unit": unit,
            "label": self.label,
            "target": target,
            "note": note,
        }
        self.rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)

    def failed(self, what: str, n: int, exc: BaseException) -> None:
        text = f"{what}, {self.backend}, n={n}: FAILED ({type(exc).__name__}: {exc})"
        self.failures.append(text)
        print("# " + text, file=sys.stderr, flush=True)


@asynccontextmanager
async def nodes(env: Env, count: int, lease: float | None) -> AsyncIterator[list[Node]]:
    started: list[Node] = []
    try:
        for i in range(count):
            log = env.logs / f"{env.backend}-{count}x-{i}-{time.time():.0f}.log"
            started.append(await Node.start(env.url, lease, log))
        yield started
    finally:
        for node in started:
            await node.stop()


@asynccontextmanager
async def client(url: str) -> AsyncIterator[Any]:
    from a2a_core.client import A2AClient

    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(timeout=httpx.Timeout(120.0), limits=limits) as http:
        c = await A2AClient.connect(url, http_client=http)
        try:
            yield c
        finally:
            await c.aclose()


async def _bounded(jobs: Sequence[Callable[[], Any]], width: int = 50) -> list[Any]:
    gate = asyncio.Semaphore(width)

    async def one(job: Callable[[], Any]) -> Any:
        async with gate:
            return await job()

    return await asyncio.gather(*(one(j) for j in jobs))


async def _start_tasks(a: Any, texts: Sequence[str]) -> list[str]:
    async def one(text: str) -> str:
        result = await a.send(text, blocking=False)
        assert result.task is not None
        return result.task.id

    return await _bounded([lambda t=t: one(t) for t in texts])


async def _follow_all(b: Any, ids: Sequence[str]) -> list[Any]:
    """Subscribe to every task through B; each stream has read its snapshot."""

    async def one(task_id: str) -> Any:
        stream = b.subscribe(task_id)
        await anext(stream)  # the snapshot: following from here
        return stream

    return await _bounded([lambda t=t: one(t) for t in ids])


def _chunk_time(event: Any) -> float | None:
    artifact = getattr(event, "artifact", None)
    if artifact is None or not artifact.parts:
        return None
    text = artifact.parts[-1].text
    return float(text) if text else None


async def streaming(
    a: Any, b: Any, n: int, count: int, interval: float
) -> tuple[list[float], list[float]]:
    """Start ``n`` emitting tasks on A, follow them through B: (emit -> read) ms per event,
    and when each was read (epoch seconds)."""
    lead = 1.0 + n * 0.03  # time to subscribe to every task before the first chunk
    start = time.time() + lead
    # Staggered starts: the tasks' chunks are spread evenly over each interval, a steady
    # rate rather than n chunks at the same instant (unless they go as fast as they can).
    starts = [start + k * interval / n for k in range(n)]
    ids = await _start_tasks(a, [f"emit {count} {interval} {t}" for t in starts])
    streams = await _follow_all(b, ids)
    if time.time() > start:
        print(f"# warning: subscribing took past the start ({n} tasks)", file=sys.stderr)
    return await _drain(streams, 120 + count * n / 100)


async def _drain(streams: Sequence[Any], bound: float) -> tuple[list[float], list[float]]:
    """Read every stream to its end: (emit -> read) ms per event, and when each was read."""
    latencies: list[float] = []
    reads: list[float] = []

    async def drain(stream: Any) -> None:
        async for event in stream:
            emitted = _chunk_time(event)
            if emitted is not None:
                now = time.time()
                reads.append(now)
                latencies.append((now - emitted) * 1000)

    await asyncio.wait_for(asyncio.gather(*(drain(s) for s in streams)), bound)
    return latencies, reads


@asynccontextmanager
async def warm_pair(env: Env) -> AsyncIterator[tuple[Any, Any]]:
    """Instances A and B, a client of each, the path between them warmed."""
    async with (
        nodes(env, 2, None) as (node_a, node_b),
        client(node_a.url) as a,
        client(node_b.url) as b,
    ):
        await streaming(a, b, 1, 5, 0.01)
        yield a, b


def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def cross_instance(env: Env, sizes: Sequence[int], relay_sizes: Sequence[int]) -> None:
    events = 100 if env.quick else 300  # per size, spread over its tasks
    async with warm_pair(env) as (a, b):
        for n in sizes:
            interval = max(0.02, n / 400)
            count = max(10, events // n)
            try:
                lat, _ = await streaming(a, b, n, count, interval)
            except Exception as exc:
                env.failed("cross-instance latency", n, exc)
                continue
            note = f"{len(lat)} events, {count} per task, {interval * 1000:.0f} ms apart"
            env.point("cross-instance latency p50", n, statistics.median(lat), "ms", 10, note)
            env.point("cross-instance latency p99", n, _pct(lat, 0.99), "ms", 50, note)
        for n in relay_sizes:
            count = max(20, events * 10 // n)
            try:
                _, reads = await streaming(a, b, n, count, 0.0)
            except Exception as exc:
                env.failed("relay", n, exc)
                continue
            rate = len(reads) / max(1e-9, max(reads) - min(reads))
            note = f"{len(reads)} events, {count} per task, as fast as the agents emit"
            env.point("relay events/s", n, rate, "events/s", None, note)


async def _committed(url: str) -> int:
    """The database's committed transactions so far (its statistics, flushed)."""
    import psycopg

    await asyncio.sleep(_STATS_FLUSH_SECONDS)
    conninfo = url.partition("?")[0]
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        cur = await conn.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        )
        row = await cur.fetchone()
    assert row is not None
    return int(row[0])


async def remote_fanout(env: Env, sizes: Sequence[int]) -> None:
    count, interval = 20, 0.05
    async with warm_pair(env) as (a, b):
        for n in sizes:
            try:
                start = time.time() + 1.0 + n * 0.03 + _STATS_FLUSH_SECONDS
                ids = await _start_tasks(a, [f"emit {count} {interval} {start}"])
                streams = await _follow_all(b, ids * n)
                pg = env.backend == "postgresql"
                before = await _committed(env.url) if pg else 0
                if time.time() > start:
                    print(f"# warning: subscribing took past the start ({n})", file=sys.stderr)
                lat, _ = await _drain(streams, 120)
                used = await _committed(env.url) - before if pg else 0
            except Exception as exc:
                env.failed("remote fan-out", n, exc)
                continue
            note = f"{len(lat)} events read, {count} emitted {interval * 1000:.0f} ms apart"
            env.point("remote fan-out latency p50", n, statistics.median(lat), "ms", None, note)
            env.point("remote fan-out latency p99", n, _pct(lat, 0.99), "ms", None, note)
            if pg:  # A's writes, B's reads, the checking connection's own
                env.point("database transactions per event", n, used / count, "1/event")


async def _cpu_over(node: Node, window: float) -> tuple[float, dict[str, int]]:
    before, c0, t0 = await node.stats(), node.cpu_seconds(), time.monotonic()
    await asyncio.sleep(window)
    c1, t1, after = node.cpu_seconds(), time.monotonic(), await node.stats()
    delta = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    return (c1 - c0) / (t1 - t0) * 100, delta


async def running(env: Env, sizes: Sequence[int]) -> None:
    lease = 2.0 if env.quick else None
    window = 3.0 if env.quick else 20.0
    settings = (
        "lease 2 s, renewed and swept every 0.67 s"
        if env.quick
        else ("defaults: lease 30 s, renewed every 10 s, swept every 10 s")
    )
    async with nodes(env, 1, lease) as (node_b,), client(node_b.url) as b:
        async with nodes(env, 1, lease) as (idle_a,):
            await asyncio.sleep(1.0)
            baseline, _ = await _cpu_over(idle_a, window)
        for n in sizes:
            node_a = await Node.start(env.url, lease, env.logs / f"{env.backend}-a-{n}.log")
            try:
                async with client(node_a.url) as a:
                    ids = await _start_tasks(a, ["slow"] * n)
                await asyncio.sleep(1.0)
                busy, calls = await _cpu_over(node_a, window)
                span = f"{window:g} s window; {settings}"
                env.point(
                    "lease renewals/s", n, calls.get("renewed", 0) / window, "1/s", None, span
                )
                trips = sum(calls.get(k, 0) for k in _LEASE_CALLS)
                env.point("lease round trips/s", n, trips / window, "1/s", None, span)
                env.point(
                    "lease CPU",
                    n,
                    busy - baseline,
                    "%core",
                    5,
                    f"A's CPU {busy:.2f}% minus idle {baseline:.2f}%; {span}",
                )
                streams = await _follow_all(b, ids)
                waits = await _orphans(node_a, streams)
                note = f"SIGKILL of A; {settings}"
                env.point("orphan settling p50", n, statistics.median(waits), "s", None, note)
                env.point("orphan settling max", n, max(waits), "s", None, note)
            except Exception as exc:  # a size that breaks is reported; the others still run
                env.failed("running tasks", n, exc)
            finally:
                node_a.kill()
                await node_a.stop()


async def _orphans(node_a: Node, streams: Sequence[Any]) -> list[float]:
    from a2a_core.types import TaskState

    waits: list[float] = []

    async def until_failed(stream: Any) -> None:
        async for event in stream:
            status = getattr(event, "status", None)
            if status is not None and status.state is TaskState.FAILED:
                waits.append(time.monotonic() - killed)

    node_a.kill()
    killed = time.monotonic()
    await asyncio.wait_for(asyncio.gather(*(until_failed(s) for s in streams)), 300)
    assert len(waits) == len(streams), (len(waits), len(streams))
    return waits


def _cleanup(prefix: str, schema: str) -> None:
    import psycopg
    import redis
    from psycopg import sql

    r = redis.Redis(host="127.0.0.1", port=6379, db=0)
    keys = list(r.scan_iter(match=f"{prefix}:*", count=1000))
    for i in range(0, len(keys), 1000):
        r.delete(*keys[i : i + 1000])
    r.close()
    with psycopg.connect(POSTGRES, autocommit=True, connect_timeout=5) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def _table(rows: Sequence[dict[str, Any]]) -> str:
    lines = ["| case | backend | n | value | unit | target |", "|---|---|---:|---:|---|---:|"]
    for r in rows:
        target = "" if r["target"] is None else f"{r['target']:g}"
        lines.append(
            f"| {r['case']} | {r['backend']} | {r['n']:,} | {r['value']:,.2f} | {r['unit']} "
            f"| {target} |"
        )
    return "\n".join(lines)


async def _run(args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[str]]:
    tag = uuid.uuid4().hex[:8]
    prefix, schema = f"a2a-scale-{tag}", f"a2a_scale_{tag}"
    urls = {"redis": f"{REDIS}?prefix={prefix}", "postgresql": f"{POSTGRES}?schema={schema}"}
    rows: list[dict[str, Any]] = []
    failures: list[str] = []
    latency_sizes = [1] if args.quick else [1, 10, 100]
    relay_sizes = [10] if args.quick else [10, 100]
    fanout_sizes = [10] if args.quick else [1, 10, 100]
    running_sizes = [10] if args.quick else [10, 100, 1000]
    logs = Path(tempfile.mkdtemp(prefix="scale-cluster-"))
    try:
        for backend in args.backends.split(","):
            env = Env(backend, urls[backend], args.label, args.quick, logs, rows, failures)
            if "latency" in args.parts:
                await cross_instance(env, latency_sizes, relay_sizes)
            if "fanout" in args.parts:
                await remote_fanout(env, fanout_sizes)
            if "running" in args.parts:
                await running(env, running_sizes)
    finally:
        _cleanup(prefix, schema)
    print(f"# server logs: {logs}", file=sys.stderr)
    return rows, failures


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["node"]:
        node = argparse.ArgumentParser(prog="scale_cluster.py node")
        node.add_argument("store")
        node.add_argument("--lease", type=float, default=None)
        opts = node.parse_args(argv[1:])
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_serve(opts.store, opts.lease))
        return 0
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--label", default="before")
    parser.add_argument("--backends", default="redis,postgresql")
    parser.add_argument("--parts", default="latency,fanout,running")
    args = parser.parse_args(argv)
    rows, failures = asyncio.run(_run(args))
    print(_table(rows))
    for text in failures:
        print(f"\n- {text}")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a") as fh:
            for row in rows:
                fh.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
