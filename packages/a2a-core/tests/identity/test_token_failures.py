"""Every client-side auth failure is one clear line or a typed exception, never a traceback.

The agent's card names a token endpoint that is down, refuses the client,
answers something that is not a token, or serves a certificate nobody trusts.
The ``a2a`` CLI (a real process) prints one ``a2a: error:`` line and exits 6;
the client raises ``TokenError`` (an ``A2AError``); a ``RemoteAgentSession``
asked with ``errors="reply"`` (what the adapters' remote tools do) answers one
line saying so. The adapters' own tests drive their tools the same way.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from a2a_core.client import A2AClient, ClientCredentials, TokenError
from a2a_core.client.session import RemoteAgentSession
from a2a_core.compose.serve import running_server
from a2a_core.errors import A2AError
from a2a_core.server import RequestContext
from a2a_core.testing.idp import TOKEN_FAILURES, IdentityProvider, failing_token_endpoint

AUD = "billing-agent"
SAYS = {
    "down": "could not be reached",
    "refused": "refused client 'svc-a': HTTP 401 (invalid_client)",
    "malformed": "did not answer JSON",
    "tls": "failed TLS: [SSL: CERTIFICATE_VERIFY_FAILED]",
}
"""What the one line says for each failure, after the token endpoint's URL."""

pytestmark = pytest.mark.timeout(60)


async def whoami(context: RequestContext) -> str:
    """Names the caller."""
    principal = context.call.principal if context.call else None
    return f"hello {principal.id if principal else '-'}"


@pytest.fixture(params=TOKEN_FAILURES)
async def agent(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[str, Any]]:
    """(failure, server): a protected agent whose card names a failing token endpoint."""
    failure = request.param
    async with IdentityProvider(audience=AUD) as idp:
        idp.add_client("svc-a", "s3cret-a", scopes=["a2a.send"])
        async with (
            failing_token_endpoint(failure, idp, tmp_path) as token_url,
            running_server(
                whoami, oidc_issuer=idp.issuer, oidc_audience=AUD, oidc_token_url=token_url
            ) as srv,
        ):
            yield failure, srv


async def test_the_cli_says_it_in_one_line_and_exits_6(agent: tuple[str, Any]) -> None:
    failure, srv = agent
    env = {**os.environ, "A2A_PLUGINS": "", "A2A_CLIENT_ID": "svc-a"}
    env["A2A_CLIENT_SECRET"] = "wrong-secret"
    env.pop("A2A_BEARER_TOKEN", None)
    env.pop("A2A_DEBUG", None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "a2a_core.cli",
        "send",
        srv.url,
        "hi",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    lines = err.decode().splitlines()
    assert proc.returncode == 6, err.decode()
    assert len(lines) == 1, err.decode()
    assert lines[0].startswith("a2a: error: no access token: the token endpoint http"), lines
    assert SAYS[failure] in lines[0]
    assert "wrong-secret" not in err.decode() + out.decode()


async def test_the_client_raises_token_error(agent: tuple[str, Any]) -> None:
    failure, srv = agent
    auth = ClientCredentials("svc-a", "wrong-secret")
    async with await A2AClient.connect(srv.url, auth=auth) as client:
        with pytest.raises(TokenError) as caught:
            await client.send("hi")
    assert isinstance(caught.value, A2AError)  # every failure of a call is an A2AError
    assert SAYS[failure] in caught.value.message
    assert "\n" not in caught.value.message


async def test_a_remote_session_answers_one_line(agent: tuple[str, Any]) -> None:
    failure, srv = agent
    session = RemoteAgentSession(srv.url, auth=ClientCredentials("svc-a", "wrong-secret"))
    try:
        reply = await session.ask("hi", errors="reply")
    finally:
        await session.aclose()
    assert reply.error == "TokenError"
    assert reply.text.startswith("The remote agent ")
    assert "could not be called: no access token" in reply.text
    assert SAYS[failure] in reply.text
    assert "\n" not in reply.text
