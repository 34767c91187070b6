"""Scale of event streams (issue #40, part ``streams``): cost per stream as N grows.

    uv run --no-sync python benchmarks/scale_streams.py [--quick] [--out FILE.jsonl]
        [--label before|after] [--sizes 100,1000,10000] [--impls ours,sdk] [--k 20]

One uvicorn server per (impl, case, N), as ``_harness`` starts them (pinned to
``SERVER_CPU``), serving a *waiting agent* (``scale_streams_app.py`` for ours, on the
``memory://`` store; ``scale_streams_sdk_app.py`` for the official a2a-sdk): a task
reports ``working``, waits until ``POST /bench/release``, then emits K events (K - 1
artifact updates, then ``completed``). The client is a separate process (this file
with ``--client``, pinned to ``CLIENT_CPU``, uvloop) speaking JSON-RPC 1.0
(``A2A-Version: 1.0``) over raw asyncio streams: it writes the HTTP request and
scans the SSE bytes, no A2A client library. The server's RSS is ``VmRSS`` and its CPU
the sum of its threads' ``/proc/<pid>/task/*/schedstat`` run time (ns resolution).

Cases (one JSON line each per impl and N):

- ``idle memory per stream`` (KB): N ``SendStreamingMessage`` streams, each its own
  task, each having read ``working``; (RSS with N open - RSS before) / N. Before = after
  a warm-up of 20 streams run to completion, 1 s of rest. Target 20 KB.
- ``idle cpu`` (% of one core): the same N idle streams, nothing sent but keep-alive
  pings (``ping_interval`` 15 s); server CPU over ``IDLE_CPU_SECONDS`` / that time.
  No target; it was how a timer per stream showed.
- ``idle memory per subscriber`` (KB): one task, its sender's stream and N
  ``SubscribeToTask`` streams that have each read the Task snapshot; (RSS then - RSS
  with the sender's stream alone) / N.
- ``cpu per event per subscriber`` (us): the same N + 1 streams; the task is released
  and emits K events to all of them; server CPU from the release until every stream
  has read ``completed`` / (K * (N + 1)). Target: flat within 1.5x from 100 to 10,000
  (``target`` holds 1.5 x the value at the smallest N of the same impl and label).
- ``first-event latency p50`` / ``p99`` (ms): for each of the N + 1 streams, the
  client's ``time.monotonic()`` when it read the first broadcast event minus the
  ``time.monotonic()`` the agent wrote into that event when it produced it (both
  processes on one host: the same clock). It is the fan-out delay: producing,
  encoding and writing the event to every stream, plus the client reading it.

A size an impl cannot hold (connection errors, a stream that did not reach its
state in time) is recorded with a note instead of a value (``value`` null).
``--quick``: N = 100 only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import selectors
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _harness as h

PART = "streams"
CONNECT_AT_ONCE = 200
"""Streams being opened at once by the client (the rest wait): a listen backlog fits it."""
SETUP_SECONDS = 240.0
IDLE_CPU_SECONDS = 30.0
"""Long enough for two keep-alive periods (7.5 s each with the default 15 s ping)."""
BROADCAST_SECONDS = 120.0
WORKING = b"TASK_STATE_WORKING"
COMPLETED = b"TASK_STATE_COMPLETED"
DATA = b"data:"
STAMP = re.compile(rb't=(\d+\.\d+)"')
TASK_ID = re.compile(rb'"taskId":\s*"([^"]+)"')


# -- the client process ------------------------------------------------------------------


class Stream:
    """One SSE response read as bytes: counts ``data:`` lines, finds needles across reads."""

    __slots__ = ("buf", "events", "first_seen", "first_stamp", "reader", "tail", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.buf = b""
        self.tail = b""
        self.events = 0
        self.first_stamp: float | None = None
        self.first_seen: float | None = None

    async def until(self, needle: bytes) -> None:
        """Read (keeping what was read) until ``needle`` is in it."""
        while needle not in self.buf:
            chunk = await self.reader.read(65536)
            if not chunk:
                raise ConnectionError(f"stream closed before {needle.decode()}: {self.buf[:300]!r}")
            self.buf += chunk

    async def follow_to_end(self) -> None:
        """Read the broadcast until ``completed``: count events, note the first stamp."""
        self.events = self.buf.count(DATA)  # what was read before it (the snapshot)
        self.tail = self.buf[-64:]
        self.buf = b""
        while True:
            chunk = await self.reader.read(65536)
            if not chunk:
                raise ConnectionError("stream closed before completed")
            now = time.monotonic()
            joined = self.tail + chunk
            self.events += joined.count(DATA, max(0, len(self.tail) - len(DATA) + 1))
            if self.first_stamp is None:
                found = STAMP.search(joined)
                if found is not None:
                    self.first_stamp = float(found.group(1))
                    self.first_seen = now
            if COMPLETED in joined:
                return
            self.tail = joined[-64:]

    def close(self) -> None:
        self.writer.close()


def _request(port: int, method: str, params: dict[str, Any], path: str = "/") -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    if method == "":
        body = json.dumps(params)
    raw = body.encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: text/event-stream\r\nA2A-Version: 1.0\r\nContent-Length: {len(raw)}\r\n\r\n"
    )
    return head.encode() + raw


def _send_params(i: int) -> dict[str, Any]:
    message = {"messageId": f"m-{i}-{time.monotonic_ns()}", "role": "ROLE_USER"}
    return {"message": {**message, "parts": [{"text": "wait"}]}}


async def open_stream(port: int, request: bytes, needle: bytes, gate: asyncio.Semaphore) -> Stream:
    async with gate:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        if b" 200 " not in head.split(b"\r\n", 1)[0]:
            writer.close()
            raise ConnectionError(head.split(b"\r\n", 1)[0].decode())
        stream = Stream(reader, writer)
        await stream.until(needle)
        return stream


async def release(port: int, task: str) -> int:
    """Release a waiting task (``*``: all waiting now); how many were released."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(_request(port, "", {"task": task}, "/bench/release"))
    head = await reader.readuntil(b"\r\n\r\n")
    length = re.search(rb"(?i)content-length:\s*(\d+)", head)
    body = await reader.readexactly(int(length.group(1))) if length else b"{}"
    writer.close()
    return int(json.loads(body).get("released", 0))


