"""gRPC binding: our server vs the official SDK's gRPC server, in one run.

Two shapes, each against both servers (the order flips every run):

- ``send``: blocking ``SendMessage``, task reply (Task -> artifact -> COMPLETED),
  one call at a time on one channel;
- ``stream102``: ``SendStreamingMessage`` with 100 artifact chunks, 102 events
  (task, 100 artifact updates, the final status).

Each server is its own process pinned to CPU0 (``SERVER_CPU``), running the
same echo agent as ``server_bench.py`` (ours: ``echo_app.EchoAgent`` behind
``a2a_core.grpc.GrpcServer``; the SDK: the shared ``sdk_echo_server.py`` agent
behind its ``GrpcHandler``); this process drives it from CPU1 (``CLIENT_CPU``).
Requests are the same pre-serialized bytes for both servers and answers are
counted, not parsed, so the client costs both sides alike. Reported: calls/s
(events/s for streams) and **server CPU µs per call**, read from
``/proc/PID/stat`` around the measured window: the robust figure on a shared
machine.

    uv run python benchmarks/grpc_bench.py [--duration 8] [--warmup 1] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _harness import CLIENT_CPU, SERVER_CPU, default_python, free_port, pinned, tools_dir  # noqa: E402

SHAPES = {"send": 1, "stream102": 100}  # shape -> ECHO_CHUNKS


# --- the servers (run as ``grpc_bench.py --serve ours|sdk PORT``) -------------------------


async def _serve_ours(port: int, chunks: int) -> None:
    from a2a_core.grpc import GrpcServer
    from a2a_core.server import A2AService
    from a2a_core.server.asgi import create_app
    from echo_app import EchoAgent, build_card

    service = A2AService(EchoAgent("task", chunks), build_card("http://127.0.0.1:1"))
    server = GrpcServer("127.0.0.1", port)
    server.attach(create_app(service))
    await server.start()
    print("READY", flush=True)
    await asyncio.Event().wait()


async def _serve_sdk(port: int, chunks: int) -> None:
    os.environ["ECHO_MODE"] = "task"
    os.environ["ECHO_CHUNKS"] = str(chunks)
    sys.path.insert(0, str(tools_dir()))
    import grpc.aio
    import sdk_echo_server  # pyright: ignore[reportMissingImports]
    from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
    from a2a.types import a2a_pb2_grpc

    handler = DefaultRequestHandler(
        agent_executor=sdk_echo_server.EchoExecutor(),
        task_store=sdk_echo_server.TASK_STORE,
        agent_card=sdk_echo_server.build_card(),
    )
    server = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print("READY", flush=True)
    await asyncio.Event().wait()


# --- the load ---------------------------------------------------------------------------


def _request() -> bytes:
    from a2a_core.grpc.proto import request_class
    from a2a_core.wire import Operation

    cls = request_class(Operation.SEND_MESSAGE)
    message = {
        "message": {
            "messageId": "bench",
            "role": "ROLE_USER",
            "parts": [{"text": "hello benchmark"}],
        }
    }
    from google.protobuf import json_format

    return json_format.ParseDict(message, cls()).SerializeToString()


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Result:
    impl: str
    shape: str
    calls: int
    events: int
    seconds: float
    cpu: float

    @property
    def per_second(self) -> float:
        return self.calls / self.seconds

    @property
    def events_per_second(self) -> float:
        return self.events / self.seconds

    @property
    def cpu_us_per_call(self) -> float:
        return self.cpu / self.calls * 1e6


async def _drive(port: int, shape: str, seconds: float) -> tuple[int, int]:
    import grpc.aio

    payload = _request()
    metadata = (("a2a-version", "1.0"),)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        send = channel.unary_unary("/lf.a2a.v1.A2AService/SendMessage")
        stream = channel.unary_stream("/lf.a2a.v1.A2AService/SendStreamingMessage")
        calls = events = 0
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if shape == "send":
                await send(payload, metadata=metadata)
                events += 1
            else:
                async for _ in stream(payload, metadata=metadata):
                    events += 1
            calls += 1
        return calls, events


def measure(impl: str, shape: str, duration: float, warmup: float) -> Result:
    port = free_port()
    argv = [default_python(), str(Path(__file__)), "--serve", impl, str(port), str(SHAPES[shape])]
    proc = subprocess.Popen(pinned(SERVER_CPU, argv), stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if "READY" not in line:
            raise SystemExit(f"{impl} server did not start")
        asyncio.run(_drive(port, shape, warmup))
        before, start = _cpu_seconds(proc.pid), time.monotonic()
        calls, events = asyncio.run(_drive(port, shape, duration))
        elapsed, cpu = time.monotonic() - start, _cpu_seconds(proc.pid) - before
        return Result(impl, shape, calls, events, elapsed, cpu)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--duration", type=float, default=8.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--serve", nargs=3, metavar=("IMPL", "PORT", "CHUNKS"))
    args = parser.parse_args()
    if args.serve:
        impl, port, chunks = args.serve[0], int(args.serve[1]), int(args.serve[2])
        runner = _serve_ours if impl == "ours" else _serve_sdk
        asyncio.run(runner(port, chunks))
        return
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {int(CLIENT_CPU)})
    results: dict[tuple[str, str], list[Result]] = {}
    for run in range(args.runs):
        order = ("ours", "sdk") if run % 2 == 0 else ("sdk", "ours")
        for shape in SHAPES:
            for impl in order:
                result = measure(impl, shape, args.duration, args.warmup)
                results.setdefault((impl, shape), []).append(result)
                print(
                    f"run {run + 1} {impl:4} {shape:9} {result.per_second:8.1f} calls/s "
                    f"{result.events_per_second:9.1f} events/s "
                    f"{result.cpu_us_per_call:9.0f} us server CPU/call",
                    flush=True,
                )
    print()
    print("| shape | impl | calls/s | events/s | server CPU µs/call | ours vs SDK (CPU) |")
    print("|---|---|---|---|---|---|")
    for shape in SHAPES:
        cpu = {
            impl: statistics.median(r.cpu_us_per_call for r in results[(impl, shape)])
            for impl in ("ours", "sdk")
        }
        for impl in ("ours", "sdk"):
            rows = results[(impl, shape)]
            ratio = f"{cpu['sdk'] / cpu['ours']:.1f}x less" if impl == "ours" else ""
            print(
                f"| {shape} | {impl} | {statistics.median(r.per_second for r in rows):.0f} | "
                f"{statistics.median(r.events_per_second for r in rows):.0f} | "
                f"{cpu[impl]:.0f} | {ratio} |"
            )


if __name__ == "__main__":
    main()
