"""Cold start of a one-shot ``a2a send`` next to a bare httpx script doing the same request.

    uv run python benchmarks/cli_cold_start.py [--runs 15] [--out results/DATE-cli-cold-start.md]

One local server (``a2a serve examples/echo_agent.py:echo`` on 127.0.0.1, a
free port) answers both sides, which run in fresh interpreters, alternating
one by one so that both see the same machine load:

- ``a2a``: ``a2a send URL hello -q`` (the console script next to this
  interpreter): it fetches the card, picks an interface, sends the
  ``SendMessage`` and prints the answer;
- ``httpx``: ``python -c "import httpx; httpx.post(URL, json=...)"`` with the
  same JSON-RPC ``SendMessage`` (one request, no card).

For each side: the median wall time of a run and the median CPU time (user +
system of the child process: the robust figure on a shared machine), then the
ratios a2a / httpx. Every child may write bytecode (into a temporary
``PYTHONPYCACHEPREFIX``, so nothing in the environment changes) and the first,
uncounted run of each side fills it: an installed package has its ``.pyc``
files, and compiling sources on every start (``PYTHONDONTWRITEBYTECODE=1``
with a venv installed without bytecode) would measure the compiler instead.
``-X importtime`` then lists the modules the CLI spends most on (cumulative),
to see what is left to make lazy.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
_SCRIPT = Path(PYTHON).parent / "a2a"
A2A = [str(_SCRIPT)] if _SCRIPT.exists() else [PYTHON, "-m", "a2a_core.cli"]

BARE = """\
import httpx
r = httpx.post({url!r}, json={body}, headers={{"A2A-Version": "1.0"}})
print(r.json()["result"]["task"]["artifacts"][0]["parts"][0]["text"])
"""
BODY = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}},
}


_PYCACHE = tempfile.mkdtemp(prefix="a2a-cold-start-pycache-")
ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "PYTHONPYCACHEPREFIX": _PYCACHE,
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_server() -> tuple[subprocess.Popen[str], str]:
    port = _free_port()
    proc = subprocess.Popen(
        [*A2A, "serve", "examples/echo_agent.py:echo", "--port", str(port)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**ENV, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("Agent card:"):
            return proc, f"http://127.0.0.1:{port}"
    raise RuntimeError("a2a serve did not start")


def _run(argv: list[str]) -> tuple[float, float, str]:
    """(wall s, child CPU s, stdout) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd="/", env=ENV)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:3]} failed: {done.stderr[-1500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def _top_imports(url: str, top: int = 12) -> list[tuple[int, str]]:
    done = subprocess.run(
        [PYTHON, "-X", "importtime", "-m", "a2a_core.cli", "send", url, "hello", "-q"],
        capture_output=True,
        text=True,
        cwd="/",
        env=ENV,
    )
    rows: list[tuple[int, str]] = []
    for line in done.stderr.splitlines():
        found = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\s*)(\S+)", line)
        if found and len(found.group(2)) <= 4:  # top-level and first-level imports
            rows.append((int(found.group(1)), found.group(2) + found.group(3)))
    return sorted(rows, reverse=True)[:top]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each side (default 15)")
    parser.add_argument("--out", type=Path, help="also write the markdown summary here")
    args = parser.parse_args()
    server, url = _start_server()
    try:
        bare = [PYTHON, "-c", BARE.format(url=url + "/", body=json.dumps(BODY))]
        cli = [*A2A, "send", url, "hello", "-q"]
        for argv in (bare, cli):  # fill the bytecode and file caches once; not counted
            _run(argv)
        samples: dict[str, list[tuple[float, float]]] = {"a2a": [], "httpx": []}
        for i in range(args.runs):
            order = [("a2a", cli), ("httpx", bare)]
            for name, argv in order if i % 2 == 0 else reversed(order):
                wall, cpu, out = _run(argv)
                assert out.strip() == "You said: hello", out
                samples[name].append((wall, cpu))
        imports = _top_imports(url)
    finally:
        server.terminate()
        server.wait(timeout=20)
    wall = {k: statistics.median(w for w, _ in v) for k, v in samples.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in samples.items()}
    lines = [
        f"# a2a send cold start ({time.strftime('%Y-%m-%d %H:%M')}, {args.runs} runs each, "
        f"alternating; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f})",
        "",
        "Bytecode cached (as installed packages have it). CPU is the child's user+system time.",
        "",
        "| side | wall median | CPU median (user+sys) |",
        "|---|---|---|",
        f"| `a2a send URL hello -q` | {wall['a2a'] * 1000:.0f} ms | {cpu['a2a'] * 1000:.0f} ms |",
        f"| bare `import httpx; httpx.post(...)` | {wall['httpx'] * 1000:.0f} ms | "
        f"{cpu['httpx'] * 1000:.0f} ms |",
        f"| ratio a2a / httpx | {wall['a2a'] / wall['httpx']:.2f}x | "
        f"{cpu['a2a'] / cpu['httpx']:.2f}x |",
        "",
        "Largest imports of `a2a send` (cumulative µs, `-X importtime`, one run):",
        "",
        *(f"- `{name.strip()}` {us / 1000:.0f} ms" for us, name in imports),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
