"""AgentCardBuilder: the fluent happy path, every refusal, and SDK-checked output."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from a2a.types import a2a_pb2
from a2a_core import AgentCardBuilder, CardValidationError
from a2a_core.types import (
    AgentCardSignature,
    AgentSkill,
    AuthorizationCodeOAuthFlow,
    OAuth2SecurityScheme,
    OAuthFlows,
    SecurityRequirement,
    SecurityScheme,
)
from a2a_core.wire import V10Codec
from google.protobuf.json_format import MessageToDict, ParseDict


def minimal(name: str = "Echo", *, interface: bool = True, skill: bool = True) -> AgentCardBuilder:
    """The smallest valid card: every refusal test breaks exactly one thing in it."""
    builder = AgentCardBuilder(name, description="Repeats what you say", version="1.0.0")
    if interface:
        builder.jsonrpc("https://agent.example.com/a2a")
    if skill:
        builder.skill("echo", "Echo", "Replies with your message", tags=["demo"])
    return builder


def full() -> AgentCardBuilder:
    """A card that uses every builder method."""
    return (
        AgentCardBuilder("Travel", version="2.1.0")
        .description("Books trips")
        .version("2.2.0")
        .provider("Example Org", "https://example.org")
        .documentation_url("https://example.org/docs")
        .icon_url("https://example.org/icon.png")
        .jsonrpc("https://agent.example.com/a2a")
        .http_json("https://agent.example.com/rest", versions=["1.0"])
        .interface("agent.example.com:50051", "GRPC", "1.0", tenant="acme")
        .skill(
            "book",
            "Book a flight",
            "Finds and books flights",
            tags=["travel", "flights"],
            examples=["Fly me to Lisbon on Friday"],
            input_modes=["text/plain", "application/json"],
            output_modes=["application/json"],
        )
        .skill(AgentSkill(id="cancel", name="Cancel", description="Cancels", tags=["travel"]))
        .input_modes("text/plain", "image/png")
        .output_modes("text/plain", "application/json")
        .streaming()
        .push_notifications(False)
        .extended_card()
        .extension("https://example.org/ext/trace/v1", "Tracing", required=True, params={"x": 1})
        .bearer_auth(bearer_format="JWT")
        .api_key("key", "header", "X-API-Key")
        .openid_connect("oidc", "https://id.example.org/.well-known/openid-configuration")
        .mutual_tls()
        .require("bearer")
        .require("oidc", scopes=["openid", "profile"])
        .require_all({"key": [], "mtls": []})
        .signature("eyJhbGciOiJFUzI1NiJ9", "c2lnbmF0dXJl", header={"kid": "k1"})
    )


def to_proto(card_json: Any) -> a2a_pb2.AgentCard:
    """Parse with the official SDK's generated 1.0 proto (unknown fields are errors)."""
    return ParseDict(card_json, a2a_pb2.AgentCard())


