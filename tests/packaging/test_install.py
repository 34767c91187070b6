"""`pip install a2a-langchain` (or a2a-crewai) from an index serves an agent.

The index test: the built ``dist/`` is served as a PEP 503 simple index on
127.0.0.1 (tests/packaging/simple_index.py), as PyPI will serve it once the
packages are published. Each adapter is installed by name into a new virtual
environment, with that index first and PyPI, the default index, after it: the
adapter and its core come from our index (the core found by its name and the
adapter's version range, not by a path or ``--find-links``), everything else
from PyPI (through uv's cache), nothing from this workspace. A script run by
that environment's Python then serves an agent with the installed adapter (a
LangChain chain with a fake model, a CrewAI crew with a scripted model) and
calls it with the installed core's client over 127.0.0.1. Both adapters
install and run at the same time (two workers: the machine has two cores).

The documented install from a clone (pip given the core's and the adapter's
folders) is run by pip itself too, for the LangChain adapter.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from packaging_envs import Envs, clean_env, release_check, run
from simple_index import Index, normalize, serve_index

HERE = Path(__file__).resolve().parent

# adapter wheel: (smoke script, the model's answers, the other adapter that must be absent)
ADAPTERS = {
    "a2a_langchain": ("smoke_langchain.py", ("Hello from a wheel", "Streamed too"), "a2a-crewai"),
    "a2a_crewai": ("smoke_crewai.py", ("Hello from a crew", "Hello from a crew"), "a2a-langchain"),
    # `a2a mcp` (registered by the wheel's plugin) serves an echo agent to the MCP SDK's client.
    "a2a_adapters_mcp": ("smoke_mcp.py", ("echo: Hi", "echo: Stream, please"), "a2a-langchain"),
}


def install_and_serve(envs: Envs, index: Index, adapter: str) -> dict[str, Any]:
    """Install the adapter by name from the index into a new venv; run its smoke script there."""
    python = envs.create_from_index(f"only-{adapter}", index.url, [normalize(adapter)])
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
def index(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    """The built files, served as a simple index on 127.0.0.1 while this module runs."""
    with serve_index(dist, tmp_path_factory.mktemp("index")) as served:
        yield served


@pytest.fixture(scope="module")
def smoke(envs: Envs, index: Index) -> Iterator[dict[str, Future[dict[str, Any]]]]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = {a: pool.submit(install_and_serve, envs, index, a) for a in ADAPTERS}
        # The documented install from a clone, by pip itself (LangChain: the lighter one).
        jobs["pip a2a_langchain"] = pool.submit(pip_from_folders, envs, "a2a_langchain")
        yield jobs


def test_the_index_lists_every_package(index: Index) -> None:
    assert index.projects == sorted(p.name for p in release_check().discover())


@pytest.mark.timeout(900)
@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_each_adapter_installs_by_name_from_the_index_and_serves(
    smoke: dict[str, Future[dict[str, Any]]], index: Index, adapter: str
) -> None:
    report = smoke[adapter].result(timeout=880)
    check(report, adapter)
    # The adapter and its core came from our index, found by name, at the built versions.
    versions = {p.name: p.version for p in release_check().discover()}
    for name in (normalize(adapter), "a2a-adapters-core"):
        assert report["installed"][name] == versions[name]
        assert f"/simple/{name}/" in index.requested, index.requested
        file = f"/files/{name.replace('-', '_')}-{versions[name]}-py3-none-any.whl"
        assert file in index.requested, index.requested


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
