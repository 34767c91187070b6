"""The access log: one INFO line per request on ``a2a_core.access``, never message contents.

Over a real socket (``running_server``, uvicorn on 127.0.0.1): JSON-RPC and
HTTP+JSON calls, a stream, an A2A error and the card each give exactly one
record with the binding, method, version, task id, HTTP status, state or error
code and duration; with the logger off nothing is recorded.
"""

from __future__ import annotations

import logging
import re

import httpx
import pytest
from a2a_core.compose.serve import running_server
from a2a_http_support import V10, echo, make_card, parse_sse, rpc, v10_message

pytestmark = pytest.mark.timeout(60)

SECRET = "my secret words"


def access_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "a2a_core.access"]


async def test_one_line_per_request_with_what_happened(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="a2a_core.access")
    async with (
        running_server(echo, card=make_card()) as srv,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}") as client,
    ):
        sent = await client.post(
            "/", json=rpc("SendMessage", {"message": v10_message(SECRET)}), headers=V10
        )
        task_id = sent.json()["result"]["task"]["id"]
        await client.get(f"/tasks/{task_id}")
        await client.post(
            "/", json=rpc("tasks/get", {"id": "no-such-task"}), headers={"A2A-Version": "0.3"}
        )
        streamed = await client.post(
            "/",
            json=rpc("SendStreamingMessage", {"message": v10_message(SECRET, "m-2")}),
            headers=V10,
        )
        stream_task = parse_sse(streamed.text)[0]["result"]["task"]["id"]
        await client.get("/.well-known/agent-card.json")
    records = access_records(caplog)
    assert len(records) == 5
    send, _, missing, _, _ = records
    fields = [
        (
            r.a2a_binding,  # type: ignore[attr-defined]
            r.a2a_method,  # type: ignore[attr-defined]
            r.a2a_version,  # type: ignore[attr-defined]
            r.a2a_task_id,  # type: ignore[attr-defined]
            r.http_status,  # type: ignore[attr-defined]
            r.a2a_state,  # type: ignore[attr-defined]
            r.a2a_error,  # type: ignore[attr-defined]
        )
        for r in records
    ]
    assert fields == [
        ("JSONRPC", "SendMessage", "1.0", task_id, 200, "completed", None),
        ("HTTP+JSON", "GetTask", "1.0", task_id, 200, "completed", None),
        ("JSONRPC", "tasks/get", "0.3", "no-such-task", 200, None, -32001),
        ("JSONRPC", "SendStreamingMessage", "1.0", stream_task, 200, "completed", None),
        ("card", None, None, None, 200, None, None),
    ]
    for record in records:
        assert record.levelno == logging.INFO
        assert record.duration_ms >= 0  # type: ignore[attr-defined]
        assert SECRET not in record.getMessage()
    assert re.fullmatch(
        rf'127\.0\.0\.1:\d+ "POST /" JSONRPC SendMessage \(1\.0\) task={task_id} 200 '
        r"completed \d+\.\dms",
        send.getMessage(),
    )
    assert "error -32001" in missing.getMessage()
    assert not any(SECRET in r.getMessage() for r in caplog.records)


async def test_nothing_is_recorded_when_the_access_log_is_off(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="a2a_core.access")
    async with (
        running_server(echo, card=make_card()) as srv,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}") as client,
    ):
        r = await client.post("/", json=rpc("SendMessage", {"message": v10_message()}), headers=V10)
        assert r.status_code == 200
    assert access_records(caplog) == []


async def test_log_level_info_turns_it_on(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.NOTSET)
    logging.getLogger("a2a_core.access").setLevel(logging.NOTSET)
    async with (
        running_server(echo, card=make_card(), log_level="info") as srv,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}") as client,
    ):
        await client.get("/.well-known/agent-card.json")
    assert len(access_records(caplog)) == 1
    async with (
        running_server(echo, card=make_card(), log_level="warning") as srv,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}") as client,
    ):
        await client.get("/.well-known/agent-card.json")
    assert len(access_records(caplog)) == 1  # the warning-level server added none
