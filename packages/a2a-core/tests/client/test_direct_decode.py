"""The clients' direct decode answers exactly as the general one.

A 1.0 result is validated into its model straight from the response bytes
(``_fast_result`` of each HTTP transport) and steps aside, to parsing and then
validating, for anything unusual. Each case here is answered by a real server on
127.0.0.1 twice: once as shipped, once with the direct path switched off. The
decoded models, or the error type, code and message, must be the same; valid
results must actually take the direct path, and NaN, infinities and numbers out
of a double's range must be refused.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Iterator
from typing import Any

import pytest
from a2a_core import A2AError, InvalidAgentResponseError
from a2a_core.client import A2AClient
from a2a_core.client.transports import jsonrpc as jsonrpc_transport
from a2a_core.client.transports import rest as rest_transport
from a2a_core.types import (
    CancelTaskRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    SendMessageRequest,
)
from a2a_core.wire import DEFAULT_LIMITS, Operation, dumps
from pydantic import BaseModel
from servers import read_body, respond, running, scripted_card

TIMESTAMPED = {"state": "TASK_STATE_WORKING", "timestamp": "2026-01-01T10:00:00.123+02:00"}
MESSAGE = {
    "messageId": "m1",
    "contextId": "c1",
    "taskId": "t1",
    "role": "ROLE_AGENT",
    "parts": [{"text": 'caf\u00e9 \u2713\n"quoted"'}],
    "referenceTaskIds": ["t0"],
    "extensions": ["urn:ext:a"],
    "metadata": {"k": [1, 2.5, None, True, {"deep": "x"}]},
}
FULL_TASK = {
    "id": "t1",
    "contextId": "c1",
    "status": TIMESTAMPED,
    "artifacts": [
        {
            "artifactId": "a1",
            "name": "result",
            "description": "all kinds of parts",
            "parts": [
                {"text": "x", "mediaType": "text/plain"},
                {"raw": "aGVsbG8=", "filename": "hello.bin", "mediaType": "application/x"},
                {"url": "https://files.test/report.pdf", "mediaType": "application/pdf"},
                {"data": {"rows": [[1, 2], [3, 4]], "ok": False}, "metadata": {"m": 1}},
            ],
            "metadata": {"size": 5},
        }
    ],
    "history": [MESSAGE],
    "metadata": {
        "int": 7,
        "big": 123456789012345678901234567890,
        "float": 1.5,
        "neg": -0.0,
        "unicode": "\u65e5\u672c \U0001f600",
        "list": [[], {}, [None]],
    },
}
CONFIG = {
    "id": "p1",
    "taskId": "t1",
    "url": "https://hook.test/x",
    "token": "tok",
    "authentication": {"scheme": "Bearer", "credentials": "secret"},
}

Call = tuple[Operation, BaseModel]
SEND = (Operation.SEND_MESSAGE, SendMessageRequest(message=Message.user("hi")))
GET = (Operation.GET_TASK, GetTaskRequest(id="t1"))
CANCEL = (Operation.CANCEL_TASK, CancelTaskRequest(id="t1"))
LIST = (Operation.LIST_TASKS, ListTasksRequest())
GET_CONFIG = (
    Operation.GET_PUSH_CONFIG,
    GetTaskPushNotificationConfigRequest(task_id="t1", id="p1"),
)
LIST_CONFIGS = (Operation.LIST_PUSH_CONFIGS, ListTaskPushNotificationConfigsRequest(task_id="t1"))
CARD = (Operation.GET_EXTENDED_CARD, GetExtendedAgentCardRequest())


def _with_metadata(value: bytes) -> bytes:
    return b'{"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}, ' + (
        b'"metadata": {"x": [1, ' + value + b"]}}"
    )


VALID: dict[str, tuple[Call, bytes]] = {
    "full task": (GET, dumps(FULL_TASK)),
    "minimal task": (GET, dumps({"id": "t1", "contextId": "c1", "status": {"state": 3}})),
    "sent task": (SEND, dumps({"task": FULL_TASK})),
    "sent message": (SEND, dumps({"message": MESSAGE})),
    "canceled task": (CANCEL, dumps({**FULL_TASK, "status": {"state": "TASK_STATE_CANCELED"}})),
    "task page": (LIST, dumps({"tasks": [FULL_TASK], "nextPageToken": "n", "pageSize": 1})),
    "push config": (GET_CONFIG, dumps(CONFIG)),
    "push configs": (LIST_CONFIGS, dumps({"configs": [CONFIG, {"url": "https://h.test"}]})),
    "extended card": (CARD, dumps(scripted_card())),
    "unknown members": (GET, dumps({**FULL_TASK, "futureField": {"a": 1}, "kind": "task"})),
    "escapes and spaces": (
        GET,
        b'\n { "id" : "t\\u0031", "contextId":"c\\/1",\t"status": {"state": '
        b'"TASK_STATE_COMPLETED"}, "metadata": {"e": "\\ud83d\\ude00", "n": 2E+2} }\r\n',
    ),
    "repeated member": (
        GET,
        b'{"id": "t0", "id": "t1", "contextId": "c1", "status": {"state": 3}}',
    ),
    "large finite numbers": (GET, _with_metadata(b"1e308, -1.5E+300, 1e-400, 9" + b"0" * 200)),
    "many containers": (LIST, dumps({"tasks": [FULL_TASK] * 3, "nextPageToken": ""})),
}
STEPS_ASIDE = {"large finite numbers", "many containers"}
"""Valid results the direct path leaves to the general one: a 3+ digit exponent (which may
overflow), more containers than the depth bound (which may nest too deep)."""

REFUSED: dict[str, tuple[Call, bytes]] = {
    "NaN": (GET, _with_metadata(b"NaN")),
    "Infinity": (GET, _with_metadata(b"Infinity")),
    "-Infinity": (GET, _with_metadata(b"-Infinity")),
    "1e999": (GET, _with_metadata(b"1e999")),
    "-1E+400 in a message": (SEND, b'{"message": ' + dumps(MESSAGE)[:-1] + b', "n": -1E+400}}'),
    "400 digits": (GET, _with_metadata(b"1" + b"0" * 400 + b".0")),
    "270 digits E40": (GET, _with_metadata(b"1" + b"0" * 269 + b"E40")),
}

MALFORMED: dict[str, tuple[Call, bytes]] = {
    "wrong types": (GET, b'{"id": 5}'),
    "unknown state": (GET, b'{"id": "t1", "contextId": "c1", "status": {"state": "DONE"}}'),
    "bad timestamp": (
        GET,
        b'{"id": "t1", "contextId": "c1", '
        b'"status": {"state": "TASK_STATE_COMPLETED", "timestamp": "yesterday"}}',
    ),
    "two contents in a part": (
        GET,
        dumps(
            {**FULL_TASK, "artifacts": [{"artifactId": "a", "parts": [{"text": "x", "url": "u"}]}]}
        ),
    ),
    "empty part": (GET, dumps({**FULL_TASK, "artifacts": [{"artifactId": "a", "parts": [{}]}]})),
    "bad base64": (
        GET,
        dumps({**FULL_TASK, "artifacts": [{"artifactId": "a", "parts": [{"raw": "*"}]}]}),
    ),
    "neither task nor message": (SEND, b"{}"),
    "both task and message": (SEND, dumps({"task": FULL_TASK, "message": MESSAGE})),
    "a list": (GET, b"[]"),
    "a string": (GET, b'"t1"'),
    "blank": (GET, b"  "),
    "truncated": (GET, dumps(FULL_TASK)[:-7]),
    "lone surrogate": (GET, _with_metadata(b'"\\ud800"')),
    "too deep": (GET, _with_metadata(b"[" * 200 + b"]" * 200)),
    "bad page size": (LIST, b'{"tasks": [], "nextPageToken": "", "pageSize": "many"}'),
}


class Canned:
    """A raw ASGI app answering every request with ``body``: bare (HTTP+JSON) or as the
    result of a JSON-RPC response echoing the request's id."""

    body: bytes = b"{}"

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        request = await read_body(receive)
        answer = self.body
        if scope["path"].endswith("/rpc"):
            start = request.index(b'"id":') + 5
            request_id = request[start : request.index(b",", start)]
            answer = b'{"jsonrpc": "2.0", "id": ' + request_id + b', "result": ' + answer + b"}"
        await respond(send, 200, answer, content_type=b"application/json")


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Canned, str]]:
    app = Canned()
    with running(app) as url:
        yield app, url


