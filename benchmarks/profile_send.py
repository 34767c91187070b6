"""cProfile of our server on the blocking send path (task mode, 1 then 32 connections).

    uv run python benchmarks/profile_send.py [--duration 8]

The server runs under ``python -m cProfile`` (so every figure is inflated by
the profiler; compare shares, not absolutes). Prints self time by component,
the functions with the most self time, and our functions by cumulative time.
"""

from __future__ import annotations

import argparse
import os
import pstats
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _harness as h

Key = tuple[str, int, str]


def _where(key: Key) -> str:
    """A short, machine-independent name for a profiled function."""
    file, line, func = key
    if file == "~":
        return func
    m = re.search(r"(a2a_core/.*|site-packages/(.*)|lib/python3\.\d+/(.*))$", file)
    path = file if m is None else (m.group(2) or m.group(3) or m.group(1))
    return f"{path}:{line}:{func}"


def _component(key: Key) -> str:
    file, _, func = key
    if file == "~":
        for needle, name in (
            ("pydantic_core", "pydantic-core (validation/serialization, C)"),
            ("orjson", "json (orjson/json, C)"),
            ("json", "json (orjson/json, C)"),
            ("uvloop", "event loop (C)"),
            ("httptools", "http parser (C)"),
        ):
            if needle in func:
                return name
        return "other builtins (C)"
    m = re.search(r"a2a_core/(.*)$", file)
    if m:
        parts = m.group(1).split("/")
        return "a2a_core/" + "/".join(parts)
    for needle, name in (
        ("site-packages/pydantic", "pydantic (python)"),
        ("site-packages/uvicorn", "uvicorn"),
        ("site-packages/h11", "h11"),
        ("/asyncio/", "asyncio (python)"),
        ("site-packages/", "other site-packages"),
    ):
        if needle in file:
            return name
    return "stdlib (other)"


def analyse(path: Path, requests: int) -> list[str]:
    stats = pstats.Stats(str(path))
    raw: dict[Key, tuple[int, int, float, float, object]] = stats.stats  # type: ignore[attr-defined]
    idle = sum(v[2] for k, v in raw.items() if _is_idle(k))
    raw = {k: v for k, v in raw.items() if not _is_idle(k)}
    total = sum(v[2] for v in raw.values())
    by_comp: dict[str, float] = defaultdict(float)
    for key, (_cc, _nc, tt, _ct, _callers) in raw.items():
        by_comp[_component(key)] += tt
    lines = [
        f"Profiled {requests:,} requests; {total:.2f} s of self time under the profiler "
        f"({total / max(requests, 1) * 1e6:.0f} µs/request, inflated by cProfile; "
        f"{idle:.2f} s idle in the event loop's poll left out).",
        "",
        "Self time by component:",
        "",
        "| component | share |",
        "|---|---|",
    ]
    for comp, tt in sorted(by_comp.items(), key=lambda kv: -kv[1])[:18]:
        lines.append(f"| {comp} | {100 * tt / total:.1f}% |")
    lines += ["", "Top functions by self time:", "", "| function | calls/request | self % |"]
    lines.append("|---|---|---|")
    top = sorted(raw.items(), key=lambda kv: -kv[1][2])[:25]
    for key, (_cc, nc, tt, _ct, _callers) in top:
        lines.append(f"| `{_where(key)}` | {nc / max(requests, 1):.2f} | {100 * tt / total:.1f}% |")
    lines += ["", "Our functions by cumulative time (per request, under the profiler):", ""]
    lines += ["| function | calls/request | cumulative µs/request |", "|---|---|---|"]
    ours = [(k, v) for k, v in raw.items() if "a2a_core" in k[0]]
    for key, (_cc, nc, _tt, ct, _callers) in sorted(ours, key=lambda kv: -kv[1][3])[:25]:
        lines.append(
            f"| `{_where(key)}` | {nc / max(requests, 1):.2f} | {ct / max(requests, 1) * 1e6:.0f} |"
        )
    return lines


IDLE = ("poll' of 'select.epoll", "run_forever", "run_until_complete", "select.select")


def _is_idle(key: Key) -> bool:
    return key[0] == "~" and any(needle in key[2] for needle in IDLE)


def profile_http(settings: h.Settings, out: Path, duration: float) -> tuple[Path, int]:
    """Our server under load; the profiler is on only while the measured load runs."""
    impl = h.implementations(settings.tools)["ours"]
    prof = out / "ours_task_send_http.prof"
    requests = 0
    with h.Server(settings, impl, {"ECHO_MODE": "task"}, profile_to=prof) as server:
        h.loadgen(settings, server, "send_v1.json", connections=8, duration=1.0, warmup=0.0)
        os.kill(server.pid, signal.SIGUSR1)
        for conns in (1, 32):
            res = h.loadgen(
                settings, server, "send_v1.json", connections=conns, duration=duration, warmup=0.0
            )
            requests += res["requests"]
        os.kill(server.pid, signal.SIGUSR2)
        deadline = time.monotonic() + 30
        while not prof.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(0.5)
    return prof, requests


def profile_inproc(settings: h.Settings, out: Path, n: int) -> tuple[Path, int]:
    """The ASGI app called directly (no HTTP server): our code alone."""
    prof = out / "ours_task_send_inproc.prof"
    env = {
        **settings.base_env,
        "ECHO_MODE": "task",
        "BENCH_BODIES": str(settings.tools / "bodies"),
        "INPROC_N": str(n),
        "INPROC_PROFILE": str(prof),
    }
    argv = [settings.python, "-c", h.INPROC_CODE, "benchmarks.echo_app:create_app", "factory"]
    subprocess.run(
        h.pinned(h.SERVER_CPU, [*argv, str(h.REPO)]), env=env, check=True, capture_output=True
    )
    return prof, n


def run(settings: h.Settings, out: Path, duration: float, inproc_n: int = 3000) -> list[str]:
    lines: list[str] = []
    prof, requests = profile_http(settings, out, duration)
    lines += [f"### Over HTTP (uvicorn, {settings.io_label}, 1 then 32 connections)", ""]
    lines += analyse(prof, requests) if prof.exists() else ["(no profile was written)"]
    prof, requests = profile_inproc(settings, out, inproc_n)
    lines += ["", "### In process (ASGI app called directly)", "", *analyse(prof, requests)]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--duration", type=float, default=8.0)
    ap.add_argument("--python", default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--inproc-n", type=int, default=3000)
    args = ap.parse_args()
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="a2a-prof-"))
    settings = h.Settings.detect(args.python, out)
    print("\n".join(run(settings, out, args.duration, args.inproc_n)))


if __name__ == "__main__":
    main()
