"""HTTP+JSON binding: 1.0 routes (with and without tenant), 0.3 /v1 routes, errors, options."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from a2a_core.server import A2AService, ServerCallContext
from a2a_core.server.asgi import create_app
from a2a_core.server.asgi.rest import match_route
from a2a_core.server.push import PushNotificationService
from a2a_core.wire import Operation
from a2a_http_support import (
    WaitingAgent,
    make_card,
    v03_rest_message,
    v10_message,
)
from pydantic import BaseModel


class RecordingService(A2AService):
    """Remembers the (operation, request, call) of every call."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[tuple[Operation, BaseModel, ServerCallContext]] = []

    async def handle(self, op: Operation, request: BaseModel, call: ServerCallContext) -> Any:
        self.calls.append((op, request, call))
        return await super().handle(op, request, call)

    async def open_stream(self, op: Operation, request: BaseModel, call: ServerCallContext) -> Any:
        self.calls.append((op, request, call))
        return await super().open_stream(op, request, call)


@pytest.fixture
async def recording() -> Any:
    agent = WaitingAgent()
    card = make_card().model_copy(deep=True)
    card.capabilities.push_notifications = True
    svc = RecordingService(agent, card, push=PushNotificationService(allow_private_targets=True))
    yield svc, agent
    agent.release.set()
    await svc.aclose()


async def start_task(client: httpx.AsyncClient, prefix: str = "") -> str:
    r = await client.post(
        f"{prefix}/message:send",
        json={"message": v10_message("w"), "configuration": {"returnImmediately": True}},
    )
    assert r.status_code == 200, r.text
    return r.json()["task"]["id"]


def rest_error(r: httpx.Response, status: int, grpc: str, reason: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    err = r.json()["error"]
    assert err["code"] == status
    assert err["status"] == grpc
    assert err["details"][0]["reason"] == reason
    return err


# -- routing ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "methods", "version", "tenant", "task", "config"),
    [
        ("/message:send", {"POST"}, None, None, None, None),
        ("/message:stream", {"POST"}, None, None, None, None),
        ("/tasks", {"GET"}, None, None, None, None),
        ("/tasks/", {"GET"}, None, None, None, None),
        ("/tasks/t1", {"GET"}, None, None, "t1", None),
        ("/tasks/t1:cancel", {"POST"}, None, None, "t1", None),
        ("/tasks/t1:subscribe", {"GET", "POST"}, None, None, "t1", None),
        ("/tasks/a:b", {"GET"}, None, None, "a:b", None),
        ("/tasks/t1/pushNotificationConfigs", {"GET", "POST"}, None, None, "t1", None),
        ("/tasks/t1/pushNotificationConfigs/c1", {"GET", "DELETE"}, None, None, "t1", "c1"),
        ("/extendedAgentCard", {"GET"}, None, None, None, None),
        ("/acme/message:send", {"POST"}, None, "acme", None, None),
        ("/acme/tasks", {"GET"}, None, "acme", None, None),
        ("/acme/tasks/t1:cancel", {"POST"}, None, "acme", "t1", None),
        ("/acme/tasks/t1/pushNotificationConfigs/c", {"GET", "DELETE"}, None, "acme", "t1", "c"),
        ("/v1/message:send", {"POST"}, "0.3", None, None, None),
        ("/v1/tasks/t1", {"GET"}, "0.3", None, "t1", None),
        ("/v1/tasks/t1:subscribe", {"GET", "POST"}, "0.3", None, "t1", None),
        ("/v1/tasks/t1/pushNotificationConfigs/c1", {"GET", "DELETE"}, "0.3", None, "t1", "c1"),
        ("/v1/card", {"GET"}, "0.3", None, None, None),
        ("/tasks/tasks", {"GET"}, None, None, "tasks", None),
        ("/tasks/t1/pushNotificationConfigs/", {"GET", "POST"}, None, None, "t1", None),
    ],
)
def test_match_route(
    path: str,
    methods: set[str],
    version: str | None,
    tenant: str | None,
    task: str | None,
    config: str | None,
) -> None:
    found = match_route(path)
    assert found is not None
    assert set(found.methods) == methods
    assert (found.version, found.tenant, found.task_id, found.config_id) == (
        version,
        tenant,
        task,
        config,
    )


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "",
        "/nothing",
        "/tasks/t1/other",
        "/tasks//pushNotificationConfigs",
        "/a/b/c/d/e/f/g",
        "/acme/unknown",
        "message:send",
        "/v1",
        "/v1/tasks",
        "/v1/extendedAgentCard",
        "/acme/v1/card",
    ],
)
def test_unmatched_routes(path: str) -> None:
    assert match_route(path) is None


