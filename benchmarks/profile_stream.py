"""CPU and cProfile of our streaming send (``SendStreamingMessage``, 100 artifact chunks).

    uv run python benchmarks/profile_stream.py [--n 300] [--chunks 100] [--runs 3] [--no-profile]
        [--before REF]

The echo agent (``echo_app``, task mode, ``ECHO_CHUNKS``) is called as an ASGI app in
process (no HTTP server, no sockets: the A2A layer alone, as the in-process table of
``server_bench.py``), pinned to one core. Each call streams K + 2 events (the task, K
artifact chunks, the final status) as SSE. First it prints the CPU per stream and per
event (``time.process_time``, median of ``--runs`` fresh processes, profiler off), then,
unless ``--no-profile``, one profiled run: self time by component, the functions with the
most self time and ours by cumulative time (inflated by cProfile: compare shares).
``--before REF`` also measures the core's sources at git ``REF`` (first on ``PYTHONPATH``),
each run right after one of ours (interleaved), and prints both medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _harness as h
from profile_send import analyse

STREAM_CODE = r"""
import asyncio, json, os, sys, time, uuid
sys.path[:0] = sys.argv[1:]
from echo_app import create_app
app = create_app()
body_tpl = open(os.path.join(os.environ["BENCH_BODIES"], "stream_v1.json"), "rb").read().strip()
N = int(os.environ["INPROC_N"])
EXPECTED = int(os.environ["ECHO_CHUNKS"]) + 2

async def one(app):
    body = body_tpl.replace(b"%UUID%", uuid.uuid4().hex.encode())
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": "/", "raw_path": b"/", "root_path": "", "query_string": b"",
             "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
                         (b"accept", b"text/event-stream"), (b"a2a-version", b"1.0"),
                         (b"content-length", str(len(body)).encode())],
             "client": ("127.0.0.1", 5), "server": ("127.0.0.1", 80), "state": {}}
    events = 0
    done = False
    async def receive():
        nonlocal done
        if not done:
            done = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(3600)
    async def send(msg):
        nonlocal events
        if msg["type"] == "http.response.body":
            data = msg.get("body", b"")
            events += data.count(b"\ndata: ") + data.startswith(b"data: ")
    await app(scope, receive, send)
    assert events == EXPECTED, events

async def main():
    for _ in range(30):
        await one(app)
    prof_path = os.environ.get("INPROC_PROFILE")
    if prof_path:
        import cProfile
        prof = cProfile.Profile()
        prof.enable()
    c0 = time.process_time()
    for _ in range(N):
        await one(app)
    c1 = time.process_time()
    if prof_path:
        prof.disable()
        prof.dump_stats(prof_path)
    print(json.dumps({"us_cpu_stream": (c1 - c0) / N * 1e6}))

asyncio.run(main())
"""


def sources_at(ref: str) -> str:
    """The core package's sources at git ``ref``, unpacked into a temporary directory."""
    target = tempfile.mkdtemp(prefix="a2a-stream-before-")
    archive = subprocess.run(
        ["git", "archive", ref, "packages/a2a-core/src"],
        cwd=h.REPO,
        capture_output=True,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", target], input=archive.stdout, check=True)
    return str(Path(target) / "packages" / "a2a-core" / "src")


def run_once(
    settings: h.Settings, n: int, chunks: int, profile: Path | None, sources: str | None = None
) -> float:
    """CPU µs per stream in a fresh process pinned to the server core."""
    extra: dict[str, Any] = {}
    if sources is not None:
        paths = [sources, *filter(None, [settings.base_env.get("PYTHONPATH")])]
        extra["PYTHONPATH"] = os.pathsep.join(paths)
    env = {
        **settings.base_env,
        **extra,
        "ECHO_MODE": "task",
        "ECHO_CHUNKS": str(chunks),
        "BENCH_BODIES": str(settings.tools / "bodies"),
        "INPROC_N": str(n),
    }
    if profile is not None:
        env["INPROC_PROFILE"] = str(profile)
    argv = [settings.python, "-c", STREAM_CODE, str(h.REPO / "benchmarks"), str(h.REPO)]
    done = subprocess.run(
        h.pinned(h.SERVER_CPU, argv), env=env, check=True, capture_output=True, text=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])["us_cpu_stream"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n", type=int, default=300, help="streams per run")
    ap.add_argument("--chunks", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--python", default=None)
    ap.add_argument("--before", metavar="REF", help="also measure the core's sources at REF")
    args = ap.parse_args()
    out = Path(tempfile.mkdtemp(prefix="a2a-prof-stream-"))
    settings = h.Settings.detect(args.python, out)
    events = args.chunks + 2
    before = sources_at(args.before) if args.before else None
    samples: list[float] = []
    earlier: list[float] = []
    for _ in range(args.runs):
        samples.append(run_once(settings, args.n, args.chunks, None))
        if before is not None:
            earlier.append(run_once(settings, args.n, args.chunks, None, before))
    print(
        f"In process, {events} events per stream, {args.n} streams x {args.runs} runs; "
        f"load average {os.getloadavg()[0]:.1f}:"
    )
    for name, runs in (("ours", samples), (f"before ({args.before})", earlier)):
        if runs:
            med = statistics.median(runs)
            print(
                f"  {name}: CPU {med:,.0f} µs per stream ({med / events:.1f} µs per event; "
                f"runs: {', '.join(f'{s:,.0f}' for s in runs)})"
            )
    if not args.no_profile:
        prof = out / "ours_stream_inproc.prof"
        run_once(settings, max(args.n // 3, 1), args.chunks, prof)
        print("\n".join(["", *analyse(prof, max(args.n // 3, 1))]))


if __name__ == "__main__":
    main()