Outcome = tuple[str, Any, Any, Any]


async def _outcome(call: Awaitable[Any]) -> Outcome:
    try:
        return ("result", await call, None, None)
    except A2AError as exc:
        return ("error", type(exc), exc.code, exc.message)


async def _both_ways(
    served: tuple[Canned, str], binding: str, case: tuple[Call, bytes], version: str = "1.0"
) -> tuple[Outcome, Outcome]:
    """The client's answer as shipped, then with the direct path switched off."""
    app, url = served
    (op, request), app.body = case
    endpoint = url + ("/rpc" if binding == "JSONRPC" else "/api")
    answers: list[Outcome] = []
    for direct in (True, False):
        with pytest.MonkeyPatch.context() as patch:
            if not direct:
                for module in (jsonrpc_transport, rest_transport):
                    patch.setattr(module, "validate_json_directly", lambda body, limits: False)
            client = A2AClient.for_endpoint(endpoint, binding=binding, version=version, timeout=5)
            async with client:
                answers.append(await _outcome(client.call(op, request)))
    return answers[0], answers[1]


def _takes_direct_path(binding: str, op: Operation, body: bytes) -> bool:
    if binding == "JSONRPC":
        envelope = b'{"jsonrpc": "2.0", "id": 1, "result": ' + body + b"}"
        fast = jsonrpc_transport._fast_result(op, envelope, 1, DEFAULT_LIMITS)  # pyright: ignore[reportPrivateUsage]
        return fast is not jsonrpc_transport._MISSING  # pyright: ignore[reportPrivateUsage]
    fast = rest_transport._fast_result(op, body, DEFAULT_LIMITS)  # pyright: ignore[reportPrivateUsage]
    return fast is not rest_transport._MISSING  # pyright: ignore[reportPrivateUsage]