def canonical(value: Any) -> Any:
    """Drop nulls and empty lists: ProtoJSON omits both (see the encode test)."""
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items() if v is not None and v != []}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [canonical(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


# happy path -----------------------------------------------------------------------


def test_minimal_card_has_documented_defaults() -> None:
    card = minimal().build()
    assert card.default_input_modes == ["text/plain"]
    assert card.default_output_modes == ["text/plain"]
    assert [(i.protocol_binding, i.protocol_version) for i in card.supported_interfaces] == [
        ("JSONRPC", "1.0"),
        ("JSONRPC", "0.3"),
    ]
    caps = card.capabilities
    assert (caps.streaming, caps.push_notifications, caps.extended_agent_card) == (None,) * 3
    assert card.security_schemes == {}
    assert card.security_requirements == []


def test_full_card_carries_every_setting() -> None:
    card = full().build()
    assert (card.name, card.description, card.version) == ("Travel", "Books trips", "2.2.0")
    assert card.provider is not None
    assert card.provider.organization == "Example Org"
    assert card.documentation_url == "https://example.org/docs"
    assert card.icon_url == "https://example.org/icon.png"
    assert [
        (i.url, i.protocol_binding, i.protocol_version, i.tenant) for i in card.supported_interfaces
    ] == [
        ("https://agent.example.com/a2a", "JSONRPC", "1.0", None),
        ("https://agent.example.com/a2a", "JSONRPC", "0.3", None),
        ("https://agent.example.com/rest", "HTTP+JSON", "1.0", None),
        ("agent.example.com:50051", "GRPC", "1.0", "acme"),
    ]
    assert [s.id for s in card.skills] == ["book", "cancel"]
    assert card.skills[0].input_modes == ["text/plain", "application/json"]
    assert card.default_input_modes == ["text/plain", "image/png"]
    assert card.capabilities.streaming is True
    assert card.capabilities.push_notifications is False
    assert card.capabilities.extended_agent_card is True
    assert card.capabilities.extensions[0].required is True
    assert set(card.security_schemes) == {"bearer", "key", "oidc", "mtls"}
    http = card.security_schemes["bearer"].http_auth_security_scheme
    assert http is not None
    assert (http.scheme, http.bearer_format) == ("Bearer", "JWT")
    requirements = [
        {name: scopes.values for name, scopes in r.schemes.items()}
        for r in card.security_requirements
    ]
    assert requirements == [
        {"bearer": []},
        {"oidc": ["openid", "profile"]},
        {"key": [], "mtls": []},
    ]
    assert card.signatures[0].header == {"kid": "k1"}


@pytest.mark.parametrize("make", [minimal, full], ids=["minimal", "full"])
def test_encoded_card_is_valid_1_0_protojson_for_the_sdk(
    make: Callable[[], AgentCardBuilder],
) -> None:
    encoded = V10Codec().encode_card(make().build())
    message = to_proto(encoded)
    # The SDK's canonical ProtoJSON of the parsed card is what we sent, up to two
    # known deviations of the model's encoding that ProtoJSON parsers read the same
    # way: unset capabilities go out as null and empty scope lists as [].
    assert MessageToDict(message) == canonical(encoded)


def test_full_card_fields_survive_the_sdk_proto() -> None:
    message = to_proto(V10Codec().encode_card(full().build()))
    assert message.supported_interfaces[3].tenant == "acme"
    assert message.capabilities.HasField("push_notifications")
    assert not message.capabilities.push_notifications
    assert message.security_schemes["key"].api_key_security_scheme.name == "X-API-Key"
    assert message.security_schemes["mtls"].HasField("mtls_security_scheme")
    assert list(message.security_requirements[1].schemes["oidc"].list) == ["openid", "profile"]


def test_single_strings_are_one_item_not_characters() -> None:
    card = (
        minimal()
        .skill("x", "X", "Does x", tags="solo", examples="an example")
        .bearer_auth()
        .require("bearer", scopes="read")
        .build()
    )
    assert card.skills[1].tags == ["solo"]
    assert card.skills[1].examples == ["an example"]
    assert card.security_requirements[0].schemes["bearer"].values == ["read"]


def test_builder_does_not_share_state_with_its_cards_or_inputs() -> None:
    skill = AgentSkill(id="s", name="S", description="Does s", tags=["t"])
    builder = minimal().skill(skill)
    skill.tags.append("changed later")
    first = builder.build()
    first.skills[0].tags.append("mutated")
    second = builder.build()
    assert first is not second
    assert second.skills[1].tags == ["t"]
    assert second.skills[0].tags == ["demo"]


def test_grpc_accepts_host_port_and_http_urls_custom_bindings_accept_uris() -> None:
    card = (
        minimal()
        .interface("[::1]:50051", "GRPC")
        .interface("https://grpc.example.com", "GRPC")
        .interface("wss://agent.example.com/ws", "https://example.org/bindings/websocket", "1.0")
        .build()
    )
    assert len(card.supported_interfaces) == 5


def test_problems_is_empty_for_a_valid_card() -> None:
    assert minimal().problems() == []
    assert full().problems() == []


# refusals -------------------------------------------------------------------------

OAUTH = SecurityScheme(
    oauth2_security_scheme=OAuth2SecurityScheme(
        flows=OAuthFlows(
            authorization_code=AuthorizationCodeOAuthFlow(
                authorization_url="not a url", token_url="https://id.example.org/token"
            )
        )
    )
)

REFUSALS: dict[str, tuple[Callable[[AgentCardBuilder], object], str]] = {
    "empty name": (lambda _: None, "name is empty"),
    "empty description": (lambda b: b.description(""), "description is empty"),
    "empty version": (lambda b: b.version(""), "version is empty"),
    "no interfaces": (lambda _: None, "no interfaces"),
    "no skills": (lambda _: None, "no skills"),
    "skill without tags": (
        lambda b: b.skill("t", "T", "Does t", tags=[]),
        "skill 't': has no tags",
    ),
    "skill with empty tag": (
        lambda b: b.skill("t", "T", "Does t", tags=["ok", " "]),
        "skill 't': a tag is empty",
    ),
    "skill with empty id": (
        lambda b: b.skill("", "T", "Does t", tags=["x"]),
        "skill #2: id is empty",
    ),
    "skill with empty name": (
        lambda b: b.skill("t", "", "Does t", tags=["x"]),
        "skill 't': name is empty",
    ),
    "skill with empty description": (
        lambda b: b.skill("t", "T", "", tags=["x"]),
        "skill 't': description is empty",
    ),
    "duplicate skill id": (
        lambda b: b.skill("echo", "Echo again", "Again", tags=["x"]),
        "skill 'echo': id is used by another skill",
    ),
    "skill mode not a media type": (
        lambda b: b.skill("t", "T", "Does t", tags=["x"], output_modes=["json"]),
        "skill 't' output modes: 'json' is not a media type",
    ),
    "empty default input modes": (
        lambda b: b.input_modes(),
        "default input modes are empty",
    ),
    "empty default output modes": (
        lambda b: b.output_modes(),
        "default output modes are empty",
    ),
    "default mode not a media type": (
        lambda b: b.input_modes("text"),
        "default input modes: 'text' is not a media type",
    ),
    "requirement names undeclared scheme": (
        lambda b: b.bearer_auth().require("oauth"),
        "undeclared scheme 'oauth' (declared: 'bearer')",
    ),
    "skill requirement names undeclared scheme": (
        lambda b: b.skill(
            AgentSkill(
                id="s",
                name="S",
                description="Does s",
                tags=["x"],
                security_requirements=[SecurityRequirement.model_validate({"schemes": {"k": {}}})],
            )
        ),
        "skill 's' security: a requirement names undeclared scheme 'k' (declared: none)",
    ),
    "requirement names no scheme": (
        lambda b: b.require_all({}),
        "a requirement names no scheme",
    ),
    "scheme declared twice": (
        lambda b: b.bearer_auth("auth").api_key("auth", "header", "X-Key"),
        "security scheme 'auth' is declared twice",
    ),
    "api key in a bad location": (
        lambda b: b.api_key("key", "body", "token"),
        "location 'body' is not header, query or cookie",
    ),
    "api key without parameter name": (
        lambda b: b.api_key("key", "header", ""),
        "the API key parameter name is empty",
    ),
    "openid connect url not http": (
        lambda b: b.openid_connect("oidc", "id.example.org"),
        "OpenID Connect url 'id.example.org' is not an absolute http(s) URL",
    ),
    "oauth flow url not a url": (
        lambda b: b.security_scheme("oauth", OAUTH),
        "authorization_code authorization_url 'not a url' contains whitespace",
    ),
    "unknown binding": (
        lambda b: b.interface("https://agent.example.com/x", "jsonrpc"),
        "binding 'jsonrpc' is neither JSONRPC, HTTP+JSON, GRPC nor a URI naming a custom "
        "binding (did you mean 'JSONRPC'?)",
    ),
    "binding with patch version": (
        lambda b: b.interface("https://agent.example.com/x", "JSONRPC", "0.3.0"),
        "protocol version '0.3.0' is not Major.Minor such as '1.0' or '0.3' (use '0.3'",
    ),
    "binding with word version": (
        lambda b: b.interface("https://agent.example.com/x", "JSONRPC", "v1"),
        "protocol version 'v1' is not Major.Minor",
    ),
    "relative url": (
        lambda b: b.http_json("/a2a", versions=["1.0"]),
        "url '/a2a' is not an absolute http(s) URL",
    ),
    "ftp url": (
        lambda b: b.interface("ftp://agent.example.com/a2a"),
        "url 'ftp://agent.example.com/a2a' is not an absolute http(s) URL",
    ),
    "url without host": (
        lambda b: b.interface("https:///a2a"),
        "url 'https:///a2a' has no host",
    ),
    "url with bad port": (
        lambda b: b.interface("https://agent.example.com:99999/a2a"),
        "is not a valid URL",
    ),
    "grpc url neither host:port nor http": (
        lambda b: b.interface("grpc://agent.example.com", "GRPC"),
        "url 'grpc://agent.example.com' is neither host:port nor an absolute http(s) URL",
    ),
    "custom binding with relative url": (
        lambda b: b.interface("/ws", "urn:example:ws"),
        "url '/ws' is not an absolute URL",
    ),
    "tenant on a 0.3 interface": (
        lambda b: b.jsonrpc("https://agent.example.com/t", versions=["0.3"], tenant="acme"),
        "A2A 0.3 has no tenants",
    ),
    "interface listed twice": (
        lambda b: b.jsonrpc("https://agent.example.com/a2a", versions=["1.0"]),
        "listed twice with protocol version '1.0'",
    ),
    "empty tenant": (
        lambda b: b.interface("https://agent.example.com/t", tenant=""),
        "tenant is empty",
    ),
    "provider url": (
        lambda b: b.provider("Org", "example.org"),
        "provider url 'example.org' is not an absolute http(s) URL",
    ),
    "provider organization": (
        lambda b: b.provider("", "https://example.org"),
        "provider organization is empty",
    ),
    "documentation url": (
        lambda b: b.documentation_url("docs"),
        "documentation url 'docs' is not an absolute http(s) URL",
    ),
    "icon url": (
        lambda b: b.icon_url("javascript:alert(1)"),
        "icon url 'javascript:alert(1)' is not an absolute http(s) URL",
    ),
    "extension not a uri": (
        lambda b: b.extension("tracing"),
        "extension 'tracing' is not a URI",
    ),
    "extension declared twice": (
        lambda b: b.extension("urn:x:ext").extension("urn:x:ext"),
        "extension 'urn:x:ext' is declared twice",
    ),
    "extended card without security": (
        lambda b: b.extended_card(),
        "extended card is enabled but no security scheme is declared",
    ),
    "incomplete signature": (
        lambda b: b.signature(AgentCardSignature(protected="", signature="c2ln")),
        "signature #1 needs both protected and signature",
    ),
}


@pytest.mark.parametrize("reason", list(REFUSALS))
def test_build_refuses_with_exactly_that_problem(reason: str) -> None:
    breaks, expected = REFUSALS[reason]
    builder = minimal(
        " " if reason == "empty name" else "Echo",
        interface=reason != "no interfaces",
        skill=reason != "no skills",
    )
    breaks(builder)
    with pytest.raises(CardValidationError) as caught:
        builder.build()
    problems = caught.value.problems
    assert len(problems) == 1, problems
    assert expected in problems[0]
    assert expected in str(caught.value)


def test_every_problem_is_listed_in_one_error() -> None:
    builder = (
        AgentCardBuilder("")
        .interface("ftp://x", "jsonrpc", "0.3.0")
        .skill("a", "A", "Does a", tags=[])
        .input_modes()
        .require("missing")
    )
    with pytest.raises(CardValidationError) as caught:
        builder.build()
    error = caught.value
    assert isinstance(error, ValueError)
    assert len(error.problems) == 9
    assert builder.problems() == list(error.problems)
    message = str(error)
    assert message.startswith("agent card is invalid (9 problems):\n")
    assert all(f"\n  - {p}" in message for p in error.problems)


def test_error_names_the_card() -> None:
    with pytest.raises(CardValidationError, match=r"^agent card 'Echo' is invalid \(1 problem\)"):
        minimal().version("").build()


def test_skill_call_mistakes_are_type_errors() -> None:
    skill = AgentSkill(id="s", name="S", description="Does s", tags=["t"])
    with pytest.raises(TypeError):
        minimal().skill(skill, "name")  # pyright: ignore[reportCallIssue, reportArgumentType]
    with pytest.raises(TypeError):
        minimal().skill("id")  # pyright: ignore[reportArgumentType]
    with pytest.raises(TypeError):
        minimal().signature("protected-only")


# hybrid ---------------------------------------------------------------------------


def test_hybrid_needs_a_0_3_interface() -> None:
    builder = (
        AgentCardBuilder("Echo", description="d", version="1")
        .jsonrpc("https://agent.example.com/a2a", versions=["1.0"])
        .skill("echo", "Echo", "Echoes", tags=["demo"])
    )
    with pytest.raises(CardValidationError, match=r"protocol version '0\.3'"):
        builder.build_hybrid()


def test_hybrid_refuses_an_invalid_card_first() -> None:
    with pytest.raises(CardValidationError, match="version is empty"):
        minimal().version("").build_hybrid()


@pytest.mark.parametrize("make", [minimal, full], ids=["minimal", "full"])
def test_hybrid_card_is_valid_for_0_3_and_1_0_clients(
    make: Callable[[], AgentCardBuilder],
) -> None:
    from a2a.compat.v0_3.types import AgentCard as V03AgentCard

    hybrid = make().build_hybrid()
    v03 = V03AgentCard.model_validate(hybrid)
    assert v03.name == hybrid["name"]
    assert v03.url == "https://agent.example.com/a2a"
    assert v03.preferred_transport == "JSONRPC"
    assert (v03.protocol_version or "").startswith("0.3")
    # The 1.0 half is still the card a 1.0 client expects.
    as_v10 = ParseDict(hybrid, a2a_pb2.AgentCard(), ignore_unknown_fields=True)
    assert MessageToDict(as_v10) == canonical(V10Codec().encode_card(make().build()))
    assert (
        hybrid["supportedInterfaces"]
        == V10Codec().encode_card(make().build())["supportedInterfaces"]
    )
