"""Cross-check the 0.3 codecs against the official SDK's 0.3 compatibility layer.

JSON-RPC (``V03JsonRpcCodec``, the ``types.ts`` shapes) against the SDK's 0.3
pydantic models (``a2a.compat.v0_3.types``); HTTP+JSON (``V03RestCodec``, 0.3
ProtoJSON) against the SDK's 0.3 protobuf (``a2a.compat.v0_3.a2a_v0_3_pb2``).
For each, over values 0.3 can represent:

- shape: what we emit validates with the SDK's types (for protobuf, strictly:
  no unknown field), and what the SDK makes of it decodes back to the original;
- meaning: the SDK's own 0.3 -> 1.0 conversion of our 0.3 output equals our
  1.0 encoding of the same value, and the SDK's 1.0 -> 0.3 conversion decodes
  with our 0.3 codec to the original (the SDK speaking 0.3 to us).

Known, deliberate differences in how the SDK converts are normalized in one
place (``_sdk_card``), each with its reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest
import strategies as s
from a2a.compat.v0_3 import a2a_v0_3_pb2 as p03
from a2a.compat.v0_3 import conversions as conv
from a2a.compat.v0_3 import proto_utils
from a2a.compat.v0_3 import types as v03
from a2a.types import a2a_pb2 as pb
from a2a_core import types as t
from a2a_core.wire import Operation, V10Codec, dumps, loads
from a2a_core.wire.v03 import V03JsonRpcCodec
from a2a_core.wire.v03_rest import V03RestCodec
from google.protobuf import empty_pb2, json_format
from google.protobuf.message import Message as ProtoMessage
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

JSONRPC = V03JsonRpcCodec()
REST = V03RestCodec()
V10 = V10Codec()
OPS = [op for op in Operation if op is not Operation.LIST_TASKS]  # no 0.3 method or route
EXAMPLES = 100
P = TypeVar("P", bound=ProtoMessage)
SDK_REST = s.Flavor(v03=True, rest=True, raw=False)
"""0.3 REST values whose meaning we compare with the SDK's (raw bytes: see DOUBLE_BASE64)."""


def _wire(value: Any) -> Any:
    return loads(dumps(value))


def _sdk_dump(model: BaseModel) -> Any:
    """What the SDK would put on the wire for one of its 0.3 pydantic models."""
    return _wire(model.model_dump(mode="json", by_alias=True, exclude_none=True))


def _v10_proto(value: Any, proto: type[P]) -> P:
    """Our 1.0 encoding parsed into the SDK's 1.0 protobuf: the meaning to compare with."""
    message = proto()
    json_format.Parse(dumps(value), message)
    return message


def _sdk_card(card: pb.AgentCard) -> pb.AgentCard:
    """The SDK's 0.3 -> 1.0 card, normalized for two known, harmless differences.

    - It tags interfaces with the card's ``protocolVersion`` ("0.3.0"); we tag
      them with the binding version "0.3".
    - It appends every ``additionalInterfaces`` entry after the main interface,
      so the main one (which 0.3 recommends listing there too) appears twice;
      we keep one.
    """
    seen: set[tuple[str, str]] = set()
    kept: list[pb.AgentInterface] = []
    for iface in card.supported_interfaces:
        key = (iface.url, iface.protocol_binding)
        if key not in seen:
            seen.add(key)
            kept.append(
                pb.AgentInterface(
                    url=iface.url, protocol_binding=iface.protocol_binding, protocol_version="0.3"
                )
            )
    out = pb.AgentCard()
    out.CopyFrom(card)
    del out.supported_interfaces[:]
    out.supported_interfaces.extend(kept)
    return out


def _false_is_unset(card: pb.AgentCard) -> pb.AgentCard:
    """The 0.3 proto's capability flags are plain bools: false and unset are one value there."""
    out = pb.AgentCard()
    out.CopyFrom(card)
    for flag in ("streaming", "push_notifications", "extended_agent_card"):
        if out.capabilities.HasField(flag) and not getattr(out.capabilities, flag):
            out.capabilities.ClearField(flag)
    return out


# --- JSON-RPC: requests ------------------------------------------------------------

