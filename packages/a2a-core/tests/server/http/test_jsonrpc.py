"""JSON-RPC binding: both versions' methods, version negotiation, envelope errors, limits."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from a2a_core.server import A2AService, RequestContext, ServerCallContext
from a2a_core.server.asgi import create_app
from a2a_core.server.asgi.http import DRAIN_MAX_BYTES
from a2a_core.server.push import PushNotificationService
from a2a_core.server.stream import ServerStream
from a2a_core.types import ListTasksRequest, Part
from a2a_core.wire import DecodeLimits, Operation
from a2a_http_support import (
    V10,
    WaitingAgent,
    echo,
    make_card,
    parse_sse,
    rpc,
    v03_message,
    v10_message,
)
from pydantic import BaseModel


async def call(
    client: httpx.AsyncClient, body: Any, headers: dict[str, str] | None = None, path: str = "/"
) -> httpx.Response:
    return await client.post(path, json=body, headers=headers or {})


def error_of(response: httpx.Response) -> dict[str, Any]:
    assert response.headers["content-type"] == "application/json"
    payload = response.json()
    assert payload["jsonrpc"] == "2.0"
    assert "result" not in payload
    return payload["error"]


# -- operations, 1.0 ------------------------------------------------------------------


async def test_send_message_v10(client: httpx.AsyncClient) -> None:
    r = await call(client, rpc("SendMessage", {"message": v10_message("hi")}, rid="a"), V10)
    assert r.status_code == 200
    body = r.json()
    assert body["id"] == "a"
    task = body["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "echo: hi"}]


async def test_version_from_query_parameter(client: httpx.AsyncClient) -> None:
    r = await call(client, rpc("SendMessage", {"message": v10_message()}), path="/?A2A-Version=1.0")
    assert "task" in r.json()["result"]


async def test_v10_method_name_without_header_uses_v10_shapes(client: httpx.AsyncClient) -> None:
    r = await call(client, rpc("SendMessage", {"message": v10_message()}))
    assert r.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_get_list_cancel_v10(
    waiting: tuple[A2AService, WaitingAgent], make_client: Any
) -> None:
    svc, _agent = waiting
    client = make_client(create_app(svc))
    params = {"message": v10_message("w"), "configuration": {"returnImmediately": True}}
    r = await call(client, rpc("SendMessage", params), V10)
    task_id = r.json()["result"]["task"]["id"]

    r = await call(client, rpc("GetTask", {"id": task_id, "historyLength": 0}), V10)
    got = r.json()["result"]
    assert got["id"] == task_id
    assert "history" not in got

    r = await call(client, rpc("ListTasks", {}), V10)
    listed = r.json()["result"]
    assert [t["id"] for t in listed["tasks"]] == [task_id]
    assert listed["pageSize"] == 1

    r = await call(client, rpc("CancelTask", {"id": task_id}), V10)
    assert r.json()["result"]["status"]["state"] == "TASK_STATE_CANCELED"

    r = await call(client, rpc("CancelTask", {"id": task_id}), V10)
    assert error_of(r)["code"] == -32002


async def test_unknown_task_v10(client: httpx.AsyncClient) -> None:
    r = await call(client, rpc("GetTask", {"id": "nope"}, rid=7), V10)
    assert r.status_code == 200
    err = error_of(r)
    assert err["code"] == -32001
    assert r.json()["id"] == 7
    assert err["data"][0]["reason"] == "TASK_NOT_FOUND"


# -- operations, 0.3 ------------------------------------------------------------------


async def test_send_get_cancel_v03(
    waiting: tuple[A2AService, WaitingAgent], make_client: Any
) -> None:
    svc, _agent = waiting
    client = make_client(create_app(svc))
    params = {"message": v03_message("w"), "configuration": {"blocking": False}}
    r = await call(client, rpc("message/send", params))
    task = r.json()["result"]
    assert task["kind"] == "task"
    r = await call(client, rpc("tasks/get", {"id": task["id"]}))
    assert r.json()["result"]["kind"] == "task"
    r = await call(client, rpc("tasks/cancel", {"id": task["id"]}))
    assert r.json()["result"]["status"]["state"] == "canceled"


async def test_send_v03_echo(client: httpx.AsyncClient) -> None:
    r = await call(client, rpc("message/send", {"message": v03_message("yo")}))
    result = r.json()["result"]
    assert result["status"]["state"] == "completed"
    assert result["artifacts"][0]["parts"] == [{"kind": "text", "text": "echo: yo"}]


async def test_v03_method_with_v10_header_uses_v03_shapes(client: httpx.AsyncClient) -> None:
    r = await call(client, rpc("message/send", {"message": v03_message()}), V10)
    assert r.json()["result"]["kind"] == "task"


async def test_v03_error_shape(client: httpx.AsyncClient) -> None:
    err = error_of(await call(client, rpc("tasks/get", {"id": "nope"})))
    assert err["code"] == -32001
    assert "data" not in err or not isinstance(err["data"], list)


async def test_v03_has_no_list_method(client: httpx.AsyncClient) -> None:
    assert error_of(await call(client, rpc("tasks/list", {})))["code"] == -32601


async def test_a_result_03_cannot_express_is_down_converted_not_an_error(
    make_client: Any,
) -> None:
    async def markdown(context: RequestContext) -> Part:
        return Part(text="# title", media_type="text/markdown")

    svc = A2AService(markdown, make_card())
    client = make_client(create_app(svc))
    r = await call(client, rpc("message/send", {"message": v03_message()}))
    assert r.status_code == 200
    part = r.json()["result"]["artifacts"][0]["parts"][0]
    assert part["metadata"] == {"a2a.v1": {"mediaType": "text/markdown"}}
    # The same task reads fine in 1.0.
    r = await call(client, rpc("ListTasks", {"includeArtifacts": True}), V10)
    assert r.json()["result"]["tasks"][0]["artifacts"][0]["parts"][0]["mediaType"] == (
        "text/markdown"
    )
    await svc.aclose()


# -- push configs -----------------------------------------------------------------------


async def test_push_config_methods_both_versions(make_client: Any) -> None:
    push = PushNotificationService(allow_private_targets=True)
    card = make_card().model_copy(deep=True)
    card.capabilities.push_notifications = True
    svc = A2AService(echo, card, push=push)
    client = make_client(create_app(svc))
    r = await call(client, rpc("SendMessage", {"message": v10_message()}), V10)
    task_id = r.json()["result"]["task"]["id"]

    config = {"taskId": task_id, "url": "http://127.0.0.1:9/hook", "token": "t"}
    r = await call(client, rpc("CreateTaskPushNotificationConfig", config), V10)
    created = r.json()["result"]
    assert created["taskId"] == task_id
    assert created["id"]
    r = await call(
        client,
        rpc("GetTaskPushNotificationConfig", {"taskId": task_id, "id": created["id"]}),
        V10,
    )
    assert r.json()["result"]["url"] == "http://127.0.0.1:9/hook"
    r = await call(client, rpc("ListTaskPushNotificationConfigs", {"taskId": task_id}), V10)
    assert [c["id"] for c in r.json()["result"]["configs"]] == [created["id"]]

    r = await call(client, rpc("tasks/pushNotificationConfig/list", {"id": task_id}))
    listed = r.json()["result"]
    assert isinstance(listed, list)
    assert listed[0]["taskId"] == task_id
    r = await call(
        client,
        rpc(
            "tasks/pushNotificationConfig/delete",
            {"id": task_id, "pushNotificationConfigId": created["id"]},
        ),
    )
    assert r.json() == {"jsonrpc": "2.0", "id": 1, "result": None}
    r = await call(
        client,
        rpc("DeleteTaskPushNotificationConfig", {"taskId": task_id, "id": created["id"]}),
        V10,
    )
    # Deleting again is idempotent (1.0 kit PUSH-DEL-002): success, an empty result.
    assert r.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    await svc.aclose()


async def test_push_not_supported(client: httpx.AsyncClient) -> None:
    config = {"taskId": "t", "url": "http://127.0.0.1:9/hook"}
    r = await call(client, rpc("CreateTaskPushNotificationConfig", config), V10)
    assert error_of(r)["code"] == -32003


# -- version negotiation --------------------------------------------------------------------


@pytest.mark.parametrize("version", ["99.0", "2.0", "1.1", "0.2", "abc", "1.0.0.0", "-1"])
async def test_unsupported_version(client: httpx.AsyncClient, version: str) -> None:
    r = await call(
        client, rpc("SendMessage", {"message": v10_message()}, rid=5), {"A2A-Version": version}
    )
    assert r.status_code == 200
    assert r.json()["id"] == 5
    err = error_of(r)
    assert err["code"] == -32009
    assert err["data"][0]["reason"] == "VERSION_NOT_SUPPORTED"


@pytest.mark.parametrize(
    ("version", "shape"),
    [
        ("1.0", "1.0"),
        ("1", "1.0"),
        ("1.0.1", "1.0"),
        (" 1.0 ", "1.0"),
        ("0.3", "0.3"),
        ("0.3.0", "0.3"),
        ("", "0.3"),
        (None, "0.3"),
    ],
)
async def test_supported_version_spellings(
    client: httpx.AsyncClient, version: str | None, shape: str
) -> None:
    """Major.Minor; a patch is ignored, a bare major means .0, absent or empty means 0.3.

    Before the method is known, errors take the shape of the requested version:
    1.0 errors carry an ErrorInfo list in ``data``, 0.3 errors do not.
    """
    headers = {"content-type": "application/json"}
    if version is not None:
        headers["A2A-Version"] = version
    r = await client.post("/", content=b"{broken", headers=headers)
    err = error_of(r)
    assert err["code"] == -32700
    assert isinstance(err.get("data"), list) is (shape == "1.0")


# -- envelope errors ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "code", "rid"),
    [
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "GetTask"}, -32600, None),
        ({"jsonrpc": "2.0", "id": [1], "method": "GetTask"}, -32600, None),
        ({"jsonrpc": "2.0", "id": True, "method": "GetTask"}, -32600, None),
        ({"jsonrpc": "1.0", "id": 3, "method": "GetTask"}, -32600, 3),
        ({"id": 3, "method": "GetTask", "params": {"id": "x"}}, -32600, 3),
        ({"jsonrpc": 2.0, "id": 3, "method": "GetTask"}, -32600, 3),
        ({"jsonrpc": "2.0", "id": 3, "method": 12}, -32600, 3),
        ({"jsonrpc": "2.0", "id": 3}, -32600, 3),
        ({"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": [1]}, -32602, 3),
        ({"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": "x"}, -32602, 3),
        ({"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {}}, -32602, 3),
        ({"jsonrpc": "2.0", "id": 3, "method": "GetTask"}, -32602, 3),
        ({"jsonrpc": "2.0", "id": 3, "method": "NoSuchThing", "params": {}}, -32601, 3),
        ({"jsonrpc": "2.0", "id": 3, "method": "tasks/nothing", "params": {}}, -32601, 3),
        ([{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}], -32600, None),
        ([], -32600, None),
        (42, -32600, None),
        ("text", -32600, None),
        (None, -32600, None),
    ],
)
async def test_envelope_errors(client: httpx.AsyncClient, body: Any, code: int, rid: Any) -> None:
    r = await client.post("/", content=json.dumps(body), headers=V10)
    assert r.status_code == 200
    assert error_of(r)["code"] == code
    assert r.json()["id"] == rid


async def test_string_and_float_and_null_ids_are_echoed(client: httpx.AsyncClient) -> None:
    for rid in ("abc", 1.5, None, 0, -3):
        r = await call(client, rpc("GetTask", {"id": "x"}, rid=rid), V10)
        assert r.json()["id"] == rid


@pytest.mark.parametrize("raw", [b"{bad", b"", b"\xff\xfe", b'{"a": 1', b"[1,]", b"NaN"])
async def test_parse_errors(client: httpx.AsyncClient, raw: bytes) -> None:
    r = await client.post("/", content=raw, headers={"content-type": "application/json"})
    assert r.status_code == 200
    assert error_of(r)["code"] == -32700
    assert r.json()["id"] is None


async def test_invalid_params_do_not_echo_input(client: httpx.AsyncClient) -> None:
    secret = "s3cr3t-value"
    params = {"message": {"role": secret, "parts": [], "messageId": "m"}}
    err = error_of(await call(client, rpc("SendMessage", params), V10))
    assert err["code"] == -32602
    assert secret not in json.dumps(err)


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]
)
async def test_wrong_content_type(client: httpx.AsyncClient, content_type: str) -> None:
    payload = str(rpc("SendMessage", {"message": v10_message()})).encode()  # not even JSON
    r = await client.post("/", content=payload, headers={"content-type": content_type, **V10})
    assert r.status_code == 200
    err = error_of(r)
    assert err["code"] == -32005
    assert err["data"][0]["reason"] == "CONTENT_TYPE_NOT_SUPPORTED"


@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "application/json",
        "application/json; charset=utf-8",
        "application/a2a+json",
        "application/vnd.example+json",
    ],
)
async def test_json_content_types_accepted(
    client: httpx.AsyncClient, content_type: str | None
) -> None:
    headers = dict(V10)
    if content_type is not None:
        headers["content-type"] = content_type
    body = json.dumps(rpc("SendMessage", {"message": v10_message()})).encode()
    r = await client.post("/", content=body, headers=headers)
    assert "task" in r.json()["result"]


async def test_get_is_method_not_allowed(client: httpx.AsyncClient) -> None:
    # (a browser's or curl's GET gets a page instead: test_landing.py)
    r = await client.get("/", headers={"accept": "application/json"})
    assert r.status_code == 405
    assert r.headers["allow"] == "POST"
    assert error_of(r)["code"] == -32600


# -- notifications ----------------------------------------------------------------------------


async def test_notification_runs_and_answers_204(
    client: httpx.AsyncClient, service: A2AService
) -> None:
    body = {"jsonrpc": "2.0", "method": "SendMessage", "params": {"message": v10_message()}}
    r = await call(client, body, V10)
    assert r.status_code == 204
    assert r.content == b""
    page = await service.list_tasks(ListTasksRequest(), ServerCallContext())
    assert len(page.tasks) == 1


async def test_failing_notification_is_still_204(client: httpx.AsyncClient) -> None:
    body = {"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "missing"}}
    r = await call(client, body, V10)
    assert r.status_code == 204
    assert r.content == b""


async def test_notification_with_bad_envelope_is_answered(client: httpx.AsyncClient) -> None:
    r = await call(client, {"jsonrpc": "1.0", "method": "GetTask"}, V10)
    assert r.status_code == 200
    assert error_of(r)["code"] == -32600


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"jsonrpc": "2.0", "method": "message/ssend", "params": {}}, -32601),
        ({"jsonrpc": "2.0", "method": "message/send", "params": {"": "not_a_dict"}}, -32602),
    ],
)
async def test_notification_that_cannot_run_gets_its_error(
    client: httpx.AsyncClient, body: dict[str, Any], code: int
) -> None:
    """Unknown method or invalid params: nothing ran, so the error is answered (id null)."""
    r = await call(client, body)
    assert r.status_code == 200
    assert r.json()["id"] is None
    assert error_of(r)["code"] == code


async def test_streaming_notification_starts_the_work(
    waiting: tuple[A2AService, WaitingAgent], make_client: Any
) -> None:
    svc, agent = waiting
    client = make_client(create_app(svc))
    body = {
        "jsonrpc": "2.0",
        "method": "SendStreamingMessage",
        "params": {"message": v10_message()},
    }
    r = await call(client, body, V10)
    assert r.status_code == 204
    await asyncio.sleep(0.05)
    assert agent.started == 1
    assert svc.manager.bus.subscriber_count() == 0


# -- limits ---------------------------------------------------------------------------------


async def test_declared_body_over_limit_is_413(make_client: Any, service: A2AService) -> None:
    client = make_client(create_app(service, max_body_bytes=1000))
    big = rpc("SendMessage", {"message": v10_message("x" * 2000)})
    r = await call(client, big, V10)
    assert r.status_code == 413
    assert r.headers["connection"] == "close"
    assert error_of(r)["code"] == -32600
    assert r.json()["id"] is None


async def test_streamed_body_over_limit_stops_keeping_it_and_drains_a_bounded_rest(
    make_client: Any, service: A2AService
) -> None:
    client = make_client(create_app(service, max_body_bytes=1 << 20))
    sent = 0

    async def endless() -> AsyncIterator[bytes]:
        nonlocal sent
        chunk = b" " * 65536
        while True:
            sent += 1
            yield chunk

    r = await client.post("/", content=endless(), headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert error_of(r)["code"] == -32600
    # Kept: 1 MiB in 64 KiB chunks plus the one that crossed the line; then discarded
    # up to the drain bound (never kept), so the client can read the 413.
    assert sent <= 18 + DRAIN_MAX_BYTES // 65536 + 2


async def test_body_within_limit_is_accepted(make_client: Any, service: A2AService) -> None:
    client = make_client(create_app(service, max_body_bytes=4000))
    r = await call(client, rpc("SendMessage", {"message": v10_message("x" * 2000)}), V10)
    assert r.status_code == 200
    assert "task" in r.json()["result"]


async def test_nesting_over_depth_limit(make_client: Any, service: A2AService) -> None:
    client = make_client(create_app(service, limits=DecodeLimits(max_depth=16)))
    deep: Any = "x"
    for _ in range(40):
        deep = {"k": deep}
    params = {"message": v10_message(), "metadata": deep}
    r = await call(client, rpc("SendMessage", params, rid=4), V10)
    assert r.status_code == 200
    assert error_of(r)["code"] == -32600


async def test_very_deep_document_is_rejected_quickly(client: httpx.AsyncClient) -> None:
    raw = b"[" * 100_000 + b"]" * 100_000
    r = await client.post("/", content=raw, headers={"content-type": "application/json"})
    assert r.status_code == 200
    assert error_of(r)["code"] in (-32600, -32700)


async def test_too_many_parts(make_client: Any, service: A2AService) -> None:
    client = make_client(create_app(service, limits=DecodeLimits(max_parts=4)))
    message = v10_message()
    message["parts"] = [{"text": str(i)} for i in range(10)]
    r = await call(client, rpc("SendMessage", {"message": message}), V10)
    assert r.status_code == 413
    assert error_of(r)["code"] == -32600


# -- failures inside the server ------------------------------------------------------------


class ExplodingService(A2AService):
    """A service whose operations fail with a non-A2A exception."""

    async def handle(self, op: Operation, request: BaseModel, call: ServerCallContext) -> Any:
        raise RuntimeError("secret internal detail")

    async def open_stream(
        self, op: Operation, request: BaseModel, call: ServerCallContext
    ) -> ServerStream:
        raise RuntimeError("secret internal detail")


async def test_unexpected_exception_is_a_safe_internal_error(
    make_client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    svc = ExplodingService(echo, make_card())
    client = make_client(create_app(svc))
    r = await call(client, rpc("GetTask", {"id": "x"}, rid=9), V10)
    assert r.status_code == 200
    err = error_of(r)
    assert err["code"] == -32603
    assert "secret" not in r.text
    assert r.json()["id"] == 9
    assert any("secret internal detail" in (rec.exc_text or "") for rec in caplog.records) or any(
        rec.exc_info for rec in caplog.records
    )
    r = await call(client, rpc("SendStreamingMessage", {"message": v10_message()}), V10)
    assert error_of(r)["code"] == -32603
    assert "secret" not in r.text
    await svc.aclose()


async def test_stream_error_is_plain_json_for_v10_even_when_client_reads_sse(
    client: httpx.AsyncClient,
) -> None:
    """A 1.0 stream that never started is a plain JSON-RPC error (the 1.0 kit's STREAM-SUB-003)."""
    headers = {**V10, "accept": "text/event-stream"}
    r = await call(client, rpc("SubscribeToTask", {"id": "missing"}, rid="s"), headers)
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert r.json()["id"] == "s"
    assert error_of(r)["code"] == -32001


async def test_stream_error_as_sse_for_v03_clients_that_read_sse(
    client: httpx.AsyncClient,
) -> None:
    """0.3 SSE clients can read nothing but an event stream: the error comes as one event."""
    headers = {"accept": "text/event-stream"}
    r = await call(client, rpc("tasks/resubscribe", {"id": "missing"}, rid="s"), headers)
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/event-stream"
    events = parse_sse(r.text)
    assert len(events) == 1
    assert events[0]["id"] == "s"
    assert events[0]["error"]["code"] == -32001
    assert "not found" in events[0]["error"]["message"]


async def test_stream_error_as_json_for_clients_that_do_not_read_sse(
    client: httpx.AsyncClient,
) -> None:
    r = await call(client, rpc("tasks/resubscribe", {"id": "missing"}))
    assert r.headers["content-type"] == "application/json"
    assert error_of(r)["code"] == -32001


async def test_streaming_unsupported_is_a_json_error(make_client: Any) -> None:
    svc = A2AService(echo, make_card(streaming=False), streaming=False)
    client = make_client(create_app(svc))
    r = await call(client, rpc("SendStreamingMessage", {"message": v10_message()}), V10)
    assert error_of(r)["code"] == -32004
    await svc.aclose()
