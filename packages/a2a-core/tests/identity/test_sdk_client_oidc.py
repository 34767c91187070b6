"""The official SDK's client against our OIDC-protected server (interop).

The token comes from the test identity provider's client-credentials
endpoint; the SDK attaches it with its own ``AuthInterceptor``, which reads
the security schemes and requirements of our card. Without a token the SDK's
call is refused (our 401), never answered.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from a2a_core.testing.idp import IdentityProvider, ProtectedAgent, protected_whoami

AUD = "sdk-interop-agent"

pytest.importorskip("a2a.client")


@pytest.fixture
async def protected() -> AsyncIterator[ProtectedAgent]:
    async with protected_whoami(AUD, "sdk-app", "sdk-s3cret", echo=True) as agent:
        yield agent


@pytest.fixture
def idp(protected: ProtectedAgent) -> IdentityProvider:
    return protected.idp


@pytest.fixture
def server(protected: ProtectedAgent) -> Any:
    return protected.server


async def client_credentials_token(idp: IdentityProvider) -> str:
    """A token from the IdP's token endpoint, as any OAuth client gets one."""
    async with httpx.AsyncClient(timeout=10) as http:
        answer = await http.post(
            idp.token_url,
            data={"grant_type": "client_credentials", "scope": "a2a.send"},
            auth=("sdk-app", "sdk-s3cret"),
        )
    answer.raise_for_status()
    return str(answer.json()["access_token"])


def _request(text: str) -> Any:
    from a2a.types import Message, Role, SendMessageRequest
    from a2a.types import Part as SdkPart

    return SendMessageRequest(
        message=Message(
            role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[SdkPart(text=text)]
        )
    )


def _text(responses: list[Any]) -> str:
    last = responses[-1]
    kind = last.WhichOneof("payload")
    if kind == "message":
        return "".join(p.text for p in last.message.parts)
    task = last.task if kind == "task" else None
    assert task is not None, f"unexpected last response {kind}"
    return "".join(p.text for a in task.artifacts for p in a.parts) or "".join(
        p.text for p in task.status.message.parts
    )


@pytest.mark.parametrize("streaming", [False, True])
async def test_the_sdk_client_with_an_idp_token_is_answered(
    idp: IdentityProvider, server: Any, streaming: bool
) -> None:
    from a2a.client import ClientCallContext, ClientConfig, ClientFactory
    from a2a.client.auth import AuthInterceptor, CredentialService

    token = await client_credentials_token(idp)

    class Tokens(CredentialService):
        """The token for our card's OpenID Connect scheme."""

        def __init__(self) -> None:
            self.asked: list[str] = []

        async def get_credentials(
            self, security_scheme_name: str, context: ClientCallContext | None
        ) -> str | None:
            self.asked.append(security_scheme_name)
            return token if security_scheme_name == "oidc" else None

    tokens = Tokens()
    factory = ClientFactory(ClientConfig(streaming=streaming))
    client = await factory.create_from_url(server.url, interceptors=[AuthInterceptor(tokens)])
    try:
        responses = [r async for r in client.send_message(_request("hi"))]
    finally:
        await client.close()
    if streaming:
        texts = [
            p.text
            for r in responses
            if r.WhichOneof("payload") == "artifact_update"
            for p in r.artifact_update.artifact.parts
        ]
        assert "".join(texts) == "hello sdk-app: hi"
    else:
        assert _text(responses) == "hello sdk-app: hi"
    assert "oidc" in tokens.asked  # the SDK found the scheme in our card's requirements


@pytest.mark.parametrize("streaming", [False, True])
async def test_the_sdk_client_without_a_token_is_refused(
    idp: IdentityProvider, server: Any, streaming: bool
) -> None:
    from a2a.client import ClientConfig, ClientFactory
    from a2a.client.errors import A2AClientError

    client = await ClientFactory(ClientConfig(streaming=streaming)).create_from_url(server.url)
    try:
        with pytest.raises(A2AClientError) as caught:
            _ = [r async for r in client.send_message(_request("hi"))]
    finally:
        await client.close()
    said = f"{type(caught.value).__name__}: {caught.value}"
    assert "HTTP Error 401" in said, said
    assert idp.counters.token == 0


async def test_the_sdk_client_with_a_foreign_token_is_refused(
    idp: IdentityProvider, server: Any
) -> None:
    from a2a.client import ClientConfig, ClientFactory
    from a2a.client.errors import A2AClientError

    wrong = idp.issue("mallory", audience="another-agent", scopes=["a2a.send"])
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {wrong}"}, timeout=10)
    try:
        client = await ClientFactory(
            ClientConfig(streaming=False, httpx_client=http)
        ).create_from_url(server.url)
        with pytest.raises(A2AClientError) as caught:
            _ = [r async for r in client.send_message(_request("hi"))]
        await client.close()
    finally:
        await http.aclose()
    said = f"{type(caught.value).__name__}: {caught.value}"
    assert "HTTP Error 401" in said, said
    assert "mallory" not in said
