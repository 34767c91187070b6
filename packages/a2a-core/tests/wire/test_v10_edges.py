"""Edge cases of the 1.0 codec: omitted defaults, unicode, big bytes, both name styles,
enum numbers, timestamps and the wrapping of results and events."""

from __future__ import annotations

import base64
import random
from datetime import UTC, datetime
from typing import Any

import pytest
from a2a_core import types as t
from a2a_core.wire import Operation, V10Codec, dumps, loads

CODEC = V10Codec()
MIB = 1024 * 1024


def _wire(value: Any) -> Any:
    return loads(dumps(value))


def _message(**fields: Any) -> t.Message:
    base: dict[str, Any] = {"message_id": "m-1", "role": t.Role.USER, "parts": [t.Part(text="hi")]}
    return t.Message(**{**base, **fields})


def _send(message: t.Message, **fields: Any) -> t.SendMessageRequest:
    return t.SendMessageRequest(message=message, **fields)


# omitted defaults -----------------------------------------------------------


def test_empty_optional_arrays_are_omitted_and_decode_equal() -> None:
    task = t.Task(
        id="t-1",
        status=t.TaskStatus(state=t.TaskState.WORKING),
        history=[_message(extensions=[], reference_task_ids=[])],
        artifacts=[],
    )
    wire = _wire(CODEC.encode_result(Operation.GET_TASK, task))
    assert wire == {
        "id": "t-1",
        "contextId": "",
        "status": {"state": "TASK_STATE_WORKING"},
        "history": [{"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}],
    }
    decoded = CODEC.decode_result(Operation.GET_TASK, wire)
    assert decoded == task
    assert decoded.artifacts == []
    assert decoded.history[0].extensions == []


def test_empty_optional_collections_of_a_card_are_omitted() -> None:
    card = t.AgentCard(name="a", description="d", version="1", security_schemes={}, signatures=[])
    wire = _wire(CODEC.encode_card(card))
    for key in ("securitySchemes", "securityRequirements", "signatures", "provider", "iconUrl"):
        assert key not in wire
    assert CODEC.decode_card(wire) == card


def test_empty_metadata_is_unset() -> None:
    """An empty Struct is indistinguishable from an unset one on the wire (proto semantics)."""
    request = _send(_message(metadata={}), metadata={})
    wire = _wire(CODEC.encode_request(Operation.SEND_MESSAGE, request))
    assert "metadata" not in wire
    assert "metadata" not in wire["message"]
    decoded = CODEC.decode_request(Operation.SEND_MESSAGE, wire)
    assert isinstance(decoded, t.SendMessageRequest)
    assert decoded.metadata is None


def test_false_booleans_and_zero_history_length() -> None:
    config = t.SendMessageConfiguration(history_length=0, return_immediately=False)
    wire = _wire(
        CODEC.encode_request(Operation.SEND_MESSAGE, _send(_message(), configuration=config))
    )
    assert wire["configuration"] == {"historyLength": 0}  # 0 is set (optional int32), false is not
    decoded = CODEC.decode_request(Operation.SEND_MESSAGE, wire)
    assert isinstance(decoded, t.SendMessageRequest)
    assert decoded.configuration == config


@pytest.mark.parametrize("value", [0, False, "", [], {}, [None], 1.5, "x"])
def test_falsy_data_parts_are_kept(value: Any) -> None:
    part = t.Part(data=value)
    wire = _wire(part)
    assert wire == {"data": value}
    assert t.Part.model_validate(wire) == part


# unicode and bytes ----------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["", "héllo", "中文", "𝄞 😀 🏳️‍🌈", "\u0000\u2028\ud7ff\ue000", "a" * 10000]
)
def test_unicode_text(text: str) -> None:
    request = _send(_message(parts=[t.Part(text=text)], metadata={"𝄞": text}))
    raw = dumps(CODEC.encode_request(Operation.SEND_MESSAGE, request))
    raw.decode("utf-8")  # valid UTF-8 bytes
    decoded = CODEC.decode_request(Operation.SEND_MESSAGE, loads(raw))
    assert decoded == request


def test_one_mib_raw_part() -> None:
    blob = random.Random(7).randbytes(MIB)
    part = t.Part(raw=blob, filename="big.bin", media_type="application/octet-stream")
    request = _send(_message(parts=[part]))
    raw = dumps(CODEC.encode_request(Operation.SEND_MESSAGE, request))
    wire = loads(raw)
    encoded = wire["message"]["parts"][0]["raw"]
    assert encoded == base64.b64encode(blob).decode("ascii")  # standard alphabet, padded
    decoded = CODEC.decode_request(Operation.SEND_MESSAGE, wire)
    assert isinstance(decoded, t.SendMessageRequest)
    assert decoded.message.parts[0].raw == blob
    assert decoded == request


@pytest.mark.parametrize(
    "encoded",
    [
        base64.b64encode(b"\xfb\xff\xfe\x00ab").decode(),  # standard, padded
        base64.b64encode(b"\xfb\xff\xfe\x00ab").decode().rstrip("="),  # unpadded
        base64.urlsafe_b64encode(b"\xfb\xff\xfe\x00ab").decode(),  # URL-safe
        base64.urlsafe_b64encode(b"\xfb\xff\xfe\x00ab").decode().rstrip("="),
    ],
)
def test_base64_variants_accepted(encoded: str) -> None:
    part = t.Part.model_validate({"raw": encoded})
    assert part.raw == b"\xfb\xff\xfe\x00ab"
    assert _wire(part) == {"raw": base64.b64encode(b"\xfb\xff\xfe\x00ab").decode()}


# field names, unknown fields, enums -----------------------------------------

CAMEL = {
    "tenant": "acme",
    "message": {
        "messageId": "m-1",
        "contextId": "c-1",
        "taskId": "t-1",
        "role": "ROLE_AGENT",
        "parts": [{"raw": "AAE=", "mediaType": "image/png", "filename": "a.png"}],
        "referenceTaskIds": ["t-0"],
    },
    "configuration": {
        "acceptedOutputModes": ["text/plain"],
        "historyLength": 3,
        "returnImmediately": True,
        "taskPushNotificationConfig": {"url": "https://hook.example", "token": "tok"},
    },
}
SNAKE = {
    "tenant": "acme",
    "message": {
        "message_id": "m-1",
        "context_id": "c-1",
        "task_id": "t-1",
        "role": "ROLE_AGENT",
        "parts": [{"raw": "AAE=", "media_type": "image/png", "filename": "a.png"}],
        "reference_task_ids": ["t-0"],
    },
    "configuration": {
        "accepted_output_modes": ["text/plain"],
        "history_length": 3,
        "return_immediately": True,
        "task_push_notification_config": {"url": "https://hook.example", "token": "tok"},
    },
}


def test_camel_and_snake_case_decode_equal() -> None:
    camel = CODEC.decode_request(Operation.SEND_MESSAGE, CAMEL)
    snake = CODEC.decode_request(Operation.SEND_MESSAGE, SNAKE)
    assert camel == snake
    assert isinstance(camel, t.SendMessageRequest)
    assert camel.message.parts[0].raw == b"\x00\x01"
    assert camel.configuration is not None
    assert camel.configuration.return_immediately is True
    # and the output is always camelCase
    assert _wire(CODEC.encode_request(Operation.SEND_MESSAGE, snake)) == CAMEL


def test_unknown_fields_are_ignored_at_every_level() -> None:
    noisy = {
        "futureTopLevel": {"x": 1},
        **CAMEL,
        "message": {
            **CAMEL["message"],
            "kind": "message",
            "parts": [{"text": "hi", "kind": "text", "futurePartField": [1, 2]}],
        },
        "configuration": {**CAMEL["configuration"], "blocking": False, "future": None},
    }
    decoded = CODEC.decode_request(Operation.SEND_MESSAGE, noisy)
    assert isinstance(decoded, t.SendMessageRequest)
    assert decoded.message.parts == [t.Part(text="hi")]
    wire = _wire(CODEC.encode_request(Operation.SEND_MESSAGE, decoded))
    assert "futureTopLevel" not in wire
    assert "kind" not in wire["message"]


def test_unknown_fields_in_results_events_and_cards_are_ignored() -> None:
    task = {"id": "t", "status": {"state": "TASK_STATE_COMPLETED", "final": True}, "kind": "task"}
    assert CODEC.decode_result(Operation.GET_TASK, task) == t.Task(
        id="t", status=t.TaskStatus(state=t.TaskState.COMPLETED)
    )
    event = {"statusUpdate": {"taskId": "t", "status": {"state": 2}, "final": False}, "x": 1}
    assert CODEC.decode_event(event) == t.TaskStatusUpdateEvent(
        task_id="t", status=t.TaskStatus(state=t.TaskState.WORKING)
    )
    card = {"name": "n", "description": "d", "version": "1", "url": "http://x", "kind": "card"}
    assert CODEC.decode_card(card).name == "n"


@pytest.mark.parametrize(("number", "state"), [(s.number, s) for s in t.TaskState])
def test_task_state_numbers(number: int, state: t.TaskState) -> None:
    status = t.TaskStatus.model_validate({"state": number})
    assert status.state is state
    assert _wire(status) == {"state": state.value}


@pytest.mark.parametrize(
    ("number", "role"), [(1, t.Role.USER), (2, t.Role.AGENT), (0, t.Role.UNSPECIFIED)]
)
def test_role_numbers(number: int, role: t.Role) -> None:
    message = CODEC.decode_event(
        {"message": {"messageId": "m", "role": number, "parts": [{"text": ""}]}}
    )
    assert isinstance(message, t.Message)
    assert message.role is role


def test_list_tasks_status_number() -> None:
    request = CODEC.decode_request(Operation.LIST_TASKS, {"status": 6, "pageSize": 10})
    assert request == t.ListTasksRequest(status=t.TaskState.INPUT_REQUIRED, page_size=10)


# timestamps -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("2024-05-06T07:08:09.123Z", "2024-05-06T07:08:09.123Z"),
        ("2024-05-06T07:08:09.123456Z", "2024-05-06T07:08:09.123456Z"),
        ("2024-05-06T07:08:09Z", "2024-05-06T07:08:09.000Z"),
        ("2024-05-06T07:08:09.1Z", "2024-05-06T07:08:09.100Z"),
        ("2024-05-06T07:08:09.123456789Z", "2024-05-06T07:08:09.123456Z"),  # ns -> µs
        ("2024-05-06T09:08:09.5+02:00", "2024-05-06T07:08:09.500Z"),
        ("2024-05-06T02:38:09.000001-04:30", "2024-05-06T07:08:09.000001Z"),
        ("2024-12-31T23:30:00-01:00", "2025-01-01T00:30:00.000Z"),
        ("2024-05-06T07:08:09.123z", "2024-05-06T07:08:09.123Z"),
    ],
)
def test_timestamps_normalize_to_utc_z(given: str, expected: str) -> None:
    status = t.TaskStatus.model_validate({"state": "TASK_STATE_WORKING", "timestamp": given})
    assert status.timestamp is not None
    assert status.timestamp.tzinfo is UTC
    assert _wire(status)["timestamp"] == expected
    assert t.TaskStatus.model_validate(_wire(status)) == status


