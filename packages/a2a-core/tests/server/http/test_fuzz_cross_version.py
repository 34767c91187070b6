"""Client input never makes a 5xx or an internal error, across versions and bindings.

A seeded campaign over a real socket (``running_server``): odd and malformed
messages are stored through 1.0 (JSON-RPC and HTTP+JSON, with and without a
tenant), then every stored task and push config is read back through all four
version x binding pairs; malformed bodies go to every endpoint. A task stored
with a 1.0-only shape must stay readable over 0.3 (see
``a2a_core.wire._v03_downgrade``).
"""

from __future__ import annotations

import base64
import json
import random
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from a2a_core.compose.serve import running_server
from a2a_core.types import AgentCapabilities
from a2a_core.wire._v03_downgrade import V1_KEY
from a2a_http_support import V10, echo, make_card

pytestmark = pytest.mark.timeout(240)

SEED = 20261201
STORES = 300
MALFORMED = 400
HOOK = "http://127.0.0.1:9/hook"  # loopback discard port: nothing is ever delivered

JUNK: list[Any] = [None, True, 0, -1, 1e308, 2**70, "", "x" * 50, [], {}, [1, "a"], {"k": [None]}]


def card() -> Any:
    return make_card().model_copy(
        update={"capabilities": AgentCapabilities(streaming=True, push_notifications=True)}
    )


@dataclass
class Tally:
    sent: int = 0
    server_errors: list[str] = field(default_factory=list[str])
    internal_errors: list[str] = field(default_factory=list[str])

    def check(self, what: str, response: httpx.Response) -> Any:
        self.sent += 1
        if response.status_code >= 500:
            self.server_errors.append(f"{what}: {response.status_code} {response.text[:200]}")
        try:
            body = response.json()
        except ValueError:
            return None
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and error.get("code") == -32603:
            self.internal_errors.append(f"{what}: {response.text[:200]}")
        return body


def odd_part(rng: random.Random) -> Any:
    kind = rng.randrange(12) if rng.random() < 0.15 else rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 11])
    if kind == 0:
        return {"text": "plain"}
    if kind == 1:
        return {"text": "# md", "mediaType": "text/markdown", "filename": "notes.md"}
    if kind == 2:
        return {"data": {"k": rng.choice(JUNK)}}
    if kind == 3:
        return {"data": rng.choice([[1, 2, {"a": None}], "a string", 42, 3.5, True, False, []])}
    if kind == 4:
        return {"data": {"k": 1}, "mediaType": "application/vnd.x+json", "filename": "d.json"}
    if kind == 5:
        return {"raw": base64.b64encode(b"\x00\x01bytes").decode(), "filename": "b.bin"}
    if kind == 6:
        return {"url": "https://files.example/f.pdf", "mediaType": "application/pdf"}
    if kind == 7:
        return {"text": "t", "metadata": rng.choice([{"a": 1}, {V1_KEY: "clash"}, JUNK])}
    if kind == 8:
        return {}  # no content
    if kind == 9:
        return {"text": "a", "data": {}}  # two contents
    if kind == 10:
        return rng.choice(JUNK)
    return {"data": rng.choice([None, "", 0, [None]])}


def odd_message(rng: random.Random, index: int) -> Any:
    if rng.random() < 0.05:
        return rng.choice(JUNK)
    message: dict[str, Any] = {
        "messageId": f"m-{index}" if rng.random() < 0.9 else rng.choice(JUNK),
        "role": rng.choice(["ROLE_USER"] * 8 + ["ROLE_AGENT", "ROLE_UNSPECIFIED", "user", 0, 7]),
        "parts": [odd_part(rng) for _ in range(rng.randint(0, 3))] or [{"text": "x"}],
    }
    if rng.random() < 0.4:
        message["referenceTaskIds"] = rng.choice([["t-a", "t-b"], [], ["x"] * 3, "t", [1]])
    if rng.random() < 0.3:
        message["metadata"] = rng.choice([{"a": {"b": [1]}}, {V1_KEY: {"x": 1}}, "m", [1]])
    if rng.random() < 0.2:
        message["extensions"] = rng.choice([["urn:x"], "urn:x", [None]])
    return message


