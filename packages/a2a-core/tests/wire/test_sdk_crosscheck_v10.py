"""Cross-check the 1.0 codec against the official SDK's generated protobuf types.

Both directions, over a broad generated set:
- what V10Codec emits parses with ``json_format.Parse(..., ignore_unknown_fields=False)``
  into the matching ``a2a_pb2`` message (no unknown field, wrong type or bad enum);
- ``MessageToDict`` of that proto, in every flavour ProtoJSON allows (camelCase or proto
  names, enum names or numbers, with or without default values printed), decodes with
  V10Codec to the same value. Without printed defaults the decoded model equals the
  original exactly; with them it is equal under proto semantics (same proto message).
"""

from __future__ import annotations

import base64
import random
from datetime import UTC, datetime
from typing import Any

import pytest
import strategies as s
from a2a.types import a2a_pb2 as pb
from a2a_core import types as t
from a2a_core.wire import Operation, V10Codec, dumps, loads
from google.protobuf import empty_pb2, json_format
from google.protobuf.message import Message as ProtoMessage
from hypothesis import given, settings
from hypothesis import strategies as st

CODEC = V10Codec()

REQUEST_PROTOS: dict[Operation, type[ProtoMessage]] = {
    Operation.SEND_MESSAGE: pb.SendMessageRequest,
    Operation.SEND_STREAMING_MESSAGE: pb.SendMessageRequest,
    Operation.GET_TASK: pb.GetTaskRequest,
    Operation.LIST_TASKS: pb.ListTasksRequest,
    Operation.CANCEL_TASK: pb.CancelTaskRequest,
    Operation.SUBSCRIBE_TO_TASK: pb.SubscribeToTaskRequest,
    Operation.CREATE_PUSH_CONFIG: pb.TaskPushNotificationConfig,
    Operation.GET_PUSH_CONFIG: pb.GetTaskPushNotificationConfigRequest,
    Operation.LIST_PUSH_CONFIGS: pb.ListTaskPushNotificationConfigsRequest,
    Operation.DELETE_PUSH_CONFIG: pb.DeleteTaskPushNotificationConfigRequest,
    Operation.GET_EXTENDED_CARD: pb.GetExtendedAgentCardRequest,
}
RESULT_PROTOS: dict[Operation, type[ProtoMessage]] = {
    Operation.SEND_MESSAGE: pb.SendMessageResponse,
    Operation.SEND_STREAMING_MESSAGE: pb.StreamResponse,
    Operation.GET_TASK: pb.Task,
    Operation.LIST_TASKS: pb.ListTasksResponse,
    Operation.CANCEL_TASK: pb.Task,
    Operation.SUBSCRIBE_TO_TASK: pb.StreamResponse,
    Operation.CREATE_PUSH_CONFIG: pb.TaskPushNotificationConfig,
    Operation.GET_PUSH_CONFIG: pb.TaskPushNotificationConfig,
    Operation.LIST_PUSH_CONFIGS: pb.ListTaskPushNotificationConfigsResponse,
    Operation.DELETE_PUSH_CONFIG: empty_pb2.Empty,
    Operation.GET_EXTENDED_CARD: pb.AgentCard,
}


def _to_proto(value: Any, proto: type[ProtoMessage]) -> ProtoMessage:
    """Our encoded value, as bytes on the wire, parsed strictly by the SDK's protobuf."""
    return json_format.Parse(dumps(value), proto(), ignore_unknown_fields=False)


def _from_proto(message: ProtoMessage, style: dict[str, bool]) -> Any:
    """The SDK's JSON for ``message`` in one ProtoJSON flavour, through real bytes."""
    as_dict = json_format.MessageToDict(
        message,
        preserving_proto_field_name=style.get("preserving_proto_field_name", False),
        use_integers_for_enums=style.get("use_integers_for_enums", False),
        always_print_fields_with_no_presence=style.get(
            "always_print_fields_with_no_presence", False
        ),
    )
    return loads(dumps(as_dict))


STYLES = st.fixed_dictionaries(
    {
        "preserving_proto_field_name": st.booleans(),
        "use_integers_for_enums": st.booleans(),
        "always_print_fields_with_no_presence": st.booleans(),
    }
)


