"""``served_in_thread`` and ``asgi_in_thread``: real servers for synchronous test code."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from a2a_core.client import SyncA2AClient
from a2a_core.server import RequestContext
from a2a_core.testing import asgi_in_thread, free_port, served_in_thread

pytestmark = pytest.mark.timeout(60)


async def shout(context: RequestContext) -> str:
    return context.text.upper()


def test_an_agent_served_in_a_thread_answers_blocking_code() -> None:
    with served_in_thread(shout) as url:
        assert url.startswith("http://127.0.0.1:")
        with SyncA2AClient.connect(url) as client:
            assert client.send("quiet").text == "QUIET"
    with pytest.raises(httpx.ConnectError):  # stopped on exit
        httpx.get(url, timeout=2)


def test_a_server_that_cannot_start_says_why() -> None:
    with (
        pytest.raises(RuntimeError, match="did not start"),
        served_in_thread(shout, startup_timeout=10, port=-1),
    ):
        pass


def test_any_asgi_app_with_something_beside_it() -> None:
    entered: list[str] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b",".join(e.encode() for e in entered)})

    @contextlib.asynccontextmanager
    async def beside() -> AsyncIterator[None]:
        entered.append("in")
        yield
        entered.append("out")

    port = free_port()
    with asgi_in_thread(app, port=port, lifespan="off", beside=beside) as url:
        assert url == f"http://127.0.0.1:{port}"
        assert httpx.get(url, timeout=5).text == "in"
    assert entered == ["in", "out"]
