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


@pytest.mark.parametrize(
    "module", ["a2a_core", "a2a_core.compose.serve", "a2a_core.client", "a2a_core.cli.main"]
)
def test_grpc_is_not_imported_unless_used(module: str) -> None:
    """The gRPC binding is an extra: serving and connecting over HTTP never load grpc."""
    _, tops = _probe(module)
    assert "grpc" not in tops
    assert "google" not in tops  # protobuf


_WITHOUT_GRPC = """
import asyncio, sys


class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name == "grpc" or name.startswith(("grpc.", "google.protobuf", "google.rpc")):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None


sys.meta_path.insert(0, Blocker())
from a2a_core import AgentCard, AgentInterface
from a2a_core.bindings import BindingUnavailableError
from a2a_core.client.interfaces import NoCompatibleInterfaceError, select_interface
from a2a_core.compose.serve import running_server

card = AgentCard(name="a", description="", version="1", supported_interfaces=[
    AgentInterface(url="localhost:1", protocol_binding="GRPC", protocol_version="1.0"),
    AgentInterface(url="http://localhost:2/", protocol_binding="JSONRPC", protocol_version="1.0"),
])
assert select_interface(card).protocol_binding == "JSONRPC"
try:
    select_interface(card, preferred_bindings=["GRPC"])
except NoCompatibleInterfaceError as exc:
    assert "a2a-adapters-core[grpc]" in str(exc), exc
else:
    raise AssertionError("GRPC was selected without grpc")
try:
    import a2a_core.grpc
except ImportError as exc:
    assert "a2a-adapters-core[grpc]" in str(exc), exc
else:
    raise AssertionError("a2a_core.grpc imported without grpc")


async def agent(context):
    return "hi"


async def main():
    async with running_server(agent) as server:
        assert server.grpc_address is None
    try:
        async with running_server(agent, grpc_port=0):
            pass
    except BindingUnavailableError as exc:
        assert "a2a-adapters-core[grpc]" in str(exc), exc
    else:
        raise AssertionError("served gRPC without grpc")


asyncio.run(main())
assert "grpc" not in sys.modules
print("ok")
"""


def test_without_the_grpc_extra_http_works_and_grpc_is_named() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_GRPC], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("ok")


@pytest.mark.parametrize(
    "module",
    [
        "a2a_core",
        "a2a_core.telemetry",
        "a2a_core.compose.serve",
        "a2a_core.client",
        "a2a_core.cli.main",
    ],
)
def test_opentelemetry_is_not_imported_unless_enabled(module: str) -> None:
    """The ``otel`` extra costs nothing until ``telemetry.enable()``: not even an import."""
    _, tops = _probe(module)
    assert "opentelemetry" not in tops


_SERVE_AND_CALL = """
import asyncio, json, sys
{block}
from a2a_core import telemetry
from a2a_core.client import A2AClient
from a2a_core.compose.serve import running_server

async def echo(context):
    return "echo: " + context.text

async def main():
    async with running_server(echo, log_level="info") as srv:
        async with A2AClient.for_endpoint(srv.url) as client:
            text = await client.send_text("hi")
    return text

text = asyncio.run(main())
before = "opentelemetry" in sys.modules
try:
    telemetry.enable()
    enabled = "enabled"
except telemetry.TelemetryUnavailableError as exc:
    enabled = str(exc)
after = "opentelemetry" in sys.modules
print(json.dumps({{"text": text, "before": before, "after": after, "enable": enabled}}))
"""

_BLOCK_OTEL = """
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None

sys.meta_path.insert(0, Blocker())
"""


@pytest.mark.parametrize("installed", [True, False])
def test_serving_and_calling_without_enabling_never_loads_opentelemetry(installed: bool) -> None:
    """A full request (access log on) with telemetry off, with the extra present or absent;
    enabling without it says which extra to install."""
    code = _SERVE_AND_CALL.format(block="" if installed else _BLOCK_OTEL)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["text"] == "echo: hi"
    assert report["before"] is False
    if installed:
        assert report["enable"] == "enabled"
        assert report["after"] is True  # enable() loaded it: the probe can see an import
    else:
        assert "a2a-adapters-core[otel]" in report["enable"]


_LOADED = """
import json, sys
{statement}
print(json.dumps(sorted(sys.modules)))
"""


def _loaded(statement: str) -> set[str]:
    """Every module (full dotted name) loaded in a fresh interpreter by ``statement``."""
    done = subprocess.run(
        [sys.executable, "-c", _LOADED.format(statement=statement)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def _among(loaded: set[str], heavy: tuple[str, ...]) -> list[str]:
    """The ``heavy`` modules (or any module below one) that are in ``loaded``."""
    return sorted(h for h in heavy if any(m == h or m.startswith(h + ".") for m in loaded))


_NEVER_FOR_THE_PACKAGE = ("httpx", "httpcore", "pydantic", "a2a_core.types._base", "asyncio")
"""What ``import a2a_core.client`` must not load: every name is loaded on first use."""

_NEVER_FOR_A2ACLIENT = (
    "a2a_core.server",
    "a2a_core.stores",
    "a2a_core.grpc",
    "a2a_core.cli",
    "a2a_core.signing",
    "a2a_core.client.sync",
    "a2a_core.client.session",
    "a2a_core.client.remote",
    "a2a_core.client.files",
    "a2a_core.client.transports._sse",
    "a2a_core.client.transports.rest",
    "a2a_core.client.transports.inprocess",
    "grpc",
    "google.protobuf",
    "starlette",
    "uvicorn",
    "opentelemetry",
    "jwt",
    "cryptography",
)
"""What ``from a2a_core.client import A2AClient`` must not load: the server side, other
bindings, the sync facade, streaming and the optional extras are loaded when used. (httpx's
own command line, which ``import httpx`` loads, is skipped by the ``a2a`` command alone: a
library leaves the import system as it is.)"""


def test_importing_the_client_package_loads_no_heavy_module() -> None:
    loaded = _loaded("import a2a_core.client")
    assert "a2a_core.client" in loaded  # the probe imported it
    assert _among(loaded, _NEVER_FOR_THE_PACKAGE) == []


def test_importing_a2aclient_loads_only_what_a_plain_call_needs() -> None:
    loaded = _loaded("from a2a_core.client import A2AClient")
    assert "a2a_core.client.client" in loaded
    assert _among(loaded, _NEVER_FOR_A2ACLIENT) == []


def test_the_footprint_check_sees_a_heavy_module() -> None:
    """The checks above can fail: what a streaming client loads is seen."""
    loaded = _loaded(
        "from a2a_core.client import A2AClient, SyncA2AClient, RestTransport\n"
        "from a2a_core.client.transports._sse import SSEParser"
    )
    assert _among(loaded, _NEVER_FOR_A2ACLIENT) == [
        "a2a_core.client.sync",
        "a2a_core.client.transports._sse",
        "a2a_core.client.transports.rest",
    ]


def test_httpx_main_still_runs_httpx_command_line() -> None:
    """``httpx.main`` (the stand-in's forwarder) runs httpx's real command line."""
    code = (
        "import sys\nfrom a2a_core.cli.httpx_cli import skip_httpx_cli\nskip_httpx_cli()\n"
        "import httpx\nsys.argv = ['httpx', '--help']\nhttpx.main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "HTTPX" in done.stdout or "Usage" in done.stdout