def _check_same(
    decoded: Any, original: Any, style: dict[str, bool], again: ProtoMessage, first: ProtoMessage
) -> None:
    assert again == first  # equal under proto semantics, always
    if not style["always_print_fields_with_no_presence"]:
        assert decoded == original  # and exactly equal when defaults are left out


@pytest.mark.parametrize("op", list(Operation), ids=str)
@settings(max_examples=100)
@given(data=st.data(), style=STYLES)
def test_requests(op: Operation, data: st.DataObject, style: dict[str, bool]) -> None:
    request = data.draw(s.requests(op))
    proto = REQUEST_PROTOS[op]
    parsed = _to_proto(CODEC.encode_request(op, request), proto)
    decoded = CODEC.decode_request(op, _from_proto(parsed, style))
    again = _to_proto(CODEC.encode_request(op, decoded), proto)
    _check_same(decoded, request, style, again, parsed)


@pytest.mark.parametrize("op", list(Operation), ids=str)
@settings(max_examples=100)
@given(data=st.data(), style=STYLES)
def test_results(op: Operation, data: st.DataObject, style: dict[str, bool]) -> None:
    result = data.draw(s.results(op))
    proto = RESULT_PROTOS[op]
    parsed = _to_proto(CODEC.encode_result(op, result), proto)
    decoded = CODEC.decode_result(op, _from_proto(parsed, style))
    again = _to_proto(CODEC.encode_result(op, decoded), proto)
    _check_same(decoded, result, style, again, parsed)


@settings(max_examples=150)
@given(event=s.events(), style=STYLES)
def test_stream_events(event: t.StreamEvent, style: dict[str, bool]) -> None:
    parsed = _to_proto(CODEC.encode_event(event), pb.StreamResponse)
    assert (
        parsed.WhichOneof("payload")
        == {
            t.Task: "task",
            t.Message: "message",
            t.TaskStatusUpdateEvent: "status_update",
            t.TaskArtifactUpdateEvent: "artifact_update",
        }[type(event)]
    )
    decoded = CODEC.decode_event(_from_proto(parsed, style))
    again = _to_proto(CODEC.encode_event(decoded), pb.StreamResponse)
    _check_same(decoded, event, style, again, parsed)


@settings(max_examples=150)
@given(card=s.agent_cards(), style=STYLES)
def test_agent_cards(card: t.AgentCard, style: dict[str, bool]) -> None:
    parsed = _to_proto(CODEC.encode_card(card), pb.AgentCard)
    decoded = CODEC.decode_card(_from_proto(parsed, style))
    again = _to_proto(CODEC.encode_card(decoded), pb.AgentCard)
    _check_same(decoded, card, style, again, parsed)


@pytest.mark.parametrize(
    ("model", "strategy", "proto"),
    [
        (t.Part, s.parts(), pb.Part),
        (t.Message, s.messages(), pb.Message),
        (t.Artifact, s.artifacts(), pb.Artifact),
        (t.TaskStatus, s.task_statuses(), pb.TaskStatus),
        (t.SecurityScheme, s.security_schemes(), pb.SecurityScheme),
    ],
    ids=lambda x: getattr(x, "__name__", ""),
)
@settings(max_examples=100)
@given(data=st.data(), style=STYLES)
def test_parts_of_the_model(
    model: type[t.A2AModel],
    strategy: Any,
    proto: type[ProtoMessage],
    data: st.DataObject,
    style: dict[str, bool],
) -> None:
    value = data.draw(strategy)
    parsed = _to_proto(value, proto)
    decoded = model.model_validate(_from_proto(parsed, style))
    _check_same(decoded, value, style, _to_proto(decoded, proto), parsed)


# specific values, checked against the proto field by field ---------------------------


def test_one_mib_raw_part_matches_sdk_bytes() -> None:
    blob = random.Random(11).randbytes(1024 * 1024)
    parsed = _to_proto(t.Part(raw=blob, media_type="application/octet-stream"), pb.Part)
    assert isinstance(parsed, pb.Part)
    assert parsed.raw == blob
    sdk_json = _from_proto(parsed, {})
    assert sdk_json["raw"] == base64.b64encode(blob).decode()
    assert t.Part.model_validate(sdk_json).raw == blob