REQUEST_CLASSES: dict[Operation, type[BaseModel]] = {
    Operation.SEND_MESSAGE: v03.SendMessageRequest,
    Operation.SEND_STREAMING_MESSAGE: v03.SendStreamingMessageRequest,
    Operation.GET_TASK: v03.GetTaskRequest,
    Operation.CANCEL_TASK: v03.CancelTaskRequest,
    Operation.SUBSCRIBE_TO_TASK: v03.TaskResubscriptionRequest,
    Operation.CREATE_PUSH_CONFIG: v03.SetTaskPushNotificationConfigRequest,
    Operation.GET_PUSH_CONFIG: v03.GetTaskPushNotificationConfigRequest,
    Operation.LIST_PUSH_CONFIGS: v03.ListTaskPushNotificationConfigRequest,
    Operation.DELETE_PUSH_CONFIG: v03.DeleteTaskPushNotificationConfigRequest,
    Operation.GET_EXTENDED_CARD: v03.GetAuthenticatedExtendedCardRequest,
}

# op -> (SDK 0.3 request -> 1.0 proto, the 1.0 proto type, SDK 1.0 proto -> 0.3 request)
REQUEST_CONVERSIONS: dict[
    Operation, tuple[Callable[[Any], Any], type[ProtoMessage], Callable[[Any, int], Any]]
] = {
    Operation.SEND_MESSAGE: (
        conv.to_core_send_message_request,
        pb.SendMessageRequest,
        conv.to_compat_send_message_request,
    ),
    Operation.SEND_STREAMING_MESSAGE: (
        conv.to_core_send_message_request,
        pb.SendMessageRequest,
        conv.to_compat_send_message_request,
    ),
    Operation.GET_TASK: (
        conv.to_core_get_task_request,
        pb.GetTaskRequest,
        conv.to_compat_get_task_request,
    ),
    Operation.CANCEL_TASK: (
        conv.to_core_cancel_task_request,
        pb.CancelTaskRequest,
        conv.to_compat_cancel_task_request,
    ),
    Operation.SUBSCRIBE_TO_TASK: (
        conv.to_core_subscribe_to_task_request,
        pb.SubscribeToTaskRequest,
        conv.to_compat_subscribe_to_task_request,
    ),
    Operation.CREATE_PUSH_CONFIG: (
        conv.to_core_create_task_push_notification_config_request,
        pb.TaskPushNotificationConfig,
        conv.to_compat_create_task_push_notification_config_request,
    ),
    Operation.GET_PUSH_CONFIG: (
        conv.to_core_get_task_push_notification_config_request,
        pb.GetTaskPushNotificationConfigRequest,
        conv.to_compat_get_task_push_notification_config_request,
    ),
    Operation.LIST_PUSH_CONFIGS: (
        conv.to_core_list_task_push_notification_config_request,
        pb.ListTaskPushNotificationConfigsRequest,
        conv.to_compat_list_task_push_notification_config_request,
    ),
    Operation.DELETE_PUSH_CONFIG: (
        conv.to_core_delete_task_push_notification_config_request,
        pb.DeleteTaskPushNotificationConfigRequest,
        conv.to_compat_delete_task_push_notification_config_request,
    ),
    Operation.GET_EXTENDED_CARD: (
        conv.to_core_get_extended_agent_card_request,
        pb.GetExtendedAgentCardRequest,
        conv.to_compat_get_extended_agent_card_request,
    ),
}


def _envelope(op: Operation, params: Any) -> dict[str, Any]:
    method = op.method("0.3")
    assert method is not None
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": method}
    if params is not None:
        request["params"] = params
    return request


@pytest.mark.parametrize("op", OPS, ids=str)
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_jsonrpc_requests(op: Operation, data: st.DataObject) -> None:
    request = data.draw(s.requests(op, s.V03))
    sdk = v03.A2ARequest.model_validate(
        _wire(_envelope(op, JSONRPC.encode_request(op, request)))
    ).root
    assert type(sdk) is REQUEST_CLASSES[op]
    # shape: the SDK keeps everything we sent
    params = _sdk_dump(sdk).get("params")
    assert JSONRPC.decode_request(op, params) == request
    # meaning: the SDK's 0.3 -> 1.0 conversion agrees with our 1.0 encoding
    to_core, proto, _ = REQUEST_CONVERSIONS[op]
    assert to_core(sdk) == _v10_proto(V10.encode_request(op, request), proto)


