"""One builder behind configure_service, create_app, serve and running_server; typed options."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import httpx
import pytest
from a2a_core import configure_service, create_app, mount, running_server, serve, serve_async
from a2a_core.plugins import create_plugin_manager
from a2a_core.server import RequestContext
from a2a_core.server.options import AppOptions, ServiceOptions, parse_options
from a2a_core.types import AgentCard
from asgi_server import serving

pytestmark = pytest.mark.timeout(60)

SEND = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
}


async def shout(context: RequestContext) -> str:
    """Shouts back."""
    return context.text.upper()


async def test_create_app_of_a_configured_service_uses_its_auth() -> None:
    """``create_app(configure_service(agent, bearer_tokens=...))`` serves with that auth."""
    service = configure_service(shout, bearer_tokens={"s3cret": "alice"})
    app = create_app(service)
    async with serving(app) as port:
        url = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient() as http:
            card = (await http.get(f"{url}/.well-known/agent-card.json")).json()
            assert "bearer" in card["securitySchemes"]
            anonymous = await http.post(url, json=SEND, headers={"A2A-Version": "1.0"})
            assert anonymous.status_code == 401
            alice = await http.post(
                url, json=SEND, headers={"A2A-Version": "1.0", "Authorization": "Bearer s3cret"}
            )
            assert alice.status_code == 200
            assert "HI" in alice.text


async def test_an_explicit_authenticate_wins_over_the_services() -> None:
    service = configure_service(shout, bearer_tokens={"s3cret": "alice"})

    async def nobody(headers: object) -> None:
        return None

    app = create_app(service, authenticate=nobody)
    assert app.edge.authenticate is nobody
    await service.aclose()


async def test_a_typo_in_running_server_is_refused_with_the_valid_names() -> None:
    with pytest.raises(TypeError) as caught:
        async with running_server(shout, nmae="x"):
            pass  # pragma: no cover
    message = str(caught.value)
    assert "'nmae' (did you mean 'name'?)" in message
    for valid in ("name", "store_url", "max_body_bytes", "bearer_tokens", "push"):
        assert valid in message


def test_a_typo_in_configure_service_is_refused() -> None:
    with pytest.raises(TypeError, match=r"'store_ur' \(did you mean 'store_url'\?\)"):
        configure_service(shout, store_ur="memory://")


def test_configure_service_refuses_app_options_and_says_where_they_go() -> None:
    with pytest.raises(TypeError, match=r"max_body_bytes.*HTTP app.*create_app"):
        configure_service(shout, max_body_bytes=10)


async def test_an_option_a_plugin_declares_is_accepted_and_reaches_it() -> None:
    seen: dict[str, object] = {}

    class Plugin:
        A2A_OPTIONS = ("team",)

        from a2a_core.hookspecs import hookimpl

        @hookimpl
        def a2a_agent_card(self, card: object, options: dict[str, object]) -> None:
            seen.update(options)

    pm = create_plugin_manager()
    pm.register(Plugin(), name="team-plugin")
    service = configure_service(shout, plugin_manager=pm, team="blue")
    await service.aclose()
    assert seen == {"team": "blue"}
    with pytest.raises(TypeError, match="'teem'"):
        configure_service(shout, plugin_manager=pm, teem="blue")


async def test_the_same_options_work_in_running_server() -> None:
    """Service, app and agent options given to running_server reach their layer."""
    async with running_server(
        shout, name="Shouter", max_body_bytes=2048, streaming=False, bearer_tokens={"t": "bob"}
    ) as server:
        assert server.app.card.name == "Shouter"
        assert server.app.options.max_body_bytes == 2048
        assert server.service.streaming is False
        async with httpx.AsyncClient() as http:
            big = await http.post(
                server.url.replace("localhost", "127.0.0.1"),
                content=b"x" * 4096,
                headers={"Authorization": "Bearer t", "Content-Type": "application/json"},
            )
            assert big.status_code == 413


def test_parse_options_sorts_by_layer() -> None:
    parsed = parse_options({"rest": False, "store_url": "memory://", "name": "n"})
    assert parsed.app == AppOptions(rest=False)
    assert parsed.service == ServiceOptions(store_url="memory://")
    assert dict(parsed.agent) == {"name": "n"}
    assert parsed.service_given == {"store_url"}


# -- typos in the entry points' own keyword parameters -------------------------------------


@pytest.mark.parametrize(
    ("typo", "meant"),
    [("hots", "host"), ("prot", "port"), ("log_levle", "log_level"), ("crad", "card")],
)
async def test_a_typo_of_an_explicit_running_server_parameter_is_hinted(
    typo: str, meant: str
) -> None:
    given: dict[str, Any] = {typo: "x"}
    with pytest.raises(TypeError) as caught:
        async with running_server(shout, **given):
            pass  # pragma: no cover
    message = str(caught.value)
    assert f"'{typo}' (did you mean '{meant}'?)" in message
    for valid in ("host", "port", "grpc_port", "tls", "startup_timeout", "store_url"):
        assert valid in message


def test_a_typo_in_serve_is_hinted() -> None:
    with pytest.raises(TypeError, match=r"'grpc_prot' \(did you mean 'grpc_port'\?\)"):
        serve(shout, port=0, grpc_prot=0)


async def test_a_typo_in_serve_async_is_hinted() -> None:
    with pytest.raises(TypeError, match=r"'anounce' \(did you mean 'announce'\?\)"):
        await serve_async(shout, port=0, anounce=True)


def test_a_typo_of_configure_services_card_is_hinted() -> None:
    with pytest.raises(TypeError, match=r"'crad' \(did you mean 'card'\?\)"):
        configure_service(shout, crad=None)


async def test_a_typo_in_create_app_is_hinted_with_the_valid_names() -> None:
    service = configure_service(shout)
    with pytest.raises(TypeError) as caught:
        create_app(service, jsonrpc_pth="/a2a")  # pyright: ignore[reportCallIssue]
    message = str(caught.value)
    assert "'jsonrpc_pth' (did you mean 'jsonrpc_path'?)" in message
    assert "Valid options: authenticate, card, card_max_age" in message
    assert create_app(service=service).service is service  # by keyword still works
    await service.aclose()


def test_create_app_takes_every_app_option() -> None:
    """Any option works the same everywhere: each ``AppOptions`` field is a create_app keyword."""
    taken = set(inspect.signature(create_app).parameters)
    assert {f.name for f in dataclasses.fields(AppOptions)} <= taken


async def test_create_app_signs_the_card_with_card_signer() -> None:
    service = configure_service(shout)
    signed: list[str] = []

    def signer(card: AgentCard) -> AgentCard:
        signed.append(card.name)
        return card.model_copy(update={"description": "signed"})

    app = create_app(service, card_signer=signer)
    async with serving(app) as port, httpx.AsyncClient() as http:
        card = (await http.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json")).json()
    assert card["description"] == "signed"
    assert signed


def test_a_typo_in_mount_is_hinted() -> None:
    from starlette.applications import Starlette

    with pytest.raises(TypeError, match=r"'crad' \(did you mean 'card'\?\)"):
        mount(Starlette(), shout, path="/a", crad=None)
