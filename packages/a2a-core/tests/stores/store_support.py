"""Store test helpers: where Redis and PostgreSQL are, whether they answer; shared checks."""

from __future__ import annotations

import socket
import uuid

REDIS_HOST = "127.0.0.1"
REDIS_PORT = 6379
REDIS_URL = f"redis://{REDIS_HOST}:{REDIS_PORT}/0"
RUN_PREFIX = f"a2a-test-{uuid.uuid4().hex[:12]}"

_unreachable: str | None = None
_probed = False


def redis_unreachable() -> str | None:
    """Why Redis cannot be used here (None when it answers PING); probed once per run."""
    global _unreachable, _probed
    if not _probed:
        _probed = True
        try:
            with socket.create_connection((REDIS_HOST, REDIS_PORT), timeout=1.0) as sock:
                sock.settimeout(1.0)
                sock.sendall(b"PING\r\n")
                reply = sock.recv(64)
            if not reply.startswith(b"+PONG"):
                _unreachable = f"{REDIS_HOST}:{REDIS_PORT} answered {reply!r} to PING"
        except OSError as exc:
            _unreachable = f"no Redis on {REDIS_HOST}:{REDIS_PORT} ({exc})"
    return _unreachable


def delete_keys(prefix: str) -> None:
    import redis

    client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=0, socket_timeout=5)
    try:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=500))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


POSTGRES_HOST = "127.0.0.1"
POSTGRES_PORT = 5432
POSTGRES_URL = f"postgresql://postgres@{POSTGRES_HOST}:{POSTGRES_PORT}/test"
"""The local PostgreSQL (trust auth); each test works in a schema of its own."""

_pg_unreachable: str | None = None
_pg_probed = False


def postgres_unreachable() -> str | None:
    """Why PostgreSQL cannot be used here (None when it answers); probed once per run."""
    global _pg_unreachable, _pg_probed
    if not _pg_probed:
        _pg_probed = True
        try:
            import psycopg

            with psycopg.connect(POSTGRES_URL, connect_timeout=2) as conn:
                conn.execute("SELECT 1")
        except Exception as exc:
            _pg_unreachable = (
                f"no PostgreSQL at {POSTGRES_HOST}:{POSTGRES_PORT} "
                f"({type(exc).__name__}: {str(exc).strip()[:200]})"
            )
    return _pg_unreachable


def drop_schema(schema: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(POSTGRES_URL, autocommit=True, connect_timeout=5) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


async def resubscribe_past_retention(url: str) -> None:
    """Two instances on ``url`` (events kept 1 s): a resubscribe past it gets the Task first."""
    import asyncio
    from contextlib import AsyncExitStack

    import httpx
    from a2a_core.adapters import open_task_store
    from a2a_core.client import A2AClient
    from a2a_core.compose.builder import configure_service
    from a2a_core.compose.serve import running_server
    from a2a_core.testing.cluster_suite import CHUNKS, GatedAgent
    from a2a_core.types import Task, TaskState

    async with AsyncExitStack() as stack:
        clients: list[A2AClient] = []
        agents: list[GatedAgent] = []
        for _ in range(2):
            agent = GatedAgent()
            store = open_task_store(url)
            service = configure_service(agent, name="retention", store=store)
            server = await stack.enter_async_context(running_server(service))
            http = await stack.enter_async_context(httpx.AsyncClient(timeout=30))
            client = await A2AClient.connect(server.url, http_client=http)
            stack.push_async_callback(client.aclose)
            clients.append(client)
            agents.append(agent)
        stream = clients[0].stream("stream please")
        agents[0].release(1)
        async for _ in stream:
            if stream.text:  # the first chunk arrived: drop the connection
                break
        await stream.aclose()
        agents[0].release(CHUNKS)
        assert stream.task is not None
        for _ in range(1000):  # the agent finishes its last chunks
            if (await clients[0].get_task(stream.task.id)).status.state.is_terminal:
                break
            await asyncio.sleep(0.02)
        await asyncio.sleep(1.5)  # past the stream's retention
        events = [e async for e in clients[1].resubscribe(stream)]
        assert len(events) == 1
        assert isinstance(events[0], Task)
        assert events[0].status.state is TaskState.COMPLETED
        assert "".join(p.text or "" for a in events[0].artifacts for p in a.parts) == "".join(
            f"c{i};" for i in range(CHUNKS)
        )
