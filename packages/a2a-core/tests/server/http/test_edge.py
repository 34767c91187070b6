"""Extensions (activation, echo, required) and authentication at the HTTP edge."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
import pytest
from a2a_core.errors import PermissionDeniedError
from a2a_core.server import A2AService, ConfigurationError, Principal, RequestContext
from a2a_core.server.asgi import create_app
from a2a_core.server.asgi.edge import www_authenticate
from a2a_core.types import (
    AgentExtension,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a_http_support import V10, make_card, parse_sse, rpc, v10_message

OPTIONAL = "https://example.com/ext/citations/v1"
REQUIRED = "https://example.com/ext/billing/v1"


async def report(context: RequestContext) -> str:
    who = context.principal.id if context.principal else "anonymous"
    return f"{who}|{','.join(sorted(context.call.extensions))}"


def ext_card() -> Any:
    return make_card(
        extensions=[
            AgentExtension(uri=OPTIONAL, description="citations"),
            AgentExtension(uri=REQUIRED, description="billing", required=True),
        ]
    )


@pytest.fixture
async def ext_client(make_client: Any) -> Any:
    svc = A2AService(report, ext_card())
    yield make_client(create_app(svc))
    await svc.aclose()


def artifact_text(task: dict[str, Any]) -> str:
    return task["artifacts"][0]["parts"][0]["text"]


# -- extensions -------------------------------------------------------------------------------


async def test_required_extension_missing(ext_client: httpx.AsyncClient) -> None:
    r = await ext_client.post("/", json=rpc("SendMessage", {"message": v10_message()}), headers=V10)
    assert r.status_code == 200
    err = r.json()["error"]
    assert err["code"] == -32008
    assert REQUIRED in err["message"]
    assert OPTIONAL not in err["message"]
    r = await ext_client.post(
        "/message:send", json={"message": v10_message()}, headers={"A2A-Extensions": OPTIONAL}
    )
    assert r.status_code == 400
    assert r.json()["error"]["details"][0]["reason"] == "EXTENSION_SUPPORT_REQUIRED"


async def test_activated_extensions_are_echoed(ext_client: httpx.AsyncClient) -> None:
    requested = f"{REQUIRED}, urn:unknown:ext ,{OPTIONAL}"
    r = await ext_client.post(
        "/message:send", json={"message": v10_message()}, headers={"A2A-Extensions": requested}
    )
    assert r.status_code == 200
    assert r.headers["a2a-extensions"] == ", ".join(sorted([OPTIONAL, REQUIRED]))
    assert "x-a2a-extensions" not in r.headers
    # The agent sees everything the client asked for.
    seen = ",".join(sorted([OPTIONAL, REQUIRED, "urn:unknown:ext"]))
    assert artifact_text(r.json()["task"]) == f"anonymous|{seen}"


async def test_legacy_extension_header(ext_client: httpx.AsyncClient) -> None:
    r = await ext_client.post(
        "/",
        json=rpc(
            "message/send",
            {
                "message": {
                    **v10_message(),
                    "kind": "message",
                    "role": "user",
                    "parts": [{"kind": "text", "text": "x"}],
                }
            },
        ),
        headers={"X-A2A-Extensions": REQUIRED},
    )
    assert r.status_code == 200
    assert "result" in r.json(), r.text
    assert r.headers["x-a2a-extensions"] == REQUIRED
    assert r.headers["a2a-extensions"] == REQUIRED


async def test_extensions_echoed_on_streams(ext_client: httpx.AsyncClient) -> None:
    r = await ext_client.post(
        "/message:stream", json={"message": v10_message()}, headers={"A2A-Extensions": REQUIRED}
    )
    assert r.headers["content-type"] == "text/event-stream"
    assert r.headers["a2a-extensions"] == REQUIRED
    assert parse_sse(r.text)


async def test_no_echo_for_undeclared_extensions(client: httpx.AsyncClient) -> None:
    r = await client.post(
        "/message:send", json={"message": v10_message()}, headers={"A2A-Extensions": OPTIONAL}
    )
    assert r.status_code == 200
    assert "a2a-extensions" not in r.headers


async def test_card_needs_no_extension(ext_client: httpx.AsyncClient) -> None:
    assert (await ext_client.get("/.well-known/agent-card.json")).status_code == 200


# -- authentication -------------------------------------------------------------------------


def secured_card() -> Any:
    return make_card(
        security_schemes={
            "bearer": SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="bearer")
            )
        },
        security_requirements=[SecurityRequirement(schemes={"bearer": StringList()})],
    )


async def bearer(headers: Mapping[str, str]) -> Principal | None:
    value = headers.get("authorization", "")
    if value == "Bearer good":
        return Principal("alice", scheme="bearer")
    if value == "Bearer banned":
        raise PermissionDeniedError("You may not use this agent")
    return None


@pytest.fixture
async def auth_client(make_client: Any) -> Any:
    svc = A2AService(report, secured_card())
    yield make_client(create_app(svc, authenticate=bearer))
    await svc.aclose()


async def test_unauthenticated_jsonrpc_is_401(auth_client: httpx.AsyncClient) -> None:
    r = await auth_client.post(
        "/", json=rpc("SendMessage", {"message": v10_message()}), headers=V10
    )
    assert r.status_code == 401
    assert r.headers["www-authenticate"] == 'Bearer realm="Echo"'
    body = r.json()
    assert body["jsonrpc"] == "2.0"
    assert body["error"]["code"] == -32051
    assert body["error"]["data"][0]["reason"] == "UNAUTHENTICATED"


async def test_unauthenticated_rest_is_401(auth_client: httpx.AsyncClient) -> None:
    r = await auth_client.post(
        "/message:send", json={"message": v10_message()}, headers={"authorization": "Bearer bad"}
    )
    assert r.status_code == 401
    assert r.headers["www-authenticate"].startswith("Bearer")
    assert r.json()["error"]["status"] == "UNAUTHENTICATED"
    r = await auth_client.get("/v1/tasks/x")
    assert r.status_code == 401
    assert r.json()["code"] == -32051


async def test_authenticated_principal_reaches_the_agent(auth_client: httpx.AsyncClient) -> None:
    headers = {"authorization": "Bearer good"}
    r = await auth_client.post("/message:send", json={"message": v10_message()}, headers=headers)
    assert r.status_code == 200
    assert artifact_text(r.json()["task"]).startswith("alice|")
    r = await auth_client.post("/", json=rpc("ListTasks", {}), headers={**headers, **V10})
    assert len(r.json()["result"]["tasks"]) == 1


async def test_permission_denied_is_403(auth_client: httpx.AsyncClient) -> None:
    headers = {"authorization": "Bearer banned"}
    r = await auth_client.post("/message:send", json={"message": v10_message()}, headers=headers)
    assert r.status_code == 403
    assert r.json()["error"]["status"] == "PERMISSION_DENIED"
    r = await auth_client.post(
        "/", json=rpc("SendMessage", {"message": v10_message()}), headers={**headers, **V10}
    )
    assert r.status_code == 403
    assert r.json()["error"]["code"] == -32052


async def test_card_stays_public(auth_client: httpx.AsyncClient) -> None:
    r = await auth_client.get("/.well-known/agent-card.json")
    assert r.status_code == 200
    assert "bearer" in r.json()["securitySchemes"]


async def test_secured_card_needs_a_hook() -> None:
    svc = A2AService(report, secured_card())
    with pytest.raises(ConfigurationError, match="authenticate"):
        create_app(svc)
    app = create_app(svc, require_auth=False)  # a proxy in front authenticates
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app), base_url="http://agent.test"
    ) as client:
        r = await client.post("/message:send", json={"message": v10_message()})
        assert r.status_code == 200
        assert artifact_text(r.json()["task"]).startswith("anonymous|")
    await svc.aclose()


async def test_optional_auth_without_security_in_card(make_client: Any) -> None:
    svc = A2AService(report, make_card())
    client = make_client(create_app(svc, authenticate=bearer))
    anonymous = await client.post("/message:send", json={"message": v10_message()})
    assert artifact_text(anonymous.json()["task"]).startswith("anonymous|")
    named = await client.post(
        "/message:send",
        json={"message": v10_message()},
        headers={"authorization": "Bearer good"},
    )
    assert artifact_text(named.json()["task"]).startswith("alice|")
    await svc.aclose()


def test_www_authenticate_challenges() -> None:
    card = make_card(
        security_schemes={
            "key": SecurityScheme(
                api_key_security_scheme=APIKeySecurityScheme(location="header", name="X-Key")
            ),
            "basic": SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="basic")
            ),
        }
    )
    assert www_authenticate(card) == (
        b'ApiKey realm="Echo", name="X-Key", in="header", Basic realm="Echo"'
    )
    assert www_authenticate(make_card()) == b'Bearer realm="Echo"'


# -- the extended card ----------------------------------------------------------------------


@pytest.fixture
async def extended_client(make_client: Any) -> Any:
    card = secured_card().model_copy(deep=True)
    card.capabilities.extended_agent_card = True

    def extended(principal: Principal | None) -> Any:
        who = principal.id if principal else "nobody"
        return card.model_copy(update={"description": f"Extended card for {who}"})

    svc = A2AService(report, card, extended_card=extended)
    yield make_client(create_app(svc, authenticate=bearer))
    await svc.aclose()


async def test_extended_card_over_both_bindings(extended_client: httpx.AsyncClient) -> None:
    auth = {"authorization": "Bearer good"}
    r = await extended_client.get("/extendedAgentCard", headers=auth)
    assert r.status_code == 200
    assert r.json()["description"] == "Extended card for alice"
    r = await extended_client.post("/", json=rpc("GetExtendedAgentCard"), headers={**auth, **V10})
    assert r.json()["result"]["description"] == "Extended card for alice"
    r = await extended_client.post(
        "/", json=rpc("agent/getAuthenticatedExtendedCard"), headers=auth
    )
    legacy = r.json()["result"]
    assert legacy["description"] == "Extended card for alice"
    assert legacy["protocolVersion"].startswith("0.3")
    r = await extended_client.get("/v1/card", headers=auth)
    assert r.json()["description"] == "Extended card for alice"
    r = await extended_client.get("/extendedAgentCard")
    assert r.status_code == 401
    assert "www-authenticate" in r.headers
