"""Signed agent cards: served signed, verified by our client and by the official SDK's helper;
unsigned and tampered cards refused."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from a2a_core.client import A2AClient
from a2a_core.compose.serve import running_server
from a2a_core.signing import CardSignatureError, CardSigner, CardVerifier
from a2a_core.testing.idp import IdentityProvider, SigningKey
from a2a_core.types import AgentCard


async def echo(text: str) -> str:
    """Echoes."""
    return "ok"


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return SigningKey.generate("ES256", kid="card-key-1")


async def test_a_signed_card_verifies_and_a_tampered_one_does_not(key: SigningKey) -> None:
    signer = CardSigner(key.private_key, key.kid, algorithm="ES256")
    verifier = CardVerifier({key.kid: key.jwk})
    async with running_server(echo, card_signer=signer, name="Signed") as srv:
        async with await A2AClient.connect(srv.url, verify_card=verifier) as client:
            assert client.card is not None
            assert client.card.signatures
            assert verifier.verify(client.card) == key.kid
        async with httpx.AsyncClient() as http:
            document = (await http.get(srv.url + "/.well-known/agent-card.json")).json()
    card = AgentCard.model_validate(document)
    tampered = card.model_copy(update={"description": card.description + " (evil)"})
    with pytest.raises(CardSignatureError, match="no signature"):
        verifier.verify(tampered)
    with pytest.raises(CardSignatureError, match="not signed"):
        verifier.verify(card.model_copy(update={"signatures": []}))
    other = SigningKey.generate("ES256", kid="card-key-1")  # same kid, another key
    with pytest.raises(CardSignatureError):
        CardVerifier({other.kid: other.jwk}).verify(card)


async def test_a_client_requiring_signatures_refuses_an_unsigned_card(key: SigningKey) -> None:
    verifier = CardVerifier({key.kid: key.jwk})
    async with running_server(echo, name="Unsigned") as srv:
        with pytest.raises(CardSignatureError, match="not signed"):
            await A2AClient.connect(srv.url, verify_card=verifier)


async def test_keys_from_a_pinned_jwks_url() -> None:
    async with IdentityProvider(algorithm="ES256") as idp:
        signing = idp.signing_key
        signer = CardSigner(signing.private_key, signing.kid, algorithm="ES256")
        async with running_server(echo, card_signer=signer) as srv:
            verifier = CardVerifier(jwks_url=idp.jwks_url)
            async with await A2AClient.connect(srv.url, verify_card=verifier) as client:
                assert client.card is not None


def test_hmac_and_none_are_refused_by_configuration(key: SigningKey) -> None:
    with pytest.raises(ValueError, match="asymmetric"):
        CardSigner(b"secret", "k", algorithm="HS256")
    with pytest.raises(ValueError, match="asymmetric"):
        CardVerifier({key.kid: key.jwk}, algorithms=["HS256"])


async def test_the_official_sdk_verifies_our_signed_card(key: SigningKey) -> None:
    signing = pytest.importorskip("a2a.utils.signing")
    from a2a.types import a2a_pb2
    from google.protobuf.json_format import ParseDict
    from jwt import PyJWK

    signer = CardSigner(key.private_key, key.kid, algorithm="ES256")
    async with (
        running_server(echo, card_signer=signer, name="Signed") as srv,
        httpx.AsyncClient() as http,
    ):
        document: dict[str, Any] = (await http.get(srv.url + "/.well-known/agent-card.json")).json()
    sdk_card = ParseDict(document, a2a_pb2.AgentCard(), ignore_unknown_fields=True)
    verify = signing.create_signature_verifier(lambda kid, jku: PyJWK.from_dict(key.jwk), ["ES256"])
    verify(sdk_card)  # raises when no signature verifies
    sdk_card.description += " (evil)"
    with pytest.raises(signing.SignatureVerificationError):
        verify(sdk_card)
