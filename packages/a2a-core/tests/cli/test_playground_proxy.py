"""``a2a playground URL``: its proxy forwards to that agent's origin only, within bounds.

The agent is a real server on 127.0.0.1 (``running_server``); the proxy app is
driven over ASGI, and the command itself runs as a subprocess once. The
browser tests (tests/browser) use the page through the proxy against the
official SDK's server.
"""

from __future__ import annotations

import json
import signal
import subprocess

import httpx
import pytest
from a2a_core.cli.proxy import PROXY_HEADER, PlaygroundProxy
from a2a_core.compose.serve import running_server
from a2a_core.server.executor import RequestContext
from a2a_core.server.updater import TaskUpdater
from cli_support import a2a_command, subprocess_env

pytestmark = pytest.mark.timeout(60)

HEADERS = {PROXY_HEADER: "1", "host": "127.0.0.1:9"}
V10 = {"a2a-version": "1.0"}


async def streamer(context: RequestContext, updater: TaskUpdater) -> None:
    await updater.start_work("working on it")
    for word in ("one ", "two ", "three"):
        await updater.add_artifact(word, artifact_id="out", append=word != "one ")
    await updater.complete()


def rpc(method: str, params: dict[str, object]) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def message(text: str) -> dict[str, object]:
    return {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": text}]}


def proxy_client(proxy: PlaygroundProxy) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(proxy)  # type: ignore[arg-type]
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:9", headers=HEADERS)


async def test_calls_and_event_streams_go_through(unused_tcp_port: int) -> None:
    async with running_server(streamer, port=unused_tcp_port) as srv:
        agent = f"http://127.0.0.1:{srv.port}"
        proxy = PlaygroundProxy(agent + "/", allowed_hosts=("127.0.0.1:9",))
        async with proxy_client(proxy) as client:
            card = await client.get("/proxy/.well-known/agent-card.json")
            assert card.status_code == 200
            assert card.json()["name"] == srv.app.card.name
            page = await client.get("/playground/")
            assert f'<meta name="a2a-remote" content="{agent}">' in page.text
            assert '<meta name="a2a-agent" content="/proxy/">' in page.text
            sent = await client.post(
                "/proxy", json=rpc("SendMessage", {"message": message("hi")}), headers=V10
            )
            assert sent.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            request = rpc("SendStreamingMessage", {"message": message("hi")})
            async with client.stream(
                "POST", "/proxy/", json=request, headers={**V10, "accept": "text/event-stream"}
            ) as stream:
                assert stream.headers["content-type"].startswith("text/event-stream")
                events = [
                    json.loads(line[5:])["result"]
                    async for line in stream.aiter_lines()
                    if line.startswith("data:")
                ]
        await proxy.aclose()
    chunks = [
        e["artifactUpdate"]["artifact"]["parts"][0]["text"] for e in events if "artifactUpdate" in e
    ]
    assert chunks == ["one ", "two ", "three"]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.mark.parametrize(
    "raw",
    [b"/proxy//evil.example/x", b"/proxy/@evil.example/", b"/proxy/..%2F..%2Fx", b"/proxy"],
)
def test_targets_never_leave_the_agent_origin(raw: bytes) -> None:
    proxy = PlaygroundProxy("https://agent.example:8443/a2a")
    url = proxy.target({"raw_path": raw, "path": raw.decode(), "query_string": b"k=v"})
    assert (url.scheme, url.host, url.port) == ("https", "agent.example", 8443)
    assert url.query == b"k=v"


async def test_strangers_and_forms_are_refused(unused_tcp_port: int) -> None:
    proxy = PlaygroundProxy(f"http://127.0.0.1:{unused_tcp_port}", allowed_hosts=("127.0.0.1:9",))
    async with proxy_client(proxy) as client:
        # another Host (DNS rebinding): refused, even for the page
        r = await client.get("/playground/", headers={"host": "evil.example"})
        assert r.status_code == 403
        # a call without the header a cross-site form cannot send: refused
        r = await client.post("/proxy/", content=b"{}", headers={PROXY_HEADER: ""})
        assert r.status_code == 403
        assert PROXY_HEADER in r.json()["error"]["message"]
        # nothing listens there: a clear 502, not a crash
        r = await client.get("/proxy/.well-known/agent-card.json")
        assert r.status_code == 502
        assert "could not be reached" in r.json()["error"]["message"]
        assert (await client.get("/elsewhere")).status_code == 404
    await proxy.aclose()


async def test_bodies_are_bounded(unused_tcp_port: int) -> None:
    async with running_server(streamer, port=unused_tcp_port) as srv:
        proxy = PlaygroundProxy(
            f"http://127.0.0.1:{srv.port}",
            allowed_hosts=("127.0.0.1:9",),
            max_body_bytes=1000,
            max_response_bytes=200,
        )
        async with proxy_client(proxy) as client:
            r = await client.post("/proxy/", content=b"x" * 1001)
            assert r.status_code == 413
            r = await client.get("/proxy/.well-known/agent-card.json")  # the card: > 200 bytes
            assert r.status_code == 502
            assert "larger" in r.json()["error"]["message"]
        await proxy.aclose()


async def test_redirects_stay_on_the_agent_origin() -> None:
    def upstream(request: httpx.Request) -> httpx.Response:
        where = {
            "/here": "/there?x=1",
            "/away": "https://evil.example/steal",
        }[request.url.path]
        return httpx.Response(302, headers={"location": where})

    proxy = PlaygroundProxy("http://agent.test", transport=httpx.MockTransport(upstream))
    async with proxy_client(proxy) as client:
        r = await client.get("/proxy/here")
        assert (r.status_code, r.headers["location"]) == (302, "/proxy/there?x=1")
        r = await client.get("/proxy/away")
        assert r.status_code == 502
        assert "location" not in r.headers
    await proxy.aclose()


def test_the_command_prints_its_address_and_serves_the_page(unused_tcp_port: int) -> None:
    command = [*a2a_command(), "playground", "http://127.0.0.1:1/agent", "--no-browser"]
    command += ["--port", str(unused_tcp_port)]
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=subprocess_env()
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        page = f"http://127.0.0.1:{unused_tcp_port}/playground/"
        assert first.strip() == f"Playground for http://127.0.0.1:1/agent at {page}"
        for _ in range(200):  # the address is printed just before the server listens
            try:
                r = httpx.get(page, timeout=5)
                break
            except httpx.ConnectError:
                import time

                time.sleep(0.05)
        else:
            pytest.fail("the playground server did not start")
        assert r.status_code == 200
        assert '<meta name="a2a-agent" content="/proxy/agent/">' in r.text
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=20)
    assert code == 0