def test_python_timestamps_keep_their_precision() -> None:
    ms = datetime(2030, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    us = datetime(2030, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    naive = datetime(2030, 1, 2, 3, 4, 5)
    request = t.ListTasksRequest(status_timestamp_after=ms)
    assert _wire(request) == {"statusTimestampAfter": "2030-01-02T03:04:05.678Z"}
    assert _wire(t.ListTasksRequest(status_timestamp_after=us)) == {
        "statusTimestampAfter": "2030-01-02T03:04:05.678901Z"
    }
    assert _wire(t.ListTasksRequest(status_timestamp_after=naive)) == {
        "statusTimestampAfter": "2030-01-02T03:04:05.000Z"
    }


# wrapping ---------------------------------------------------------------------


def test_send_message_result_is_wrapped() -> None:
    task = t.Task(id="t", status=t.TaskStatus(state=t.TaskState.SUBMITTED))
    message = _message(role=t.Role.AGENT, context_id="c")
    assert set(_wire(CODEC.encode_result(Operation.SEND_MESSAGE, task))) == {"task"}
    assert set(_wire(CODEC.encode_result(Operation.SEND_MESSAGE, message))) == {"message"}
    assert CODEC.decode_result(Operation.SEND_MESSAGE, {"task": _wire(task)}) == task
    assert CODEC.decode_result(Operation.SEND_MESSAGE, {"message": _wire(message)}) == message


@pytest.mark.parametrize(
    ("event", "key"),
    [
        (t.Task(id="t", status=t.TaskStatus(state=t.TaskState.WORKING)), "task"),
        (_message(), "message"),
        (
            t.TaskStatusUpdateEvent(
                task_id="t", context_id="c", status=t.TaskStatus(state=t.TaskState.FAILED)
            ),
            "statusUpdate",
        ),
        (
            t.TaskArtifactUpdateEvent(
                task_id="t",
                artifact=t.Artifact(artifact_id="a", parts=[t.Part(text="x")]),
                append=True,
            ),
            "artifactUpdate",
        ),
    ],
)
def test_stream_events_use_the_1_0_member_names(event: t.StreamEvent, key: str) -> None:
    for op in (Operation.SEND_STREAMING_MESSAGE, Operation.SUBSCRIBE_TO_TASK):
        wire = _wire(CODEC.encode_result(op, event))
        assert list(wire) == [key]
        assert CODEC.decode_result(op, wire) == event


def test_delete_push_config_result_is_empty_object() -> None:
    assert _wire(CODEC.encode_result(Operation.DELETE_PUSH_CONFIG, None)) == {}
    assert CODEC.decode_result(Operation.DELETE_PUSH_CONFIG, {}) is None


@pytest.mark.parametrize("params", [None, {}])
def test_extended_card_request_accepts_no_params(params: Any) -> None:
    assert (
        CODEC.decode_request(Operation.GET_EXTENDED_CARD, params) == t.GetExtendedAgentCardRequest()
    )


def test_security_scheme_members_use_1_0_names() -> None:
    card = t.AgentCard(
        name="a",
        description="d",
        version="1",
        security_schemes={
            "mtls": t.SecurityScheme(mtls_security_scheme=t.MutualTlsSecurityScheme()),
            "key": t.SecurityScheme(
                api_key_security_scheme=t.APIKeySecurityScheme(location="header", name="X-Key")
            ),
        },
        security_requirements=[
            t.SecurityRequirement(schemes={"key": t.StringList.model_validate({"list": ["a"]})})
        ],
    )
    wire = _wire(CODEC.encode_card(card))
    assert wire["securitySchemes"] == {
        "mtls": {"mtlsSecurityScheme": {}},
        "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}},
    }
    assert wire["securityRequirements"] == [{"schemes": {"key": {"list": ["a"]}}}]
    assert CODEC.decode_card(wire) == card
