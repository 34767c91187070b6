"""The README's first command: the demo runs offline, prints the conversation, exits 0.

Both runs (offline, and with a stand-in OpenAI API) start together: each is
a fresh Python importing CrewAI and LangChain, most of the time they take.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import uvicorn
from crewai_servers import free_port, subprocess_env
from fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "examples" / "demo.py"

pytestmark = pytest.mark.timeout(150)


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


@dataclass
class DemoRuns:
    offline: Run
    real: Run
    api: FakeOpenAI


def _start(city: str, **extra_env: str) -> tuple[subprocess.Popen[str], float]:
    proc = subprocess.Popen(
        [sys.executable, str(DEMO), city],
        cwd=ROOT,
        env=subprocess_env(**extra_env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return proc, time.monotonic()


def _finish(proc: subprocess.Popen[str], started: float) -> Run:
    try:
        stdout, stderr = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
    return Run(proc.returncode, stdout, stderr, time.monotonic() - started)


@pytest.fixture(scope="module")
def runs() -> Iterator[DemoRuns]:
    api = FakeOpenAI()
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(api, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        offline = _start("Porto")
        real = _start(
            "Oslo",
            OPENAI_API_KEY="sk-test-not-a-real-key",
            OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1",
            OPENAI_MODEL="gpt-4o-mini",
        )
        yield DemoRuns(_finish(*offline), _finish(*real), api)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_demo_runs_offline_and_prints_the_conversation(runs: DemoRuns) -> None:
    run = runs.offline
    assert run.returncode == 0, run.stderr[-3000:]
    out = run.stdout
    expected = [
        "A2A demo: a CrewAI crew asks a LangChain chain for help, over A2A "
        "(offline: scripted stand-in models)",
        "1. a2a-langchain serves a LangChain chain as an A2A agent",
        "2. a2a-crewai reads the card and makes the agent a CrewAI tool",
        "   tool 'weather_desk': Ask the remote A2A agent 'Weather desk'",
        "3. The crew plans a day in Porto, asking the weather desk over A2A",
        "   Trip planner -> weather_desk: What will the weather be like in Porto tomorrow?",
        "   weather_desk -> Trip planner: Sunny and 24 °C, with a light breeze after 3 pm.",
        "4. The crew's result",
        "   Morning: a walk through the old town of Porto (Sunny and 24 °C",
        "the server is stopped.",
    ]
    positions = [out.find(line) for line in expected]
    assert -1 not in positions, f"missing {expected[positions.index(-1)]!r} in:\n{out}"
    assert positions == sorted(positions), out
    assert "Traceback" not in run.stderr
    # The figure it reports is the wait the user saw: from its start, imports included
    # (they take most of a run), up to the interpreter's own start and exit.
    took = re.search(r"Done in ([\d.]+) s since the demo started \(([\d.]+) s of it loading", out)
    assert took is not None, out
    total, loading = float(took.group(1)), float(took.group(2))
    assert 0 < loading < total
    assert run.seconds - total <= max(3.0, 0.25 * run.seconds), (total, run.seconds)
    assert run.seconds < 100, f"the demo took {run.seconds:.0f} s"
    # Nothing is left listening: the weather desk's port is closed.
    found = re.search(r"Weather desk at http://localhost:(\d+)", out)
    assert found is not None
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", int(found.group(1)))) != 0


def test_demo_uses_real_models_when_openai_is_configured(runs: DemoRuns) -> None:
    """OPENAI_API_KEY set: both frameworks call the (here: stand-in) OpenAI API."""
    run = runs.real
    assert run.returncode == 0, run.stderr[-3000:]
    out = run.stdout
    assert "(real model: gpt-4o-mini)" in out
    assert "Trip planner -> weather_desk: Will it rain tomorrow?" in out
    assert "weather_desk -> Trip planner: Cloudy and 18 °C, no rain." in out
    assert "Plan: take a jacket (Cloudy and 18 °C, no rain.)" in out
    # The crew's model was offered the remote agent as a tool; the chain's got the question.
    offered = [r for r in runs.api.requests if r.get("tools")]
    assert offered
    assert offered[0]["tools"][0]["function"]["name"] == "weather_desk"
    assert any(
        "Will it rain tomorrow?" in str(m.get("content"))
        for r in runs.api.requests
        if not r.get("tools")
        for m in r["messages"]
    )
