"""Built wheels and fresh virtual environments for the packaging tests.

``dist`` builds the four packages once per session with ``python3 dev.py
build`` (the documented command) into a temporary folder. ``envs`` creates
fresh virtual environments with uv and installs into them from that folder
and PyPI (through uv's cache), never from this workspace: uv runs in the
environment's own folder with ``--no-config``, so the workspace's settings
and sources do not apply.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from packaging_envs import ROOT, Envs, dev_module, run  # noqa: E402


@pytest.fixture(scope="session")
def uv() -> list[str]:
    """The command that runs uv (found the way dev.py finds it)."""
    found: list[str] = dev_module().find_uv()
    return found


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The four packages' wheels and sdists, built by ``python3 dev.py build -o DIR``."""
    out = tmp_path_factory.mktemp("dist")
    run([sys.executable, str(ROOT / "dev.py"), "build", "-o", str(out)], timeout=300, cwd=ROOT)
    return out


@pytest.fixture(scope="session")
def envs(uv: list[str], dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Envs:
    return Envs(uv, tmp_path_factory.mktemp("venvs"), dist)
