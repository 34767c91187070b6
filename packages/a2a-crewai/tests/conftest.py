"""Test setup for a2a-crewai: CrewAI offline and hermetic, loopback-only networking.

The environment is set before anything imports CrewAI: telemetry, tracing
and version checks off, no first-run prompt, storage in a temporary folder.
CrewAI is imported here with HOME pointing at a temporary folder too (its
import writes a key and config folders there); HOME is then restored for the
rest of the test session, and the subprocesses these tests start get the
temporary one (``crewai_servers.subprocess_env``). Every test runs with a
guard that refuses connections to anything but loopback addresses.
"""

from __future__ import annotations

import os
import socket
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import pytest

_SANDBOX = Path(tempfile.mkdtemp(prefix="a2a-crewai-tests-"))
_REAL_HOME = os.environ.get("HOME")
os.environ.update(
    {
        "CREWAI_DISABLE_TELEMETRY": "true",
        "CREWAI_DISABLE_TRACKING": "true",
        "CREWAI_TRACING_ENABLED": "false",
        "CREWAI_TESTING": "true",
        "CREWAI_DISABLE_VERSION_CHECK": "true",
        "CREWAI_STORAGE_DIR": str(_SANDBOX / "crewai-storage"),
        "HOME": str(_SANDBOX / "home"),
        "A2A_CREWAI_TEST_HOME": str(_SANDBOX / "home"),
        "OPENAI_API_KEY": "",  # a real model must never be picked by accident
    }
)
(_SANDBOX / "home").mkdir(exist_ok=True)

# Import CrewAI once, quietly: its import raises ImportWarnings that pytest's
# "warnings are errors" setting would turn into a collection error.
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import crewai
    import crewai.tools  # noqa: F401
if _REAL_HOME is None:
    del os.environ["HOME"]
else:
    os.environ["HOME"] = _REAL_HOME

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

_LOOPBACK = ("127.", "::1", "localhost", "0.0.0.0")


def _is_loopback(address: Any) -> bool:
    if isinstance(address, str | bytes):
        return True  # a Unix socket path
    if not isinstance(address, tuple) or not address:
        return False
    host = str(address[0])
    return host.startswith(_LOOPBACK) or host in ("", "::ffff:127.0.0.1")


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse outgoing connections and name lookups beyond this machine."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def connect(self: socket.socket, address: Any) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
            raise ConnectionRefusedError(f"test network guard: no connection to {address!r}")
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
            raise ConnectionRefusedError(f"test network guard: no connection to {address!r}")
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host or "")
        if name and not _is_loopback((name,)):
            raise socket.gaierror(f"test network guard: no lookup of {name!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


# CrewAI warns about its own internals (deprecated fields it reads itself): not ours to fix.
_CREWAI_NOISE = (
    "ignore::DeprecationWarning",
    "ignore::PendingDeprecationWarning",
)


def pytest_configure(config: pytest.Config) -> None:
    from a2a_core.testing.pytest_plugin import register_markers

    register_markers(config)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if str(item.path).startswith(_HERE):
            for rule in _CREWAI_NOISE:
                item.add_marker(pytest.mark.filterwarnings(rule))
