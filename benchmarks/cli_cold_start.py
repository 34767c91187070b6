"""Cold start of a one-shot ``a2a send`` next to a bare httpx script doing the same request.

    uv run python benchmarks/cli_cold_start.py [--runs 15] [--before REF] [--out FILE.md]

One local server (``a2a serve examples/echo_agent.py:echo`` on 127.0.0.1, a
free port) answers both sides, which run in fresh interpreters, alternating
one by one so that both see the same machine load:

- ``a2a``: ``a2a send URL hello -q`` (the console script next to this
  interpreter): it fetches the card, picks an interface, sends the
  ``SendMessage`` and prints the answer;
- ``httpx``: ``python -c "import httpx; httpx.post(URL, json=...)"`` with the
  same JSON-RPC ``SendMessage`` (one request, no card).

``--before REF`` adds a third side, the same ``a2a send`` from the core
package's sources at git REF (``git archive`` into a temporary directory, put
first on ``PYTHONPATH``), so old and new code are compared under the same load.
``--json`` is measured too (``a2a send URL hello --json``): that output
re-encodes the answer through the models, so it is the cost of the model path.

``--as-installed`` runs every side as a plain ``pip install a2a-adapters-core``
would: this workspace also has ``rich`` and ``pygments`` (dev tools), with
which ``import httpx`` loads its command-line module (``httpx._main``, tens of
ms, paid by both sides); a stub ``pygments`` that refuses to import, first on
``PYTHONPATH``, makes httpx skip it as it does without them.

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


def _without_httpx_cli() -> str:
    """A directory whose ``pygments`` refuses to import (as if not installed)."""
    target = Path(tempfile.mkdtemp(prefix="a2a-cold-start-stub-")) / "pygments"
    target.mkdir()
    (target / "__init__.py").write_text('raise ImportError("pygments: not installed")\n')
    return str(target.parent)


def _sources_at(ref: str) -> str:
    """The core package's sources at git ``ref``, unpacked into a temporary directory."""
    target = tempfile.mkdtemp(prefix="a2a-cold-start-before-")
    archive = subprocess.run(
        ["git", "archive", ref, "packages/a2a-core/src"], cwd=REPO, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", target], input=archive.stdout, check=True)
    return str(Path(target) / "packages" / "a2a-core" / "src")


def _run(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """(wall s, child CPU s, stdout) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd="/", env=env or ENV)
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
    parser.add_argument("--before", metavar="REF", help="also run a2a send from git REF's sources")
    parser.add_argument(
        "--as-installed",
        action="store_true",
        help="without the dev tools that make httpx import its command-line module",
    )
    args = parser.parse_args()
    if args.as_installed:
        ENV["PYTHONPATH"] = _without_httpx_cli()
    server, url = _start_server()
    before_env = None
    if args.before:
        paths = [_sources_at(args.before), *filter(None, [ENV.get("PYTHONPATH")])]
        before_env = {**ENV, "PYTHONPATH": os.pathsep.join(paths)}
    try:
        bare = [PYTHON, "-c", BARE.format(url=url + "/", body=json.dumps(BODY))]
        cli = [*A2A, "send", url, "hello", "-q"]
        cli_json = [*A2A, "send", url, "hello", "--json"]
        old = [PYTHON, "-m", "a2a_core.cli", "send", url, "hello", "-q"]
        sides: list[tuple[str, list[str], dict[str, str] | None]] = [
            ("a2a", cli, None),
            ("httpx", bare, None),
            ("a2a --json", cli_json, None),
        ]
        if before_env is not None:
            sides.append(("a2a before", old, before_env))
        for _, argv, env in sides:  # fill the bytecode and file caches once; not counted
            _run(argv, env)
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in sides}
        for i in range(args.runs):
            for name, argv, env in sides if i % 2 == 0 else list(reversed(sides)):
                wall, cpu, out = _run(argv, env)
                if name == "a2a --json":
                    assert json.loads(out)["task"]["artifacts"], out
                else:
                    assert out.strip() == "You said: hello", out
                samples[name].append((wall, cpu))
        imports = _top_imports(url)
    finally:
        server.terminate()
        server.wait(timeout=20)
    wall = {k: statistics.median(w for w, _ in v) for k, v in samples.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in samples.items()}
    labels = {
        "a2a": "`a2a send URL hello -q`",
        "httpx": "bare `import httpx; httpx.post(...)`",
        "a2a --json": "`a2a send URL hello --json` (answer through the models)",
        "a2a before": f"`a2a send URL hello -q` at {args.before}",
    }
    lines = [
        f"# a2a send cold start ({time.strftime('%Y-%m-%d %H:%M')}, {args.runs} runs each, "
        f"alternating; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f})",
        "",
        "Bytecode cached (as installed packages have it). CPU is the child's user+system time."
        + (" As installed: httpx without its command-line module." if args.as_installed else ""),
        "",
        "| side | wall median | CPU median (user+sys) | CPU / bare httpx |",
        "|---|---|---|---|",
        *(
            f"| {labels[name]} | {wall[name] * 1000:.0f} ms | {cpu[name] * 1000:.0f} ms | "
            f"{cpu[name] / cpu['httpx']:.2f}x |"
            for name in samples
        ),
        "",
        f"Ratio a2a / httpx: **{cpu['a2a'] / cpu['httpx']:.2f}x** CPU, "
        f"{wall['a2a'] / wall['httpx']:.2f}x wall.",
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