BINDINGS = ["HTTP+JSON", "JSONRPC"]


@pytest.mark.parametrize("name", VALID)
@pytest.mark.parametrize("binding", BINDINGS)
async def test_valid_results_decode_alike(
    served: tuple[Canned, str], binding: str, name: str
) -> None:
    (op, _), body = case = VALID[name]
    direct, general = await _both_ways(served, binding, case)
    assert direct[0] == "result", direct
    assert direct == general
    assert _takes_direct_path(binding, op, body) == (name not in STEPS_ASIDE)


def test_the_valid_results_mean_what_they_say() -> None:
    """The cases above are read as written (so their equality is not between two
    empty or default models)."""
    op, body = VALID["full task"][0][0], VALID["full task"][1]
    task = rest_transport._fast_result(op, body, DEFAULT_LIMITS)  # pyright: ignore[reportPrivateUsage]
    assert task.artifacts[0].parts[1].raw == b"hello"
    assert task.status.timestamp.utcoffset().total_seconds() == 0
    assert task.history[0].parts[0].text == 'caf\u00e9 \u2713\n"quoted"'
    assert task.metadata["big"] == 123456789012345678901234567890
    assert math.copysign(1.0, task.metadata["neg"]) == -1.0


@pytest.mark.parametrize("case", REFUSED.values(), ids=REFUSED.keys())
@pytest.mark.parametrize("binding", BINDINGS)
async def test_non_finite_and_out_of_range_numbers_are_refused_alike(
    served: tuple[Canned, str], binding: str, case: tuple[Call, bytes]
) -> None:
    direct, general = await _both_ways(served, binding, case)
    assert direct == general
    assert direct[:2] == ("error", InvalidAgentResponseError)
    assert "Invalid JSON" in direct[3] or "out of range" in direct[3]


@pytest.mark.parametrize("case", MALFORMED.values(), ids=MALFORMED.keys())
@pytest.mark.parametrize("binding", BINDINGS)
async def test_malformed_results_get_the_same_precise_error(
    served: tuple[Canned, str], binding: str, case: tuple[Call, bytes]
) -> None:
    direct, general = await _both_ways(served, binding, case)
    assert direct == general
    assert direct[:2] == ("error", InvalidAgentResponseError)
    assert direct[3].startswith(("Malformed result from agent: ", "The agent sent invalid JSON"))


V03_TASKS = {
    "JSONRPC": {
        "kind": "task",
        "id": "t1",
        "contextId": "c1",
        "status": {"state": "completed", "timestamp": "2026-01-01T00:00:00Z"},
        "artifacts": [{"artifactId": "a", "parts": [{"kind": "text", "text": "x"}]}],
        "metadata": {"n": 1.5},
    },
    "HTTP+JSON": {
        "id": "t1",
        "contextId": "c1",
        "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-01-01T00:00:00Z"},
        "artifacts": [{"artifactId": "a", "parts": [{"text": "x"}]}],
        "metadata": {"n": 1.5},
    },
}


@pytest.mark.parametrize("kind", ["task", "NaN", "out of range", "malformed"])
@pytest.mark.parametrize("binding", BINDINGS)
async def test_0_3_results_decode_alike(
    served: tuple[Canned, str], binding: str, kind: str
) -> None:
    """0.3 has no direct path: its answers are the general path's either way."""
    body = {
        "task": dumps(V03_TASKS[binding]),
        "NaN": _with_metadata(b"NaN"),
        "out of range": _with_metadata(b"1e999"),
        "malformed": b'{"id": 5}',
    }[kind]
    direct, general = await _both_ways(served, binding, (GET, body), version="0.3")
    assert direct == general
    if kind == "task":
        assert direct[0] == "result"
        assert direct[1].artifacts[0].parts[0].text == "x"
    else:
        assert direct[:2] == ("error", InvalidAgentResponseError)
