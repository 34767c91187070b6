"""Invalid input: bad requests are InvalidParamsError, bad peer output InvalidAgentResponseError."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from a2a_core.errors import A2AError, InvalidAgentResponseError, InvalidParamsError
from a2a_core.wire import Operation, V10Codec

CODEC = V10Codec()
SECRET = "s3cr3t-value-never-echoed"


def _send(**message: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    return {"message": {**base, **message}}


BAD_REQUESTS: list[tuple[str, Operation, Any]] = [
    ("part without content", Operation.SEND_MESSAGE, _send(parts=[{"metadata": {"a": 1}}])),
    ("part with text and url", Operation.SEND_MESSAGE, _send(parts=[{"text": "a", "url": "u"}])),
    ("part with raw and data", Operation.SEND_MESSAGE, _send(parts=[{"raw": "AA==", "data": {}}])),
    ("part with data null", Operation.SEND_MESSAGE, _send(parts=[{"data": None}])),
    ("empty parts", Operation.SEND_MESSAGE, _send(parts=[])),
    ("missing parts", Operation.SEND_MESSAGE, {"message": {"messageId": "m", "role": "ROLE_USER"}}),
    ("parts not a list", Operation.SEND_MESSAGE, _send(parts={"text": "x"})),
    ("bad base64", Operation.SEND_MESSAGE, _send(parts=[{"raw": "not base64!"}])),
    ("base64 one char", Operation.SEND_MESSAGE, _send(parts=[{"raw": "A"}])),
    ("non-ascii base64", Operation.SEND_MESSAGE, _send(parts=[{"raw": "ÿÿÿÿ"}])),
    ("raw as number", Operation.SEND_MESSAGE, _send(parts=[{"raw": 12}])),
    ("bad role name", Operation.SEND_MESSAGE, _send(role="ROLE_ROBOT")),
    ("bad role number", Operation.SEND_MESSAGE, _send(role=9)),
    ("role bool", Operation.SEND_MESSAGE, _send(role=True)),
    ("0.3 role", Operation.SEND_MESSAGE, _send(role="user")),
    ("messageId int", Operation.SEND_MESSAGE, _send(messageId=5)),
    (
        "missing messageId",
        Operation.SEND_MESSAGE,
        {"message": {"role": 1, "parts": [{"text": "x"}]}},
    ),
    ("text int", Operation.SEND_MESSAGE, _send(parts=[{"text": 5}])),
    ("metadata list", Operation.SEND_MESSAGE, _send(metadata=[1, 2])),
    ("extensions str", Operation.SEND_MESSAGE, _send(extensions="urn:x")),
    ("missing message", Operation.SEND_MESSAGE, {"configuration": {}}),
    ("message null", Operation.SEND_MESSAGE, {"message": None}),
    (
        "negative historyLength",
        Operation.SEND_MESSAGE,
        {**_send(), "configuration": {"historyLength": -1}},
    ),
    (
        "historyLength fraction",
        Operation.SEND_MESSAGE,
        {**_send(), "configuration": {"historyLength": 1.5}},
    ),
    (
        "returnImmediately list",
        Operation.SEND_MESSAGE,
        {**_send(), "configuration": {"returnImmediately": [True]}},
    ),
    ("params list", Operation.SEND_MESSAGE, [_send()]),
    ("params string", Operation.GET_TASK, "t-1"),
    ("params null", Operation.GET_TASK, None),
    ("missing id", Operation.GET_TASK, {"historyLength": 1}),
    ("id object", Operation.CANCEL_TASK, {"id": {"x": 1}}),
    ("bad state name", Operation.LIST_TASKS, {"status": "TASK_STATE_DONE"}),
    ("bad state number", Operation.LIST_TASKS, {"status": 42}),
    ("pageSize 0", Operation.LIST_TASKS, {"pageSize": 0}),
    ("pageSize 101", Operation.LIST_TASKS, {"pageSize": 101}),
    ("bad timestamp", Operation.LIST_TASKS, {"statusTimestampAfter": "yesterday"}),
    ("timestamp object", Operation.LIST_TASKS, {"statusTimestampAfter": {}}),
    ("includeArtifacts string", Operation.LIST_TASKS, {"includeArtifacts": "maybe"}),
    ("push config without url", Operation.CREATE_PUSH_CONFIG, {"taskId": "t"}),
    (
        "push auth without scheme",
        Operation.CREATE_PUSH_CONFIG,
        {"taskId": "t", "url": "u", "authentication": {"credentials": "c"}},
    ),
    ("get push config without id", Operation.GET_PUSH_CONFIG, {"taskId": "t"}),
    ("delete push config without taskId", Operation.DELETE_PUSH_CONFIG, {"id": "c"}),
    ("list push configs negative", Operation.LIST_PUSH_CONFIGS, {"taskId": "t", "pageSize": -1}),
    ("subscribe without id", Operation.SUBSCRIBE_TO_TASK, {}),
    ("extended card params list", Operation.GET_EXTENDED_CARD, []),
]


@pytest.mark.parametrize(
    ("op", "params"), [(op, p) for _, op, p in BAD_REQUESTS], ids=[n for n, _, _ in BAD_REQUESTS]
)
def test_bad_requests_are_invalid_params(op: Operation, params: Any) -> None:
    before = copy.deepcopy(params)
    with pytest.raises(InvalidParamsError) as info:
        CODEC.decode_request(op, params)
    error = info.value
    assert type(error) is InvalidParamsError
    assert error.code == -32602
    assert error.message.startswith("Invalid parameters")
    assert params == before  # input not mutated


def test_validation_messages_do_not_echo_input() -> None:
    params = _send(role=SECRET, parts=[{"raw": SECRET + "!"}], messageId=[SECRET])
    with pytest.raises(InvalidParamsError) as info:
        CODEC.decode_request(Operation.SEND_MESSAGE, params)
    assert SECRET not in info.value.message
    assert "message.role" in info.value.message  # but says where


def test_validation_message_is_bounded() -> None:
    params = _send(parts=[{"text": i} for i in range(200)])
    with pytest.raises(InvalidParamsError) as info:
        CODEC.decode_request(Operation.SEND_MESSAGE, params)
    assert "and 195 more" in info.value.message
    assert len(info.value.message) < 1000


TASK = {"id": "t", "status": {"state": "TASK_STATE_WORKING"}}
MESSAGE = {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x"}]}

BAD_RESULTS: list[tuple[str, Operation, Any]] = [
    ("send result bare task", Operation.SEND_MESSAGE, TASK),
    ("send result both", Operation.SEND_MESSAGE, {"task": TASK, "message": MESSAGE}),
    ("send result neither", Operation.SEND_MESSAGE, {}),
    ("send result null", Operation.SEND_MESSAGE, None),
    ("send result list", Operation.SEND_MESSAGE, [TASK]),
    ("0.3 style message", Operation.SEND_MESSAGE, {"message": {**MESSAGE, "role": "agent"}}),
    ("task without id", Operation.GET_TASK, {"status": TASK["status"]}),
    ("task without status", Operation.GET_TASK, {"id": "t"}),
    ("task bad state", Operation.CANCEL_TASK, {"id": "t", "status": {"state": "canceled"}}),
    ("task string", Operation.GET_TASK, "t"),
    (
        "task artifact no parts",
        Operation.GET_TASK,
        {**TASK, "artifacts": [{"artifactId": "a", "parts": []}]},
    ),
    ("list tasks not a list", Operation.LIST_TASKS, {"tasks": TASK}),
    ("push config no url", Operation.GET_PUSH_CONFIG, {"taskId": "t", "id": "c"}),
    ("push list bad", Operation.LIST_PUSH_CONFIGS, {"configs": [{"id": "c"}]}),
    ("card missing name", Operation.GET_EXTENDED_CARD, {"description": "d", "version": "1"}),
    ("stream event empty", Operation.SEND_STREAMING_MESSAGE, {}),
    ("stream event two members", Operation.SUBSCRIBE_TO_TASK, {"task": TASK, "message": MESSAGE}),
    ("stream event 0.3 kind", Operation.SUBSCRIBE_TO_TASK, {**TASK, "kind": "task"}),
]


@pytest.mark.parametrize(
    ("op", "value"), [(op, v) for _, op, v in BAD_RESULTS], ids=[n for n, _, _ in BAD_RESULTS]
)
def test_bad_results_are_invalid_agent_response(op: Operation, value: Any) -> None:
    with pytest.raises(InvalidAgentResponseError) as info:
        CODEC.decode_result(op, value)
    assert info.value.code == -32006


BAD_EVENTS: list[Any] = [
    {},
    None,
    [],
    "task",
    {"task": TASK, "statusUpdate": {"taskId": "t", "status": {"state": 1}}},
    {"statusUpdate": {"taskId": "t"}},
    {"artifactUpdate": {"taskId": "t", "artifact": {"artifactId": "a", "parts": [{}]}}},
    {"message": {**MESSAGE, "parts": []}},
    {"taskStatusUpdate": {"taskId": "t", "status": {"state": 1}}},  # the whats-new misnomer
]


@pytest.mark.parametrize("value", BAD_EVENTS)
def test_bad_events_are_invalid_agent_response(value: Any) -> None:
    with pytest.raises(InvalidAgentResponseError):
        CODEC.decode_event(value)


BAD_CARDS: list[Any] = [
    None,
    [],
    {},
    {"name": "n", "description": "d"},
    {"name": "n", "description": "d", "version": 1},
    {"name": "n", "description": "d", "version": "1", "supportedInterfaces": [{"url": "u"}]},
    {"name": "n", "description": "d", "version": "1", "securitySchemes": {"x": {}}},
    {
        "name": "n",
        "description": "d",
        "version": "1",
        "securitySchemes": {"x": {"oauth2SecurityScheme": {"flows": {}}}},
    },
    {"name": "n", "description": "d", "version": "1", "skills": [{"id": "s"}]},
    {"name": "n", "description": "d", "version": "1", "capabilities": {"streaming": "maybe"}},
]


@pytest.mark.parametrize("value", BAD_CARDS)
def test_bad_cards_are_invalid_agent_response(value: Any) -> None:
    with pytest.raises(InvalidAgentResponseError):
        CODEC.decode_card(value)


def test_errors_are_a2a_errors() -> None:
    """The codec never lets a pydantic ValidationError out (it is not an A2AError)."""
    for op, params in ((Operation.GET_TASK, {}), (Operation.SEND_MESSAGE, {"message": 1})):
        with pytest.raises(A2AError):
            CODEC.decode_request(op, params)


OVERFLOWING = "0001-01-01T00:00:00+01:00"


def test_out_of_range_timestamp_request_is_invalid_params() -> None:
    with pytest.raises(InvalidParamsError):
        CODEC.decode_request(Operation.LIST_TASKS, {"statusTimestampAfter": OVERFLOWING})


def test_out_of_range_timestamp_result_is_invalid_agent_response() -> None:
    task = {"id": "t", "status": {"state": 2, "timestamp": OVERFLOWING}}
    with pytest.raises(InvalidAgentResponseError):
        CODEC.decode_result(Operation.GET_TASK, task)
