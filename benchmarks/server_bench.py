"""Our A2A server next to the official SDK and the bare-ASGI ceiling, in one run.

    uv run python benchmarks/server_bench.py                 # ~5 min: servers, memory, import
    uv run python benchmarks/server_bench.py --runs 3        # medians of 3 runs
    uv run python benchmarks/server_bench.py --only 'send'   # labels matching a regex
    uv run python benchmarks/server_bench.py --profile       # + cProfile of our blocking send

Each implementation runs under the same uvicorn (uvloop + httptools when the
interpreter has them, else asyncio + h11 for all), pinned to CPU0; the shared
load generator runs pinned to CPU1 and reports server CPU microseconds per
request (the robust figure on a shared machine). The summary (markdown) goes
to ``benchmarks/results/<date>-summary.md`` unless ``--summary`` says
otherwise; raw loadgen JSON lines go to ``--out``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _harness as h


@dataclass(frozen=True)
class Point:
    label: str
    """``<impl>.<what>.c<N>``; ``what`` is ``task.send``, ``msg.send``, ``task.stream3``..."""
    body: str
    connections: int
    sse: bool = False


@dataclass(frozen=True)
class Group:
    """One server configuration and the points measured against it."""

    impl: str
    env: dict[str, str]
    points: tuple[Point, ...]


def _pair(impl: str) -> list[Group]:
    return [
        Group(
            impl,
            {"ECHO_MODE": "task"},
            (
                Point(f"{impl}.task.send.c1", "send_v1.json", 1),
                Point(f"{impl}.task.send.c32", "send_v1.json", 32),
                Point(f"{impl}.task.stream3.c1", "stream_v1.json", 1, sse=True),
            ),
        ),
        Group(impl, {"ECHO_MODE": "message"}, (Point(f"{impl}.msg.send.c1", "send_v1.json", 1),)),
        Group(
            impl,
            {"ECHO_MODE": "task", "ECHO_CHUNKS": "100"},
            (Point(f"{impl}.task.stream102.c1", "stream_v1.json", 1, sse=True),),
        ),
    ]


CEILING = [
    Group(
        "ceil",
        {"CEIL_EVENTS": "3"},
        (
            Point("ceil.raw.send.c1", "send_v1.json", 1),
            Point("ceil.raw.send.c32", "send_v1.json", 32),
            Point("ceil.raw.stream3.c1", "stream_v1.json", 1, sse=True),
        ),
    ),
    Group(
        "ceil",
        {"CEIL_EVENTS": "102"},
        (Point("ceil.raw.stream102.c1", "stream_v1.json", 1, sse=True),),
    ),
]


def plan(run_index: int) -> list[Group]:
    """Ours and the SDK interleaved per configuration (order flipped every run), then ceilings."""
    ours, sdk = _pair("ours"), _pair("sdk")
    groups: list[Group] = []
    for a, b in zip(ours, sdk, strict=True):
        groups += [a, b] if run_index % 2 == 0 else [b, a]
    return groups + CEILING


def run_servers(
    settings: h.Settings, args: argparse.Namespace, out: Path
) -> dict[str, list[dict[str, Any]]]:
    impls = h.implementations(settings.tools)
    only = re.compile(args.only)
    rows: dict[str, list[dict[str, Any]]] = {}
    with open(out / "results.jsonl", "a") as sink:
        for run in range(args.runs):
            for group in plan(run):
                points = [p for p in group.points if only.search(p.label)]
                if not points:
                    continue
                with h.Server(settings, impls[group.impl], group.env) as server:
                    for point in points:
                        res = h.loadgen(
                            settings,
                            server,
                            point.body,
                            connections=point.connections,
                            duration=args.duration,
                            warmup=args.warmup,
                            sse=point.sse,
                        )
                        row = {
                            "label": point.label,
                            "run": run + 1,
                            "server_rss_kb": h.rss_kib(server.pid),
                            "res": res,
                        }
                        sink.write(json.dumps(row) + "\n")
                        sink.flush()
                        rows.setdefault(point.label, []).append(row)
                        print(_line(row), flush=True)
    return rows


def _line(row: dict[str, Any]) -> str:
    r = row["res"]
    cpu = r.get("cpu") or {}
    sse = r.get("sse") or {}
    text = (
        f"{row['label']:<24} run={row['run']} rps={r['rps']:>9} p50={r['lat_ms']['p50']:>8}ms "
        f"us/req={cpu.get('server_cpu_us_per_req')} util={cpu.get('server_util')} "
        f"foreign={cpu.get('foreign_cores')} err={r['rpc_errors']}/{r['io_errors']}"
    )
    if sse:
        text += f" ev/s={sse['events_per_s']} ttfe50={sse['ttfe_ms']['p50']}ms"
    return text


# ---------------------------------------------------------------------------- summary
def load_rows(path: Path) -> dict[str, list[dict[str, Any]]]:
    rows: dict[str, list[dict[str, Any]]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            rows.setdefault(row["label"], []).append(row)
    return rows


def aggregate(rows: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    agg: dict[str, dict[str, Any]] = {}
    for label, rs in rows.items():
        res = [r["res"] for r in rs]
        agg[label] = {
            "runs": len(rs),
            "rps": h.median([x["rps"] for x in res]),
            "p50": h.median([x["lat_ms"]["p50"] for x in res]),
            "p99": h.median([x["lat_ms"]["p99"] for x in res]),
            "us": h.median([(x.get("cpu") or {}).get("server_cpu_us_per_req") for x in res]),
            "evs": h.median([(x.get("sse") or {}).get("events_per_s") for x in res]),
            "ttfe": h.median([((x.get("sse") or {}).get("ttfe_ms") or {}).get("p50") for x in res]),
            "ev_per_stream": h.median(
                [(x.get("sse") or {}).get("events_per_stream_mean") for x in res]
            ),
            "foreign": max(((x.get("cpu") or {}).get("foreign_cores") or 0.0) for x in res),
            "errors": sum(
                x["rpc_errors"]
                + x["io_errors"]
                + sum(v for k, v in x["status"].items() if k != "200")
                for x in res
            ),
        }
    return agg


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _get(row: dict[str, Any] | None, key: str) -> float | None:
    return None if row is None else row[key]


def _x(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}x"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


WHATS = ["task.send.c1", "task.send.c32", "msg.send.c1", "task.stream3.c1", "task.stream102.c1"]
CEIL_FOR = {
    "task.send.c1": "ceil.raw.send.c1",
    "task.send.c32": "ceil.raw.send.c32",
    "msg.send.c1": "ceil.raw.send.c1",
    "task.stream3.c1": "ceil.raw.stream3.c1",
    "task.stream102.c1": "ceil.raw.stream102.c1",
}


def server_tables(agg: dict[str, dict[str, Any]]) -> list[str]:
    out = [
        "| label | runs | req/s | p50 ms | p99 ms | server CPU µs/req | events/s "
        "| first event p50 ms | max foreign load (cores) | errors |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    order = [f"{impl}.{what}" for impl in ("ours", "sdk") for what in WHATS]
    order += sorted(k for k in agg if k.startswith("ceil."))
    for label in order:
        a = agg.get(label)
        if a is None:
            continue
        out.append(
            f"| {label} | {a['runs']} | {h.fmt(a['rps'])} | {h.fmt(a['p50'], 2)} | "
            f"{h.fmt(a['p99'], 2)} | {h.fmt(a['us'])} | {h.fmt(a['evs'])} | "
            f"{h.fmt(a['ttfe'], 2)} | {a['foreign']:.2f} | {a['errors']} |"
        )
    out += [
        "",
        "Ratios (ours over SDK / over the raw-ASGI ceiling). Throughput ratio = req/s "
        "(events/s for streams); CPU ratio = the other's server CPU per request divided by ours "
        "(how many times less CPU we spend; robust to foreign load).",
        "",
        "| path | ours÷SDK throughput | SDK÷ours CPU/req | ours÷ceiling throughput "
        "| ceiling÷ours CPU/req |",
        "|---|---|---|---|---|",
    ]
    for what in WHATS:
        ours, sdk = agg.get(f"ours.{what}"), agg.get(f"sdk.{what}")
        ceil = agg.get(CEIL_FOR[what])
        if ours is None:
            continue
        key = "evs" if "stream" in what else "rps"
        out.append(
            f"| {what} | {_x(_ratio(ours[key], _get(sdk, key)))} | "
            f"{_x(_ratio(_get(sdk, 'us'), ours['us']))} | "
            f"{_pct(_ratio(ours[key], _get(ceil, key)))} | "
            f"{_pct(_ratio(_get(ceil, 'us'), ours['us']))} |"
        )
    return out


def verdicts(agg: dict[str, dict[str, Any]]) -> list[str]:
    """The DESIGN.md targets, met or not, from this run's figures."""
    lines: list[str] = []

    def get(label: str, key: str) -> float | None:
        a = agg.get(label)
        return None if a is None else a[key]

    for conc in ("c1", "c32"):
        o_rps, s_rps = get(f"ours.task.send.{conc}", "rps"), get(f"sdk.task.send.{conc}", "rps")
        o_us, s_us = get(f"ours.task.send.{conc}", "us"), get(f"sdk.task.send.{conc}", "us")
        c_rps, c_us = get(f"ceil.raw.send.{conc}", "rps"), get(f"ceil.raw.send.{conc}", "us")
        cpu_x, rps_x = _ratio(s_us, o_us), _ratio(o_rps, s_rps)
        ceil_cpu, ceil_rps = _ratio(c_us, o_us), _ratio(o_rps, c_rps)
        if cpu_x is None:
            continue
        state = "MET" if cpu_x >= 10 else ("NOT DONE (<5x)" if cpu_x < 5 else "not met (5-10x)")
        lines.append(
            f"- blocking send (task), {conc}: {_x(cpu_x)} less server CPU than the SDK "
            f"({_x(rps_x)} req/s); target >= 10x: **{state}**"
        )
        if ceil_cpu is not None:
            state = "MET" if ceil_cpu >= 0.25 else "not met"
            lines.append(
                f"- blocking send (task), {conc}: {_pct(ceil_cpu)} of the raw-ASGI ceiling by CPU "
                f"({_pct(ceil_rps)} by req/s); target >= 25%: **{state}**"
            )
    for what in ("task.stream3.c1", "task.stream102.c1"):
        ratio = _ratio(get(f"ours.{what}", "evs"), get(f"sdk.{what}", "evs"))
        cpu_x = _ratio(get(f"sdk.{what}", "us"), get(f"ours.{what}", "us"))
        if ratio is None or cpu_x is None:
            continue
        ttfe = get(f"ours.{what}", "ttfe")
        ceil_ttfe = get(CEIL_FOR[what], "ttfe")
        lines.append(
            f"- streaming {what}: {_x(cpu_x)} less server CPU per stream than the SDK, "
            f"{_x(ratio)} its events/s; target >= 10x: **{'MET' if cpu_x >= 10 else 'not met'}**"
            f" (by CPU), **{'MET' if ratio >= 10 else 'not met'}** (by events/s)"
        )
        lines.append(
            f"- streaming {what}: first event p50 {h.fmt(ttfe, 2)} ms (ceiling "
            f"{h.fmt(ceil_ttfe, 2)} ms); target < 0.5 ms: "
            f"**{'MET' if ttfe is not None and ttfe < 0.5 else 'not met'}**"
        )
    return lines


