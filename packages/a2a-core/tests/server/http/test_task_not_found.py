"""An unknown task id is answered with exactly "Task not found", the id in ``data`` (real sockets).

Both official SDKs send that text and fasta2a checks it; the conformance kits look
for "not found" in it. Every version and binding: JSON-RPC 1.0 (ErrorInfo
metadata and a Struct), JSON-RPC 0.3 (``data``), HTTP+JSON 1.0 (``google.rpc.Status``
details) and 0.3, and our client's typed error.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from a2a_core import TaskNotFoundError
from a2a_core.client import A2AClient
from a2a_core.compose.serve import running_server
from a2a_core.server import RequestContext
from a2a_http_support import V10, rpc

GONE = "no-such-task-42"


async def echo(context: RequestContext) -> str:
    return context.text


def struct_of(details: list[dict[str, Any]]) -> dict[str, Any]:
    [struct] = [d["value"] for d in details if d["@type"].endswith("google.protobuf.Struct")]
    return struct


async def test_every_binding_says_task_not_found_with_the_id() -> None:
    async with running_server(echo) as server, httpx.AsyncClient(timeout=10) as http:
        base = server.url.rstrip("/")
        v10 = (await http.post(base + "/", json=rpc("GetTask", {"id": GONE}), headers=V10)).json()
        v03 = (await http.post(base + "/", json=rpc("tasks/get", {"id": GONE}))).json()
        cancel = (await http.post(base + "/", json=rpc("tasks/cancel", {"id": GONE}))).json()
        rest10 = await http.get(f"{base}/tasks/{GONE}", headers=V10)
        rest03 = await http.get(f"{base}/v1/tasks/{GONE}")
        async with await A2AClient.connect(server.url) as client:
            with pytest.raises(TaskNotFoundError) as caught:
                await client.get_task(GONE)
    assert v10["error"]["code"] == -32001
    assert v10["error"]["message"] == "Task not found"
    info = v10["error"]["data"][0]
    assert (info["reason"], info["metadata"]) == ("TASK_NOT_FOUND", {"taskId": GONE})
    assert struct_of(v10["error"]["data"]) == {"taskId": GONE}
    for answer in (v03, cancel):
        assert answer["error"] == {
            "code": -32001,
            "message": "Task not found",
            "data": {"taskId": GONE},
        }
    assert rest10.status_code == 404
    assert rest10.json()["error"]["message"] == "Task not found"
    assert struct_of(rest10.json()["error"]["details"]) == {"taskId": GONE}
    assert rest03.status_code == 404
    assert "Task not found" in rest03.text
    assert str(caught.value) == "Task not found"
    assert caught.value.data == {"taskId": GONE}
