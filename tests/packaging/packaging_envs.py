"""Helpers of the packaging tests: subprocesses, the lock, fresh virtual environments."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALL_TIMEOUT = 600.0
"""Seconds one ``uv pip install`` may take (a cold uv cache downloads CrewAI's dependencies)."""


def dev_module() -> ModuleType:
    """dev.py, imported (it is no package)."""
    spec = importlib.util.spec_from_file_location("_dev_py", ROOT / "dev.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def release_check() -> ModuleType:
    """tools/release_check.py, imported: the checks ``python3 dev.py release-check`` runs."""
    spec = importlib.util.spec_from_file_location(
        "_release_check", ROOT / "tools" / "release_check.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def locked_version(name: str) -> str:
    """The version of ``name`` that uv.lock pins."""
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    versions = {p["name"]: p.get("version") for p in lock["package"]}
    version = versions.get(name)
    assert version, f"{name} is not in uv.lock"
    return str(version)


def run(
    cmd: Sequence[str],
    *,
    timeout: float,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``cmd``; fail the test with its output when it fails."""
    result = subprocess.run(
        list(cmd),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
        env=clean_env() if env is None else dict(env),
    )
    if result.returncode != 0:
        pytest.fail(
            f"{' '.join(cmd)} exited {result.returncode}\n"
            f"--- stdout\n{result.stdout[-6000:]}\n--- stderr\n{result.stderr[-6000:]}"
        )
    return result


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without the active venv (and pytest's own variables)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "PYTHONPATH") and not k.startswith("PYTEST_")
    }
    env.update(extra or {})
    return env


class Envs:
    """Fresh virtual environments under one folder, filled by uv from ``dist`` and PyPI."""

    def __init__(self, uv: Sequence[str], root: Path, dist: Path) -> None:
        self.uv = list(uv)
        self.root = root
        self.dist = dist

    def wheel(self, distribution: str) -> Path:
        """The built wheel of a distribution (``a2a_langchain``...)."""
        (found,) = self.dist.glob(f"{distribution}-*.whl")
        return found

    def create(self, name: str, requirements: Sequence[str]) -> Path:
        """A new venv holding ``requirements``; returns its python."""
        folder = self.root / name
        venv = [*self.uv, "venv", "--no-config", "-q", str(folder), "--python", sys.executable]
        run(venv, timeout=120, cwd=self.root)
        python = folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
        install = [*self.uv, "pip", "install", "--no-config", "-q", "--python", str(python)]
        run(
            [*install, "--find-links", str(self.dist), *requirements],
            timeout=INSTALL_TIMEOUT,
            cwd=self.root,
        )
        return python

    def create_from_index(self, name: str, index: str, requirements: Sequence[str]) -> Path:
        """A new venv holding ``requirements`` by name: ``index`` first, PyPI after it.

        uv's default index strategy takes each project from the first index that has
        it: ours for the packages of this repository, PyPI (the default index) for
        the rest, as once they are published. No ``--find-links``, no paths.
        """
        folder = self.root / name
        venv = [*self.uv, "venv", "--no-config", "-q", str(folder), "--python", sys.executable]
        run(venv, timeout=120, cwd=self.root)
        python = folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
        install = [*self.uv, "pip", "install", "--no-config", "-q", "--python", str(python)]
        install += ["--index", index, "--default-index", "https://pypi.org/simple"]
        run([*install, *requirements], timeout=INSTALL_TIMEOUT, cwd=self.root)
        return python

    def create_with_pip(self, name: str, folders: Sequence[str]) -> Path:
        """A new venv where pip itself installs package folders of this repository.

        The documented way to install from a clone: ``pip install
        ./packages/a2a-core ./packages/a2a-langchain``, run in the top folder.
        """
        folder = self.root / name
        venv = [*self.uv, "venv", "--no-config", "--seed", "-q", str(folder)]
        run([*venv, "--python", sys.executable], timeout=120, cwd=self.root)
        python = folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        run([*pip, *folders], timeout=INSTALL_TIMEOUT, cwd=ROOT)
        return python

    @staticmethod
    def installed(python: Path) -> dict[str, str]:
        """Distribution name -> version of everything installed in the venv of ``python``."""
        code = (
            "import importlib.metadata as m, json;"
            "print(json.dumps({d.metadata['Name'].lower(): d.version for d in m.distributions()}))"
        )
        out = run([str(python), "-c", code], timeout=60).stdout
        names: dict[str, str] = json.loads(out)
        return {re.sub(r"[-_.]+", "-", k): v for k, v in names.items()}
