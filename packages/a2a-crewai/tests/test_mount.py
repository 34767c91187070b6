"""A CrewAI Crew mounted into a FastAPI app with ``a2a_core.mount``, over a real socket."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator

import pytest
import uvicorn
from a2a_core import A2AClient, mount
from crewai_fakes import echo_crew
from fastapi import FastAPI

pytestmark = pytest.mark.timeout(90)


@contextlib.asynccontextmanager
async def serving(app: FastAPI) -> AsyncIterator[int]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, lifespan="on", log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            assert not task.done(), "the server stopped during startup"
            await asyncio.sleep(0.01)
        yield int(sock.getsockname()[1])
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, timeout=15)
        sock.close()


async def test_a_crew_mounted_in_fastapi_answers_on_both_bindings() -> None:
    app = FastAPI()
    a2a_app = mount(app, echo_crew(), path="/crews/echo")
    assert a2a_app.service.card.name == "Echo crew"
    async with serving(app) as port:
        for binding in ("JSONRPC", "HTTP+JSON"):
            async with await A2AClient.connect(
                f"http://127.0.0.1:{port}/crews/echo", preferred_bindings=[binding]
            ) as client:
                assert (await client.send("mounted crew")).text == "echo: mounted crew"
