"""Real sockets: uvicorn via ``running_server``, disconnects, lifespan, mounting, the example."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a_core import AgentCardBuilder
from a2a_core.client import A2AClient
from a2a_core.compose.serve import interfaces_for, public_base_url, running_server
from a2a_core.server import A2AService, AgentExecutor, RequestContext, TaskUpdater
from a2a_core.server.asgi import create_app
from a2a_core.types import Task, TaskState, TaskStatusUpdateEvent
from a2a_http_support import V10, WaitingAgent, echo, make_card, rpc, v10_message

pytestmark = pytest.mark.timeout(60)

REPO = Path(__file__).resolve().parents[5]


async def wait_until(condition: Any, within: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.01)


# -- running_server / serve ----------------------------------------------------------------


async def test_running_server_fills_interfaces_and_serves(unused_tcp_port: int) -> None:
    builder = AgentCardBuilder("Live", description="live test", version="1.0.0").skill(
        "echo", "Echo", "echoes", tags=["t"]
    )
    async with running_server(echo, card=builder, port=unused_tcp_port) as srv:
        assert srv.url == f"http://localhost:{unused_tcp_port}"
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}") as client:
            # The card follows the origin the client used (tests/server/builder/test_card_urls.py):
            # a client that came through localhost sees localhost.
            card = (
                await client.get(
                    "/.well-known/agent-card.json", headers={"Host": f"localhost:{srv.port}"}
                )
            ).json()
            interfaces = {
                (i["protocolBinding"], i["protocolVersion"], i["url"])
                for i in card["supportedInterfaces"]
            }
            assert interfaces == {
                (binding, version, srv.url)
                for binding in ("JSONRPC", "HTTP+JSON")
                for version in ("1.0", "0.3")
            }
            assert card["url"] == srv.url
            assert "127.0.0.1" not in str(card)
            r = await client.post(
                "/", json=rpc("SendMessage", {"message": v10_message("live")}), headers=V10
            )
            assert r.json()["result"]["task"]["artifacts"][0]["parts"] == [{"text": "echo: live"}]


async def test_connections_have_tcp_nodelay() -> None:
    """Small responses must not wait for delayed ACKs (Nagle): ~40 ms per request otherwise."""
    async with running_server(echo, card=make_card()) as srv:
        reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
        writer.write(b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\n\r\n")
        await writer.drain()
        assert (await reader.readline()).startswith(b"HTTP/1.1 200")
        connections = list(srv.server.server_state.connections)
        assert connections
        for protocol in connections:
            sock = protocol.transport.get_extra_info("socket")
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        writer.close()
        await writer.wait_closed()


async def test_card_with_interfaces_is_kept() -> None:
    card = make_card()
    async with (
        running_server(echo, card=card) as srv,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}") as c,
    ):
        published = (await c.get("/.well-known/agent-card.json")).json()
    assert published["supportedInterfaces"][0]["url"] == "http://localhost:9999"


async def test_service_is_served_and_closed_by_the_lifespan() -> None:
    agent = WaitingAgent()
    svc = A2AService(agent, make_card())
    async with (
        running_server(svc) as srv,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}") as client,
    ):
        r = await client.post(
            "/message:send",
            json={"message": v10_message(), "configuration": {"returnImmediately": True}},
        )
        task_id = r.json()["task"]["id"]
        await wait_until(lambda: svc.manager.active_count == 1)
    # Shutdown closed the service: the running agent was stopped, the task settled.
    assert svc.manager.active_count == 0
    stored = await svc.store.get(task_id, None)
    assert stored is not None
    assert stored.task.status.state.is_terminal


async def test_serving_a_service_refuses_service_options() -> None:
    svc = A2AService(echo, make_card())
    with pytest.raises(TypeError, match="store_url"):
        async with running_server(svc, store_url="memory://"):
            pass  # pragma: no cover
    await svc.aclose()


def test_public_base_url_and_interfaces() -> None:
    assert public_base_url("127.0.0.1", 80) == "http://localhost:80"
    assert public_base_url("0.0.0.0", 80) == "http://localhost:80"
    assert public_base_url("10.1.2.3", 80) == "http://10.1.2.3:80"
    assert public_base_url("fe80::1", 80) == "http://[fe80::1]:80"
    assert public_base_url("x", 1, "https://agent.example.com/") == "https://agent.example.com"
    found = interfaces_for("http://h:1", jsonrpc_path="/rpc", rest_prefix="/api")
    assert [(i.protocol_binding, i.protocol_version, i.url) for i in found] == [
        ("JSONRPC", "1.0", "http://h:1/rpc"),
        ("JSONRPC", "0.3", "http://h:1/rpc"),
        ("HTTP+JSON", "1.0", "http://h:1/api"),
        ("HTTP+JSON", "0.3", "http://h:1/api"),
    ]
    assert [i.protocol_binding for i in interfaces_for("http://h:1", jsonrpc_path=None)] == [
        "HTTP+JSON",
        "HTTP+JSON",
    ]


# -- streams over a socket -------------------------------------------------------------------


async def read_first_event(response: httpx.Response) -> Any:
    async for line in response.aiter_lines():
        if line.startswith("data: "):
            return line[6:]
    raise AssertionError("stream ended without an event")


async def test_events_arrive_while_the_task_runs() -> None:
    agent = WaitingAgent()
    svc = A2AService(agent, make_card())
    async with (
        running_server(svc) as srv,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}") as client,
        client.stream("POST", "/message:stream", json={"message": v10_message()}) as r,
    ):
        assert r.headers["content-type"] == "text/event-stream"
        lines = r.aiter_lines()
        seen: list[str] = []
        async for line in lines:
            if line.startswith("data: "):
                seen.append(line)
            if len(seen) == 2:  # the task, then WORKING: the agent is now waiting
                break
        assert "TASK_STATE_WORKING" in seen[1]
        agent.release.set()
        seen.extend([line async for line in lines if line.startswith("data: ")])
    events = [json.loads(line[6:]) for line in seen]
    assert "task" in events[0]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_many_disconnects_leak_no_subscription_and_no_task() -> None:
    """50 clients walk away mid-stream; every subscription and task is released."""
    agent = WaitingAgent()
    svc = A2AService(agent, make_card())
    async with running_server(svc, sse_ping_interval=None) as srv:
        base = f"http://127.0.0.1:{srv.port}"
        baseline = asyncio.all_tasks()
        async with httpx.AsyncClient(base_url=base) as client:
            r = await client.post(
                "/message:send",
                json={"message": v10_message(), "configuration": {"returnImmediately": True}},
            )
            long_task = r.json()["task"]["id"]

            async def walk_away(i: int) -> None:
                if i % 2:
                    request = client.stream(
                        "POST",
                        "/",
                        json=rpc("SendStreamingMessage", {"message": v10_message(f"s{i}")}),
                        headers=V10,
                    )
                else:
                    request = client.stream("GET", f"/tasks/{long_task}:subscribe")
                async with request as response:
                    assert response.status_code == 200
                    assert await read_first_event(response)

            for batch in range(5):
                await asyncio.gather(*(walk_away(batch * 10 + i) for i in range(10)))

            await wait_until(lambda: svc.manager.bus.subscriber_count() == 0)
            # The agents keep working (a disconnect does not cancel the work) ...
            assert agent.started == 26
            assert svc.manager.active_count == 26
            agent.release.set()
            await wait_until(lambda: svc.manager.active_count == 0)
            r = await client.get(f"/tasks/{long_task}")
            assert r.json()["status"]["state"] == "TASK_STATE_COMPLETED"
        # ... and nothing is left running but what ran before.
        current = asyncio.current_task()
        await wait_until(lambda: not (asyncio.all_tasks() - baseline - {current}))


async def test_shutdown_with_an_open_stream_is_bounded() -> None:
    agent = WaitingAgent()
    svc = A2AService(agent, make_card())
    started = asyncio.get_running_loop().time()
    async with running_server(svc, graceful_shutdown=1) as srv:
        client = httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}")
        request = client.stream("POST", "/message:stream", json={"message": v10_message()})
        response = await request.__aenter__()
        assert await read_first_event(response)
    assert asyncio.get_running_loop().time() - started < 20
    with contextlib.suppress(Exception):
        await request.__aexit__(None, None, None)
    await client.aclose()
    assert svc.manager.bus.subscriber_count() == 0


# -- lifespan and mounting -------------------------------------------------------------------


async def test_lifespan_protocol_enters_and_exits() -> None:
    order: list[str] = []

    @contextlib.asynccontextmanager
    async def extra(app: Any) -> AsyncIterator[None]:
        order.append("enter")
        yield
        order.append("exit")

    class Recorded(A2AService):
        async def aclose(self) -> None:
            order.append("service closed")
            await super().aclose()

    app = create_app(Recorded(echo, make_card()), lifespan=extra)
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    outbox: list[dict[str, Any]] = []
    for kind in ("lifespan.startup", "lifespan.shutdown"):
        inbox.put_nowait({"type": kind})

    async def send(message: Any) -> None:
        outbox.append(message)

    await app({"type": "lifespan"}, inbox.get, send)
    assert [m["type"] for m in outbox] == [
        "lifespan.startup.complete",
        "lifespan.shutdown.complete",
    ]
    assert order == ["enter", "service closed", "exit"]


async def test_failing_startup_is_reported() -> None:
    @contextlib.asynccontextmanager
    async def broken(app: Any) -> AsyncIterator[None]:
        raise RuntimeError("no database")
        yield  # pragma: no cover

    svc = A2AService(echo, make_card())
    app = create_app(svc, lifespan=broken)
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    inbox.put_nowait({"type": "lifespan.startup"})
    outbox: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        outbox.append(message)

    await app({"type": "lifespan"}, inbox.get, send)
    assert outbox[0]["type"] == "lifespan.startup.failed"
    assert "no database" in outbox[0]["message"]
    await svc.aclose()


async def test_mounted_inside_starlette(service: A2AService) -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    a2a_app = create_app(service)
    host = Starlette(routes=[Mount("/agent", app=a2a_app)])
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(host), base_url="http://host.test"
    ) as client:
        r = await client.get("/agent/.well-known/agent-card.json")
        assert r.status_code == 200
        assert r.json()["name"] == "Echo"
        r = await client.post(
            "/agent/", json=rpc("SendMessage", {"message": v10_message("m")}), headers=V10
        )
        assert r.json()["result"]["task"]["artifacts"][0]["parts"] == [{"text": "echo: m"}]
        r = await client.post("/agent/acme/message:send", json={"message": v10_message("r")})
        task_id = r.json()["task"]["id"]
        r = await client.get(f"/agent/acme/tasks/{task_id}")
        assert r.status_code == 200
        r = await client.get(f"/agent/tasks/{task_id}")
        assert r.status_code == 404  # tenants scope tasks: made under acme, seen only there
        r = await client.get("/.well-known/agent-card.json")
        assert r.status_code == 404  # the host app's own space


# -- the example ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_echo_example_runs() -> None:
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(REPO / "examples" / "echo_agent.py"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            for _ in range(300):
                try:
                    card = (await client.get("/.well-known/agent-card.json")).json()
                    break
                except httpx.TransportError:
                    assert proc.returncode is None, "the example exited"
                    await asyncio.sleep(0.05)
            else:
                raise AssertionError("the example did not start")
            assert card["name"] == "Echo"
            # fetched through 127.0.0.1: the card names the origin the client used
            assert card["supportedInterfaces"][0]["url"] == f"http://127.0.0.1:{port}"
            r = await client.post("/message:send", json={"message": v10_message("hi there")})
            task = r.json()["task"]
            assert task["artifacts"][0]["parts"] == [{"text": "You said: hi there"}]
            old_client = {
                "kind": "message",
                "role": "user",
                "messageId": "x",
                "parts": [{"kind": "text", "text": "old client"}],
            }
            r = await client.post("/", json=rpc("message/send", {"message": old_client}))
            assert r.json()["result"]["artifacts"][0]["parts"][0]["text"] == "You said: old client"
    finally:
        if proc.returncode is None:
            proc.terminate()
        try:
            await asyncio.wait_for(proc.communicate(), timeout=10)
        except TimeoutError:  # pragma: no cover
            proc.kill()
            await proc.communicate()


async def test_shutdown_answers_a_waiting_blocking_send_with_the_canceled_task() -> None:
    """Stopping the server cancels the agents first: the waiting caller gets its answer.

    (Otherwise the request would hold the shutdown for the whole grace period and
    then lose its connection.)
    """
    agent = WaitingAgent()
    async with contextlib.AsyncExitStack() as stack:
        srv = await stack.enter_async_context(
            running_server(agent, card=make_card(), graceful_shutdown=30)
        )
        client = await stack.enter_async_context(
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}", timeout=20)
        )
        pending = asyncio.create_task(
            client.post("/", json=rpc("SendMessage", {"message": v10_message()}), headers=V10)
        )
        await wait_until(lambda: agent.started == 1)
        srv.server.should_exit = True
        response = await asyncio.wait_for(pending, 15)
    assert response.status_code == 200
    assert response.json()["result"]["task"]["status"]["state"] == "TASK_STATE_CANCELED"


# -- a task announced at once, over the wire -------------------------------------------------


_STREAMING_CARD = (
    AgentCardBuilder("Announcer", description="announces its tasks", version="1.0.0")
    .skill("wait", "Wait", "waits", tags=["t"])
    .streaming()
)


class SilentUntilReleased(AgentExecutor):
    """Always makes a task, and says nothing until released."""

    starts_task_at_once = True

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await self.release.wait()
        await updater.complete(f"done: {context.text}")


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_a_task_announced_at_once_can_be_read_and_canceled_before_the_agent_speaks(
    binding: str,
) -> None:
    agent = SilentUntilReleased()
    try:
        async with (
            running_server(agent, card=_STREAMING_CARD) as srv,
            await A2AClient.connect(
                f"http://127.0.0.1:{srv.port}", preferred_bindings=[binding]
            ) as client,
        ):
            stream = client.stream("slow question")
            first = await asyncio.wait_for(anext(stream), 5)
            assert isinstance(first, Task)
            assert first.status.state is TaskState.SUBMITTED
            read = await client.get_task(first.id)
            assert read.status.state is TaskState.SUBMITTED
            canceled = await client.cancel(first.id)
            assert canceled.status.state is TaskState.CANCELED
            rest = [event async for event in stream]
            assert isinstance(rest[-1], TaskStatusUpdateEvent)
            assert rest[-1].status.state is TaskState.CANCELED
            assert not agent.release.is_set()
    finally:
        agent.release.set()
