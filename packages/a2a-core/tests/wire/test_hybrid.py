"""The hybrid agent card (readable as 1.0 and as 0.3) and reading any card version."""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import pytest
from a2a.client.card_resolver import parse_agent_card
from a2a.compat.v0_3 import types as t03
from a2a.types import a2a_pb2
from a2a_core.errors import InvalidAgentResponseError, UnrepresentableError
from a2a_core.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    APIKeySecurityScheme,
    AuthorizationCodeOAuthFlow,
    DeviceCodeOAuthFlow,
    HTTPAuthSecurityScheme,
    MutualTlsSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a_core.wire.hybrid import card_from_any, hybrid_card
from a2a_core.wire.v03 import V03JsonRpcCodec
from google.protobuf.json_format import MessageToDict, ParseDict
from hypothesis import given, settings
from hypothesis import strategies as st

V03 = V03JsonRpcCodec()


def interface(url: str, binding: str, version: str) -> AgentInterface:
    return AgentInterface(url=url, protocol_binding=binding, protocol_version=version)


def card(*interfaces: AgentInterface, extended: bool | None = True) -> AgentCard:
    return AgentCard(
        name="Dual",
        description="speaks 1.0 and 0.3",
        version="1.0.0",
        supported_interfaces=list(interfaces)
        or [
            interface("https://a/", "JSONRPC", "1.0"),
            interface("https://a/", "JSONRPC", "0.3"),
            interface("https://a/rest", "HTTP+JSON", "0.3"),
        ],
        capabilities=AgentCapabilities(streaming=True, extended_agent_card=extended),
        security_schemes={
            "key": SecurityScheme(
                api_key_security_scheme=APIKeySecurityScheme(location="header", name="X-Key")
            ),
            "jwt": SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="Bearer", bearer_format="JWT", description="tokens"
                )
            ),
            "code": SecurityScheme(
                oauth2_security_scheme=OAuth2SecurityScheme(
                    flows=OAuthFlows(
                        authorization_code=AuthorizationCodeOAuthFlow(
                            authorization_url="https://auth/a",
                            token_url="https://auth/t",
                            scopes={"read": "Read"},
                        )
                    )
                )
            ),
            "oidc": SecurityScheme(
                open_id_connect_security_scheme=OpenIdConnectSecurityScheme(
                    open_id_connect_url="https://id"
                )
            ),
            "mtls": SecurityScheme(mtls_security_scheme=MutualTlsSecurityScheme()),
        },
        security_requirements=[
            SecurityRequirement(schemes={"code": StringList(list=["read"])}),
            SecurityRequirement(schemes={"key": StringList()}),
        ],
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="s1",
                name="one",
                description="d",
                tags=["t"],
                security_requirements=[SecurityRequirement(schemes={"jwt": StringList()})],
            ),
            AgentSkill(id="s2", name="two", description="d", tags=[]),
        ],
    )


def test_hybrid_adds_the_03_fields() -> None:
    hybrid = hybrid_card(card())
    assert hybrid["protocolVersion"] == "0.3.0"
    assert hybrid["url"] == "https://a/"
    assert hybrid["preferredTransport"] == "JSONRPC"
    assert hybrid["additionalInterfaces"] == [
        {"url": "https://a/", "transport": "JSONRPC"},
        {"url": "https://a/rest", "transport": "HTTP+JSON"},
    ]
    assert hybrid["supportsAuthenticatedExtendedCard"] is True
    assert hybrid["security"] == [{"code": ["read"]}, {"key": []}]
    assert hybrid["skills"][0]["security"] == [{"jwt": []}]
    assert "security" not in hybrid["skills"][1]
    # Both forms of each scheme side by side, never sharing a key.
    assert hybrid["securitySchemes"]["key"] == {
        "apiKeySecurityScheme": {"location": "header", "name": "X-Key"},
        "type": "apiKey",
        "in": "header",
        "name": "X-Key",
    }
    assert hybrid["securitySchemes"]["mtls"] == {"mtlsSecurityScheme": {}, "type": "mutualTLS"}


