"""``import a2a_core`` stays light: no agent framework, no official SDK; cold time printed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

FORBIDDEN = ("langchain", "langchain_core", "langgraph", "crewai", "a2a")
"""Top-level packages the core must never pull in (``a2a`` is the official SDK)."""

_PROBE = """
import json, sys, time
start = time.perf_counter()
import {module}
elapsed = time.perf_counter() - start
print(json.dumps({{"seconds": elapsed, "modules": sorted(sys.modules)}}))
"""


def _probe(module: str) -> tuple[float, set[str]]:
    """Import ``module`` in a fresh interpreter; return (seconds, top-level packages loaded)."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(module=module)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    tops = {name.split(".")[0] for name in report["modules"]}
    return report["seconds"], tops


@pytest.mark.parametrize(
    "module", ["a2a_core", "a2a_core.types", "a2a_core.wire", "a2a_core.errors"]
)
def test_import_pulls_in_no_framework_or_sdk(module: str) -> None:
    seconds, tops = _probe(module)
    print(f"cold import {module}: {seconds * 1000:.1f} ms")  # informative, not asserted
    assert module.split(".")[0] in tops  # the probe did import something
    assert not (tops & set(FORBIDDEN)), sorted(tops & set(FORBIDDEN))


def test_probe_detects_a_forbidden_import() -> None:
    """The check above can fail: importing the SDK shows up as ``a2a``."""
    _, tops = _probe("a2a.types")
    assert "a2a" in tops