async def test_unknown_route_is_404_json(client: httpx.AsyncClient) -> None:
    r = await client.get("/no/such/route/here")
    assert r.status_code == 404
    assert r.json()["error"]["code"] == 404
    r = await client.get("/v1/nothing")
    assert r.status_code == 404
    assert r.json()["code"] == -32601


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("GET", "/message:send", "POST"),
        ("DELETE", "/tasks/abc", "GET"),
        ("PUT", "/tasks/abc:subscribe", "GET, POST"),
        ("PATCH", "/tasks/abc/pushNotificationConfigs", "GET, POST"),
        ("POST", "/tasks/abc/pushNotificationConfigs/c", "DELETE, GET"),
        ("GET", "/v1/tasks/abc:cancel", "POST"),
    ],
)
async def test_wrong_method_is_405_with_allow(
    client: httpx.AsyncClient, method: str, path: str, allow: str
) -> None:
    r = await client.request(method, path)
    assert r.status_code == 405
    assert r.headers["allow"] == allow
    body = r.json()
    assert (body["error"]["code"] if "error" in body else 405) == 405


# -- 1.0 operations ---------------------------------------------------------------------------


async def test_send_and_get_with_history_length(client: httpx.AsyncClient) -> None:
    r = await client.post("/message:send", json={"message": v10_message("hi")})
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    task = r.json()["task"]
    r = await client.get(f"/tasks/{task['id']}")
    assert len(r.json()["history"]) == 1
    r = await client.get(f"/tasks/{task['id']}", params={"historyLength": "0"})
    assert "history" not in r.json()
    r = await client.get(f"/tasks/{task['id']}", params={"historyLength": "abc"})
    rest_error(r, 400, "INVALID_ARGUMENT", "INVALID_PARAMS")


async def test_list_tasks_query_parameters(client: httpx.AsyncClient) -> None:
    first = (await client.post("/message:send", json={"message": v10_message("a")})).json()
    ctx = first["task"]["contextId"]
    await client.post("/message:send", json={"message": v10_message("b", message_id="m-2")})
    r = await client.get("/tasks")
    assert len(r.json()["tasks"]) == 2
    assert all("artifacts" not in t for t in r.json()["tasks"])
    r = await client.get("/tasks", params={"contextId": ctx, "includeArtifacts": "true"})
    tasks = r.json()["tasks"]
    assert [t["id"] for t in tasks] == [first["task"]["id"]]
    assert tasks[0]["artifacts"]
    r = await client.get("/tasks", params={"status": "TASK_STATE_COMPLETED", "pageSize": "1"})
    page = r.json()
    assert page["pageSize"] == 1
    assert page["nextPageToken"]
    r = await client.get("/tasks", params={"pageToken": page["nextPageToken"], "pageSize": "1"})
    assert r.json()["nextPageToken"] == ""
    r = await client.get("/tasks", params={"status": "TASK_STATE_WORKING"})
    assert r.json()["tasks"] == []
    r = await client.get("/tasks", params={"statusTimestampAfter": "2999-01-01T00:00:00Z"})
    assert r.json()["tasks"] == []
    r = await client.get("/tasks", params={"historyLength": "0", "pageSize": "0"})
    rest_error(r, 400, "INVALID_ARGUMENT", "INVALID_PARAMS")
    r = await client.get("/tasks", params={"status": "NOT_A_STATE"})
    rest_error(r, 400, "INVALID_ARGUMENT", "INVALID_PARAMS")


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"{}", "application/json"),
        (b'{"metadata": {"why": "test"}}', "application/json"),
        (b"", None),
        (b"null", "application/json"),
        (b"  ", "text/plain"),
    ],
)
async def test_cancel_bodies(
    recording: Any, make_client: Any, body: bytes, content_type: str | None
) -> None:
    svc, _agent = recording
    client = make_client(create_app(svc))
    task_id = await start_task(client)
    headers = {"content-type": content_type} if content_type else {}
    r = await client.post(f"/tasks/{task_id}:cancel", content=body, headers=headers)
    assert r.status_code == 200, r.text
    assert r.json()["status"]["state"] == "TASK_STATE_CANCELED"
    request = svc.calls[-1][1]
    assert request.id == task_id  # type: ignore[attr-defined]
    if b"metadata" in body:
        assert request.metadata == {"why": "test"}  # type: ignore[attr-defined]


async def test_cancel_with_non_object_body(recording: Any, make_client: Any) -> None:
    svc, _agent = recording
    client = make_client(create_app(svc))
    task_id = await start_task(client)
    r = await client.post(f"/tasks/{task_id}:cancel", json=[1, 2])
    rest_error(r, 400, "INVALID_ARGUMENT", "INVALID_PARAMS")


