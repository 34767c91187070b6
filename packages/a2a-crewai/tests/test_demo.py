"""The README's first command: the demo runs offline, prints the conversation, exits 0."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "examples" / "demo.py"

pytestmark = pytest.mark.timeout(120)


def test_demo_runs_offline_and_prints_the_conversation() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, str(DEMO), "Porto"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
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
    assert "Traceback" not in result.stderr
    assert elapsed < 60, f"the demo took {elapsed:.0f} s"
    # Nothing is left listening: the weather desk's port is closed.
    found = re.search(r"Weather desk at http://localhost:(\d+)", out)
    assert found is not None
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", int(found.group(1)))) != 0
