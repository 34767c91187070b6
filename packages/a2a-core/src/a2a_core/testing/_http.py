"""Serving a fake agent for the adapter suite: the real app, our client, every byte recorded."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import pluggy

from ..client import A2AClient
from ..compose.serve import interfaces_for, running_server
from ..server.asgi.app import A2AApp, create_app
from ..server.service import A2AService
from .fakes import Scenario

__all__ = ["BASE_URL", "Exchange", "RecordingTransport", "ServedAgent", "serve_agent"]

BASE_URL = "http://a2a-conformance.test"
"""Where the in-process (ASGI) app is published; never resolved, httpx calls the app directly."""


@dataclass(slots=True)
class Exchange:
    """One HTTP request and its response, with the body as far as it was read."""

    method: str
    url: str
    status: int
    body: bytearray = field(default_factory=bytearray)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


class _TeeStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, sink: bytearray) -> None:
        self._inner = inner
        self._sink = sink

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._sink.extend(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class RecordingTransport(httpx.AsyncBaseTransport):
    """Passes requests to ``inner`` and records each response's status and body bytes."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.exchanges: list[Exchange] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        exchange = Exchange(request.method, str(request.url), response.status_code)
        self.exchanges.append(exchange)
        stream = response.stream
        if not isinstance(stream, httpx.AsyncByteStream):  # pragma: no cover - async transports
            raise TypeError("expected an async response stream")
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_TeeStream(stream, exchange.body),
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass(slots=True)
class ServedAgent:
    """A fake agent behind the real HTTP app, and our client connected to it."""

    scenario: Scenario
    agent: object
    service: A2AService
    app: A2AApp
    client: A2AClient
    http: httpx.AsyncClient
    recorder: RecordingTransport
    url: str

    @property
    def exchanges(self) -> list[Exchange]:
        return self.recorder.exchanges


@asynccontextmanager
async def serve_agent(
    scenario: Scenario,
    agent: object,
    service: A2AService,
    plugin_manager: pluggy.PluginManager,
    *,
    over_socket: bool,
    binding: str,
    protocol_version: str,
    app_options: Mapping[str, Any],
) -> AsyncGenerator[ServedAgent]:
    """Serve ``service`` (in process through ASGI, or on 127.0.0.1) and connect a client."""
    from ..plugins import plugin_lifespan

    def lifespan(app: A2AApp) -> AbstractAsyncContextManager[None]:
        return plugin_lifespan(plugin_manager, app)

    async with AsyncExitStack() as stack:
        if over_socket:
            server = await stack.enter_async_context(
                running_server(service, lifespan=lifespan, **app_options)
            )
            app, url = server.app, server.url
            inner: httpx.AsyncBaseTransport = httpx.AsyncHTTPTransport()
        else:
            url = BASE_URL
            card = service.card.model_copy(update={"supported_interfaces": interfaces_for(url)})
            app = create_app(service, card=card, lifespan=lifespan, **app_options)
            await stack.enter_async_context(app.lifespan())
            inner = httpx.ASGITransport(app)
        recorder = RecordingTransport(inner)
        http = await stack.enter_async_context(
            httpx.AsyncClient(transport=recorder, base_url=url, timeout=30.0)
        )
        client = await A2AClient.connect(
            url,
            http_client=http,
            preferred_bindings=[binding],
            preferred_versions=[protocol_version],
        )
        stack.push_async_callback(client.aclose)
        yield ServedAgent(scenario, agent, service, app, client, http, recorder, url)