async def test_push_config_routes(recording: Any, make_client: Any) -> None:
    svc, _agent = recording
    client = make_client(create_app(svc))
    task_id = await start_task(client)
    r = await client.post(
        f"/tasks/{task_id}/pushNotificationConfigs",
        json={"url": "http://127.0.0.1:9/hook", "taskId": "ignored-the-path-wins"},
    )
    assert r.status_code == 200, r.text
    created = r.json()
    assert created["taskId"] == task_id
    r = await client.get(f"/tasks/{task_id}/pushNotificationConfigs")
    assert [c["id"] for c in r.json()["configs"]] == [created["id"]]
    r = await client.get(f"/tasks/{task_id}/pushNotificationConfigs/{created['id']}")
    assert r.json()["url"] == "http://127.0.0.1:9/hook"
    r = await client.delete(f"/tasks/{task_id}/pushNotificationConfigs/{created['id']}")
    assert r.status_code == 200
    assert r.json() == {}
    r = await client.get(f"/tasks/{task_id}/pushNotificationConfigs/{created['id']}")
    rest_error(r, 404, "NOT_FOUND", "TASK_NOT_FOUND")
    r = await client.get("/tasks/missing/pushNotificationConfigs")
    rest_error(r, 404, "NOT_FOUND", "TASK_NOT_FOUND")


async def test_tenant_prefix_reaches_request_and_context(recording: Any, make_client: Any) -> None:
    svc, _agent = recording
    client = make_client(create_app(svc))
    task_id = await start_task(client, "/acme")
    op, request, call = svc.calls[-1]
    assert op is Operation.SEND_MESSAGE
    assert call.tenant == "acme"
    assert request.tenant == "acme"
    assert call.version == "1.0"

    r = await client.get(f"/acme/tasks/{task_id}")
    assert r.status_code == 200
    assert svc.calls[-1][2].tenant == "acme"
    assert svc.calls[-1][1].tenant == "acme"  # type: ignore[attr-defined]
    await client.get("/acme/tasks")
    assert svc.calls[-1][0] is Operation.LIST_TASKS
    assert svc.calls[-1][2].tenant == "acme"
    await client.post(f"/acme/tasks/{task_id}:cancel", json={"tenant": "other"})
    assert svc.calls[-1][1].tenant == "acme"  # type: ignore[attr-defined]
    await client.get(f"/acme/tasks/{task_id}/pushNotificationConfigs")
    assert svc.calls[-1][1].tenant == "acme"  # type: ignore[attr-defined]
    await client.get("/acme/extendedAgentCard")
    assert svc.calls[-1][2].tenant == "acme"
    await client.get(f"/tasks/{task_id}")
    assert svc.calls[-1][2].tenant is None