async def release_all(port: int, count: int) -> None:
    """Release ``count`` tasks (one may start waiting just after its ``working`` was read)."""
    released = 0
    deadline = time.monotonic() + 30
    while released < count and time.monotonic() < deadline:
        released += await release(port, "*")
        if released < count:
            await asyncio.sleep(0.05)


def _say(obj: dict[str, Any]) -> None:
    print(json.dumps(obj), flush=True)


async def _wait_go() -> None:
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    if line.strip() != "go":
        raise SystemExit("client: no go")


async def _open_many(
    port: int, requests: list[bytes], needle: bytes
) -> tuple[list[Stream], int, str]:
    gate = asyncio.Semaphore(CONNECT_AT_ONCE)
    results = await asyncio.gather(
        *(open_stream(port, r, needle, gate) for r in requests), return_exceptions=True
    )
    streams = [r for r in results if isinstance(r, Stream)]
    return streams, len(results) - len(streams), _first_error(results)


def _first_error(results: list[Any]) -> str:
    for r in results:
        if isinstance(r, BaseException):
            return f"{type(r).__name__}: {r}"[:200]
    return ""


async def client_idle(port: int, n: int) -> None:
    """N SendStreamingMessage streams held at ``working``; then all released."""
    requests = [_request(port, "SendStreamingMessage", _send_params(i)) for i in range(n)]
    try:
        streams, errors, error = await asyncio.wait_for(
            _open_many(port, requests, WORKING), SETUP_SECONDS
        )
    except TimeoutError:
        _say({"ready": 0, "errors": n, "note": f"not all {n} streams reached working in time"})
        return
    _say({"ready": len(streams), "errors": errors, "first_error": error})
    await _wait_go()
    await release_all(port, len(streams))
    try:
        results = await asyncio.wait_for(
            asyncio.gather(*(s.follow_to_end() for s in streams), return_exceptions=True),
            BROADCAST_SECONDS,
        )
    except TimeoutError:
        note = f"streams did not complete within {BROADCAST_SECONDS:.0f} s of the release"
        _say({"done": 0, "errors": len(streams), "note": note})
        return
    bad = sum(1 for r in results if isinstance(r, BaseException))
    _say({"done": len(streams) - bad, "errors": bad, "first_error": _first_error(results)})
    for s in streams:
        s.close()