@pytest.mark.parametrize("op", OPS, ids=str)
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_jsonrpc_requests_from_sdk(op: Operation, data: st.DataObject) -> None:
    """The SDK, as a 0.3 client, sends what we would: we decode it to the same request."""
    request = data.draw(s.requests(op, s.V03))
    _, proto, to_compat = REQUEST_CONVERSIONS[op]
    sdk = to_compat(_v10_proto(V10.encode_request(op, request), proto), 7)
    assert JSONRPC.decode_request(op, _sdk_dump(sdk).get("params")) == request


# --- JSON-RPC: results, events, cards ------------------------------------------------

RESULT_CLASSES: dict[Operation, type[BaseModel]] = {
    Operation.SEND_MESSAGE: v03.SendMessageSuccessResponse,
    Operation.SEND_STREAMING_MESSAGE: v03.SendStreamingMessageSuccessResponse,
    Operation.GET_TASK: v03.GetTaskSuccessResponse,
    Operation.CANCEL_TASK: v03.CancelTaskSuccessResponse,
    Operation.SUBSCRIBE_TO_TASK: v03.SendStreamingMessageSuccessResponse,
    Operation.CREATE_PUSH_CONFIG: v03.SetTaskPushNotificationConfigSuccessResponse,
    Operation.GET_PUSH_CONFIG: v03.GetTaskPushNotificationConfigSuccessResponse,
    Operation.LIST_PUSH_CONFIGS: v03.ListTaskPushNotificationConfigSuccessResponse,
    Operation.DELETE_PUSH_CONFIG: v03.DeleteTaskPushNotificationConfigSuccessResponse,
    Operation.GET_EXTENDED_CARD: v03.GetAuthenticatedExtendedCardSuccessResponse,
}


def _sdk_result_in(value: Any) -> ProtoMessage | None:
    """The SDK's 0.3 -> 1.0 conversion of one result object (None for a null result)."""
    if isinstance(value, v03.Task):
        return conv.to_core_task(value)
    if isinstance(value, v03.Message):
        return conv.to_core_message(value)
    if isinstance(value, v03.TaskStatusUpdateEvent):
        return conv.to_core_task_status_update_event(value)
    if isinstance(value, v03.TaskArtifactUpdateEvent):
        return conv.to_core_task_artifact_update_event(value)
    if isinstance(value, v03.TaskPushNotificationConfig):
        return conv.to_core_task_push_notification_config(value)
    if isinstance(value, v03.AgentCard):
        return _sdk_card(conv.to_core_agent_card(value))
    if isinstance(value, list):
        listed = pb.ListTaskPushNotificationConfigsResponse()
        listed.configs.extend(conv.to_core_task_push_notification_config(c) for c in value)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        return listed
    assert value is None
    return None


def _our_v10_result(op: Operation, result: Any) -> ProtoMessage | None:
    """Our 1.0 meaning of a result, unwrapped the way the 0.3 result is."""
    if op is Operation.DELETE_PUSH_CONFIG:
        return None
    if isinstance(result, t.Task):
        return _v10_proto(result, pb.Task)
    if isinstance(result, t.Message):
        return _v10_proto(result, pb.Message)
    if isinstance(result, t.TaskStatusUpdateEvent):
        return _v10_proto(result, pb.TaskStatusUpdateEvent)
    if isinstance(result, t.TaskArtifactUpdateEvent):
        return _v10_proto(result, pb.TaskArtifactUpdateEvent)
    if isinstance(result, t.TaskPushNotificationConfig):
        return _v10_proto(result, pb.TaskPushNotificationConfig)
    if isinstance(result, t.AgentCard):
        return _v10_proto(V10.encode_card(result), pb.AgentCard)
    assert isinstance(result, t.ListTaskPushNotificationConfigsResponse)
    return _v10_proto(result, pb.ListTaskPushNotificationConfigsResponse)


def _check_jsonrpc_result(op: Operation, result: Any) -> None:
    response = {"jsonrpc": "2.0", "id": 7, "result": JSONRPC.encode_result(op, result)}
    sdk = RESULT_CLASSES[op].model_validate(_wire(response))
    sdk_result = getattr(sdk, "result")  # noqa: B009 - every success response has one
    assert JSONRPC.decode_result(op, _sdk_dump(sdk).get("result")) == result
    assert _sdk_result_in(sdk_result) == _our_v10_result(op, result)


@pytest.mark.parametrize("op", OPS, ids=str)
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_jsonrpc_results(op: Operation, data: st.DataObject) -> None:
    _check_jsonrpc_result(op, data.draw(s.results(op, s.V03)))


