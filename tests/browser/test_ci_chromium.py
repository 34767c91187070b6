"""``dev.py test`` installs Debian's chromium in CI (CI=true) when it is missing, and
nowhere else (the browser tests then skip with the reason). The commands are recorded,
not run."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _dev() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_dev_py_chromium", ROOT / "dev.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def ran(monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, list[list[str]]]:
    dev = _dev()
    commands: list[list[str]] = []

    def record(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        commands.append(command)
        return subprocess.CompletedProcess(command, 0)

    def which(name: str) -> str | None:
        return "/usr/bin/apt-get" if name == "apt-get" else None  # no chromium here

    monkeypatch.setattr(dev.subprocess, "run", record)
    monkeypatch.setattr(dev.shutil, "which", which)
    monkeypatch.setattr(dev, "say", lambda text: None)
    monkeypatch.delenv("A2A_CHROMIUM", raising=False)
    return dev, commands


def test_in_ci_chromium_is_installed_with_apt(
    ran: tuple[ModuleType, list[list[str]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    dev, commands = ran
    monkeypatch.setenv("CI", "true")
    dev.ensure_chromium()
    tails = [command[-3:] for command in commands]
    assert tails == [
        ["/usr/bin/apt-get", "-qq", "update"],
        ["-y", "--no-install-recommends", "chromium"],
    ]


def test_outside_ci_nothing_is_installed(
    ran: tuple[ModuleType, list[list[str]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    dev, commands = ran
    monkeypatch.delenv("CI", raising=False)
    dev.ensure_chromium()
    assert commands == []
