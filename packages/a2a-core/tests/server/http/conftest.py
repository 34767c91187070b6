"""Fixtures for the HTTP layer tests: services, apps and clients over ASGI."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from a2a_core.server import A2AService  # noqa: E402
from a2a_core.server.asgi import A2AApp, create_app  # noqa: E402
from a2a_http_support import WaitingAgent, echo, make_card  # noqa: E402


@pytest.fixture
async def service() -> AsyncIterator[A2AService]:
    svc = A2AService(echo, make_card())
    yield svc
    await svc.aclose()


@pytest.fixture
async def waiting() -> AsyncIterator[tuple[A2AService, WaitingAgent]]:
    agent = WaitingAgent()
    svc = A2AService(agent, make_card())
    yield svc, agent
    agent.release.set()
    await svc.aclose()


@pytest.fixture
def app(service: A2AService) -> A2AApp:
    return create_app(service)


ClientFactory = Callable[..., httpx.AsyncClient]


@pytest.fixture
async def client(app: A2AApp) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app), base_url="http://agent.test"
    ) as c:
        yield c


@pytest.fixture
async def make_client() -> AsyncIterator[Callable[[Any], httpx.AsyncClient]]:
    """Clients for apps built inside a test (closed at teardown)."""
    made: list[httpx.AsyncClient] = []

    def factory(asgi_app: Any) -> httpx.AsyncClient:
        c = httpx.AsyncClient(transport=httpx.ASGITransport(asgi_app), base_url="http://agent.test")
        made.append(c)
        return c

    yield factory
    for c in made:
        await c.aclose()