@settings(max_examples=150)
@given(s.events(s.V03))
def test_jsonrpc_stream_events(event: t.StreamEvent) -> None:
    _check_jsonrpc_result(Operation.SEND_STREAMING_MESSAGE, event)
    if isinstance(event, t.TaskStatusUpdateEvent):
        frame = JSONRPC.encode_event(event)
        sdk = v03.TaskStatusUpdateEvent.model_validate(_wire(frame))
        assert sdk.final == (event.status.state.is_terminal or event.status.state.is_interrupted)


@settings(max_examples=150)
@given(s.agent_cards(s.V03))
def test_jsonrpc_cards(card: t.AgentCard) -> None:
    sdk = v03.AgentCard.model_validate(_wire(JSONRPC.encode_card(card)))
    assert JSONRPC.decode_card(_sdk_dump(sdk)) == card
    assert _sdk_card(conv.to_core_agent_card(sdk)) == _v10_proto(
        V10.encode_card(card), pb.AgentCard
    )


def _sdk_result_out(result: Any) -> Any:
    """The SDK's 1.0 -> 0.3 conversion of our 1.0 result: the 0.3 JSON it would send."""
    if isinstance(result, t.Task):
        return _sdk_dump(conv.to_compat_task(_v10_proto(result, pb.Task)))
    if isinstance(result, t.Message):
        return _sdk_dump(conv.to_compat_message(_v10_proto(result, pb.Message)))
    if isinstance(result, t.TaskStatusUpdateEvent):
        proto = _v10_proto(result, pb.TaskStatusUpdateEvent)
        return _sdk_dump(conv.to_compat_task_status_update_event(proto))
    if isinstance(result, t.TaskArtifactUpdateEvent):
        proto = _v10_proto(result, pb.TaskArtifactUpdateEvent)
        return _sdk_dump(conv.to_compat_task_artifact_update_event(proto))
    if isinstance(result, t.TaskPushNotificationConfig):
        proto = _v10_proto(result, pb.TaskPushNotificationConfig)
        return _sdk_dump(conv.to_compat_task_push_notification_config(proto))
    if isinstance(result, t.AgentCard):
        return _sdk_dump(
            conv.to_compat_agent_card(_v10_proto(V10.encode_card(result), pb.AgentCard))
        )
    if isinstance(result, t.ListTaskPushNotificationConfigsResponse):
        return [_sdk_result_out(c) for c in result.configs]
    assert result is None
    return None


@pytest.mark.parametrize("op", OPS, ids=str)
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_jsonrpc_results_from_sdk(op: Operation, data: st.DataObject) -> None:
    """The SDK, as a 0.3 server, answers what we would: we decode it to the same result."""
    result = data.draw(s.results(op, s.V03))
    assert JSONRPC.decode_result(op, _sdk_result_out(result)) == result


# --- HTTP+JSON (0.3 ProtoJSON) -----------------------------------------------------------

REST_REQUEST_PROTOS: dict[Operation, type[ProtoMessage]] = {
    Operation.SEND_MESSAGE: p03.SendMessageRequest,
    Operation.SEND_STREAMING_MESSAGE: p03.SendMessageRequest,
    Operation.GET_TASK: p03.GetTaskRequest,
    Operation.CANCEL_TASK: p03.CancelTaskRequest,
    Operation.SUBSCRIBE_TO_TASK: p03.TaskSubscriptionRequest,
    Operation.CREATE_PUSH_CONFIG: p03.CreateTaskPushNotificationConfigRequest,
    Operation.GET_PUSH_CONFIG: p03.GetTaskPushNotificationConfigRequest,
    Operation.LIST_PUSH_CONFIGS: p03.ListTaskPushNotificationConfigRequest,
    Operation.DELETE_PUSH_CONFIG: p03.DeleteTaskPushNotificationConfigRequest,
    Operation.GET_EXTENDED_CARD: p03.GetAgentCardRequest,
}
REST_RESULT_PROTOS: dict[Operation, type[ProtoMessage]] = {
    Operation.SEND_MESSAGE: p03.SendMessageResponse,
    Operation.SEND_STREAMING_MESSAGE: p03.StreamResponse,
    Operation.GET_TASK: p03.Task,
    Operation.CANCEL_TASK: p03.Task,
    Operation.SUBSCRIBE_TO_TASK: p03.StreamResponse,
    Operation.CREATE_PUSH_CONFIG: p03.TaskPushNotificationConfig,
    Operation.GET_PUSH_CONFIG: p03.TaskPushNotificationConfig,
    Operation.LIST_PUSH_CONFIGS: p03.ListTaskPushNotificationConfigResponse,
    Operation.DELETE_PUSH_CONFIG: empty_pb2.Empty,
    Operation.GET_EXTENDED_CARD: p03.AgentCard,
}
STYLES = st.fixed_dictionaries(
    {"proto_names": st.booleans(), "enum_numbers": st.booleans(), "defaults": st.booleans()}
)


