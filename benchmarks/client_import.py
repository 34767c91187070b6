"""Cold import of the client, now and at an older git ref, in one run.

    uv run python benchmarks/client_import.py [--runs 11] [--before REF] [--no-call]

Each statement runs in a fresh interpreter, ``--runs`` times, alternating
with the same statement from the core package's sources at ``REF`` (``git
archive`` into a temporary directory, first on ``PYTHONPATH``), so both see
the same load. Bytecode is cached (a temporary ``PYTHONPYCACHEPREFIX``,
filled by one uncounted run), as an installed package has it. The figure is
the child's CPU time (user + system) minus that of an interpreter that
imports nothing, median and minimum.

Importing is not the whole cold start: a program that imports ``A2AClient``
then connects and sends. So the same is timed for ``import + connect + first
send`` against a local ``a2a serve`` of the echo agent (the card, then one
blocking ``SendMessage``), beside raw httpx doing the same two requests in an
event loop (``--no-call`` skips these). Whatever a lazy import defers to the
first call shows up there.
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
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
FIRST_CALL = """\
import asyncio
from a2a_core.client import A2AClient

async def main():
    async with await A2AClient.connect({url!r}) as client:
        assert (await client.send("hello")).text == "You said: hello"

asyncio.run(main())
"""
RAW_FIRST_CALL = """\
import asyncio, json
import httpx

async def main():
    body = {{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {{"message": {{
        "messageId": "m-1", "role": "ROLE_USER", "parts": [{{"text": "hello"}}]}}}}}}
    async with httpx.AsyncClient() as http:
        card = (await http.get({url!r} + "/.well-known/agent-card.json")).json()
        url = card["supportedInterfaces"][0]["url"]
        answer = await http.post(url, content=json.dumps(body), headers={{"A2A-Version": "1.0"}})
        task = answer.json()["result"]["task"]
        assert task["artifacts"][0]["parts"][0]["text"] == "You said: hello"

asyncio.run(main())
"""
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


def _start_server() -> tuple[subprocess.Popen[str], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port_args = ["--port", str(sock.getsockname()[1])]
    proc = subprocess.Popen(
        [sys.executable, "-m", "a2a_core.cli", "serve", "examples/echo_agent.py:echo", *port_args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**ENV, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("Agent card:"):
            return proc, f"http://127.0.0.1:{port_args[1]}"
    raise RuntimeError("a2a serve did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--before", metavar="REF", help="also import from git REF's sources")
    parser.add_argument("--no-call", action="store_true", help="imports only, no first call")
    args = parser.parse_args()
    server = None
    if not args.no_call:
        server, url = _start_server()
        STATEMENTS["import + connect + first send"] = FIRST_CALL.format(url=url)
        STATEMENTS["raw httpx: import + card + send (reference)"] = RAW_FIRST_CALL.format(url=url)
    try:
        _measure(args)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)


def _measure(args: argparse.Namespace) -> None:
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