async def client_fanout(port: int, n: int) -> None:
    """One task: its sender's stream and N SubscribeToTask streams; then K events to all."""
    gate = asyncio.Semaphore(1)
    owner = await open_stream(
        port, _request(port, "SendStreamingMessage", _send_params(0)), WORKING, gate
    )
    found = TASK_ID.search(owner.buf)
    if found is None:
        raise SystemExit(f"client: no task id in {owner.buf[:400]!r}")
    task_id = found.group(1).decode()
    await asyncio.sleep(0.5)
    _say({"owner": task_id})
    await _wait_go()  # the server's RSS with the sender's stream alone is read now
    request = _request(port, "SubscribeToTask", {"id": task_id})
    try:
        streams, errors, error = await asyncio.wait_for(
            _open_many(port, [request] * n, WORKING), SETUP_SECONDS
        )
    except TimeoutError:
        _say({"ready": 0, "errors": n, "note": f"not all {n} subscribers attached in time"})
        return
    _say({"ready": len(streams), "errors": errors, "first_error": error})
    await _wait_go()
    everyone = [owner, *streams]
    await release_all(port, 1)
    try:
        results = await asyncio.wait_for(
            asyncio.gather(*(s.follow_to_end() for s in everyone), return_exceptions=True),
            BROADCAST_SECONDS,
        )
    except TimeoutError:
        _say({"done": 0, "errors": len(everyone), "note": "broadcast did not finish in time"})
        return
    bad = [r for r in results if isinstance(r, BaseException)]
    latencies = [
        (s.first_seen - s.first_stamp) * 1e3
        for s in everyone
        if s.first_seen is not None and s.first_stamp is not None
    ]
    counts = [s.events for s in everyone]
    _say(
        {
            "done": len(everyone) - len(bad),
            "errors": len(bad),
            "first_error": _first_error(results),
            "latencies_ms": latencies,
            "events_min": min(counts),
            "events_max": max(counts),
        }
    )
    for s in everyone:
        s.close()


def client_main(mode: str, port: int, n: int) -> int:
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:  # pragma: no cover - uvloop is a dev dependency
        runner = asyncio.run
    runner(client_idle(port, n) if mode == "idle" else client_fanout(port, n))
    return 0


# -- the measuring process ---------------------------------------------------------------


def cpu_ns(pid: int) -> int:
    """The server's CPU time so far: the sum of its threads' scheduler run time."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError, ValueError):  # a thread that ended meanwhile
            total += int((task / "schedstat").read_text().split()[0])
    return total


class Client:
    """The client process, spoken to by lines (``go`` in, JSON out), pinned to CLIENT_CPU."""

    def __init__(self, settings: h.Settings, mode: str, port: int, n: int) -> None:
        argv = [settings.python, str(Path(__file__).resolve()), "--client", mode]
        argv += ["--port", str(port), "--n", str(n)]
        self.proc = subprocess.Popen(
            h.pinned(h.CLIENT_CPU, argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=settings.base_env,
        )
        self.selector = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)

    def read(self, timeout: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        if not self.selector.select(timeout):
            raise TimeoutError("client did not answer in time")
        line = self.proc.stdout.readline()
        if not line:
            assert self.proc.stderr is not None
            self.proc.wait(10)
            raise RuntimeError(f"client ended: {self.proc.stderr.read()[-1500:]}")
        return json.loads(line)

    def go(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.selector.close()


@dataclass(frozen=True)
class Point:
    case: str
    impl: str
    n: int
    value: float | None
    unit: str
    target: float | None = None
    note: str = ""


def _impls(k: int) -> dict[str, h.Impl]:
    env = {"SCALE_K": str(k)}
    return {
        "ours": h.Impl("ours", "benchmarks.scale_streams_app:create_app", h.REPO, env=env),
        "sdk": h.Impl("sdk", "benchmarks.scale_streams_sdk_app:create_app", h.REPO, env=env),
    }


def _warm(settings: h.Settings, server: h.Server) -> None:
    client = Client(settings, "idle", server.port, 20)
    try:
        client.read(60)
        client.go()
        client.read(60)
    finally:
        client.close()
    time.sleep(1.0)


def measure_idle(settings: h.Settings, impl: h.Impl, n: int) -> list[Point]:
    case = "idle memory per stream"
    with h.Server(settings, impl, {}) as server:
        _warm(settings, server)
        before = h.rss_kib(server.pid)
        client = Client(settings, "idle", server.port, n)
        try:
            ready = client.read(SETUP_SECONDS + 30)
            if ready["errors"] or not ready["ready"]:
                failure = f"{ready['errors']} of {n} failed: {ready.get('first_error')}"
                note = ready.get("note") or failure
                return [
                    Point(case, impl.name, n, None, "KB", 20.0, note),
                    Point("idle cpu", impl.name, n, None, "%", None, note),
                ]
            time.sleep(1.0)
            after = h.rss_kib(server.pid)
            cpu0, t0 = cpu_ns(server.pid), time.monotonic()
            time.sleep(IDLE_CPU_SECONDS)
            idle_cpu = (cpu_ns(server.pid) - cpu0) / 1e9 / (time.monotonic() - t0) * 100
            client.go()
            done = client.read(BROADCAST_SECONDS + 30)
        finally:
            client.close()
    note = done.get("note") or f"{done['errors']} streams failed after release"
    note = note if done["errors"] else ""
    return [
        Point(case, impl.name, n, (after - before) / n, "KB", 20.0, note),
        Point("idle cpu", impl.name, n, idle_cpu, "%", None, note),
    ]


def measure_fanout(settings: h.Settings, impl: h.Impl, n: int, k: int) -> list[Point]:
    cases = (
        ("idle memory per subscriber", "KB"),
        ("cpu per event per subscriber", "us"),
        ("first-event latency p50", "ms"),
        ("first-event latency p99", "ms"),
    )

    def failed(note: str) -> list[Point]:
        return [Point(c, impl.name, n, None, u, None, note) for c, u in cases]

    with h.Server(settings, impl, {}) as server:
        _warm(settings, server)
        client = Client(settings, "fanout", server.port, n)
        try:
            client.read(60)
            time.sleep(0.5)
            rss0 = h.rss_kib(server.pid)
            client.go()
            ready = client.read(SETUP_SECONDS + 30)
            if ready["errors"] or not ready["ready"]:
                note = f"{ready['errors']} of {n} subscribers failed: {ready.get('first_error')}"
                return failed(ready.get("note") or note)
            time.sleep(1.0)
            rss1 = h.rss_kib(server.pid)
            cpu0 = cpu_ns(server.pid)
            client.go()
            done = client.read(BROADCAST_SECONDS + 30)
            cpu1 = cpu_ns(server.pid)
        finally:
            client.close()
    if done["errors"]:
        return failed(done.get("note") or f"{done['errors']} streams failed: {done['first_error']}")
    streams = n + 1
    note = "" if done["events_min"] == done["events_max"] else "uneven event counts"
    lat = done["latencies_ms"]
    return [
        Point(cases[0][0], impl.name, n, (rss1 - rss0) / n, "KB", 20.0),
        Point(cases[1][0], impl.name, n, (cpu1 - cpu0) / 1e3 / (k * streams), "us", None, note),
        Point(cases[2][0], impl.name, n, statistics.median(lat) if lat else None, "ms"),
        Point(cases[3][0], impl.name, n, h.p99(lat) if lat else None, "ms"),
    ]


def _flat_targets(points: list[Point]) -> list[Point]:
    """The CPU case's target: 1.5 x its value at the smallest N (per impl)."""
    out = []
    for p in points:
        if p.case == "cpu per event per subscriber":
            base = [
                q for q in points if q.case == p.case and q.impl == p.impl and q.value is not None
            ]
            if base:
                first = min(base, key=lambda q: q.n)
                p = Point(p.case, p.impl, p.n, p.value, p.unit, 1.5 * first.value)  # type: ignore[operator]
        out.append(p)
    return out