@dataclass
class Stored:
    task_id: str
    tenant: str | None


async def store(
    http: httpx.AsyncClient, tally: Tally, rng: random.Random, index: int
) -> Stored | None:
    message = odd_message(rng, index)
    tenant = rng.choice([None, None, "acme"])
    params: dict[str, Any] = {"message": message}
    if rng.random() < 0.3:
        params["configuration"] = {"returnImmediately": rng.random() < 0.5}
    if rng.random() < 0.5:
        if tenant is not None:
            params["tenant"] = tenant
        body = {"jsonrpc": "2.0", "id": index, "method": "SendMessage", "params": params}
        answer = tally.check("store 1.0 jsonrpc", await http.post("/", json=body, headers=V10))
        result = answer.get("result") if isinstance(answer, dict) else None
    else:
        path = f"/{tenant}/message:send" if tenant else "/message:send"
        result = tally.check("store 1.0 rest", await http.post(path, json=params, headers=V10))
    task = result.get("task") if isinstance(result, dict) else None
    if not isinstance(task, dict) or not isinstance(task.get("id"), str):
        return None
    return Stored(task["id"], tenant)


async def add_push_config(http: httpx.AsyncClient, tally: Tally, stored: Stored) -> None:
    params: dict[str, Any] = {"taskId": stored.task_id, "url": HOOK, "token": "tok"}
    params["tenant"] = stored.tenant or "acme"  # a tenant even where the task has none
    body = {"jsonrpc": "2.0", "id": 1, "method": "CreateTaskPushNotificationConfig"}
    tally.check(
        "push 1.0 jsonrpc", await http.post("/", json={**body, "params": params}, headers=V10)
    )
    path = f"/{params['tenant']}/tasks/{stored.task_id}/pushNotificationConfigs"
    rest = {"url": HOOK, "id": "rest-config"}
    tally.check("push 1.0 rest", await http.post(path, json=rest, headers=V10))


async def read_everywhere(http: httpx.AsyncClient, tally: Tally, stored: Stored) -> list[Any]:
    """Read the task and its push configs through 1.0 and 0.3, JSON-RPC and HTTP+JSON."""
    tid = stored.task_id
    prefix = f"/{stored.tenant}" if stored.tenant else ""
    tenant = {"tenant": stored.tenant} if stored.tenant else {}
    answers: list[Any] = []

    def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}

    calls: list[tuple[str, str, str, Any, dict[str, str]]] = [
        ("1.0 jsonrpc get", "POST", "/", rpc("GetTask", {"id": tid, **tenant}), V10),
        ("1.0 rest get", "GET", f"{prefix}/tasks/{tid}", None, V10),
        ("0.3 jsonrpc get", "POST", "/", rpc("tasks/get", {"id": tid}), {}),
        ("0.3 rest get", "GET", f"/v1/tasks/{tid}", None, {}),
        (
            "1.0 jsonrpc list configs",
            "POST",
            "/",
            rpc("ListTaskPushNotificationConfigs", {"taskId": tid, **tenant}),
            V10,
        ),
        (
            "0.3 jsonrpc list configs",
            "POST",
            "/",
            rpc("tasks/pushNotificationConfig/list", {"id": tid}),
            {},
        ),
        (
            "0.3 jsonrpc get config",
            "POST",
            "/",
            rpc("tasks/pushNotificationConfig/get", {"id": tid}),
            {},
        ),
        ("0.3 rest list configs", "GET", f"/v1/tasks/{tid}/pushNotificationConfigs", None, {}),
        (
            "0.3 rest get config",
            "GET",
            f"/v1/tasks/{tid}/pushNotificationConfigs/rest-config",
            None,
            {},
        ),
        (
            "0.3 jsonrpc resend",
            "POST",
            "/",
            rpc(
                "message/send",
                {
                    "message": {
                        "kind": "message",
                        "messageId": "again",
                        "role": "user",
                        "taskId": tid,
                        "parts": [{"kind": "text", "text": "more"}],
                    }
                },
            ),
            {},
        ),
    ]
    for what, method, path, body, headers in calls:
        response = await http.request(method, path, json=body, headers=headers)
        answers.append(tally.check(what, response))
    return answers