# ---------------------------------------------------------------------------- issue #17


@dataclass(frozen=True)
class _Target:
    """One of issue #17's targets: ``figure`` of ``mine`` over that of ``other``, one run."""

    name: str
    figure: str  # a key of ``aggregate``'s figures ("us", "evs", "ttfe"), or "per_event"
    mine: str  # the label whose figure is on top (a label prefix for "per_event")
    other: str
    bound: float
    above: bool  # met when the ratio is at least the bound (else: at most)


_ISSUE17 = [
    _Target(
        "stream102: SDK ÷ ours server CPU ≥ 10x",
        "us",
        "sdk.task.stream102.c1",
        "ours.task.stream102.c1",
        10,
        True,
    ),
    _Target(
        "stream102: ours ÷ SDK events/s ≥ 10x",
        "evs",
        "ours.task.stream102.c1",
        "sdk.task.stream102.c1",
        10,
        True,
    ),
    _Target(
        "CPU per event within 3x of the ceiling's", "per_event", "ours.task", "ceil.raw", 3, False
    ),
    _Target(
        "first event p50 within 2x of the ceiling's, stream3",
        "ttfe",
        "ours.task.stream3.c1",
        "ceil.raw.stream3.c1",
        2,
        False,
    ),
    _Target(
        "first event p50 within 2x of the ceiling's, stream102",
        "ttfe",
        "ours.task.stream102.c1",
        "ceil.raw.stream102.c1",
        2,
        False,
    ),
    _Target(
        "blocking send c1: SDK ÷ ours server CPU ≥ 10x",
        "us",
        "sdk.task.send.c1",
        "ours.task.send.c1",
        10,
        True,
    ),
    _Target(
        "blocking send c32: SDK ÷ ours server CPU ≥ 10x",
        "us",
        "sdk.task.send.c32",
        "ours.task.send.c32",
        10,
        True,
    ),
]