def _settings() -> h.Settings:
    """The harness's settings, without the shared bench tools (this bench brings its own)."""
    python = h.default_python()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    log_dir = Path(os.environ.get("TMPDIR", "/tmp")) / "scale_streams"
    log_dir.mkdir(parents=True, exist_ok=True)
    return h.Settings(python, h.REPO, h.fast_io(python, env), env, log_dir)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 100 only")
    parser.add_argument("--out", type=Path, default=None, help="append JSON lines here")
    parser.add_argument("--label", default="after", choices=("before", "after"))
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--impls", default="ours,sdk")
    parser.add_argument("--k", type=int, default=20, help="events per broadcast")
    parser.add_argument("--client", choices=("idle", "fanout"), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.client:
        return client_main(args.client, args.port, args.n)
    sizes = [100] if args.quick else [int(s) for s in args.sizes.split(",")]
    settings = _settings()
    impls = _impls(args.k)
    points: list[Point] = []
    for name in args.impls.split(","):
        for n in sizes:
            with h.timer(f"{name} N={n}"):
                points += measure_idle(settings, impls[name], n)
                points += measure_fanout(settings, impls[name], n, args.k)
    points = _flat_targets(points)
    _report(points, args, settings)
    return 0


def _report(points: list[Point], args: argparse.Namespace, settings: h.Settings) -> None:
    print(f"\n## Streams at scale ({args.label}; {settings.io_label}; K={args.k})\n")
    print("| case | impl | N | value | unit | target | note |")
    print("|---|---|--:|--:|---|--:|---|")
    for p in points:
        digits = 3 if p.unit in ("us", "ms", "%") else 1
        print(
            f"| {p.case} | {p.impl} | {p.n:,} | {h.fmt(p.value, digits)} | {p.unit} "
            f"| {h.fmt(p.target, 1)} | {p.note} |"
        )
    lines = [
        json.dumps(
            {
                "part": PART,
                "case": p.case,
                "impl": p.impl,
                "backend": "memory",
                "n": p.n,
                "value": None if p.value is None else round(p.value, 3),
                "unit": p.unit,
                "label": args.label,
                "target": None if p.target is None else round(p.target, 3),
                "note": p.note,
            }
        )
        for p in points
    ]
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a") as fh:
            fh.write("\n".join(lines) + "\n")
    else:
        print("\n" + "\n".join(lines))


if __name__ == "__main__":
    raise SystemExit(main())
