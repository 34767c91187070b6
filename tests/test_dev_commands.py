"""``dev.py demo`` sets up only what the demo needs; ``dev.py docs-serve`` finds a free
port before it builds anything. The commands are recorded, not run; the ports are real."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _dev() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_dev_py_commands", ROOT / "dev.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def dev(monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, list[list[str]], list[str]]:
    module = _dev()
    commands: list[list[str]] = []
    said: list[str] = []

    def record(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        commands.append(command)
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(module.subprocess, "run", record)
    monkeypatch.setattr(module, "find_uv", lambda: ["uv"])
    monkeypatch.setattr(module, "say", said.append)
    return module, commands, said


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port a real server listens on (as ``a2a serve`` would on 8000)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()[1]


def _sync(commands: list[list[str]]) -> list[str]:
    return next(command for command in commands if command[1:2] == ["sync"])


def test_demo_sets_up_only_the_adapters_it_imports(
    dev: tuple[ModuleType, list[list[str]], list[str]],
) -> None:
    module, commands, _ = dev
    assert module.main(["demo", "Porto"]) == 0
    sync = _sync(commands)
    assert "--all-packages" not in sync
    chosen = [sync[i + 1] for i, arg in enumerate(sync) if arg == "--package"]
    assert sorted(chosen) == ["a2a-crewai", "a2a-langchain"]
    # No dev group (ruff, pyright, mkdocs, a2a-sdk, ...), and a full .venv stays full.
    assert "--no-default-groups" in sync
    assert "--inexact" in sync
    assert "--locked" in sync
    assert commands[-1][-2:] == [str(ROOT / "examples" / "demo.py"), "Porto"]


def test_test_still_sets_up_everything(
    dev: tuple[ModuleType, list[list[str]], list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    module, commands, _ = dev
    monkeypatch.delenv("CI", raising=False)
    module.main(["test", "-k", "nothing"])
    sync = _sync(commands)
    assert sync[2:4] == ["--all-packages", "--locked"]
    assert "--inexact" not in sync


def test_the_demo_imports_nothing_outside_the_adapters_dependencies() -> None:
    """Every module the offline demo imports is installed by the demo's set-up."""
    import ast
    import tomllib

    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    packages = {package["name"]: package for package in lock["package"]}
    closure: set[str] = set()
    todo = ["a2a-langchain", "a2a-crewai"]
    while todo:
        name = todo.pop()
        if name in closure:
            continue
        closure.add(name)
        todo += [dep["name"] for dep in packages[name].get("dependencies", [])]
    tree = ast.parse((ROOT / "examples" / "demo.py").read_text())
    imported = {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 0
    } | {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    import sys

    third_party = imported - set(sys.stdlib_module_names) - {"__future__"}
    # langchain_openai is imported only with OPENAI_API_KEY, when installed (see the demo).
    distributions = {name.replace("-", "_") for name in closure} | {"a2a_core"}
    assert third_party - {"langchain_openai", "openai"} <= distributions
    assert "a2a-adapters-core" in closure


def test_docs_serve_moves_to_a_free_port_when_8000_is_taken(
    dev: tuple[ModuleType, list[list[str]], list[str]],
    monkeypatch: pytest.MonkeyPatch,
    taken_port: int,
) -> None:
    module, commands, said = dev
    monkeypatch.setattr(module, "DOCS_PORT", taken_port)
    assert module.main(["docs-serve"]) == 0
    serve = commands[-1]
    address = serve[serve.index("--dev-addr") + 1]
    host, _, port = address.rpartition(":")
    assert host == "127.0.0.1"
    assert int(port) != taken_port
    assert said[0] == (
        f"port {taken_port} is in use (by a2a serve?): serving the docs on {int(port)}"
    )
    # It was checked before anything was set up or built.
    assert [command[1] for command in commands] == ["sync", "run"]


def test_docs_serve_uses_8000_when_it_is_free(
    dev: tuple[ModuleType, list[list[str]], list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    module, commands, said = dev
    with socket.socket() as probe:  # a port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    monkeypatch.setattr(module, "DOCS_PORT", free)
    assert module.main(["docs-serve"]) == 0
    assert commands[-1][-2:] == ["--dev-addr", f"127.0.0.1:{free}"]
    assert not any("in use" in line for line in said)


def test_docs_serve_refuses_a_taken_address_it_was_given_in_one_line(
    dev: tuple[ModuleType, list[list[str]], list[str]],
    taken_port: int,
    capsys: pytest.CaptureFixture[str],
) -> None:
    module, commands, _ = dev
    with pytest.raises(SystemExit) as stopped:
        module.main(["docs-serve", "--dev-addr", f"127.0.0.1:{taken_port}"])
    assert stopped.value.code == 1
    err = capsys.readouterr().err
    assert err == (
        f"dev.py: 127.0.0.1:{taken_port} is in use: give another with --dev-addr HOST:PORT\n"
    )
    assert commands == []  # no set-up, no 16 s build before saying so
