"""How much time does the A2A client add to a call, compared with raw httpx?

Both clients call the same minimal ASGI server on loopback (a separate
process answering every POST with the same JSON-RPC Task, echoing the
request id), sequentially, alternating call by call so machine noise hits
both alike; the calls are grouped in rounds to show the spread. Raw httpx
posts ready-made bytes and parses the JSON answer; our client builds the
request model, encodes it, checks the JSON-RPC envelope and validates the
Task. The difference is the client's overhead per call (target: under
100 us).

A reference line times ``json.loads`` of the server's answer in the same
process: on an idle modern core it takes a few microseconds, so it shows how
much a busy or throttled machine stretches every figure above it.
``--no-network`` answers in memory instead (httpx.MockTransport) to isolate
the client's CPU from socket and server noise.

    uv run python benchmarks/client_overhead.py [--calls 4000] [--rounds 8] [--op send|get]
                                                [--binding jsonrpc|rest] [--no-network] [--no-pin]

``--binding rest`` does the same over HTTP+JSON (``POST /message:send`` or
``GET /tasks/{id}``, the bare result as the answer).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

TASK = {
    "id": "3f0c5a4e-8a44-4bb8-a6a3-4b1f5f7c9d21",
    "contextId": "0d7f2f0e-5a51-4f0a-9d49-1bb3f5c54a10",
    "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-01-01T00:00:00.000Z"},
    "artifacts": [
        {"artifactId": "result", "name": "result", "parts": [{"text": "Echo: hello benchmark"}]}
    ],
    "history": [
        {
            "messageId": "9a3e8c1e-2b0e-4b8f-8d4c-6a1f0b8e7c55",
            "contextId": "0d7f2f0e-5a51-4f0a-9d49-1bb3f5c54a10",
            "taskId": "3f0c5a4e-8a44-4bb8-a6a3-4b1f5f7c9d21",
            "role": "ROLE_USER",
            "parts": [{"text": "hello benchmark"}],
        }
    ],
}


ANSWER = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"task": TASK}}).encode()


def reference() -> float:
    """Microseconds of one ``json.loads`` of a typical answer (median of batches)."""
    import timeit

    batches = timeit.repeat(lambda: json.loads(ANSWER), number=2000, repeat=7)
    return statistics.median(batches) / 2000 * 1e6


# --- the server (its own process) ------------------------------------------------------


def serve(port: int, op: str, binding: str = "jsonrpc") -> None:
    import uvicorn

    result = json.dumps({"task": TASK} if op == "send" else TASK).encode()
    head, tail = b'{"jsonrpc":"2.0","id":', b',"result":' + result + b"}"
    if binding == "rest":
        head, tail = b"", b""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if binding == "rest":
            payload = result
        else:
            start = body.find(b'"id":') + 5
            end = body.find(b",", start)
            payload = head + body[start:end] + tail
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(payload)).encode()),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": payload})

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(port: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError("benchmark server did not start")


# --- the two clients ----------------------------------------------------------------------


Timing = tuple[float, float]  # (wall seconds per call, CPU seconds per call)


def raw_call(http: Any, url: str, i: int, op: str, binding: str = "jsonrpc") -> Any:
    """One raw httpx call: ready-made JSON bytes out, ``json.loads`` of the answer."""
    if binding == "rest":
        if op == "get":
            return http.get(f"{url}tasks/{TASK['id']}", headers=REST_HEADERS)
        message = {"messageId": f"m-{i}", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
        body = json.dumps({"message": message}).encode()
        return http.post(f"{url}message:send", content=body, headers=REST_HEADERS)
    if op == "send":
        message = {"messageId": f"m-{i}", "role": "ROLE_USER", "parts": [{"text": "hello"}]}
        body = {"jsonrpc": "2.0", "id": i, "method": "SendMessage", "params": {"message": message}}
    else:
        body = {"jsonrpc": "2.0", "id": i, "method": "GetTask", "params": {"id": TASK["id"]}}
    return http.post(url, content=json.dumps(body).encode(), headers=RAW_HEADERS)


RAW_HEADERS = {"Content-Type": "application/json", "A2A-Version": "1.0"}
REST_HEADERS = {"Content-Type": "application/a2a+json", "A2A-Version": "1.0"}


def canned_transport(op: str, binding: str = "jsonrpc") -> Any:
    """An in-memory httpx transport answering like the server (for ``--no-network``)."""
    import httpx

    result = json.dumps({"task": TASK} if op == "send" else TASK).encode()

    def answer(request: httpx.Request) -> httpx.Response:
        if binding == "rest":
            headers = {"content-type": "application/json"}
            return httpx.Response(200, content=result, headers=headers)
        body = request.content
        start = body.find(b'"id":') + 5
        end = body.find(b",", start)
        payload = b'{"jsonrpc":"2.0","id":' + body[start:end] + b',"result":' + result + b"}"
        return httpx.Response(200, content=payload, headers={"content-type": "application/json"})

    return httpx.MockTransport(answer)


async def measure(
    url: str, calls: int, rounds: int, op: str, transport: Any = None, binding: str = "jsonrpc"
) -> tuple[list[Timing], list[Timing]]:
    """Per round: ``calls / rounds`` pairs of calls, raw and ours alternating call by call."""
    import httpx
    from a2a_core.client import A2AClient

    wall, cpu = time.perf_counter, time.process_time
    raw: list[Timing] = []
    ours: list[Timing] = []
    per_round = max(1, calls // rounds)
    async with (
        httpx.AsyncClient(transport=transport) as http,
        A2AClient.for_endpoint(
            url,
            binding="HTTP+JSON" if binding == "rest" else "JSONRPC",
            http_client=httpx.AsyncClient(transport=transport),
        ) as client,
    ):

        async def ours_call() -> None:
            if op == "send":
                reply = await client.send("hello")
                assert reply.task is not None
            else:
                await client.get_task(TASK["id"])

        for i in range(200):  # warm up both: connections, imports, caches
            assert (await raw_call(http, url, i, op, binding)).json()
            await ours_call()
        for _ in range(rounds):
            raw_wall = raw_cpu = ours_wall = ours_cpu = 0.0
            for i in range(per_round):
                w, c = wall(), cpu()
                value = (await raw_call(http, url, i, op, binding)).json()
                raw_wall += wall() - w
                raw_cpu += cpu() - c
                assert binding == "rest" or value["id"] == i
                w, c = wall(), cpu()
                await ours_call()
                ours_wall += wall() - w
                ours_cpu += cpu() - c
            raw.append((raw_wall / per_round, raw_cpu / per_round))
            ours.append((ours_wall / per_round, ours_cpu / per_round))
    return raw, ours


def pin(cpu: int) -> None:
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {cpu})


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=4000, help="calls per client (default 4000)")
    parser.add_argument("--rounds", type=int, default=8, help="rounds (default 8)")
    parser.add_argument("--op", choices=["send", "get"], default="send")
    parser.add_argument("--binding", choices=["jsonrpc", "rest"], default="jsonrpc")
    parser.add_argument("--no-pin", action="store_true", help="do not pin server/client to CPUs")
    parser.add_argument(
        "--no-network",
        action="store_true",
        help="answer in memory (httpx.MockTransport): client CPU without network or server noise",
    )
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.no_network:
        raw, ours = asyncio.run(
            measure(
                "http://bench.invalid/",
                args.calls,
                args.rounds,
                args.op,
                canned_transport(args.op, args.binding),
                args.binding,
            )
        )
        report(args, raw, ours, "in memory (httpx.MockTransport), no network")
        return
    if args.serve:
        if not args.no_pin:
            pin(0)
        serve(args.serve, args.op, args.binding)
        return
    port = free_port()
    command = [sys.executable, __file__, "--serve", str(port), "--op", args.op]
    command += ["--binding", args.binding]
    if args.no_pin:
        command.append("--no-pin")
    server = subprocess.Popen(command)
    try:
        wait_listening(port)
        if not args.no_pin:
            pin(1)
        raw, ours = asyncio.run(
            measure(
                f"http://127.0.0.1:{port}/", args.calls, args.rounds, args.op, binding=args.binding
            )
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
    report(args, raw, ours, "loopback, server in its own process")


def report(args: Any, raw: list[Timing], ours: list[Timing], where: str) -> None:
    op_name = "SendMessage" if args.op == "send" else "GetTask"
    binding = "HTTP+JSON" if args.binding == "rest" else "JSON-RPC"
    print(f"operation          : {binding} 1.0 {op_name}, {where}")
    print(f"calls per client   : {args.calls}, alternating, in {args.rounds} rounds")
    verdict = 0.0
    for index, clock in ((0, "wall"), (1, "cpu ")):
        raw_us = statistics.median(t[index] for t in raw) * 1e6
        ours_us = statistics.median(t[index] for t in ours) * 1e6
        diffs = [(o[index] - r[index]) * 1e6 for o, r in zip(ours, raw, strict=True)]
        overhead = statistics.median(diffs)
        print(
            f"{clock}: raw httpx {raw_us:8.1f} us/call | A2AClient {ours_us:8.1f} us/call | "
            f"overhead {overhead:7.1f} us/call (rounds {min(diffs):.1f} .. {max(diffs):.1f})"
        )
        verdict = overhead
    print(
        f"reference: json.loads of the {len(ANSWER)}-byte answer takes {reference():.1f} us here "
        f"(overhead = {verdict / reference():.0f}x that)"
    )
    print(f"target < 100 us of client CPU per call: {'met' if verdict < 100 else 'NOT met'}")


if __name__ == "__main__":
    main()
