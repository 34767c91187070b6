"""Cold import time: ``a2a_core`` and our server next to the SDK's server.

    uv run python benchmarks/import_bench.py [--runs 10]

Each statement runs in a fresh interpreter, ``--runs`` times; the figure is
the median wall time minus the median of an interpreter that imports nothing.
``-X importtime`` then names the modules that cost the most (self time).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _harness as h

STATEMENTS: dict[str, str] = {
    "import a2a_core": "import a2a_core",
    "import a2a_core.server.asgi (our server)": "import a2a_core.server.asgi",
    "our server stack (what echo_app imports)": (
        "from a2a_core import AgentCardBuilder\n"
        "from a2a_core.server import A2AService, AgentExecutor, RequestContext, TaskUpdater\n"
        "from a2a_core.server.asgi import create_app\n"
        "from a2a_core.stores import MemoryTaskStore"
    ),
    "import a2a_core.client": "import a2a_core.client",
    "SDK server stack": (
        "from a2a.server.agent_execution import AgentExecutor, RequestContext\n"
        "from a2a.server.request_handlers import DefaultRequestHandler\n"
        "from a2a.server.routes import create_jsonrpc_routes, create_rest_routes, "
        "create_agent_card_routes\n"
        "from a2a.server.tasks import InMemoryTaskStore, TaskUpdater"
    ),
    "import a2a.types (SDK)": "import a2a.types",
    "import a2a.client (SDK)": "import a2a.client",
}
PROFILED = ("import a2a_core", "our server stack (what echo_app imports)")


def _wall(python: str, stmt: str, runs: int) -> float:
    times: list[float] = []
    for _ in range(runs):
        t0 = time.perf_counter()
        done = subprocess.run([python, "-c", stmt], capture_output=True, text=True, cwd="/")
        times.append(time.perf_counter() - t0)
        if done.returncode != 0:
            raise RuntimeError(f"failed: {stmt}\n{done.stderr[-1500:]}")
    return statistics.median(times)


def _self_times(python: str, stmt: str, top: int = 8) -> list[tuple[int, str]]:
    done = subprocess.run(
        [python, "-X", "importtime", "-c", stmt], capture_output=True, text=True, cwd="/"
    )
    rows: list[tuple[int, str]] = []
    for line in done.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|\s*(\S+)", line)
        if m:
            rows.append((int(m.group(1)), m.group(3)))
    return sorted(rows, reverse=True)[:top]


def run(python: str, runs: int) -> dict[str, dict[str, object]]:
    base = _wall(python, "pass", runs)
    out: dict[str, dict[str, object]] = {"baseline": {"ms": base * 1e3}}
    for label, stmt in STATEMENTS.items():
        ms = (_wall(python, stmt, runs) - base) * 1e3
        entry: dict[str, object] = {"ms": ms}
        if label in PROFILED:
            entry["top"] = _self_times(python, stmt)
        out[label] = entry
        print(f"import {label:<44} {ms:7.1f} ms", flush=True)
    return out


def table(res: dict[str, dict[str, object]], runs: int) -> list[str]:
    base = res["baseline"]["ms"]
    lines = [
        f"Median of {runs} fresh interpreters, minus an empty interpreter "
        f"({base:.0f} ms); same venv for all.",
        "",
        "| statement | ms over baseline |",
        "|---|---|",
    ]
    for label, entry in res.items():
        if label != "baseline":
            lines.append(f"| {label} | {entry['ms']:.0f} |")
    ours = res.get("import a2a_core", {}).get("ms")
    if isinstance(ours, float):
        lines += [
            "",
            f"- `import a2a_core`: {ours:.0f} ms; target < 150 ms: "
            f"**{'MET' if ours < 150 else 'not met'}**",
        ]
    server = res.get("our server stack (what echo_app imports)", {}).get("ms")
    sdk = res.get("SDK server stack", {}).get("ms")
    if isinstance(server, float) and isinstance(sdk, float) and server > 0:
        lines.append(f"- our server stack imports {sdk / server:.1f}x faster than the SDK's")
    for label in PROFILED:
        top = res.get(label, {}).get("top")
        if isinstance(top, list) and top:
            shown = ", ".join(f"{name} {us / 1e3:.1f}" for us, name in top)  # pyright: ignore[reportUnknownVariableType]
            lines.append(f"- `-X importtime` self ms, {label}: {shown}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--python", default=None)
    args = ap.parse_args()
    python = args.python or h.default_python()
    res = run(python, args.runs)
    print("\n".join(table(res, args.runs)))


if __name__ == "__main__":
    main()
