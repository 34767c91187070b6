"""Several agents in one service: each at its own path, one store, a catalog, a root page.

Real servers on 127.0.0.1: ``running_server({...})``, ``mount(app, {...})``.
"""

from __future__ import annotations

import httpx
import pytest
from a2a_core import A2AClient, mount, running_server
from a2a_core.compose.builder import HostedAgent
from a2a_core.errors import TaskNotFoundError
from a2a_core.server import RequestContext
from a2a_core.server.context import owner_key
from a2a_core.stores import MemoryTaskStore
from asgi_server import serving
from starlette.applications import Starlette

pytestmark = pytest.mark.timeout(60)


async def upper(context: RequestContext) -> str:
    """Shouts what it is told."""
    return context.text.upper()


async def lower(context: RequestContext) -> str:
    """Whispers what it is told."""
    return context.text.lower()


async def test_each_agent_has_its_path_card_and_tasks_and_they_share_one_store() -> None:
    store = MemoryTaskStore()
    agents = {"upper": upper, "lower": HostedAgent(lower, options={"name": "Whisperer"})}
    async with running_server(agents, store=store) as server:
        base = server.url.replace("localhost", "127.0.0.1")
        async with await A2AClient.connect(base + "/upper") as up:
            assert up.card is not None
            assert up.card.name == "upper"
            assert {i.url for i in up.card.supported_interfaces} >= {base + "/upper"}
            done = await up.send("Hi there")
            assert done.text == "HI THERE"
            task_id = done.task.id if done.task else None
        async with await A2AClient.connect(base + "/lower") as low:
            assert low.card is not None
            assert low.card.name == "Whisperer"
            assert (await low.send("Hi There")).text == "hi there"
            assert task_id is not None
            with pytest.raises(TaskNotFoundError):
                await low.get_task(task_id)  # the other agent's task
            assert [t.id for t in (await low.list_tasks()).tasks] != [task_id]
        async with await A2AClient.connect(base + "/upper") as up:
            assert (await up.get_task(task_id)).id == task_id
            async with up.stream("streamed") as events:
                seen = [e async for e in events]
                assert (await events.result()).text == "STREAMED"
            assert seen  # its own SSE stream, below its path
        # both agents' tasks live in the one store, each under its agent's scope
        assert await store.get(task_id, None) is None
        assert await store.get(task_id, owner_key(None, None, "upper")) is not None


async def test_the_root_page_and_the_catalog_list_every_agent() -> None:
    async with running_server({"upper": upper, "team/lower": lower}) as server:
        base = server.url.replace("localhost", "127.0.0.1")
        async with httpx.AsyncClient() as http:
            page = await http.get(base + "/", headers={"accept": "text/html"})
            assert page.status_code == 200
            assert f'href="{base}/upper/playground/"' in page.text
            assert f'href="{base}/team/lower/playground/"' in page.text
            catalog = await http.get(base + "/.well-known/ai-catalog.json")
            assert catalog.headers["content-type"] == "application/ai-catalog+json"
            entries = catalog.json()["entries"]
            assert [e["url"] for e in entries] == [
                f"{base}/upper/.well-known/agent-card.json",
                f"{base}/team/lower/.well-known/agent-card.json",
            ]
            assert entries[1]["identifier"] == "urn:air:127.0.0.1:a2a:team-lower"
            assert entries[0]["type"] == "application/a2a-agent-card+json"
            for entry in entries:
                card = await http.get(entry["url"])
                assert card.status_code == 200
                assert card.json()["name"] == entry["displayName"]
            playground = await http.get(base + "/team/lower/playground/")
            assert '<meta name="a2a-catalog" content="../../../.well-known/ai-catalog.json">' in (
                playground.text
            )
            assert (await http.get(base + "/nobody")).status_code == 404
            assert (await http.get(base + "/readyz")).status_code == 200


async def test_a_single_agent_publishes_a_catalog_of_one() -> None:
    async with (
        running_server(upper, public_url="https://agents.example.com/up") as server,
        httpx.AsyncClient() as http,
    ):
        url = f"http://127.0.0.1:{server.port}/.well-known/ai-catalog.json"
        catalog = (await http.get(url)).json()
    assert catalog["specVersion"] == "1.0"
    assert catalog["entries"] == [
        {
            "identifier": "urn:air:agents.example.com:a2a:upper",
            "displayName": "upper",
            "type": "application/a2a-agent-card+json",
            "url": "https://agents.example.com/up/.well-known/agent-card.json",
            "description": "Shouts what it is told.",
            "tags": ["upper"],
            "version": "0.1.0",
        }
    ]


async def test_mount_takes_several_agents() -> None:
    app = Starlette()
    mount(app, {"upper": upper, "lower": lower}, path="/agents")
    async with serving(app) as port:
        base = f"http://127.0.0.1:{port}/agents"
        async with await A2AClient.connect(base + "/lower") as client:
            assert (await client.send("ABC")).text == "abc"
        async with httpx.AsyncClient() as http:
            entries = (await http.get(base + "/.well-known/ai-catalog.json")).json()["entries"]
        assert [e["url"] for e in entries] == [
            f"{base}/upper/.well-known/agent-card.json",
            f"{base}/lower/.well-known/agent-card.json",
        ]


async def test_the_agents_share_one_store_one_push_service_and_the_auth() -> None:
    agents = {"upper": upper, "lower": lower}
    options = {"push": True, "allow_private_push_targets": True, "bearer_tokens": {"t0k": "ada"}}
    async with running_server(agents, **options) as server:
        assert server.hosted is not None
        services = [app.service for app in server.hosted.apps.values()]
        assert services[0].store is services[1].store
        assert services[0].push is not None
        assert services[0].push is services[1].push
        base = server.url.replace("localhost", "127.0.0.1")
        async with httpx.AsyncClient() as http:
            for name in agents:
                card = (await http.get(f"{base}/{name}/.well-known/agent-card.json")).json()
                assert "bearer" in card["securitySchemes"]
                refused = await http.post(f"{base}/{name}", json={})
                assert refused.status_code == 401
        async with await A2AClient.connect(
            base + "/lower", headers={"Authorization": "Bearer t0k"}
        ) as client:
            assert (await client.send("OK")).text == "ok"
