"""Server memory growth per 10,000 completed tasks in the in-memory store: ours vs the SDK.

    uv run python benchmarks/memory_bench.py [--tasks 10000] [--only compact,reference]

Each server (task mode, blocking SendMessage) gets 100 warm-up requests, then
N more over 8 connections; the growth is the RSS after those N (and 2 s of
rest) minus the RSS after the warm-up. The stored count is checked with
ListTasks (``totalSize``). Our store is bounded (``max_tasks``, 10,000 by
default, evicting old terminal tasks), so the comparable run raises it above
N + warm-up; a second run with the default bound shows the eviction at work.
Ours runs with both in-memory stores: ``CompactMemoryTaskStore`` (what ``memory://``
opens) and the reference ``MemoryTaskStore`` (``ECHO_STORE``, benchmarks/echo_app.py).
``--only`` keeps the cases whose label contains one of the given words.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _harness as h

WARMUP_REQUESTS = 100
MAX_BATCHES = 4


def probe(settings: h.Settings, impl: h.Impl, env: dict[str, str], n: int) -> dict[str, Any]:
    with h.Server(settings, impl, env) as server:
        r0 = h.rss_kib(server.pid)
        common = {"connections": 8, "warmup": 0.0}
        h.loadgen(
            settings, server, "send_v1.json", duration=60, max_requests=WARMUP_REQUESTS, **common
        )
        r1 = h.rss_kib(server.pid)
        t0 = time.monotonic()
        done = errors = 0
        for _ in range(MAX_BATCHES):  # loadgen stops at 120 s: a slow server needs batches
            res = h.loadgen(
                settings, server, "send_v1.json", duration=120, max_requests=n - done, **common
            )
            done += res["requests"]
            errors += res["rpc_errors"] + res["io_errors"]
            if done >= n or not res["requests"]:
                break
        elapsed = time.monotonic() - t0
        time.sleep(2)
        r2 = h.rss_kib(server.pid)
        listed = h.rpc(server, "ListTasks", {"pageSize": 1})
        total = (listed.get("result") or {}).get("totalSize", listed.get("error"))
    return {
        "rss_start_kib": r0,
        "rss_warm_kib": r1,
        "rss_end_kib": r2,
        "requests": done,
        "errors": errors,
        "seconds": round(elapsed, 1),
        "stored": total,
        "growth_kib": r2 - r1,
        "per_10k_mb": (r2 - r1) / 1024 * 10_000 / done if done else None,
    }


def run(settings: h.Settings, n: int, only: list[str]) -> dict[str, dict[str, Any]]:
    impls = h.implementations(settings.tools)
    bound = {"ECHO_MODE": "task", "ECHO_MAX_TASKS": str(n + 2 * WARMUP_REQUESTS)}
    cases = {
        f"ours, compact (max_tasks={n + 2 * WARMUP_REQUESTS:,})": (
            impls["ours"],
            {**bound, "ECHO_STORE": "compact"},
        ),
        f"ours, reference (max_tasks={n + 2 * WARMUP_REQUESTS:,})": (
            impls["ours"],
            {**bound, "ECHO_STORE": "reference"},
        ),
        "a2a-sdk": (impls["sdk"], {"ECHO_MODE": "task"}),
        "ours, compact (default max_tasks=10,000)": (
            impls["ours"],
            {"ECHO_MODE": "task", "ECHO_STORE": "compact"},
        ),
    }
    out: dict[str, dict[str, Any]] = {}
    for label, (impl, env) in cases.items():
        if only and not any(word in label for word in only):
            continue
        out[label] = probe(settings, impl, env, n)
        m = out[label]
        print(
            f"memory {label:<34} +{m['growth_kib']:>6} KiB after {m['requests']} tasks "
            f"({h.fmt(m['per_10k_mb'], 1)} MB/10k) stored={m['stored']} rss={m['rss_end_kib']} KiB",
            flush=True,
        )
    return out


def table(res: dict[str, dict[str, Any]], n: int) -> list[str]:
    lines = [
        f"Task-mode blocking SendMessage, {WARMUP_REQUESTS} warm-up then {n:,} requests over 8 "
        "connections; growth = RSS 2 s after the last request minus RSS after the warm-up.",
        "",
        "| server | RSS at start MB | after warm-up MB | after N MB | growth MB "
        "| MB per 10,000 tasks | ListTasks.totalSize | errors |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, m in res.items():
        lines.append(
            f"| {label} | {m['rss_start_kib'] / 1024:.1f} | {m['rss_warm_kib'] / 1024:.1f} | "
            f"{m['rss_end_kib'] / 1024:.1f} | {m['growth_kib'] / 1024:.1f} | "
            f"{h.fmt(m['per_10k_mb'], 1)} | {m['stored']} | {m['errors']} |"
        )
    ours = next((m for k, m in res.items() if k.startswith("ours, compact (max")), None)
    sdk = res.get("a2a-sdk")
    if ours and sdk and ours["per_10k_mb"] is not None and sdk["per_10k_mb"]:
        share = ours["per_10k_mb"] / sdk["per_10k_mb"]
        state = "MET" if share <= 0.5 else "not met"
        lines += [
            "",
            f"- ours grows {100 * share:.0f}% of the SDK's growth per 10,000 stored tasks; "
            f"target <= 50%: **{state}**",
        ]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--python", default=None)
    ap.add_argument("--only", default="", help="comma-separated words: run only those cases")
    args = ap.parse_args()
    settings = h.Settings.detect(args.python, Path(tempfile.mkdtemp(prefix="a2a-mem-")))
    res = run(settings, args.tasks, [w for w in args.only.split(",") if w])
    print("\n".join(table(res, args.tasks)))


if __name__ == "__main__":
    main()
