"""Cost of telemetry: blocking-send throughput with it off, installed-but-disabled, and on.

    uv run --no-sync python benchmarks/otel_overhead.py [seconds-per-mode]

Each mode runs in a fresh interpreter: an echo agent served on 127.0.0.1 and one
``A2AClient`` sending blocking messages back to back for the given time (after a
warm-up). Modes:

- ``off``: OpenTelemetry cannot be imported at all (an import blocker), as without
  the ``otel`` extra;
- ``disabled``: installed, ``telemetry.enable()`` never called;
- ``on``: enabled, with the SDK's tracer and meter providers and a span processor
  whose exporter drops everything (the cost of making spans and metrics, not of
  shipping them).

Prints sends per second per mode (the median of the runs) and the change against ``off``.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

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
from a2a_core.server.serve import running_server

async def echo(context):
    return "echo"

async def main(seconds):
    async with running_server(echo) as srv, A2AClient.for_endpoint(srv.url) as client:
        for _ in range(20):
            await client.send("hi")
        count, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds:
            await client.send("hi")
            count += 1
        return count / (time.perf_counter() - started)

print(json.dumps({{"rate": asyncio.run(main({seconds}))}}))
"""

MODES = {"off": _BLOCK, "disabled": "", "on": _ENABLE}


def measure(mode: str, seconds: float) -> float:
    code = _RUN.format(setup=MODES[mode], seconds=seconds)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    return float(json.loads(done.stdout.strip().splitlines()[-1])["rate"])


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    rounds = 3
    rates: dict[str, list[float]] = {mode: [] for mode in MODES}
    for _ in range(rounds):  # interleaved, so drift in machine load hits every mode alike
        for mode in MODES:
            rates[mode].append(measure(mode, seconds))
    base = statistics.median(rates["off"])
    print(f"blocking sends/s, median of {rounds} x {seconds:g} s (one client, one echo server)")
    for mode, values in rates.items():
        rate = statistics.median(values)
        change = (rate / base - 1) * 100
        spread = ", ".join(f"{v:.0f}" for v in values)
        print(f"  {mode:9s} {rate:7.0f}/s  ({change:+5.1f}% vs off)  runs: {spread}")


if __name__ == "__main__":
    main()
