"""``a2a serve URL --passthrough`` (a gateway, as a real subprocess) forwarding each caller's
token to a protected remote agent: the remote agent names the end user. The remote agent
and the test IdP run on a background loop in this process; everything is on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AsyncExitStack
from typing import Any

import pytest
from a2a_core.client.loop import BackgroundLoop
from a2a_core.compose.serve import running_server
from a2a_core.server import RequestContext
from a2a_core.testing.idp import IdentityProvider
from cli_support import ServeProcess, cli
from servers import free_port  # pyright: ignore[reportMissingImports]

pytestmark = pytest.mark.timeout(90)

REMOTE = "upstream-agent"
GATEWAY = "gateway-agent"


async def whoami(context: RequestContext) -> str:
    """Names the caller."""
    principal = context.principal
    return f"hello {principal.id if principal else '-'}: {context.text}"


@pytest.fixture(scope="module")
def upstream() -> Iterator[dict[str, Any]]:
    runner = BackgroundLoop()
    stack = AsyncExitStack()
    try:
        idp = runner.run(stack.enter_async_context(IdentityProvider(audience=REMOTE)))
        protected = runner.run(
            stack.enter_async_context(
                running_server(whoami, oidc_issuer=idp.issuer, oidc_audience=REMOTE)
            )
        )
        yield {"idp": idp, "protected": protected.url}
    finally:
        runner.run(stack.aclose())
        runner.stop()


def test_the_gateway_forwards_each_callers_token(
    capsys: pytest.CaptureFixture[str], upstream: dict[str, Any]
) -> None:
    idp: IdentityProvider = upstream["idp"]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    options = ["--oidc-issuer", idp.issuer, "--oidc-audience", GATEWAY, "--passthrough"]
    args = [upstream["protected"], "--port", str(port), "--public-url", url, *options]
    alice = idp.issue("alice", audience=[GATEWAY, REMOTE])
    bob = idp.issue("bob", audience=[GATEWAY, REMOTE])
    with ServeProcess(args) as gateway:
        url = gateway.start()
        code, out, err = cli(capsys, "send", url, "ping", "--token", alice)
        assert (code, err) == (0, "")
        assert out.splitlines()[-1] == "hello alice: ping"
        code, out, _ = cli(capsys, "send", url, "pong", "--token", bob)
        assert out.splitlines()[-1] == "hello bob: pong"
        # no token: the gateway refuses (it authenticates its callers), nothing is forwarded
        code, out, _ = cli(capsys, "send", url, "ping")
        assert code != 0
        assert "hello" not in out
        assert gateway.stop() == 0
    assert alice not in gateway.output() + gateway.errors()
