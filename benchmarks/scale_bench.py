"""Scale: what the work costs as it grows, measured as curves (issue #40).

    uv run --no-sync python benchmarks/scale_bench.py [--parts streams,stored,cluster]
        [--quick] [--label before|after] [--out benchmarks/results/DATE-scale.jsonl]

Runs each part in turn, each a module of its own that describes its cases:

- ``scale_streams.py``: open SSE streams on one instance (100 to 10,000): memory and CPU
  per idle stream, server CPU per event per subscriber, first-event latency; the SDK
  beside ours;
- ``scale_stored.py``: ListTasks pages and GetTask with 10^4 to 10^6 stored tasks on
  ``sqlite://``, ``postgresql://`` (and ``redis://``), and what retention blocks;
- ``scale_cluster.py``: a task followed through another instance (first-event latency,
  relay throughput), one task followed by many subscribers through another instance
  (latency, database transactions per event) and 1,000 running tasks (lease work,
  orphans after a kill -9).

Every point is one JSON line (part, case, impl, backend, n, value, unit, label, target);
``scale_plot.py`` draws them. Parts run one after the other, never side by side: each
measures CPU and latency on a machine it assumes is otherwise quiet.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARTS = ("streams", "stored", "cluster")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--parts", default=",".join(PARTS), help="comma-separated parts")
    parser.add_argument("--quick", action="store_true", help="the smallest size of each part")
    parser.add_argument("--label", default="after", help="before or after a fix")
    parser.add_argument("--out", type=Path, help="JSON lines file (each part's own if not given)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    failed: list[str] = []
    for part in [p.strip() for p in args.parts.split(",") if p.strip()]:
        if part not in PARTS:
            parser.error(f"unknown part {part!r} (known: {', '.join(PARTS)})")
        module = importlib.import_module(f"scale_{part}")
        part_argv = ["--label", args.label]
        if args.quick:
            part_argv.append("--quick")
        if args.out is not None:
            part_argv += ["--out", str(args.out)]
        print(f"## scale: {part}", flush=True)
        if module.main(part_argv) != 0:
            failed.append(part)
    if failed:
        print(f"scale_bench: failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