MALFORMED_BODIES: list[bytes] = [
    b"",
    b"{",
    b"[]",
    b"null",
    b'"x"',
    b"\xff\xfe\xfa",
    b"[" * 5000 + b"]" * 5000,
    b'{"a":' * 300 + b"1" + b"}" * 300,
    b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","parts":[{"text":1e999999}],"messageId":"m"}}}',
    b'{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","parts":[{"kind":"data","data":[1]}],"messageId":"m"}}}',
]


def malformed(rng: random.Random) -> bytes:
    if rng.random() < 0.3:
        return rng.choice(MALFORMED_BODIES)
    method = rng.choice(
        [
            "SendMessage",
            "message/send",
            "tasks/get",
            "GetTask",
            "tasks/cancel",
            "CancelTask",
            "tasks/pushNotificationConfig/set",
            "CreateTaskPushNotificationConfig",
            "ListTasks",
            "tasks/resubscribe",
            "SubscribeToTask",
            "nope",
        ]
    )
    params: Any = rng.choice(
        [
            odd_message(rng, 0),
            {"message": odd_message(rng, 0)},
            {"id": rng.choice(JUNK)},
            {"taskId": rng.choice(JUNK), "url": rng.choice([HOOK, "ftp://x", 5])},
            {"id": "t", "historyLength": rng.choice(JUNK)},
            rng.choice(JUNK),
        ]
    )
    body = {
        "jsonrpc": rng.choice(["2.0", "2.0", "1.0"]),
        "id": rng.choice([1, "a", None]),
        "method": method,
        "params": params,
    }
    return json.dumps(body).encode()


REST_TARGETS = [
    ("POST", "/message:send"),
    ("POST", "/v1/message:send"),
    ("POST", "/acme/message:send"),
    ("GET", "/tasks/nope"),
    ("GET", "/v1/tasks/nope?historyLength=x"),
    ("POST", "/tasks/nope:cancel"),
    ("POST", "/v1/tasks/nope/pushNotificationConfigs"),
    ("GET", "/tasks?pageSize=-1&status=bad"),
]


async def test_no_5xx_and_no_internal_error_from_client_input() -> None:
    rng = random.Random(SEED)
    tally = Tally()
    stored: list[Stored] = []
    async with (
        running_server(echo, card=card(), push=True, allow_private_push_targets=True) as srv,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}", timeout=30) as http,
    ):
        for index in range(STORES):
            found = await store(http, tally, rng, index)
            if found is not None:
                stored.append(found)
                if rng.random() < 0.3:
                    await add_push_config(http, tally, found)
        for item in stored:
            await read_everywhere(http, tally, item)
        for _ in range(MALFORMED):
            body = malformed(rng)
            version = rng.choice([V10, {}, {"A2A-Version": "0.3"}, {"A2A-Version": "9"}])
            if rng.random() < 0.5:
                response = await http.post("/", content=body, headers=version)
            else:
                method, path = rng.choice(REST_TARGETS)
                content = body if method == "POST" else None
                response = await http.request(method, path, content=content, headers=version)
            tally.check("malformed", response)
    print(
        f"\ncross-version campaign: {tally.sent} requests ({len(stored)} tasks stored), "
        f"{len(tally.server_errors)} 5xx, {len(tally.internal_errors)} internal errors"
    )
    assert len(stored) > STORES // 4  # the campaign did store odd shapes
    assert tally.server_errors == []
    assert tally.internal_errors == []


# -- each 1.0-only shape, stored through 1.0 and read over 0.3 ---------------------------------


async def send_v10(http: httpx.AsyncClient, message: dict[str, Any]) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    return await http.post("/", json=body, headers=V10)


def user_message(*parts: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"role": "ROLE_USER", "messageId": "m-1", "parts": list(parts), **extra}


