"""The cluster suite on ``redis://``: each instance has its own store (and pool) on one prefix."""

from __future__ import annotations

import pytest
from a2a_core.adapters import open_task_store
from a2a_core.stores import TaskStore
from a2a_core.testing import ClusterConformance
from store_support import REDIS_URL


class TestRedisCluster(ClusterConformance):
    @pytest.fixture(autouse=True)
    def _prefix(self, redis_prefix: str) -> None:
        self.prefix = redis_prefix

    async def make_store(self) -> TaskStore:
        return open_task_store(f"{REDIS_URL}?prefix={self.prefix}")


async def test_resubscribe_past_retention_starts_with_a_snapshot(redis_prefix: str) -> None:
    """Events expired (stream_ttl): a resubscribe with Last-Event-ID gets the Task first."""
    import asyncio
    from contextlib import AsyncExitStack

    import httpx
    from a2a_core.client import A2AClient
    from a2a_core.server.builder import configure_service
    from a2a_core.server.serve import running_server
    from a2a_core.testing.cluster_suite import CHUNKS, GatedAgent
    from a2a_core.types import Task, TaskState

    async with AsyncExitStack() as stack:
        clients: list[A2AClient] = []
        agents: list[GatedAgent] = []
        for _ in range(2):
            agent = GatedAgent()
            store = open_task_store(f"{REDIS_URL}?prefix={redis_prefix}&stream_ttl=1")
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