def _p03(value: Any, proto: type[ProtoMessage]) -> ProtoMessage:
    """Our 0.3 ProtoJSON, parsed strictly by the SDK's 0.3 protobuf."""
    return json_format.Parse(dumps(value), proto(), ignore_unknown_fields=False)


def _p03_json(message: ProtoMessage, style: dict[str, bool]) -> Any:
    """The SDK's 0.3 ProtoJSON for ``message`` in one flavour, through real bytes."""
    return _wire(
        json_format.MessageToDict(
            message,
            preserving_proto_field_name=style.get("proto_names", False),
            use_integers_for_enums=style.get("enum_numbers", False),
            always_print_fields_with_no_presence=style.get("defaults", False),
        )
    )


def _same_rest(
    decoded: Any,
    original: Any,
    style: dict[str, bool],
    encode: Callable[[Any], Any],
    proto: type[ProtoMessage],
) -> None:
    """Equal; when the SDK printed default values, equal under 0.3 proto semantics.

    (With defaults printed an unset optional string arrives as ``""`` and an unset
    capability as ``false``; the 0.3 proto cannot tell them apart either.)
    """
    if not style.get("defaults"):
        assert decoded == original
    assert _p03(encode(decoded), proto) == _p03(encode(original), proto)


@pytest.mark.parametrize("op", OPS, ids=str)
@settings(max_examples=EXAMPLES)
@given(data=st.data(), style=STYLES)
def test_rest_requests(op: Operation, data: st.DataObject, style: dict[str, bool]) -> None:
    request = data.draw(s.requests(op, s.V03_REST))
    proto = REST_REQUEST_PROTOS[op]
    parsed = _p03(REST.encode_request(op, request), proto)
    decoded = REST.decode_request(op, _p03_json(parsed, style))
    _same_rest(decoded, request, style, lambda r: REST.encode_request(op, r), proto)


@pytest.mark.parametrize("op", OPS, ids=str)
@settings(max_examples=EXAMPLES)
@given(data=st.data(), style=STYLES)
def test_rest_results(op: Operation, data: st.DataObject, style: dict[str, bool]) -> None:
    result = data.draw(s.results(op, s.V03_REST))
    proto = REST_RESULT_PROTOS[op]
    parsed = _p03(REST.encode_result(op, result), proto)
    decoded = REST.decode_result(op, _p03_json(parsed, style))
    _same_rest(decoded, result, style, lambda r: REST.encode_result(op, r), proto)


def _sdk_rest_event_in(parsed: ProtoMessage) -> ProtoMessage:
    """0.3 proto StreamResponse -> SDK 0.3 pydantic -> the SDK's 1.0 proto of the event."""
    assert isinstance(parsed, p03.StreamResponse)
    event = proto_utils.FromProto.stream_response(parsed)
    result = _sdk_result_in(event)
    assert result is not None
    return result


@settings(max_examples=150)
@given(event=s.events(s.V03_REST), style=STYLES)
def test_rest_stream_events(event: t.StreamEvent, style: dict[str, bool]) -> None:
    parsed = _p03(REST.encode_event(event), p03.StreamResponse)
    decoded = REST.decode_event(_p03_json(parsed, style))
    _same_rest(decoded, event, style, REST.encode_event, p03.StreamResponse)


@settings(max_examples=150)
@given(event=s.events(SDK_REST), style=STYLES)
def test_rest_stream_events_meaning(event: t.StreamEvent, style: dict[str, bool]) -> None:
    parsed = _p03(REST.encode_event(event), p03.StreamResponse)
    # the SDK reads the same event out of our 0.3 ProtoJSON ...
    assert _sdk_rest_event_in(parsed) == _our_v10_result(Operation.SUBSCRIBE_TO_TASK, event)
    # ... and its own 0.3 ProtoJSON of the event decodes to it
    sdk_frame = proto_utils.ToProto.stream_response(_sdk_compat_event(event))
    decoded = REST.decode_event(_p03_json(sdk_frame, style))
    _same_rest(decoded, event, style, REST.encode_event, p03.StreamResponse)


