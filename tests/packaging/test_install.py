"""`pip install` one adapter: its wheel alone in a fresh environment serves an agent.

The documented install from a clone (pip given the core's and the adapter's
folders) is run by pip itself too, for the LangChain adapter.

Each adapter's wheel goes into a new virtual environment with its core from
the built ``dist/`` folder and every other dependency from PyPI (through
uv's cache), nothing from this workspace. A script run by that environment's
Python then serves an agent with the installed adapter (a LangChain chain
with a fake model, a CrewAI crew with a scripted model) and calls it with
the installed core's client over 127.0.0.1. Both adapters install and run
at the same time (two workers: the machine has two cores).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from packaging_envs import Envs, clean_env, run

HERE = Path(__file__).resolve().parent

# adapter wheel: (smoke script, the model's answers, the other adapter that must be absent)
ADAPTERS = {
    "a2a_langchain": ("smoke_langchain.py", ("Hello from a wheel", "Streamed too"), "a2a-crewai"),
    "a2a_crewai": ("smoke_crewai.py", ("Hello from a crew", "Hello from a crew"), "a2a-langchain"),
    # `a2a mcp` (registered by the wheel's plugin) serves an echo agent to the MCP SDK's client.
    "a2a_adapters_mcp": ("smoke_mcp.py", ("echo: Hi", "echo: Stream, please"), "a2a-langchain"),
}


def install_and_serve(envs: Envs, adapter: str) -> dict[str, Any]:
    """Install the adapter's wheel alone into a new venv; run its smoke script there."""
    python = envs.create(f"only-{adapter}", [str(envs.wheel(adapter))])
    return serve_with(envs, python, adapter)


def pip_from_folders(envs: Envs, adapter: str) -> dict[str, Any]:
    """``pip install ./packages/a2a-core ./packages/<adapter>`` in a new venv; then serve."""
    folder = "./packages/" + adapter.replace("_", "-")
    python = envs.create_with_pip(f"pip-{adapter}", ["./packages/a2a-core", folder])
    return serve_with(envs, python, adapter)


def serve_with(envs: Envs, python: Path, adapter: str) -> dict[str, Any]:
    """Run the adapter's smoke script with ``python``; its report and what is installed."""
    script = HERE / ADAPTERS[adapter][0]
    with tempfile.TemporaryDirectory(prefix="a2a-smoke-home-") as home:
        # CrewAI writes to HOME at import: a temporary one; the network is loopback only.
        env = clean_env({"HOME": home, "OPENAI_API_KEY": ""})
        out = run([str(python), str(script)], timeout=180, cwd=Path(home), env=env).stdout
    report: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    report["venv"] = str(python.parent.parent)
    report["installed"] = envs.installed(python)
    return report


@pytest.fixture(scope="module")
def smoke(envs: Envs) -> Iterator[dict[str, Future[dict[str, Any]]]]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = {adapter: pool.submit(install_and_serve, envs, adapter) for adapter in ADAPTERS}
        # The documented install from a clone, by pip itself (LangChain: the lighter one).
        jobs["pip a2a_langchain"] = pool.submit(pip_from_folders, envs, "a2a_langchain")
        yield jobs


@pytest.mark.timeout(900)
@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_one_adapter_wheel_alone_serves_and_answers(
    smoke: dict[str, Future[dict[str, Any]]], adapter: str
) -> None:
    check(smoke[adapter].result(timeout=880), adapter)


@pytest.mark.timeout(900)
def test_pip_installs_one_adapter_from_the_clone_folders(
    smoke: dict[str, Future[dict[str, Any]]],
) -> None:
    check(smoke["pip a2a_langchain"].result(timeout=880), "a2a_langchain")


def check(report: dict[str, Any], adapter: str) -> None:
    """The agent answered, from modules of the fresh venv, which holds only this adapter."""
    _, (answer, streamed), other = ADAPTERS[adapter]
    assert report["card"] == "Wheel smoke"
    assert report["answer"] == answer
    assert report["streamed"] == streamed
    # A plain install parses HTTP with httptools: h11 costs a quarter more CPU per request.
    assert "HttpToolsProtocol" in report["http"], report["http"]
    assert "httptools" in report["installed"]
    # Everything it imported comes from the fresh environment, not from this workspace.
    assert all(module.startswith(report["venv"]) for module in report["modules"]), report
    installed = report["installed"]
    assert "a2a-adapters-core" in installed
    assert {"a2a_adapters_mcp": "a2a-adapters-mcp"}.get(adapter, adapter.replace("_", "-")) in (
        installed
    )
    assert other not in installed
    assert "a2a-sdk" not in installed  # the official SDK is a test-only peer
