"""``a2a serve URL`` (a gateway, as a real subprocess) calling a protected remote agent:
with an OAuth 2.0 client-credentials token (``--remote-client-id``, the secret from
``$A2A_REMOTE_CLIENT_SECRET``) and with a client certificate (``--remote-cert``) to an
agent that requires mutual TLS. The remote agents and the test IdP run on a background
loop in this process; everything is on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from a2a_core.client.loop import BackgroundLoop
from a2a_core.compose.serve import running_server
from a2a_core.server import RequestContext
from a2a_core.server.tls import ServerTLS
from a2a_core.testing.idp import IdentityProvider
from a2a_core.testing.pki import TestCA
from cli_support import ServeProcess, cli
from servers import free_port  # pyright: ignore[reportMissingImports]

pytestmark = pytest.mark.timeout(90)

AUD = "upstream-agent"


async def whoami(context: RequestContext) -> str:
    """Names the caller."""
    principal = context.principal
    return f"hello {principal.id if principal else '-'}: {context.text}"


@pytest.fixture(scope="module")
def upstreams(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("gateway-pki")
    ca = TestCA(folder, "Upstream CA")
    server_cert = ca.server_cert()
    runner = BackgroundLoop()
    stack = AsyncExitStack()
    try:
        idp = runner.run(stack.enter_async_context(IdentityProvider(audience=AUD)))
        idp.add_client("svc-gw", "s3cret-gw", scopes=["a2a.send"])
        protected = runner.run(
            stack.enter_async_context(
                running_server(whoami, oidc_issuer=idp.issuer, oidc_audience=AUD)
            )
        )
        tls = ServerTLS(server_cert.cert, server_cert.key, client_ca=ca.cert_path)
        mutual = runner.run(stack.enter_async_context(running_server(whoami, tls=tls)))
        yield {
            "idp": idp,
            "protected": protected.url,
            "mutual": mutual.url,
            "ca": ca,
            "gateway_cert": ca.client_cert("gateway"),
        }
    finally:
        runner.run(stack.aclose())
        runner.stop()


def _gateway(target: str, *options: str) -> ServeProcess:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    return ServeProcess([target, "--port", str(port), "--public-url", url, *options])


def test_the_gateway_calls_with_client_credentials(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    upstreams: dict[str, Any],
) -> None:
    idp: IdentityProvider = upstreams["idp"]
    monkeypatch.setenv("A2A_REMOTE_CLIENT_SECRET", "s3cret-gw")  # the subprocess inherits it
    before = idp.counters.token
    with _gateway(upstreams["protected"], "--remote-client-id", "svc-gw") as gateway:
        url = gateway.start()
        code, out, err = cli(capsys, "send", url, "ping")
        assert (code, err) == (0, "")
        assert out.splitlines()[-1] == "hello svc-gw: ping"
        code, out, _ = cli(capsys, "send", url, "pong")
        assert out.splitlines()[-1] == "hello svc-gw: pong"
        assert gateway.stop() == 0
    assert idp.counters.token == before + 1  # one token, cached across calls
    assert "s3cret-gw" not in gateway.output() + gateway.errors()
    # without credentials the remote agent refuses the gateway, which says so
    monkeypatch.delenv("A2A_REMOTE_CLIENT_SECRET")
    with _gateway(upstreams["protected"]) as gateway:
        url = gateway.start()
        code, out, _ = cli(capsys, "send", url, "ping")
        assert "hello" not in out
        assert code != 0


def test_the_gateway_presents_a_client_certificate(
    capsys: pytest.CaptureFixture[str], upstreams: dict[str, Any]
) -> None:
    ca: TestCA = upstreams["ca"]
    cert = upstreams["gateway_cert"]
    tls = ["--remote-cacert", str(ca.cert_path), "--remote-cert", str(cert.cert)]
    with _gateway(upstreams["mutual"], *tls, "--remote-key", str(cert.key)) as gateway:
        url = gateway.start()
        code, out, err = cli(capsys, "send", url, "ping")
        assert (code, err) == (0, "")
        assert out.splitlines()[-1] == "hello gateway: ping"


def test_remote_options_are_for_gateways(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from cli_support import AGENTS_FILE

    monkeypatch.delenv("A2A_REMOTE_CLIENT_ID", raising=False)
    monkeypatch.delenv("A2A_REMOTE_CLIENT_SECRET", raising=False)
    local = f"{AGENTS_FILE}:ScriptedAgent"
    code, _, err = cli(capsys, "serve", local, "--remote-client-id", "x")
    assert code == 2
    assert "--remote-client-id is for a gateway" in err
    code, _, err = cli(capsys, "serve", "http://127.0.0.1:9", "--remote-client-id", "x")
    assert code == 2
    assert "--remote-client-id and --remote-client-secret go together" in err
    missing = str(tmp_path / "none.pem")
    code, _, err = cli(capsys, "serve", "http://127.0.0.1:9", "--remote-cacert", missing)
    assert code == 2
    assert "--remote-cacert: no such file" in err