def _figure(run: dict[str, dict[str, Any]], figure: str, label: str) -> float | None:
    """One figure of one run; ``per_event``: (stream102 - stream3) / 99 under ``label``."""
    if figure == "per_event":
        long = _get(run.get(f"{label}.stream102.c1"), "us")
        short = _get(run.get(f"{label}.stream3.c1"), "us")
        return None if long is None or short is None else (long - short) / 99
    return _get(run.get(label), figure)


def issue17_table(rows: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Issue #17's targets, each ratio pairing the figures of one run, and how often met."""
    by_run: dict[int, dict[str, list[dict[str, Any]]]] = {}
    for label, rs in rows.items():
        for row in rs:
            by_run.setdefault(int(row.get("run", 1)), {})[label] = [row]
    runs = {n: aggregate(run_rows) for n, run_rows in by_run.items()}  # one run's figures
    if not runs:
        return []
    order = sorted(runs)
    lines = [
        "| target | " + " | ".join(f"run {n}" for n in order) + " | met |",
        "|---|" + "---|" * len(order) + "---|",
    ]
    for target in _ISSUE17:
        cells: list[str] = []
        met = seen = 0
        for n in order:
            mine = _figure(runs[n], target.figure, target.mine)
            other = _figure(runs[n], target.figure, target.other)
            if mine is None or not other:
                cells.append("-")
                continue
            ratio = mine / other
            ok = ratio >= target.bound if target.above else ratio <= target.bound
            seen += 1
            met += ok
            digits = 0 if mine >= 100 else (1 if mine >= 1 else 3)
            shown = f"{mine:,.{digits}f} / {other:,.{digits}f} = {ratio:.2f}x"
            cells.append(f"**{shown}**" if ok else shown)
        if seen:
            lines.append(f"| {target.name} | " + " | ".join(cells) + f" | {met} of {seen} |")
    return lines


# ---------------------------------------------------------------------------- in-process


def run_inproc(settings: h.Settings, n: int) -> dict[str, dict[str, float]]:
    """CPU µs per blocking task-mode SendMessage calling each ASGI app directly (no HTTP server)."""
    import subprocess

    cases = {
        "ours": ("benchmarks.echo_app:create_app", "factory", str(h.REPO)),
        "sdk": ("sdk_echo_server:create_app", "factory", str(settings.tools)),
        "ceil": ("ceiling_server:raw_app", "plain", str(settings.tools)),
    }
    env = {
        **settings.base_env,
        "ECHO_MODE": "task",
        "BENCH_BODIES": str(settings.tools / "bodies"),
        "INPROC_N": str(n),
    }
    out: dict[str, dict[str, float]] = {}
    for name, (spec, kind, path) in cases.items():
        done = subprocess.run(
            h.pinned(h.SERVER_CPU, [settings.python, "-c", h.INPROC_CODE, spec, kind, path]),
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            print(f"in-process {name} failed: {done.stderr[-1500:]}", file=sys.stderr)
            continue
        out[name] = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"inproc {name:<5} {out[name]['us_cpu']:8.1f} µs CPU/request", flush=True)
    return out


def inproc_table(res: dict[str, dict[str, float]], n: int) -> list[str]:
    if not res:
        return []
    ours = res.get("ours", {}).get("us_cpu")
    lines = [
        f"In-process (the ASGI app called directly, no HTTP server, {n} blocking task-mode "
        "SendMessage calls after 200 warm-up, CPU time of the process): the cost of the A2A "
        "layer alone.",
        "",
        "| app | CPU µs/request | ÷ ours |",
        "|---|---|---|",
    ]
    for name in ("ours", "sdk", "ceil"):
        if name in res:
            us = res[name]["us_cpu"]
            lines.append(f"| {name} | {us:,.1f} | {_x(_ratio(us, ours), 2)} |")
    return lines


# ---------------------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=1, help="runs per point (median reported)")
    ap.add_argument("--duration", type=float, default=8.0, help="measured seconds per point")
    ap.add_argument("--warmup", type=float, default=1.0, help="warm-up seconds per point")
    ap.add_argument("--only", default=".", help="regex: run only matching labels")
    ap.add_argument("--python", default=None, help="interpreter (default: the repo's .venv)")
    ap.add_argument("--out", default=None, help="folder for raw JSON lines and server logs")
    ap.add_argument("--summary", default=None, help="markdown summary path")
    ap.add_argument("--no-memory", action="store_true", help="skip the memory probe")
    ap.add_argument("--no-import", action="store_true", help="skip cold import times")
    ap.add_argument("--no-inproc", action="store_true", help="skip the in-process ASGI figures")
    ap.add_argument("--memory-tasks", type=int, default=10_000)
    ap.add_argument("--import-runs", type=int, default=10)
    ap.add_argument("--inproc-n", type=int, default=2000)
    ap.add_argument("--profile", action="store_true", help="also cProfile our blocking send")
    ap.add_argument(
        "--resummarize",
        default=None,
        metavar="RESULTS_JSONL",
        help="measure nothing: print the targets and server tables of earlier raw results",
    )
    args = ap.parse_args()
    if args.resummarize:
        rows = load_rows(Path(args.resummarize))
        agg = aggregate(rows)
        print("\n".join(["## Issue #17's targets", "", *issue17_table(rows), ""]))
        print("\n".join(["## Targets", "", *verdicts(agg), "", *server_tables(agg)]))
        return

    stamp = dt.datetime.now().strftime("%Y-%m-%d")
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="a2a-bench-"))
    out.mkdir(parents=True, exist_ok=True)
    settings = h.Settings.detect(args.python, out)
    summary_path = (
        Path(args.summary) if args.summary else h.HERE / "results" / f"{stamp}-summary.md"
    )
    summary_path.parent.mkdir(parents=True, exist_ok=True)
    versions = h.package_versions(
        settings.python, ["a2a-adapters-core", "a2a-sdk", "uvicorn", "starlette", "pydantic"]
    )
    print(f"# raw results in {out}; servers: {settings.io_label}", flush=True)
    t_start = time.monotonic()
    lines = [
        f"# Server benchmarks, {stamp}",
        "",
        f"- code: `{h.git_state()}`; packages: "
        + ", ".join(f"{k} {v}" for k, v in versions.items()),
        f"- uvicorn, 1 worker, {settings.io_label}, for every server; server pinned to CPU"
        f"{h.SERVER_CPU}, load generator (shared `loadgen.py`) to CPU{h.CLIENT_CPU}",
        f"- {args.duration:g} s measured + {args.warmup:g} s warm-up per point, "
        f"{args.runs} run(s), median; other work running",
        f"- machine: {h.machine(settings.python)}",
        "- ceiling = the shared `ceiling_server.py raw_app` (raw ASGI, parses the JSON, "
        "returns a constant response)",
        "",
    ]
    with h.timer("servers"):
        rows = run_servers(settings, args, out)
    agg = aggregate(rows)
    with open(summary_path.with_suffix(".jsonl"), "w") as fh:
        for label, row in sorted(agg.items()):
            fh.write(json.dumps({"label": label, "io": settings.io_label, **row}) + "\n")
    lines += ["## Issue #17's targets", "", *issue17_table(rows), ""]
    lines += ["## Targets", "", *verdicts(agg), "", "## Servers over HTTP", ""]
    lines += server_tables(agg)
    if not args.no_inproc:
        with h.timer("in-process"):
            inproc = run_inproc(settings, args.inproc_n)
        lines += ["", "## A2A layer alone", "", *inproc_table(inproc, args.inproc_n)]
    if not args.no_memory:
        import memory_bench

        with h.timer("memory"):
            mem = memory_bench.run(settings, args.memory_tasks, [])
        lines += ["", "## Memory", "", *memory_bench.table(mem, args.memory_tasks)]
    if not args.no_import:
        import import_bench

        with h.timer("imports"):
            imp = import_bench.run(settings.python, args.import_runs)
        lines += ["", "## Cold import", "", *import_bench.table(imp, args.import_runs)]
    if args.profile:
        import profile_send

        with h.timer("profile"):
            prof = profile_send.run(settings, out, args.duration)
        lines += ["", "## Profile of our blocking send", "", *prof]
    lines += ["", f"Total wall time: {time.monotonic() - t_start:.0f} s.", ""]
    summary_path.write_text("\n".join(lines))
    print("\n".join(lines))
    print(f"# summary written to {summary_path}", flush=True)


if __name__ == "__main__":
    main()
