"""Serving with a durable store: tasks outlive the server (ASGI app, ``running_server``, CLI)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from a2a_core import A2AClient, EchoAgent, configure_service, create_app, running_server
from a2a_core.stores.sqlite import SqliteTaskStore
from a2a_core.types import TaskState
from cli_support import (  # pyright: ignore[reportMissingImports] - tests/cli/cli_support.py
    AGENTS_FILE,
    ServeProcess,
)
from store_support import POSTGRES_URL, REDIS_URL


@asynccontextmanager
async def echo_app(store_url: str) -> AsyncIterator[A2AClient]:
    """One "server process": a service on ``store_url`` behind its ASGI app, and a client."""
    service = configure_service(EchoAgent(), store_url=store_url)
    try:
        app = create_app(service)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app), base_url="http://agent.test"
        ) as http:
            yield A2AClient.for_endpoint("http://agent.test", http_client=http)
    finally:
        await service.aclose()  # what the app's lifespan does at shutdown


@pytest.fixture(params=["sqlite", "redis", "postgres"])
def durable_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store URL whose tasks outlive the service that wrote them."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'tasks.db'}"
    if request.param == "redis":
        return f"{REDIS_URL}?prefix={request.getfixturevalue('redis_prefix')}"
    return f"{POSTGRES_URL}?schema={request.getfixturevalue('postgres_schema')}"


async def test_tasks_survive_a_restart_of_the_asgi_app(durable_url: str) -> None:
    url = durable_url
    async with echo_app(url) as client:
        sent = await client.send("remember me")
        assert sent.task is not None
        assert sent.state is TaskState.COMPLETED
        first = await client.get_task(sent.task.id)
    async with echo_app(url) as client:  # a new service, store and app: only the file is shared
        again = await client.get_task(first.id)
        assert again == first
        assert again.artifacts[0].parts[0].text == "echo: remember me"
        assert [m.parts[0].text for m in again.history] == ["remember me"]
        second = await client.send("and me", context_id=first.context_id)
        assert second.task is not None
        page = await client.list_tasks(context_id=first.context_id)
        assert [t.id for t in page.tasks] == [second.task.id, first.id]
        assert page.total_size == 2


async def test_serve_opens_the_store_url(tmp_path: Path) -> None:
    db = tmp_path / "tasks.db"
    async with running_server(EchoAgent(), store_url=f"sqlite:///{db}") as server:
        assert isinstance(server.service.manager.store, SqliteTaskStore)
        async with await A2AClient.connect(server.url) as client:
            sent = await client.send("over a socket")
            assert sent.task is not None
    async with (
        running_server(EchoAgent(), store_url=f"sqlite:///{db}") as server,
        await A2AClient.connect(server.url) as client,
    ):
        kept = await client.get_task(sent.task.id)
        assert kept.status.state is TaskState.COMPLETED
        assert kept.artifacts[0].parts[0].text == "echo: over a socket"


async def test_a2a_serve_store_keeps_a_conversation_across_restarts(tmp_path: Path) -> None:
    """``a2a serve --store sqlite:///tasks.db`` (relative to its working directory): a task
    waiting for input when the server stops is answered on the next server."""
    target = f"{AGENTS_FILE}:ScriptedAgent"
    args = [target, "--port", "0", "--store", "sqlite:///tasks.db"]
    with ServeProcess(args, cwd=tmp_path) as proc:
        url = await asyncio.to_thread(proc.start)
        async with await A2AClient.connect(url) as client:
            asked = await client.send("ask")
            assert asked.task is not None
            assert asked.state is TaskState.INPUT_REQUIRED
    assert (tmp_path / "tasks.db").is_file()
    with ServeProcess(args, cwd=tmp_path) as proc:
        url = await asyncio.to_thread(proc.start)
        async with await A2AClient.connect(url) as client:
            answered = await client.send("Ada", task=asked.task.id)
            assert answered.state is TaskState.COMPLETED
            assert answered.text == "Hello, Ada"
            assert answered.task is not None
            assert answered.task.id == asked.task.id


async def test_a2a_serve_on_postgres_keeps_a_conversation_across_restarts(
    tmp_path: Path, postgres_schema: str
) -> None:
    """``a2a serve --store postgresql://...``: a paused task is answered by the next server,
    and the banner never shows the password."""
    url = f"postgresql://postgres:not-needed@127.0.0.1:5432/test?schema={postgres_schema}"
    args = [f"{AGENTS_FILE}:ScriptedAgent", "--port", "0", "--store", url]
    with ServeProcess(args, cwd=tmp_path) as proc:
        served = await asyncio.to_thread(proc.start)
        async with await A2AClient.connect(served) as client:
            asked = await client.send("ask")
            assert asked.task is not None
            assert asked.state is TaskState.INPUT_REQUIRED
    with ServeProcess(args, cwd=tmp_path) as proc:
        served = await asyncio.to_thread(proc.start)
        async with await A2AClient.connect(served) as client:
            answered = await client.send("Ada", task=asked.task.id)
            assert answered.state is TaskState.COMPLETED
            assert answered.text == "Hello, Ada"
        output = proc.output()
    assert "not-needed" not in output
    assert "postgres:***@127.0.0.1:5432" in output