@pytest.mark.parametrize(
    ("value", "seconds", "nanos"),
    [
        (datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC), 1714979289, 0),
        (datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=UTC), 1714979289, 123_000_000),
        (datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC), 1714979289, 123_456_000),
        (datetime(1970, 1, 1, tzinfo=UTC), 0, 0),
    ],
)
def test_timestamps_match_sdk(value: datetime, seconds: int, nanos: int) -> None:
    parsed = _to_proto(t.TaskStatus(state=t.TaskState.WORKING, timestamp=value), pb.TaskStatus)
    assert isinstance(parsed, pb.TaskStatus)
    assert (parsed.timestamp.seconds, parsed.timestamp.nanos) == (seconds, nanos)
    decoded = t.TaskStatus.model_validate(_from_proto(parsed, {}))
    assert decoded.timestamp == value


def test_sdk_nanosecond_timestamp_is_truncated_to_microseconds() -> None:
    status = pb.TaskStatus(state=pb.TASK_STATE_WORKING)
    status.timestamp.seconds = 1714979289
    status.timestamp.nanos = 123_456_789
    decoded = t.TaskStatus.model_validate(_from_proto(status, {}))
    assert decoded.timestamp == datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)


@pytest.mark.parametrize("state", [s for s in t.TaskState])
def test_enum_numbers_match_sdk(state: t.TaskState) -> None:
    assert pb.TaskState.Value(state.value) == state.number


@pytest.mark.parametrize("role", list(t.Role))
def test_role_numbers_match_sdk(role: t.Role) -> None:
    assert pb.Role.Value(role.value) == role.number


def test_data_part_scalars_match_sdk_value() -> None:
    for value, kind in [
        (0, "number_value"),
        (False, "bool_value"),
        ("", "string_value"),
        ([], "list_value"),
        ({}, "struct_value"),
    ]:
        parsed = _to_proto(t.Part(data=value), pb.Part)
        assert isinstance(parsed, pb.Part)
        assert parsed.HasField("data")
        assert parsed.data.WhichOneof("kind") == kind


def test_sdk_built_task_decodes() -> None:
    """A task built with the SDK's own proto API (not from our encoder)."""
    task = pb.Task(id="t-1", context_id="c-1")
    task.status.state = pb.TASK_STATE_INPUT_REQUIRED
    task.status.timestamp.FromDatetime(datetime(2025, 1, 2, 3, 4, 5, 600000))
    msg = task.history.add(message_id="m-1", role=pb.ROLE_USER)
    msg.parts.add(text="hello 𝄞")
    msg.parts.add(raw=b"\x00\x01", media_type="application/octet-stream", filename="b.bin")
    msg.parts.add(url="https://x.example/f.png")
    data_part = msg.parts.add()
    data_part.data.struct_value.update({"k": [1, "two", None]})
    art = task.artifacts.add(artifact_id="a-1", name="out")
    art.parts.add(text="result")
    task.metadata.update({"trace": {"id": "abc"}})
    decoded = CODEC.decode_result(Operation.GET_TASK, _from_proto(task, {}))
    assert decoded == t.Task(
        id="t-1",
        context_id="c-1",
        status=t.TaskStatus(
            state=t.TaskState.INPUT_REQUIRED,
            timestamp=datetime(2025, 1, 2, 3, 4, 5, 600000, tzinfo=UTC),
        ),
        history=[
            t.Message(
                message_id="m-1",
                role=t.Role.USER,
                parts=[
                    t.Part(text="hello 𝄞"),
                    t.Part(
                        raw=b"\x00\x01", media_type="application/octet-stream", filename="b.bin"
                    ),
                    t.Part(url="https://x.example/f.png"),
                    t.Part(data={"k": [1, "two", None]}),
                ],
            )
        ],
        artifacts=[t.Artifact(artifact_id="a-1", name="out", parts=[t.Part(text="result")])],
        metadata={"trace": {"id": "abc"}},
    )
