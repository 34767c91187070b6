"""Cold import of the client, now and at an older git ref, in one run.

    uv run python benchmarks/client_import.py [--runs 11] [--before REF]

Each statement runs in a fresh interpreter, ``--runs`` times, alternating
with the same statement from the core package's sources at ``REF`` (``git
archive`` into a temporary directory, first on ``PYTHONPATH``), so both see
the same load. Bytecode is cached (a temporary ``PYTHONPYCACHEPREFIX``,
filled by one uncounted run), as an installed package has it. The figure is
the child's CPU time (user + system) minus that of an interpreter that
imports nothing, median and minimum.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STATEMENTS = {
    "import a2a_core.client": "import a2a_core.client",
    "from a2a_core.client import A2AClient": "from a2a_core.client import A2AClient",
    "import httpx (reference)": "import httpx",
}
ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "PYTHONPYCACHEPREFIX": tempfile.mkdtemp(prefix="a2a-import-pycache-"),
}


def _sources_at(ref: str) -> str:
    target = tempfile.mkdtemp(prefix="a2a-import-before-")
    archive = subprocess.run(
        ["git", "archive", ref, "packages/a2a-core/src"], cwd=REPO, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", target], input=archive.stdout, check=True)
    return str(Path(target) / "packages" / "a2a-core" / "src")


def _cpu(stmt: str, env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", stmt], check=True, cwd="/", env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--before", metavar="REF", help="also import from git REF's sources")
    args = parser.parse_args()
    sides = {"now": ENV}
    if args.before:
        sides[args.before] = {**ENV, "PYTHONPATH": _sources_at(args.before)}
    print(
        f"{args.runs} runs each, CPU ms over a bare interpreter (median / min); "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    for label, stmt in STATEMENTS.items():
        samples: dict[str, list[float]] = {side: [] for side in sides}
        bare: list[float] = []
        for env in sides.values():
            _cpu(stmt, env)  # fill the bytecode cache
        for i in range(args.runs):
            order = list(sides.items())
            for side, env in order if i % 2 == 0 else reversed(order):
                samples[side].append(_cpu(stmt, env))
            bare.append(_cpu("pass", ENV))
        base = statistics.median(bare)
        cells = [
            f"{side}: {(statistics.median(v) - base) * 1000:.0f}"
            f" / {(min(v) - min(bare)) * 1000:.0f}"
            for side, v in samples.items()
        ]
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
