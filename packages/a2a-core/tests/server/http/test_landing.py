"""A browser (or curl) opening the agent's URL gets a page, not a JSON-RPC error.

Over a real socket (``running_server``): GET on the JSON-RPC endpoint with
``Accept: text/html`` is, with the playground off, an HTML page naming the
agent and its card, with every piece of card text escaped (with it on,
browsers go to the playground: test_playground.py); other Accepts get plain text, a JSON-only
client keeps the JSON-RPC 405, and POSTs are A2A calls as before.
"""

from __future__ import annotations

import html

import httpx
import pytest
from a2a_core import AgentCardBuilder
from a2a_core.compose.serve import running_server
from a2a_core.server import A2AService
from a2a_core.server.asgi import create_app
from a2a_http_support import V10, echo, make_card, rpc, v10_message

pytestmark = pytest.mark.timeout(60)

BROWSER = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
HOSTILE = '<script>alert("x")</script> & "friends"'


def hostile_card() -> AgentCardBuilder:
    return AgentCardBuilder(
        f"Evil {HOSTILE}", description=f"Does {HOSTILE}", version="2.0.0"
    ).skill("s", f"Skill {HOSTILE}", f"About {HOSTILE}", tags=["t"])


async def test_a_browser_gets_an_html_page_with_escaped_card_text(unused_tcp_port: int) -> None:
    async with running_server(
        echo, card=hostile_card(), port=unused_tcp_port, playground=False
    ) as srv:
        base = f"http://127.0.0.1:{srv.port}"
        async with httpx.AsyncClient(base_url=base) as client:
            r = await client.get("/", headers=BROWSER)
            assert r.status_code == 200
            assert r.headers["content-type"] == "text/html; charset=utf-8"
            assert "default-src 'none'" in r.headers["content-security-policy"]
            page = r.text
            assert "<script>" not in page
            assert html.escape(f"Evil {HOSTILE}") in page
            assert html.escape(f"Does {HOSTILE}") in page
            assert html.escape(f"Skill {HOSTILE}") in page
            assert f'href="{base}/.well-known/agent-card.json"' in page
            assert "A2A (Agent2Agent)" in page
            # the link it gives works
            assert (await client.get("/.well-known/agent-card.json")).json()["version"] == "2.0.0"
            head = await client.head("/", headers=BROWSER)
            assert (head.status_code, head.content) == (200, b"")
            # POST is still JSON-RPC
            r = await client.post(
                "/", json=rpc("SendMessage", {"message": v10_message("hi")}), headers=V10
            )
            assert r.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize("accept", ["*/*", "text/plain", None])
async def test_curl_gets_plain_text(unused_tcp_port: int, accept: str | None) -> None:
    async with running_server(echo, card=hostile_card(), port=unused_tcp_port) as srv:
        base = f"http://127.0.0.1:{srv.port}"
        headers = {"accept": accept} if accept is not None else {}
        async with httpx.AsyncClient(base_url=base) as client:
            request = client.build_request("GET", "/", headers=headers)
            if accept is None:
                del request.headers["accept"]
            r = await client.send(request)
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/plain; charset=utf-8"
    assert r.text.startswith(f"Evil {HOSTILE} - an A2A (Agent2Agent) agent\n")
    assert f"Agent card: {base}/.well-known/agent-card.json\n" in r.text
    assert f'a2a send {base} "hello"' in r.text
    assert r.text.endswith(f"\nOr try it in a browser: {base}/playground/\n")


async def test_curl_is_pointed_at_the_playground_it_can_open(unused_tcp_port: int) -> None:
    async with (
        running_server(echo, port=unused_tcp_port) as srv,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}") as client,
    ):
        text = (await client.get("/", headers={"accept": "*/*"})).text
        link = text.rpartition("Or try it in a browser: ")[2].strip()
        assert link == f"http://127.0.0.1:{srv.port}/playground/"
        page = await client.get(link)
        assert (page.status_code, page.headers["content-type"]) == (200, "text/html; charset=utf-8")


async def test_curl_text_names_no_playground_when_there_is_none(unused_tcp_port: int) -> None:
    async with (
        running_server(echo, port=unused_tcp_port, playground=False) as srv,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}") as client,
    ):
        text = (await client.get("/", headers={"accept": "*/*"})).text
    assert "playground" not in text
    assert text.endswith(f'a2a send http://127.0.0.1:{srv.port} "hello"\n')


async def test_a_json_only_client_keeps_the_json_rpc_405(unused_tcp_port: int) -> None:
    async with (
        running_server(echo, card=hostile_card(), port=unused_tcp_port) as srv,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}") as client,
    ):
        r = await client.get("/", headers={"accept": "application/json"})
        assert r.status_code == 405
        assert r.headers["allow"] == "POST"
        assert r.json()["error"]["code"] == -32600
        r = await client.put("/", headers=BROWSER, content=b"{}")
        assert r.status_code == 405  # other methods: unchanged


async def test_the_page_at_root_when_json_rpc_lives_elsewhere_and_when_mounted() -> None:
    service = A2AService(echo, make_card().model_copy(update={"name": "Mounted"}))
    app = create_app(service, jsonrpc_path="/rpc", playground=False)
    transport = httpx.ASGITransport(app, root_path="/agents/one")
    async with httpx.AsyncClient(transport=transport, base_url="http://host.test") as client:
        for path in ("/agents/one/", "/agents/one/rpc"):
            r = await client.get(path, headers=BROWSER)
            assert r.status_code == 200, path
            assert "<h1>Mounted</h1>" in r.text
            assert 'href="http://host.test/agents/one/.well-known/agent-card.json"' in r.text
    await service.aclose()


async def test_mounted_curl_text_points_below_the_mount_path() -> None:
    service = A2AService(echo, make_card())
    app = create_app(service)
    transport = httpx.ASGITransport(app, root_path="/agents/one")
    async with httpx.AsyncClient(transport=transport, base_url="http://host.test") as client:
        text = (await client.get("/agents/one/", headers={"accept": "*/*"})).text
        assert text.endswith("Or try it in a browser: http://host.test/agents/one/playground/\n")
        assert (await client.get("/agents/one/playground/")).status_code == 200
    await service.aclose()
