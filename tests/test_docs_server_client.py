"""The Python blocks of docs/server.md and docs/client.md run offline, on loopback, in bounded time.

Each document's blocks run one after another in a fresh interpreter, every block in a namespace
of its own and named ``__doc_example__`` (so ``if __name__ == "__main__":`` parts, which would
serve forever, stay out). A guard refuses every connection and name lookup beyond the loopback
interface, so an example that would reach the internet fails here. An alarm bounds each block,
and a timeout bounds the whole interpreter. The index must list every documentation page.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = (ROOT / "docs" / "server.md", ROOT / "docs" / "client.md")
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
BLOCK_SECONDS = 60
DOC_SECONDS = 240

# Runs in the child interpreter: argv = [blocks.json, results.json, seconds per block].
WORKER = r"""
import contextlib, io, ipaddress, json, signal, socket, sys, traceback

blocks_path, results_path, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3])
real_connect, real_connect_ex, real_getaddrinfo = (
    socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo
)


def loopback(host):
    if host is None or host in ("localhost", b"localhost"):
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def check(address):
    if isinstance(address, (str, bytes)):  # a Unix socket
        return
    if not loopback(address[0]):
        raise OSError(f"offline example: connecting to {address!r} is not allowed")


def connect(self, address):
    check(address)
    return real_connect(self, address)


def connect_ex(self, address):
    check(address)
    return real_connect_ex(self, address)


def getaddrinfo(host, *args, **kwargs):
    if not loopback(host):
        raise socket.gaierror(f"offline example: resolving {host!r} is not allowed")
    return real_getaddrinfo(host, *args, **kwargs)


socket.socket.connect = connect
socket.socket.connect_ex = connect_ex
socket.getaddrinfo = getaddrinfo


def alarm(signum, frame):
    raise TimeoutError(f"the block ran for more than {seconds} s")


has_alarm = hasattr(signal, "SIGALRM")  # not on Windows: the child's timeout still bounds it
if has_alarm:
    signal.signal(signal.SIGALRM, alarm)
results = []
with open(blocks_path) as f:
    blocks = json.load(f)
for name, source in blocks:
    out = io.StringIO()
    error = None
    if has_alarm:
        signal.alarm(seconds)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, name, "exec"), {"__name__": "__doc_example__"})
    except BaseException:
        error = traceback.format_exc()
    finally:
        if has_alarm:
            signal.alarm(0)
    results.append({"name": name, "error": error, "stdout": out.getvalue()})
    with open(results_path, "w") as f:  # written after each block: a hang keeps the others
        json.dump(results, f)
"""


def blocks_of(doc: Path) -> list[str]:
    return PYTHON_BLOCK.findall(doc.read_text())


def block_name(doc: Path, number: int) -> str:
    label = doc.relative_to(ROOT) if doc.is_relative_to(ROOT) else doc.name
    return f"{label}#{number}"


@cache
def run_doc(doc: Path, tmp: Path) -> dict[str, dict[str, Any]]:
    """Run every block of ``doc`` in one child interpreter; results by block name."""
    named = [[block_name(doc, n), b] for n, b in enumerate(blocks_of(doc), start=1)]
    blocks_file = tmp / f"{doc.stem}-blocks.json"
    results_file = tmp / f"{doc.stem}-results.json"
    blocks_file.write_text(json.dumps(named))
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["NO_PROXY"] = "*"
    try:
        finished = subprocess.run(
            [sys.executable, "-c", WORKER, str(blocks_file), str(results_file), str(BLOCK_SECONDS)],
            capture_output=True,
            text=True,
            timeout=DOC_SECONDS,
            cwd=tmp,
            env=env,
            check=False,
        )
        trouble = finished.stderr[-4000:] if finished.returncode else ""
    except subprocess.TimeoutExpired:
        trouble = f"the examples of {doc.name} ran for more than {DOC_SECONDS} s"
    results = json.loads(results_file.read_text()) if results_file.exists() else []
    by_name = {r["name"]: r for r in results}
    for name, _ in named:
        by_name.setdefault(name, {"name": name, "error": trouble or "did not run", "stdout": ""})
    return by_name


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("doc-examples")


CASES = [(doc, n) for doc in DOCS for n in range(1, len(blocks_of(doc)) + 1)]


@pytest.mark.parametrize(("doc", "number"), CASES, ids=[block_name(d, n) for d, n in CASES])
def test_block_runs_offline(doc: Path, number: int, workdir: Path) -> None:
    result = run_doc(doc, workdir)[block_name(doc, number)]
    assert result["error"] is None, f"{result['name']} failed:\n{result['error']}"


@pytest.mark.parametrize("doc", DOCS, ids=[d.name for d in DOCS])
def test_every_example_says_what_it_shows(doc: Path, workdir: Path) -> None:
    """Runnable examples print or assert their outcome (a block that only defines is the
    exception: it is a module to run with ``python``)."""
    for number, block in enumerate(blocks_of(doc), start=1):
        if 'if __name__ == "__main__":' in block:
            continue
        assert "assert " in block, f"{block_name(doc, number)} checks nothing"
        result = run_doc(doc, workdir)[block_name(doc, number)]
        assert result["stdout"].strip(), f"{block_name(doc, number)} prints nothing"


def test_the_guard_refuses_the_internet(workdir: Path) -> None:
    """The offline guard itself works: a block that reaches out fails, a loopback one runs."""
    probe = workdir / "probe.md"
    probe.write_text(
        "```python\nimport socket\nsocket.create_connection(('192.0.2.1', 80), timeout=1)\n```\n"
        "```python\nimport socket\nsocket.getaddrinfo('example.com', 443)\n```\n"
        "```python\nimport socket\n"
        "with socket.create_server(('127.0.0.1', 0)) as s:\n"
        "    socket.create_connection(s.getsockname(), timeout=1).close()\n```\n"
    )
    results = run_doc(probe, workdir)
    assert "not allowed" in (results["probe.md#1"]["error"] or "")
    assert "not allowed" in (results["probe.md#2"]["error"] or "")
    assert results["probe.md#3"]["error"] is None


def test_index_lists_every_page() -> None:
    index = (ROOT / "docs" / "index.md").read_text()
    linked = set(re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", index))
    pages = {
        str(p.relative_to(ROOT / "docs"))
        for p in (ROOT / "docs").rglob("*.md")
        if p.name != "index.md"
    }
    missing = sorted(pages - linked)
    assert not missing, f"docs/index.md does not list: {', '.join(missing)}"
    for page in ("server.md", "client.md", "cli.md", "testing.md", "plugins/hooks.md"):
        assert page in linked


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors of a Markdown page."""
    text = re.sub(r"^```.*?^```$", "", page.read_text(), flags=re.MULTILINE | re.DOTALL)
    headings = re.findall(r"^#+ (.+)$", text, re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-") for h in headings}


@pytest.mark.parametrize("doc", [*DOCS, ROOT / "docs" / "index.md"], ids=lambda d: d.name)
def test_relative_links_resolve(doc: Path) -> None:
    """Every relative link names an existing file, and every #anchor an existing heading."""
    problems: list[str] = []
    for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # an absolute URL
        if target.startswith("reference/"):
            continue  # generated when the site is built; tests/test_docs_site.py checks them
        path, _, anchor = target.partition("#")
        page = (doc.parent / path).resolve() if path else doc
        if not page.exists():
            problems.append(f"{target}: no such file")
        elif anchor and page.suffix == ".md" and anchor not in anchors(page):
            problems.append(f"{target}: no such heading")
    assert not problems, f"broken links in {doc.name}: " + "; ".join(problems)