async def read_v03(http: httpx.AsyncClient, task_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": task_id}}
    over_rpc = await http.post("/", json=rpc)
    over_rest = await http.get(f"/v1/tasks/{task_id}")
    assert over_rpc.status_code == 200
    assert over_rest.status_code == 200
    assert "error" not in over_rpc.json()
    return over_rpc.json()["result"], over_rest.json()


async def test_data_parts_that_are_not_objects_are_wrapped_over_03() -> None:
    async with (
        running_server(echo, card=make_card()) as srv,
        httpx.AsyncClient(base_url=srv.url) as http,
    ):
        for value in ([1, 2], "text", 7, 2.5, True, False):
            sent = await send_v10(http, user_message({"data": value}))
            task_id = sent.json()["result"]["task"]["id"]
            over_rpc, over_rest = await read_v03(http, task_id)
            rpc_part = over_rpc["history"][0]["parts"][0]
            assert rpc_part["data"] == {"value": value}
            assert rpc_part["metadata"] == {V1_KEY: {"dataWrapped": True}}
            rest_part = over_rest["history"][0]["content"][0]
            assert rest_part["data"]["data"] == {"value": value}
            assert rest_part["metadata"] == {V1_KEY: {"dataWrapped": True}}


async def test_reference_task_ids_and_part_hints_survive_in_metadata_over_03() -> None:
    async with (
        running_server(echo, card=make_card()) as srv,
        httpx.AsyncClient(base_url=srv.url) as http,
    ):
        message = user_message(
            {"text": "# hi", "mediaType": "text/markdown", "filename": "a.md"},
            referenceTaskIds=["t-1", "t-2"],
            metadata={"mine": 1},
        )
        task_id = (await send_v10(http, message)).json()["result"]["task"]["id"]
        over_rpc, over_rest = await read_v03(http, task_id)
        assert over_rpc["history"][0]["referenceTaskIds"] == ["t-1", "t-2"]  # 0.3 JSON-RPC has them
        rest_message = over_rest["history"][0]
        assert rest_message["metadata"] == {"mine": 1, V1_KEY: {"referenceTaskIds": ["t-1", "t-2"]}}
        hints = {V1_KEY: {"filename": "a.md", "mediaType": "text/markdown"}}
        assert over_rpc["history"][0]["parts"][0]["metadata"] == hints
        assert rest_message["content"][0]["metadata"] == hints


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_role_unspecified_is_invalid_params(binding: str) -> None:
    async with (
        running_server(echo, card=make_card()) as srv,
        httpx.AsyncClient(base_url=srv.url) as http,
    ):
        message = {**user_message({"text": "x"}), "role": "ROLE_UNSPECIFIED"}
        if binding == "JSONRPC":
            answer = (await send_v10(http, message)).json()
            assert answer["error"]["code"] == -32602
        else:
            response = await http.post("/message:send", json={"message": message}, headers=V10)
            assert response.status_code == 400


async def test_push_config_created_under_a_tenant_reads_over_03() -> None:
    """Tenants scope tasks: 0.3 (which has none) cannot reach a tenant's config, and says so
    with not-found, never an internal error; the tenant itself reads it back."""
    async with (
        running_server(echo, card=card(), push=True, allow_private_push_targets=True) as srv,
        httpx.AsyncClient(base_url=srv.url) as http,
    ):
        send = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage"}
        params = {"message": user_message({"text": "x"}), "tenant": "acme"}
        sent = await http.post("/", json={**send, "params": params}, headers=V10)
        task_id = sent.json()["result"]["task"]["id"]
        create = {"taskId": task_id, "url": HOOK, "id": "c1", "tenant": "acme"}
        body = {"jsonrpc": "2.0", "id": 1, "method": "CreateTaskPushNotificationConfig"}
        created = await http.post("/", json={**body, "params": create}, headers=V10)
        assert "result" in created.json()
        rpc = {"jsonrpc": "2.0", "id": 2, "method": "tasks/pushNotificationConfig/get"}
        got = await http.post("/", json={**rpc, "params": {"id": task_id}})
        assert got.json()["error"]["code"] == -32001  # not found, not -32603
        listed = await http.get(f"/v1/tasks/{task_id}/pushNotificationConfigs")
        assert listed.status_code == 404
        get10 = {"jsonrpc": "2.0", "id": 3, "method": "GetTaskPushNotificationConfig"}
        mine = {"taskId": task_id, "id": "c1", "tenant": "acme"}
        again = await http.post("/", json={**get10, "params": mine}, headers=V10)
        assert again.json()["result"]["url"] == HOOK