BLOB = b"\x00\xff binary \x80"
FILE_EVENT = t.Message(
    message_id="m-1", role=t.Role.USER, parts=[t.Part(raw=BLOB, media_type="image/png")]
)
DOUBLE_BASE64 = (
    "interop gap: a2a-sdk's 0.3 protobuf path (its REST server and client) keeps the "
    "base64 *text* in FilePart.file_with_bytes, so its 0.3 ProtoJSON carries fileWithBytes "
    "base64-encoded twice; V03RestCodec encodes the raw bytes once"
)


@pytest.mark.xfail(strict=True, raises=(UnicodeDecodeError, AssertionError), reason=DOUBLE_BASE64)
def test_rest_file_bytes_read_by_sdk() -> None:
    parsed = _p03(REST.encode_event(FILE_EVENT), p03.StreamResponse)
    assert _sdk_rest_event_in(parsed) == _our_v10_result(Operation.SUBSCRIBE_TO_TASK, FILE_EVENT)


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=DOUBLE_BASE64)
def test_rest_file_bytes_from_sdk() -> None:
    sdk_frame = proto_utils.ToProto.stream_response(_sdk_compat_event(FILE_EVENT))
    decoded = REST.decode_event(_p03_json(sdk_frame, {}))
    assert isinstance(decoded, t.Message)
    assert decoded.parts[0].raw == BLOB


def _sdk_compat_event(event: t.StreamEvent) -> Any:
    if isinstance(event, t.Task):
        return conv.to_compat_task(_v10_proto(event, pb.Task))
    if isinstance(event, t.Message):
        return conv.to_compat_message(_v10_proto(event, pb.Message))
    if isinstance(event, t.TaskStatusUpdateEvent):
        return conv.to_compat_task_status_update_event(_v10_proto(event, pb.TaskStatusUpdateEvent))
    return conv.to_compat_task_artifact_update_event(_v10_proto(event, pb.TaskArtifactUpdateEvent))


@settings(max_examples=150)
@given(card=s.agent_cards(SDK_REST), style=STYLES)
def test_rest_cards(card: t.AgentCard, style: dict[str, bool]) -> None:
    parsed = _p03(REST.encode_card(card), p03.AgentCard)
    decoded = REST.decode_card(_p03_json(parsed, style))
    _same_rest(decoded, card, style, REST.encode_card, p03.AgentCard)
    assert isinstance(parsed, p03.AgentCard)
    sdk = proto_utils.FromProto.agent_card(parsed)
    ours = _v10_proto(V10.encode_card(card), pb.AgentCard)
    assert isinstance(ours, pb.AgentCard)
    assert _false_is_unset(_sdk_card(conv.to_core_agent_card(sdk))) == _false_is_unset(ours)
    sdk_proto = proto_utils.ToProto.agent_card(
        conv.to_compat_agent_card(_v10_proto(V10.encode_card(card), pb.AgentCard))
    )
    decoded = REST.decode_card(_p03_json(sdk_proto, style))
    _same_rest(decoded, card, style, REST.encode_card, p03.AgentCard)


@settings(max_examples=EXAMPLES)
@given(config=s.push_configs(SDK_REST, with_task_id=True, with_id=True), style=STYLES)
def test_rest_push_configs(config: t.TaskPushNotificationConfig, style: dict[str, bool]) -> None:
    parsed = _p03(
        REST.encode_result(Operation.GET_PUSH_CONFIG, config), p03.TaskPushNotificationConfig
    )
    assert isinstance(parsed, p03.TaskPushNotificationConfig)
    sdk = proto_utils.FromProto.task_push_notification_config(parsed)
    assert conv.to_core_task_push_notification_config(sdk) == _v10_proto(
        config, pb.TaskPushNotificationConfig
    )
    sdk_proto = proto_utils.ToProto.task_push_notification_config(
        conv.to_compat_task_push_notification_config(
            _v10_proto(config, pb.TaskPushNotificationConfig)
        )
    )
    decoded = REST.decode_result(Operation.GET_PUSH_CONFIG, _p03_json(sdk_proto, style))
    _same_rest(
        decoded,
        config,
        style,
        lambda c: REST.encode_result(Operation.GET_PUSH_CONFIG, c),
        p03.TaskPushNotificationConfig,
    )
