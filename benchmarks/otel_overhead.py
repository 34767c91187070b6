"""Cost of telemetry: blocking-send throughput with it off, installed-but-disabled, and on.

    uv run --no-sync python benchmarks/otel_overhead.py [seconds-per-mode]
        [--rounds N] [--before REF]

Each mode runs in a fresh interpreter: an echo agent served on 127.0.0.1 and one
``A2AClient`` sending blocking messages back to back for the given time (after a
warm-up). Modes:

- ``off``: OpenTelemetry cannot be imported at all (an import blocker), as without
  the ``otel`` extra;
- ``disabled``: installed, ``telemetry.enable()`` never called;
- ``on``: enabled, with the SDK's tracer and meter providers and a span processor
  whose exporter drops everything (the cost of making spans and metrics, not of
  shipping them).

- ``before`` (with ``--before REF``): the core package's sources at git ``REF``
  (for example the commit before telemetry landed), OpenTelemetry blocked as
  in ``off``: whether ``off`` is within noise of the code without the hooks.

Prints, per mode, sends per second and process CPU time per send (client and
server share the process), each the median of the rounds, and the change
against ``off``. On a shared machine the CPU time per send is the steadier figure.
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

REPO = Path(__file__).resolve().parents[1]

_BLOCK = """
class _Blocker:
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ModuleNotFoundError(name)
        return None
sys.meta_path.insert(0, _Blocker())
"""

_ENABLE = """
from a2a_core import telemetry
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

class _Drop(SpanExporter):
    def export(self, spans):
        return SpanExportResult.SUCCESS

provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(_Drop()))
telemetry.enable(tracer_provider=provider, meter_provider=MeterProvider())
"""

_RUN = """
import asyncio, json, sys, time
{setup}
from a2a_core.client import A2AClient
from a2a_core.compose.serve import running_server

async def echo(context):
    return "echo"

async def main(seconds):
    async with running_server(echo) as srv, A2AClient.for_endpoint(srv.url) as client:
        for _ in range(20):
            await client.send("hi")
        count, started, cpu = 0, time.perf_counter(), time.process_time()
        while time.perf_counter() - started < seconds:
            await client.send("hi")
            count += 1
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        return {{"rate": count / wall, "cpu_us": cpu / count * 1e6}}

print(json.dumps(asyncio.run(main({seconds}))))
"""

MODES = {"off": _BLOCK, "disabled": "", "on": _ENABLE}


def sources_at(ref: str) -> str:
    """The core package's sources at git ``ref``, unpacked into a temporary directory."""
    target = tempfile.mkdtemp(prefix="a2a-otel-before-")
    archive = subprocess.run(
        ["git", "archive", ref, "packages/a2a-core/src"], cwd=REPO, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", target], input=archive.stdout, check=True)
    return str(Path(target) / "packages" / "a2a-core" / "src")


def measure(setup: str, seconds: float, env: dict[str, str] | None = None) -> dict[str, float]:
    """One fresh interpreter's sends/s and CPU microseconds per send."""
    code = _RUN.format(setup=setup, seconds=seconds)
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        env=env,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("seconds", nargs="?", type=float, default=3.0, help="per mode and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", metavar="REF", help="also run the core's sources at REF")
    args = parser.parse_args()
    modes: dict[str, tuple[str, dict[str, str] | None]] = {
        name: (setup, None) for name, setup in MODES.items()
    }
    if args.before:
        paths = [sources_at(args.before), *filter(None, [os.environ.get("PYTHONPATH")])]
        modes["before"] = (_BLOCK, {**os.environ, "PYTHONPATH": os.pathsep.join(paths)})
    runs: dict[str, list[dict[str, float]]] = {mode: [] for mode in modes}
    for _ in range(args.rounds):  # interleaved, so drift in machine load hits every mode alike
        for mode, (setup, env) in modes.items():
            runs[mode].append(measure(setup, args.seconds, env))
    base = {k: statistics.median(r[k] for r in runs["off"]) for k in ("rate", "cpu_us")}
    print(
        f"blocking sends, median of {args.rounds} x {args.seconds:g} s "
        "(one client, one echo server, one process)"
    )
    if args.before:
        print(f"  before = the core's sources at {args.before}, OpenTelemetry blocked")
    for mode, found in runs.items():
        rate = statistics.median(r["rate"] for r in found)
        cpu = statistics.median(r["cpu_us"] for r in found)
        spread = ", ".join(f"{r['rate']:.0f}" for r in found)
        print(
            f"  {mode:9s} {rate:7.0f}/s ({(rate / base['rate'] - 1) * 100:+5.1f}%)"
            f"  {cpu:6.0f} us CPU/send ({(cpu / base['cpu_us'] - 1) * 100:+5.1f}%)"
            f"  runs/s: {spread}"
        )


if __name__ == "__main__":
    main()
