"""The LangChain remote tool when no access token can be had: one line, or a typed error.

The agent's card names a token endpoint that is down, refuses the client,
answers something that is not a token, or serves a certificate nobody trusts:
the tool answers the model one line saying there is no access token and why.
With the token endpoint configured (the card is fetched with a token too),
building the tool raises ``TokenError``, an ``A2AError``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from a2a_core.client import ClientCredentials, TokenError
from a2a_core.compose.serve import running_server
from a2a_core.errors import A2AError
from a2a_core.server import RequestContext
from a2a_core.testing.idp import TOKEN_FAILURES, IdentityProvider, failing_token_endpoint
from a2a_langchain import aremote_agent_tool

AUD = "billing-agent"
SAYS = {
    "down": "could not be reached",
    "refused": "refused client 'svc-a': HTTP 401",
    "malformed": "did not answer JSON",
    "tls": "failed TLS",
}

pytestmark = pytest.mark.timeout(60)


async def whoami(context: RequestContext) -> str:
    """Names the caller."""
    principal = context.call.principal if context.call else None
    return f"hello {principal.id if principal else '-'}"


@pytest.fixture(params=TOKEN_FAILURES)
async def agent(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[str, str, Any]]:
    """(failure, token URL, server): a protected agent whose card names that endpoint."""
    failure = request.param
    async with IdentityProvider(audience=AUD) as idp:
        idp.add_client("svc-a", "s3cret-a", scopes=["a2a.send"])
        async with (
            failing_token_endpoint(failure, idp, tmp_path) as token_url,
            running_server(
                whoami, oidc_issuer=idp.issuer, oidc_audience=AUD, oidc_token_url=token_url
            ) as srv,
        ):
            yield failure, token_url, srv


async def test_the_tool_tells_the_model_in_one_line(agent: tuple[str, str, Any]) -> None:
    failure, token_url, srv = agent
    tool = await aremote_agent_tool(srv.url, auth=ClientCredentials("svc-a", "wrong-secret"))
    try:
        answer = await tool.ainvoke({"message": "hi"})
    finally:
        await tool.aclose()
    assert isinstance(answer, str)
    assert "\n" not in answer
    assert "could not be called: no access token" in answer
    assert token_url in answer
    assert SAYS[failure] in answer
    assert "wrong-secret" not in answer


async def test_building_the_tool_raises_token_error(agent: tuple[str, str, Any]) -> None:
    failure, token_url, srv = agent
    auth = ClientCredentials("svc-a", "wrong-secret", token_url=token_url)
    with pytest.raises(TokenError) as caught:
        await aremote_agent_tool(srv.url, auth=auth)
    assert isinstance(caught.value, A2AError)
    assert SAYS[failure] in caught.value.message
