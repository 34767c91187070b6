"""The terminal sessions shown in the docs are real: recorded here from the ``a2a`` command.

A console block after ``<!-- transcript: NAME -->`` in docs/cli.md must be what the commands
print today, against the example echo agent served by ``a2a serve`` on a free loopback port
(the port shows as 8000, ids are stand-ins cut short). When the output changes on
purpose, rewrite the blocks with ``A2A_UPDATE_DOCS=1 uv run pytest tests/test_docs_transcripts.py``.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "cli.md"
BLOCK = re.compile(r"(<!-- transcript: (\w[\w-]*) -->\n```console\n)(.*?)(^```$)", re.S | re.M)
SHOWN_URL = "http://localhost:8000"
UUID = re.compile(r"\b([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
TALK = [["hello"], ["hello", "--stream"], ["hello", "-q"]]


def a2a() -> list[str]:
    script = Path(sys.executable).parent / ("a2a.exe" if os.name == "nt" else "a2a")
    return [str(script)] if script.exists() else [sys.executable, "-m", "a2a_core.cli"]


def env() -> dict[str, str]:
    """No third-party plugins (the echo agent needs none), no colours, no stray token."""
    clean = {k: v for k, v in os.environ.items() if k not in ("A2A_BEARER_TOKEN", "COLUMNS")}
    return {**clean, "A2A_DISABLE_PLUGIN_AUTOLOAD": "1", "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}


# Ids are random: the docs show these instead, in order of appearance in each block.
SHOWN_IDS = ["293c6b0d", "14a94557", "649682e3", "ca18ccf4", "03e8a334", "fd0c9141", "5b1e07aa"]


def shown(text: str, url: str) -> str:
    """Output as the docs show it: the documented URL, ids replaced and cut short."""
    order: dict[str, str] = {}

    def stand_in(match: re.Match[str]) -> str:
        known = order.setdefault(match.group(0), SHOWN_IDS[len(order) % len(SHOWN_IDS)])
        return f"{known}-…"

    return UUID.sub(stand_in, text.replace(url, SHOWN_URL))


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, str]]:
    """``a2a serve examples/echo_agent.py:echo`` on a free port: (its URL, its startup lines)."""
    command = [*a2a(), "serve", "examples/echo_agent.py:echo", "--port", "0"]
    proc = subprocess.Popen(
        command, cwd=ROOT, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("Press Ctrl-C"):
                break
        match = re.search(r"at (http://\S+)", "".join(lines))
        stderr = proc.stderr.read() if proc.stderr and proc.poll() is not None else ""
        assert match, "".join(lines) + stderr
        url = match.group(1)
        yield url, shown("$ a2a serve examples/echo_agent.py:echo\n" + "".join(lines), url)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def talk(url: str) -> str:
    """The second terminal: each ``a2a send`` and what it printed."""
    sessions: list[str] = []
    for args in TALK:
        result = subprocess.run(
            [*a2a(), "send", url, *args],
            cwd=ROOT,
            env=env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        quoted = " ".join(f'"{a}"' if not a.startswith("-") else a for a in args)
        sessions.append(f"$ a2a send {url} {quoted}\n{result.stdout}")
    return shown("\n".join(sessions), url)


def recorded(served: tuple[str, str]) -> dict[str, str]:
    url, startup = served
    return {"serve": startup, "talk": talk(url)}


def test_the_cli_sessions_in_the_docs_are_what_the_cli_prints(served: tuple[str, str]) -> None:
    text = DOC.read_text()
    found = {m.group(2): m.group(3) for m in BLOCK.finditer(text)}
    assert sorted(found) == ["serve", "talk"], "docs/cli.md lost a transcript marker"
    now = recorded(served)
    if os.environ.get("A2A_UPDATE_DOCS") == "1":
        DOC.write_text(BLOCK.sub(lambda m: m.group(1) + now[m.group(2)] + m.group(4), text))
        found = now
    for name, output in now.items():
        assert found[name] == output, (
            f"docs/cli.md's {name!r} session is out of date; rerun with A2A_UPDATE_DOCS=1"
        )
