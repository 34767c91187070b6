"""``a2a_core.mount``: an agent inside a real FastAPI application, served by uvicorn on 127.0.0.1.

Reached by our client (both bindings, streaming, discovery from the mounted
URL) and by the official SDK's 1.0 client; the agent starts and stops with
the host's lifespan.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import httpx
import pytest
from a2a_core import A2AClient, configure_service, mount
from a2a_core.server import AgentExecutor, ConfigurationError, RequestContext, TaskUpdater
from a2a_core.types import TaskArtifactUpdateEvent
from asgi_server import serving
from fastapi import FastAPI
from starlette.applications import Starlette

pytestmark = pytest.mark.timeout(90)


async def shout(context: RequestContext) -> str:
    """Shouts back."""
    return context.text.upper()


async def words(context: RequestContext) -> AsyncIterator[str]:
    """Streams the message back word by word."""
    for word in context.text.split():
        yield word + " "


class Greeter(AgentExecutor):
    """Greets by name (an AgentExecutor)."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.complete(f"Hello, {context.text}!")

    async def cancel(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.cancel()


def host_app(events: list[str]) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        events.append("host up")
        yield
        events.append("host down")

    app = FastAPI(lifespan=lifespan)

    @app.get("/health")
    async def health() -> dict[str, str]:  # pyright: ignore[reportUnusedFunction]
        return {"status": "ok"}

    return app


def recorder(events: list[str], name: str) -> Any:
    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        events.append(f"{name} up")
        yield
        events.append(f"{name} down")

    return lifespan


async def test_agents_mounted_in_fastapi_answer_our_client_on_both_bindings() -> None:
    events: list[str] = []
    app = host_app(events)
    echo_app = mount(app, shout, path="/agents/echo", lifespan=recorder(events, "echo"))
    mount(app, words, path="/agents/words/", name="Words")
    mount(app, Greeter(), path="/agents/greeter")
    async with serving(app) as port:
        root = f"http://127.0.0.1:{port}"
        assert events == ["host up", "echo up"]
        async with httpx.AsyncClient() as http:
            assert (await http.get(root + "/health")).json() == {"status": "ok"}
            card = (await http.get(root + "/agents/echo/.well-known/agent-card.json")).json()
            assert {i["url"] for i in card["supportedInterfaces"]} == {root + "/agents/echo"}
            assert (await http.get(root + "/.well-known/agent-card.json")).status_code == 404
        for binding in ("JSONRPC", "HTTP+JSON"):
            async with await A2AClient.connect(
                root + "/agents/echo", preferred_bindings=[binding]
            ) as client:
                assert client.interface is not None
                assert client.interface.protocol_binding == binding
                assert (await client.send("hi")).text == "HI"
            async with await A2AClient.connect(
                root + "/agents/words", preferred_bindings=[binding]
            ) as client:
                assert client.card is not None
                assert client.card.name == "Words"
                async with client.stream("one two three") as stream:
                    seen = [e async for e in stream]
                assert sum(isinstance(e, TaskArtifactUpdateEvent) for e in seen) >= 3
            async with await A2AClient.connect(
                root + "/agents/greeter/", preferred_bindings=[binding]
            ) as client:
                assert (await client.send("Ada")).text == "Hello, Ada!"
    assert events == ["host up", "echo up", "echo down", "host down"]
    assert echo_app.service.manager._closing  # pyright: ignore[reportPrivateUsage] - closed with the host


async def test_the_official_sdk_client_talks_to_a_mounted_agent() -> None:
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types import Message, Role, SendMessageRequest
    from a2a.types import Part as SdkPart

    app = host_app([])
    mount(app, words, path="/agents/words")
    async with serving(app) as port:
        url = f"http://127.0.0.1:{port}/agents/words"
        for streaming in (True, False):
            client = await ClientFactory(ClientConfig(streaming=streaming)).create_from_url(url)
            try:
                request = SendMessageRequest(
                    message=Message(
                        role=Role.ROLE_USER,
                        message_id=str(uuid.uuid4()),
                        parts=[SdkPart(text="a b c")],
                    )
                )
                responses = [r async for r in client.send_message(request)]
            finally:
                await client.close()
            kinds = [cast(str, r.WhichOneof("payload")) for r in responses]
            if streaming:
                assert kinds.count("artifact_update") >= 3
                assert responses[-1].status_update.status.state == 3  # COMPLETED
            else:
                task = responses[-1].task
                assert task.status.state == 3
                assert "".join(p.text for a in task.artifacts for p in a.parts) == "a b c "


async def test_mount_works_in_a_plain_starlette_app_with_the_builders_options() -> None:
    app = Starlette()
    mount(
        app, shout, path="/a2a", bearer_tokens={"s3cret": "alice"}, public_url="https://x.test/a2a"
    )
    async with serving(app) as port:
        async with httpx.AsyncClient() as http:
            card = (
                await http.get(f"http://127.0.0.1:{port}/a2a/.well-known/agent-card.json")
            ).json()
            assert {i["url"] for i in card["supportedInterfaces"]} == {"https://x.test/a2a"}
            assert "bearer" in card["securitySchemes"]
        async with await A2AClient.connect(
            f"http://127.0.0.1:{port}/a2a/.well-known/agent-card.json",
            headers={"Authorization": "Bearer s3cret"},
        ) as client:
            assert client.card is not None
        # the card names the public URL: talk to the local socket through the same routes
        send = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "yo"}]}
            },
        }
        async with httpx.AsyncClient() as http:
            url = f"http://127.0.0.1:{port}/a2a"
            refused = await http.post(url, json=send, headers={"A2A-Version": "1.0"})
            assert refused.status_code == 401
            answered = await http.post(
                url, json=send, headers={"A2A-Version": "1.0", "Authorization": "Bearer s3cret"}
            )
            assert "YO" in answered.text


def test_mount_refuses_what_it_cannot_mount() -> None:
    with pytest.raises(TypeError, match="Starlette or FastAPI"):
        mount(object(), shout, path="/a")
    with pytest.raises(ConfigurationError, match="mount path"):
        mount(Starlette(), shout, path="agents")
    with pytest.raises(ConfigurationError, match="mount path"):
        mount(Starlette(), shout, path="/agents/{name}")
    with pytest.raises(TypeError, match="'nmae'"):
        mount(Starlette(), shout, path="/a", nmae="x")


async def test_a_mounted_service_keeps_its_auth() -> None:
    app = Starlette()
    mount(app, configure_service(shout, bearer_tokens={"t": "bob"}), path="/svc")
    async with serving(app) as port:
        url = f"http://127.0.0.1:{port}/svc"
        async with await A2AClient.connect(url, headers={"Authorization": "Bearer t"}) as client:
            assert (await client.send("ok")).text == "OK"
