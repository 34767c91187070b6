"""``/healthz`` and ``/readyz`` over a real socket: open without credentials, 503 when
the store fails or the server drains, under a mount path too; never logged or traced."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest
from a2a_core.compose.serve import running_server
from a2a_core.stores import MemoryTaskStore
from a2a_core.testing.otel import InMemoryTelemetry
from a2a_http_support import echo, make_card

pytestmark = pytest.mark.timeout(60)


class BrokenStore(MemoryTaskStore):
    async def get(self, task_id: str, owner: str | None) -> Any:
        raise ConnectionError("the database is down")


async def test_probes_answer_without_credentials(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="a2a_core.access")
    with InMemoryTelemetry() as otel:
        async with (
            running_server(echo, card=make_card(), bearer_tokens={"s3cret": "alice"}) as srv,
            httpx.AsyncClient(base_url=srv.url) as http,
        ):
            live = await http.get("/healthz")
            ready = await http.get("/readyz")
            head = await http.head("/readyz")
            refused = await http.post("/healthz")
            protected = await http.get("/tasks/x")
    assert (live.status_code, live.json()) == (200, {"status": "ok"})
    assert (ready.status_code, ready.json()) == (200, {"status": "ok"})
    assert (head.status_code, head.content) == (200, b"")
    assert ready.headers["cache-control"] == "no-store"
    assert refused.status_code == 405
    assert protected.status_code == 401  # the rest of the app still wants credentials
    logged = [r.getMessage() for r in caplog.records if r.name == "a2a_core.access"]
    assert len(logged) == 1  # the refused /tasks/x only
    assert "/tasks/x" in logged[0]
    assert [s.name for s in otel.spans()] == ["lf.a2a.v1.A2AService/GetTask"]


async def test_not_ready_when_the_store_fails() -> None:
    from a2a_core.server import A2AService

    service = A2AService(echo, make_card(), store=BrokenStore())
    async with running_server(service) as srv, httpx.AsyncClient(base_url=srv.url) as http:
        live = await http.get("/healthz")
        ready = await http.get("/readyz")
    assert live.status_code == 200
    assert ready.status_code == 503
    assert ready.json() == {
        "status": "unavailable",
        "reason": "store unreachable (ConnectionError)",
    }


async def test_not_ready_while_draining() -> None:
    async with (
        running_server(echo, card=make_card()) as srv,
        httpx.AsyncClient(base_url=srv.url) as http,
    ):
        assert (await http.get("/readyz")).status_code == 200
        await srv.service.manager.stop()
        ready = await http.get("/readyz")
        live = await http.get("/healthz")
    assert ready.status_code == 503
    assert ready.json()["reason"] == "draining"
    assert live.status_code == 200


async def test_probes_below_a_mount_path() -> None:
    import uvicorn
    from a2a_core import mount
    from starlette.applications import Starlette

    host = Starlette()
    mount(host, echo, path="/agents/echo")
    config = uvicorn.Config(host, host="127.0.0.1", port=0, log_level="warning")
    server = uvicorn.Server(config)
    import asyncio

    task = asyncio.create_task(server.serve())
    try:
        for _ in range(500):
            if server.started:
                break
            await asyncio.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            live = await http.get("/agents/echo/healthz")
            ready = await http.get("/agents/echo/readyz")
    finally:
        server.should_exit = True
        await task
    assert live.status_code == 200
    assert ready.status_code == 200
