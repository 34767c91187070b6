"""Auth backends: ``a2a_register_auth_backends``, the built-in bearer / API-key backends,
their composition into one ``authenticate`` and their security schemes on the card."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from a2a_core.auth import (
    APIKeyAuth,
    AuthBackend,
    AuthBackendRegistrar,
    BearerTokenAuth,
    auth_backends,
    chain_authenticators,
    compose_authenticator,
    header_value,
    registered_auth_backends,
    with_security_schemes,
)
from a2a_core.errors import AuthenticationRequiredError
from a2a_core.hookspecs import hookimpl
from a2a_core.plugins import A2APluginManager, PluginError, create_plugin_manager
from a2a_core.server import ConfigurationError, Principal
from a2a_core.types import (
    AgentCard,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)


def card() -> AgentCard:
    return AgentCard(name="A", description="a", version="1.0.0")


class RegistersBackend:
    def __init__(self, name: str, factory: object) -> None:
        self.name = name
        self.factory = factory

    @hookimpl
    def a2a_register_auth_backends(self, register: AuthBackendRegistrar) -> None:
        register(self.name, self.factory)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


class HeaderBackend:
    """A minimal third-party backend: ``X-User: <id>`` (trust-me auth, for tests)."""

    scheme_name = "xuser"
    security_scheme = SecurityScheme(
        http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="X-User")
    )

    async def authenticate(self, headers: Mapping[str, str]) -> Principal | None:
        user = header_value(headers, "X-User")
        return Principal(id=user, scheme="xuser") if user else None


def xuser_factory(options: Mapping[str, Any]) -> AuthBackend | None:
    return HeaderBackend() if options.get("trust_x_user") else None


# -- the hook ---------------------------------------------------------------------------


@pytest.mark.hook("a2a_register_auth_backends")
async def test_a_plugin_backend_configured_by_options_authenticates(pm: A2APluginManager) -> None:
    pm.register(RegistersBackend("xuser", xuser_factory), name="xuser-plugin")
    assert compose_authenticator(pm, {}) is None  # not configured: nothing to do per request
    authenticate = compose_authenticator(pm, {"trust_x_user": True})
    assert authenticate is not None
    assert await authenticate({"x-user": "alice"}) == Principal(id="alice", scheme="xuser")
    assert await authenticate({}) is None
    assert registered_auth_backends(pm)["xuser"].plugin == "xuser-plugin"


@pytest.mark.hook("a2a_register_auth_backends")
def test_a_failing_factory_is_named(pm: A2APluginManager) -> None:
    def broken(options: Mapping[str, Any]) -> AuthBackend | None:
        raise RuntimeError("no key file")

    pm.register(RegistersBackend("jwt", broken), name="jwt-plugin")
    with pytest.raises(PluginError, match=r"'jwt' \(plugin 'jwt-plugin'\).*no key file"):
        compose_authenticator(pm, {})


@pytest.mark.hook("a2a_register_auth_backends")
def test_a_factory_returning_a_non_backend_is_named(pm: A2APluginManager) -> None:
    pm.register(RegistersBackend("odd", lambda options: "a token"), name="odd-plugin")
    with pytest.raises(PluginError, match=r"'odd' \(plugin 'odd-plugin'\) returned a str"):
        auth_backends(pm, {})


@pytest.mark.hook("a2a_register_auth_backends")
def test_two_backends_with_one_scheme_name_are_refused(pm: A2APluginManager) -> None:
    pm.register(RegistersBackend("a", xuser_factory), name="a")
    pm.register(RegistersBackend("b", xuser_factory), name="b")
    with pytest.raises(ConfigurationError, match=r"security scheme name\(s\) xuser"):
        auth_backends(pm, {"trust_x_user": True})


@pytest.mark.hook("a2a_register_auth_backends")
async def test_builtin_factories_read_the_options() -> None:
    pm = create_plugin_manager({"A2A_DISABLE_PLUGIN_AUTOLOAD": "1"})
    registrations = registered_auth_backends(pm)
    assert {n: r.plugin for n, r in registrations.items()} == {
        "bearer": "a2a_core.auth",
        "api_key": "a2a_core.auth",
        "oidc": "a2a_core.auth",
    }
    assert auth_backends(pm, {}) == []
    backends = auth_backends(
        pm,
        {"bearer_tokens": {"tok": "alice"}, "api_keys": {"key": "bob"}, "api_key_header": "X-K"},
    )
    assert [type(b) for b in backends] == [BearerTokenAuth, APIKeyAuth]
    authenticate = compose_authenticator(pm, {"bearer_tokens": {"tok": "alice"}})
    assert authenticate is not None
    assert (await authenticate({"authorization": "Bearer tok"})) == Principal("alice", "bearer")


@pytest.mark.hook("a2a_register_auth_backends")
def test_builtin_factories_refuse_malformed_options() -> None:
    pm = create_plugin_manager({"A2A_DISABLE_PLUGIN_AUTOLOAD": "1"})
    with pytest.raises(PluginError, match=r"'bearer' \(plugin 'a2a_core.auth'\).*must map"):
        auth_backends(pm, {"bearer_tokens": ["tok"]})


@pytest.mark.hook("a2a_register_auth_backends")
async def test_the_test_plugin_backend_comes_through_its_entry_point() -> None:
    pm = create_plugin_manager({})
    authenticate = compose_authenticator(pm, {"test_plugin_token": "t0k"})
    assert authenticate is not None
    principal = await authenticate({"Authorization": "Bearer t0k"})
    assert principal == Principal("test-plugin-user", "testPluginBearer")


# -- explicit backends and composition -----------------------------------------------------


async def test_explicit_backends_come_first(pm: A2APluginManager) -> None:
    pm.register(RegistersBackend("xuser", xuser_factory), name="xuser-plugin")
    bearer = BearerTokenAuth({"tok": "alice"})
    backends = auth_backends(pm, {"auth_backends": [bearer], "trust_x_user": True})
    assert backends[0] is bearer
    assert isinstance(backends[1], HeaderBackend)


@pytest.mark.parametrize("value", [BearerTokenAuth({"t": "a"}), "bearer", [object()]])
def test_the_auth_backends_option_must_be_a_list_of_backends(
    pm: A2APluginManager, value: object
) -> None:
    with pytest.raises(ConfigurationError, match=r"auth_backends"):
        auth_backends(pm, {"auth_backends": value})


async def test_first_principal_wins() -> None:
    authenticate = chain_authenticators(
        [BearerTokenAuth({"tok": "from-bearer"}), APIKeyAuth({"key": "from-key"})]
    )
    both = {"authorization": "Bearer tok", "x-api-key": "key"}
    assert (await authenticate(both)).id == "from-bearer"  # type: ignore[union-attr]  # pyright: ignore[reportOptionalMemberAccess]
    assert (await authenticate({"x-api-key": "key"})).id == "from-key"  # type: ignore[union-attr]  # pyright: ignore[reportOptionalMemberAccess]


async def test_a_rejection_is_raised_only_when_no_backend_accepts() -> None:
    authenticate = chain_authenticators(
        [BearerTokenAuth({"tok": "alice"}), APIKeyAuth({"key": "bob"})]
    )
    # An invalid bearer token, but a valid key: the key wins.
    accepted = await authenticate({"authorization": "Bearer wrong", "x-api-key": "key"})
    assert accepted == Principal("bob", "apiKey")
    with pytest.raises(AuthenticationRequiredError, match=r"Invalid bearer token"):
        await authenticate({"authorization": "Bearer wrong"})
    assert await authenticate({"accept": "*/*"}) is None  # anonymous


async def test_a_single_backend_is_called_directly() -> None:
    backend = BearerTokenAuth({"tok": "alice"})
    assert chain_authenticators([backend]) == backend.authenticate


# -- the built-in backends -----------------------------------------------------------------


async def test_bearer_tokens_map_to_principals() -> None:
    admin = Principal("root", "bearer", {"role": "admin"})
    backend = BearerTokenAuth({"tok-a": "alice", "tok-admin": admin})
    assert await backend.authenticate({"authorization": "Bearer tok-a"}) == Principal(
        "alice", "bearer"
    )
    assert await backend.authenticate({"Authorization": "bearer   tok-admin "}) is admin
    assert await backend.authenticate({"authorization": "Basic dXNlcjpwdw=="}) is None
    assert await backend.authenticate({}) is None
    with pytest.raises(AuthenticationRequiredError, match=r"Empty bearer token"):
        await backend.authenticate({"authorization": "Bearer "})
    with pytest.raises(AuthenticationRequiredError, match=r"Invalid bearer token"):
        await backend.authenticate({"authorization": "Bearer tok-b"})


async def test_bearer_verify_function_is_asked_after_the_table() -> None:
    asked: list[str] = []

    async def verify(token: str) -> Principal | None:
        asked.append(token)
        return Principal("jwt-user", "bearer") if token.startswith("jwt.") else None

    backend = BearerTokenAuth({"static": "alice"}, verify=verify)
    assert (await backend.authenticate({"authorization": "Bearer static"})) == Principal(
        "alice", "bearer"
    )
    assert asked == []
    assert (await backend.authenticate({"authorization": "Bearer jwt.x"})).id == "jwt-user"  # type: ignore[union-attr]  # pyright: ignore[reportOptionalMemberAccess]
    with pytest.raises(AuthenticationRequiredError):
        await backend.authenticate({"authorization": "Bearer nope"})
    assert asked == ["jwt.x", "nope"]


async def test_api_keys_are_read_from_their_header() -> None:
    backend = APIKeyAuth({"k1": "bob"}, header="X-Team-Key", scheme_name="teamKey")
    assert await backend.authenticate({"x-team-key": "k1"}) == Principal("bob", "teamKey")
    assert await backend.authenticate({"X-TEAM-KEY": " k1 "}) == Principal("bob", "teamKey")
    assert await backend.authenticate({"x-api-key": "k1"}) is None
    with pytest.raises(AuthenticationRequiredError, match=r"Invalid API key"):
        await backend.authenticate({"x-team-key": "k2"})
    with pytest.raises(AuthenticationRequiredError, match=r"Empty API key"):
        await backend.authenticate({"x-team-key": "  "})


def test_backends_need_something_to_check_against() -> None:
    with pytest.raises(ValueError, match=r"bearer tokens, a verify function"):
        BearerTokenAuth()
    with pytest.raises(ValueError, match=r"API keys must be non-empty"):
        APIKeyAuth({"": "nobody"})
    with pytest.raises(ValueError, match=r"header"):
        APIKeyAuth({"k": "a"}, header="")


def test_secrets_never_appear_in_the_repr() -> None:
    text = repr(BearerTokenAuth({"super-secret-token": "alice"}))
    assert "super-secret" not in text
    assert "known=1" in text


def test_header_lookup_ignores_case() -> None:
    headers = {"Content-Type": "a", "x-lower": "b"}
    assert header_value(headers, "content-type") == "a"
    assert header_value(headers, "X-Lower") == "b"
    assert header_value(headers, "missing") is None


# -- security schemes on the card ---------------------------------------------------------


def test_backends_declare_and_require_their_schemes() -> None:
    backends = [BearerTokenAuth({"t": "a"}, bearer_format="opaque"), APIKeyAuth({"k": "b"})]
    out = with_security_schemes(card(), backends)
    assert set(out.security_schemes) == {"bearer", "apiKey"}
    bearer = out.security_schemes["bearer"].http_auth_security_scheme
    assert bearer is not None
    assert (bearer.scheme, bearer.bearer_format) == ("Bearer", "opaque")
    api_key = out.security_schemes["apiKey"].api_key_security_scheme
    assert api_key is not None
    assert (api_key.location, api_key.name) == ("header", "X-API-Key")
    # Alternatives: either scheme suffices.
    assert [list(r.schemes) for r in out.security_requirements] == [["bearer"], ["apiKey"]]
    wire = out.model_dump(mode="json", by_alias=True)
    assert wire["securityRequirements"] == [
        {"schemes": {"bearer": {"list": []}}},
        {"schemes": {"apiKey": {"list": []}}},
    ]


def test_existing_requirements_are_kept() -> None:
    backend = BearerTokenAuth({"t": "a"})
    given = card().model_copy(
        update={
            "security_schemes": {"bearer": backend.security_scheme},
            "security_requirements": [
                SecurityRequirement(
                    schemes={"bearer": StringList.model_validate({"list": ["read"]})}
                )
            ],
        }
    )
    out = with_security_schemes(given, [backend])
    assert out.security_requirements == given.security_requirements
    assert with_security_schemes(given, []) is given


def test_a_conflicting_scheme_in_the_card_is_refused() -> None:
    other = SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Basic"))
    given = card().model_copy(update={"security_schemes": {"bearer": other}})
    with pytest.raises(ConfigurationError, match=r"declares security scheme 'bearer' differently"):
        with_security_schemes(given, [BearerTokenAuth({"t": "a"})])
