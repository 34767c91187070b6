"""The task store's byte budget over a real socket: live tasks holding it get a retryable 503."""

from __future__ import annotations

import base64
import os

import httpx
import pytest
from a2a_core import A2AClient, ServerBusyError
from a2a_core._builtins.memory_store import open_memory_store
from a2a_core.compose.serve import running_server
from a2a_core.stores import CompactMemoryTaskStore
from a2a_http_support import V10, WaitingAgent, make_card

pytestmark = pytest.mark.timeout(60)


def incompressible(size: int) -> str:
    return base64.b64encode(os.urandom(size * 3 // 4)).decode()


def send_body(text: str, index: int) -> dict[str, object]:
    message = {"role": "ROLE_USER", "messageId": f"m-{index}", "parts": [{"text": text}]}
    return {"message": message, "configuration": {"returnImmediately": True}}


async def test_live_tasks_holding_the_budget_get_a_retryable_capacity_error() -> None:
    agent = WaitingAgent()  # every task stays in progress until released
    store_url = "memory://?max_bytes=4000000"
    async with running_server(agent, card=make_card(), store_url=store_url) as srv:
        assert isinstance(srv.service.store, CompactMemoryTaskStore)
        async with httpx.AsyncClient(base_url=srv.url, timeout=30) as http:
            statuses: list[int] = []
            for i in range(12):  # ~1 MB each, charged twice while live: 24 MB offered
                r = await http.post(
                    "/message:send", json=send_body(incompressible(1_000_000), i), headers=V10
                )
                statuses.append(r.status_code)
                if r.status_code == 503:
                    error = r.json()["error"]
                    assert error["status"] == "UNAVAILABLE"
                    info = {d.get("reason") for d in error.get("details", [])}
                    assert "SERVER_BUSY" in info
                    break
            assert statuses[-1] == 503
            assert 200 in statuses
            assert srv.service.store.stored_bytes <= 4_000_000
            # JSON-RPC and A2AClient see the same structured, retryable error.
            async with A2AClient.for_endpoint(srv.url) as client:
                with pytest.raises(ServerBusyError) as busy:
                    await client.send(incompressible(1_000_000), blocking=False)
                assert busy.value.data is not None
                assert busy.value.data["reason"] == "task_store_full"
                assert busy.value.data["retryable"] is True
            # Finishing the live tasks frees the budget for new work.
            agent.release.set()
            small = await http.post("/message:send", json=send_body("hi", 99), headers=V10)
            assert small.status_code == 200


def test_memory_url_options() -> None:
    store = open_memory_store("memory://?max_bytes=1234&max_tasks=5")
    assert isinstance(store, CompactMemoryTaskStore)
    assert (store.max_bytes, store.max_tasks) == (1234, 5)
    with pytest.raises(ValueError, match="max_bytes"):
        open_memory_store("memory://?max_bytes=0")
    with pytest.raises(ValueError, match="unknown"):
        open_memory_store("memory://?size=3")