def test_hybrid_reads_as_the_10_card() -> None:
    original = card()
    hybrid = hybrid_card(original)
    assert AgentCard.model_validate(hybrid) == original
    assert card_from_any(hybrid) == original
    # The official 1.x client resolves it to the same 1.0 card.
    expected = MessageToDict(ParseDict(original.model_dump(mode="json"), a2a_pb2.AgentCard()))
    assert MessageToDict(parse_agent_card(copy.deepcopy(hybrid))) == expected


@pytest.mark.parametrize("extended", [True, False, None])
def test_hybrid_reads_as_the_03_card(extended: bool | None) -> None:
    original = card(extended=extended)
    as_03 = t03.AgentCard.model_validate(hybrid_card(original))
    assert as_03 == t03.AgentCard.model_validate(V03.encode_card(original))
    assert as_03.url == "https://a/"
    assert as_03.security_schemes is not None
    assert as_03.security_schemes["jwt"].root.type == "http"


def test_without_03_interfaces_the_card_is_plain_10() -> None:
    only_10 = card(
        interface("https://a/", "JSONRPC", "1.0"), interface("https://a/", "GRPC", "1.0")
    )
    assert hybrid_card(only_10) == only_10.model_dump(mode="json", by_alias=True)


def test_single_03_interface_has_no_additional_interfaces() -> None:
    one = card(
        interface("https://a/v1", "JSONRPC", "1.0"), interface("https://a/v0", "GRPC", "0.3")
    )
    hybrid = hybrid_card(one)
    assert (hybrid["url"], hybrid["preferredTransport"]) == ("https://a/v0", "GRPC")
    assert "additionalInterfaces" not in hybrid
    assert "supportsAuthenticatedExtendedCard" in hybrid


def test_schemes_03_cannot_express_stay_10_only() -> None:
    original = card()
    original.security_schemes["device"] = SecurityScheme(
        oauth2_security_scheme=OAuth2SecurityScheme(
            flows=OAuthFlows(
                device_code=DeviceCodeOAuthFlow(device_authorization_url="https://d", token_url="t")
            )
        )
    )
    hybrid = hybrid_card(original)
    assert "type" not in hybrid["securitySchemes"]["device"]
    assert hybrid["securitySchemes"]["key"]["type"] == "apiKey"
    assert card_from_any(hybrid) == original


def test_tenant_on_a_03_interface_is_unrepresentable() -> None:
    tenanted = card(
        AgentInterface(url="u", protocol_binding="JSONRPC", protocol_version="0.3", tenant="t")
    )
    with pytest.raises(UnrepresentableError):
        hybrid_card(tenanted)


def test_card_from_any_reads_every_version() -> None:
    original = card()
    assert card_from_any(original.model_dump(mode="json", by_alias=True)) == original
    assert card_from_any(original.model_dump(mode="json", by_alias=False)) == original
    as_03 = card_from_any(V03.encode_card(original))
    assert [(i.url, i.protocol_version) for i in as_03.supported_interfaces] == [
        ("https://a/", "0.3"),
        ("https://a/rest", "0.3"),
    ]
    assert as_03.security_schemes == original.security_schemes
    assert as_03.skills == original.skills


@pytest.mark.parametrize(
    "value",
    [None, [], "card", {}, {"supportedInterfaces": "x"}, {"name": "n", "url": 5}],
)
def test_card_from_any_rejects_malformed(value: Any) -> None:
    with pytest.raises(InvalidAgentResponseError):
        card_from_any(value)


keys = st.sampled_from(
    [
        "name",
        "description",
        "version",
        "url",
        "supportedInterfaces",
        "securitySchemes",
        "type",
        "skills",
        "security",
        "capabilities",
        "additionalInterfaces",
        "protocolBinding",
    ]
)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=5),
    max_leaves=25,
)


@given(values)
@settings(max_examples=200)
def test_card_from_any_raises_only_our_error(value: Any) -> None:
    with contextlib.suppress(InvalidAgentResponseError):
        card_from_any(value)