async def test_extended_card_not_offered(client: httpx.AsyncClient) -> None:
    r = await client.get("/extendedAgentCard")
    rest_error(r, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")


# -- errors and status mappings -----------------------------------------------------------


async def test_errors_default_mapping(client: httpx.AsyncClient) -> None:
    r = await client.get("/tasks/nope")
    err = rest_error(r, 404, "NOT_FOUND", "TASK_NOT_FOUND")
    assert err["message"] == "Task not found"
    assert err["details"][0]["metadata"] == {"taskId": "nope"}
    r = await client.post("/message:send", json={"message": {"role": "ROLE_USER"}})
    rest_error(r, 400, "INVALID_ARGUMENT", "INVALID_PARAMS")
    r = await client.post(
        "/message:send", content=b"{nope", headers={"content-type": "application/json"}
    )
    rest_error(r, 400, "INVALID_ARGUMENT", "PARSE_ERROR")
    r = await client.post("/message:send", content=b"<xml/>", headers={"content-type": "text/xml"})
    rest_error(r, 400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED")


async def test_errors_v100_mapping(service: A2AService, make_client: Any) -> None:
    client = make_client(create_app(service, http_status_mapping="1.0.0"))
    task = (await client.post("/message:send", json={"message": v10_message()})).json()["task"]
    r = await client.post(f"/tasks/{task['id']}:cancel")
    rest_error(r, 409, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE")
    r = await client.post("/message:send", content=b"<xml/>", headers={"content-type": "text/xml"})
    rest_error(r, 415, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED")
    r = await client.get("/extendedAgentCard")
    rest_error(r, 400, "UNIMPLEMENTED", "UNSUPPORTED_OPERATION")


async def test_cancel_terminal_default_mapping(client: httpx.AsyncClient) -> None:
    task = (await client.post("/message:send", json={"message": v10_message()})).json()["task"]
    r = await client.post(f"/tasks/{task['id']}:cancel")
    rest_error(r, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE")


@pytest.mark.parametrize("version", ["99.0", "2.0", "x"])
async def test_rest_unsupported_version(client: httpx.AsyncClient, version: str) -> None:
    r = await client.post(
        "/message:send", json={"message": v10_message()}, headers={"A2A-Version": version}
    )
    rest_error(r, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")


async def test_rest_version_header_0_3_on_unprefixed_route(client: httpx.AsyncClient) -> None:
    r = await client.post(
        "/message:send", json={"message": v03_rest_message("old")}, headers={"A2A-Version": "0.3"}
    )
    assert r.status_code == 200, r.text
    task = r.json()["task"]
    assert task["artifacts"][0]["parts"] == [{"text": "echo: old"}]
    assert task["history"][0]["content"] == [{"text": "old"}]


async def test_rest_body_too_large(service: A2AService, make_client: Any) -> None:
    client = make_client(create_app(service, max_body_bytes=500))
    r = await client.post("/message:send", json={"message": v10_message("x" * 1000)})
    assert r.status_code == 413
    assert r.json()["error"]["code"] == 413
    assert r.headers["connection"] == "close"


async def test_rest_content_type_option(service: A2AService, make_client: Any) -> None:
    client = make_client(create_app(service, rest_content_type="application/a2a+json"))
    r = await client.post("/message:send", json={"message": v10_message()})
    assert r.headers["content-type"] == "application/a2a+json"
    r = await client.post(
        "/message:send",
        content=json.dumps({"message": v10_message()}),
        headers={"content-type": "application/a2a+json"},
    )
    assert r.status_code == 200


async def test_rest_disabled_and_prefixed(service: A2AService, make_client: Any) -> None:
    off = make_client(create_app(service, rest=False))
    assert (await off.post("/message:send", json={"message": v10_message()})).status_code == 404
    prefixed = make_client(create_app(service, rest_prefix="/api"))
    r = await prefixed.post("/api/message:send", json={"message": v10_message()})
    assert r.status_code == 200
    assert (await prefixed.post("/message:send", json={})).status_code == 404


# -- 0.3 routes ---------------------------------------------------------------------------------


async def test_v03_routes(recording: Any, make_client: Any) -> None:
    svc, _agent = recording
    client = make_client(create_app(svc))
    r = await client.post(
        "/v1/message:send",
        json={"message": v03_rest_message("old"), "configuration": {"blocking": False}},
        headers={"A2A-Version": "99.0"},  # /v1 is 0.3 whatever the header says
    )
    assert r.status_code == 200, r.text
    task = r.json()["task"]
    assert svc.calls[-1][2].version == "0.3"
    r = await client.get(f"/v1/tasks/{task['id']}", params={"historyLength": "1"})
    assert r.json()["id"] == task["id"]
    assert r.json()["history"][0]["content"] == [{"text": "old"}]

    r = await client.post(
        f"/v1/tasks/{task['id']}/pushNotificationConfigs",
        json={"pushNotificationConfig": {"url": "http://127.0.0.1:9/hook"}},
    )
    assert r.status_code == 200, r.text
    name = r.json()["name"]
    config_id = name.rsplit("/", 1)[1]
    assert name == f"tasks/{task['id']}/pushNotificationConfigs/{config_id}"
    r = await client.get(f"/v1/tasks/{task['id']}/pushNotificationConfigs")
    assert [c["name"] for c in r.json()["configs"]] == [name]
    r = await client.get(f"/v1/tasks/{task['id']}/pushNotificationConfigs/{config_id}")
    assert r.json()["pushNotificationConfig"]["url"] == "http://127.0.0.1:9/hook"
    r = await client.delete(f"/v1/tasks/{task['id']}/pushNotificationConfigs/{config_id}")
    assert r.status_code == 200

    r = await client.post(f"/v1/tasks/{task['id']}:cancel")
    assert r.json()["status"]["state"] == "TASK_STATE_CANCELLED"
    r = await client.post(f"/v1/tasks/{task['id']}:cancel")
    assert r.status_code == 409
    assert r.json()["code"] == -32002


async def test_v03_errors(client: httpx.AsyncClient) -> None:
    r = await client.get("/v1/tasks/missing")
    assert r.status_code == 404
    body = r.json()
    assert body["code"] == -32001
    assert "error" not in body
    r = await client.post("/v1/message:send", json={"message": {"content": "not a list"}})
    assert r.status_code == 422
    assert r.json()["code"] == -32602
    r = await client.get("/v1/card")
    assert r.status_code == 400
    assert r.json()["code"] == -32004
    r = await client.get("/v1/tasks")  # no ListTasks in 0.3, and "v1" is not a tenant
    assert r.status_code == 404
