"""The A2A 0.3 HTTP+JSON codec, checked against the 0.3 proto's own ProtoJSON."""

from __future__ import annotations

import base64
import contextlib
from datetime import UTC, datetime
from typing import Any

import pytest
from a2a.compat.v0_3 import a2a_v0_3_pb2 as pb
from a2a_core.errors import (
    InvalidAgentResponseError,
    InvalidParamsError,
    MethodNotFoundError,
    PayloadTooLargeError,
    UnrepresentableError,
    UnsupportedOperationError,
)
from a2a_core.types import (
    AgentCapabilities,
    AgentCard,
    AgentCardSignature,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    APIKeySecurityScheme,
    Artifact,
    AuthenticationInfo,
    AuthorizationCodeOAuthFlow,
    CancelTaskRequest,
    ClientCredentialsOAuthFlow,
    DeleteTaskPushNotificationConfigRequest,
    DeviceCodeOAuthFlow,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    HTTPAuthSecurityScheme,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    Message,
    MutualTlsSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    Part,
    Role,
    SecurityRequirement,
    SecurityScheme,
    SendMessageConfiguration,
    SendMessageRequest,
    StringList,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_core.wire import DecodeLimits, Operation
from a2a_core.wire._v03_downgrade import V1_KEY
from a2a_core.wire.v03_rest import V03RestCodec, assemble_request, split_request
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.message import Message as ProtoMessage
from hypothesis import given, settings
from hypothesis import strategies as st

CODEC = V03RestCodec()
STAMP = datetime(2025, 7, 30, 12, 0, 1, 123000, tzinfo=UTC)
BIG = bytes(range(256)) * 4096  # 1 MiB


# samples (what 0.3 ProtoJSON can carry: no referenceTaskIds, no empty optional strings) --------


def every_part() -> list[Part]:
    return [
        Part(text="héllo 👋 — ünïcode"),
        Part(text=""),
        Part(raw=b"\x00\xffbinary", filename="a.bin", media_type="application/octet-stream"),
        Part(raw=b""),
        Part(url="https://example.com/f.png", filename="f.png", media_type="image/png"),
        Part(url="file:///tmp/x", metadata={"k": "v"}),
        Part(data={"answer": 42, "nested": {"list": [1, "two", None, True]}}),
        Part(data={}),
    ]


def full_message(role: Role = Role.USER) -> Message:
    return Message(
        message_id="msg-1",
        context_id="ctx-1",
        task_id="task-1",
        role=role,
        parts=every_part(),
        metadata={"trace": "abc"},
        extensions=["https://ext.example/v1"],
    )


def full_task(state: TaskState = TaskState.WORKING) -> Task:
    return Task(
        id="task-1",
        context_id="ctx-1",
        status=TaskStatus(state=state, message=full_message(Role.AGENT), timestamp=STAMP),
        artifacts=[
            Artifact(
                artifact_id="art-1",
                name="report",
                description="the report",
                parts=every_part(),
                metadata={"m": 1},
                extensions=["https://ext.example/v1"],
            )
        ],
        history=[full_message()],
        metadata={"owner": "me"},
    )


def push_config(task_id: str | None = "task-1") -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        id="cfg-1",
        task_id=task_id,
        url="https://hook.example/a2a",
        token="tok",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="secret"),
    )


def full_card() -> AgentCard:
    def req(**schemes: list[str]) -> SecurityRequirement:
        return SecurityRequirement(schemes={k: StringList(list=v) for k, v in schemes.items()})

    return AgentCard(
        name="Agent",
        description="does things",
        supported_interfaces=[
            AgentInterface(
                url="https://a/rest", protocol_binding="HTTP+JSON", protocol_version="0.3"
            ),
            AgentInterface(url="https://a/rpc", protocol_binding="JSONRPC", protocol_version="0.3"),
        ],
        provider=AgentProvider(url="https://example.com", organization="Example"),
        version="1.2.3",
        documentation_url="https://docs.example",
        capabilities=AgentCapabilities(
            streaming=True,
            push_notifications=True,
            extensions=[AgentExtension(uri="https://ext/1", required=True, params={"p": "q"})],
            extended_agent_card=True,
        ),
        security_schemes={
            "key": SecurityScheme(
                api_key_security_scheme=APIKeySecurityScheme(location="header", name="X-Key")
            ),
            "bearer": SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="Bearer", bearer_format="JWT", description="jwt"
                )
            ),
            "code": SecurityScheme(
                oauth2_security_scheme=OAuth2SecurityScheme(
                    flows=OAuthFlows(
                        authorization_code=AuthorizationCodeOAuthFlow(
                            authorization_url="https://auth/a",
                            token_url="https://auth/t",
                            scopes={"read": "Read"},
                        )
                    ),
                    oauth2_metadata_url="https://auth/meta",
                )
            ),
            "cc": SecurityScheme(
                oauth2_security_scheme=OAuth2SecurityScheme(
                    flows=OAuthFlows(
                        client_credentials=ClientCredentialsOAuthFlow(
                            token_url="https://t", scopes={"s": "S"}
                        )
                    )
                )
            ),
            "oidc": SecurityScheme(
                open_id_connect_security_scheme=OpenIdConnectSecurityScheme(
                    open_id_connect_url="https://id"
                )
            ),
            "mtls": SecurityScheme(mtls_security_scheme=MutualTlsSecurityScheme()),
        },
        security_requirements=[req(code=["read"], key=[])],
        default_input_modes=["text/plain"],
        default_output_modes=["application/json"],
        skills=[
            AgentSkill(
                id="s1",
                name="Skill",
                description="a skill",
                tags=["t"],
                examples=["ex"],
                input_modes=["text/plain"],
                output_modes=["text/plain"],
                security_requirements=[req(oidc=["openid"])],
            )
        ],
        signatures=[AgentCardSignature(protected="eyJ", signature="sig", header={"kid": "k"})],
        icon_url="https://a/icon.png",
    )


def status_event(state: TaskState) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(
        task_id="task-1", context_id="ctx-1", status=TaskStatus(state=state, timestamp=STAMP)
    )


def artifact_event() -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id="task-1",
        context_id="ctx-1",
        artifact=Artifact(artifact_id="a", parts=[Part(text="chunk")]),
        append=True,
        last_chunk=True,
        metadata={"n": 1},
    )


def through_proto(value: Any, proto: ProtoMessage, *, snake: bool = False) -> dict[str, Any]:
    """Parse strictly (no unknown fields allowed) into the 0.3 proto, then print it again."""
    ParseDict(value, proto)
    return MessageToDict(proto, preserving_proto_field_name=snake)


# wire shapes -------------------------------------------------------------------


def test_message_shape() -> None:
    wire = CODEC.encode_event(full_message())["message"]
    assert wire["role"] == "ROLE_USER"
    assert "parts" not in wire
    content = wire["content"]
    assert content[0] == {"text": "héllo 👋 — ünïcode"}
    assert content[2] == {
        "file": {
            "fileWithBytes": base64.b64encode(b"\x00\xffbinary").decode(),
            "mimeType": "application/octet-stream",
            "name": "a.bin",
        }
    }
    assert content[4] == {
        "file": {
            "fileWithUri": "https://example.com/f.png",
            "mimeType": "image/png",
            "name": "f.png",
        }
    }
    assert content[6] == {
        "data": {"data": {"answer": 42, "nested": {"list": [1, "two", None, True]}}}
    }


@pytest.mark.parametrize(
    ("state", "name", "final"),
    [
        (TaskState.UNSPECIFIED, "TASK_STATE_UNSPECIFIED", False),
        (TaskState.SUBMITTED, "TASK_STATE_SUBMITTED", False),
        (TaskState.WORKING, "TASK_STATE_WORKING", False),
        (TaskState.COMPLETED, "TASK_STATE_COMPLETED", True),
        (TaskState.FAILED, "TASK_STATE_FAILED", True),
        (TaskState.CANCELED, "TASK_STATE_CANCELLED", True),
        (TaskState.INPUT_REQUIRED, "TASK_STATE_INPUT_REQUIRED", True),
        (TaskState.REJECTED, "TASK_STATE_REJECTED", True),
        (TaskState.AUTH_REQUIRED, "TASK_STATE_AUTH_REQUIRED", True),
    ],
)
def test_states_and_final(state: TaskState, name: str, final: bool) -> None:
    wire = CODEC.encode_event(status_event(state))
    update = wire["statusUpdate"]
    assert update["status"]["state"] == name
    assert update["final"] is final
    assert CODEC.decode_event(wire) == status_event(state)
    printed = through_proto(wire, pb.StreamResponse())
    assert CODEC.decode_event(printed) == status_event(state)


@pytest.mark.parametrize("spelling", ["TASK_STATE_CANCELLED", "TASK_STATE_CANCELED", 5])
def test_cancelled_spellings(spelling: Any) -> None:
    wire = {"id": "t", "status": {"state": spelling}}
    assert CODEC.decode_result(Operation.GET_TASK, wire).status.state is TaskState.CANCELED


def test_send_body_and_blocking() -> None:
    request = SendMessageRequest(
        message=full_message(),
        configuration=SendMessageConfiguration(
            accepted_output_modes=["text/plain"],
            history_length=3,
            return_immediately=False,
            task_push_notification_config=push_config(task_id=None),
        ),
        metadata={"m": "x"},
    )
    body = CODEC.encode_request(Operation.SEND_MESSAGE, request)
    assert body["configuration"] == {
        "acceptedOutputModes": ["text/plain"],
        "pushNotification": {
            "id": "cfg-1",
            "url": "https://hook.example/a2a",
            "token": "tok",
            "authentication": {"schemes": ["Bearer"], "credentials": "secret"},
        },
        "historyLength": 3,
        "blocking": True,
    }
    assert CODEC.decode_request(Operation.SEND_MESSAGE, body) == request
    # The a2a-python client prints proto field names: "request", "message_id", ...
    snake = through_proto(body, pb.SendMessageRequest(), snake=True)
    assert "request" in snake
    assert CODEC.decode_request(Operation.SEND_MESSAGE, snake) == request


@pytest.mark.parametrize(
    ("configuration", "return_immediately"),
    [({}, True), ({"blocking": False}, True), ({"blocking": True}, False), (None, False)],
)
def test_blocking_follows_proto3(configuration: Any, return_immediately: bool) -> None:
    body: dict[str, Any] = {"message": {"messageId": "m", "role": 1, "content": [{"text": "x"}]}}
    if configuration is not None:
        body["configuration"] = configuration
    decoded = CODEC.decode_request(Operation.SEND_MESSAGE, body)
    assert isinstance(decoded, SendMessageRequest)
    immediate = decoded.configuration.return_immediately if decoded.configuration else False
    assert immediate is return_immediately


def test_proto3_zero_history_is_unset() -> None:
    decoded = CODEC.decode_request(Operation.GET_TASK, {"name": "tasks/t", "historyLength": 0})
    assert decoded == GetTaskRequest(id="t")
    decoded = CODEC.decode_request(Operation.GET_TASK, {"name": "tasks/t", "historyLength": "7"})
    assert decoded == GetTaskRequest(id="t", history_length=7)
    with pytest.raises(UnrepresentableError):
        CODEC.encode_request(Operation.GET_TASK, GetTaskRequest(id="t", history_length=0))
    with pytest.raises(UnrepresentableError):
        CODEC.encode_request(
            Operation.SEND_MESSAGE,
            SendMessageRequest(
                message=Message.user("x"), configuration=SendMessageConfiguration(history_length=0)
            ),
        )


def test_push_config_shape() -> None:
    wire = CODEC.encode_result(Operation.GET_PUSH_CONFIG, push_config())
    assert wire == {
        "name": "tasks/task-1/pushNotificationConfigs/cfg-1",
        "pushNotificationConfig": {
            "id": "cfg-1",
            "url": "https://hook.example/a2a",
            "token": "tok",
            "authentication": {"schemes": ["Bearer"], "credentials": "secret"},
        },
    }
    assert CODEC.decode_result(Operation.GET_PUSH_CONFIG, wire) == push_config()
    # The config id may come from the resource name alone.
    del wire["pushNotificationConfig"]["id"]
    assert CODEC.decode_result(Operation.GET_PUSH_CONFIG, wire) == push_config()


@pytest.mark.parametrize(
    "body",
    [
        # a2a-python: the whole CreateTaskPushNotificationConfigRequest
        {
            "parent": "tasks/other",
            "config_id": "cfg-1",
            "config": {
                "name": "tasks/other/pushNotificationConfigs/cfg-1",
                "push_notification_config": {"url": "https://h", "token": "tok"},
            },
        },
        # a TaskPushNotificationConfig
        {
            "name": "tasks/x/pushNotificationConfigs/cfg-1",
            "pushNotificationConfig": {"id": "cfg-1", "url": "https://h", "token": "tok"},
        },
        # a bare PushNotificationConfig
        {"id": "cfg-1", "url": "https://h", "token": "tok"},
    ],
)
def test_create_push_config_bodies(body: dict[str, Any]) -> None:
    assembled = assemble_request(Operation.CREATE_PUSH_CONFIG, task_id="task-9", body=body)
    decoded = CODEC.decode_request(Operation.CREATE_PUSH_CONFIG, assembled)
    assert decoded == TaskPushNotificationConfig(
        task_id="task-9", id="cfg-1", url="https://h", token="tok"
    )


def test_card_shape_is_proto() -> None:
    wire = CODEC.encode_card(full_card())
    assert wire["protocolVersion"] == "0.3.0"
    assert wire["url"] == "https://a/rest"
    assert wire["preferredTransport"] == "HTTP+JSON"
    assert wire["securitySchemes"]["key"] == {
        "apiKeySecurityScheme": {"location": "header", "name": "X-Key"}
    }
    assert wire["security"] == [{"schemes": {"code": {"list": ["read"]}, "key": {"list": []}}}]
    assert wire["supportsAuthenticatedExtendedCard"] is True
    printed = through_proto(wire, pb.AgentCard())
    assert CODEC.decode_card(printed) == full_card()


def test_card_accepts_the_jsonrpc_spelling() -> None:
    """a2a-python's 0.3 REST handler answers /v1/card with the types.ts shape."""
    from a2a_core.wire.v03 import V03JsonRpcCodec

    assert CODEC.decode_card(V03JsonRpcCodec().encode_card(full_card())) == full_card()


# round trips through the 0.3 proto ----------------------------------------------

REQUESTS: list[tuple[Operation, Any, type[ProtoMessage]]] = [
    (Operation.SEND_MESSAGE, SendMessageRequest(message=full_message()), pb.SendMessageRequest),
    (
        Operation.SEND_STREAMING_MESSAGE,
        SendMessageRequest(
            message=Message(message_id="m", role=Role.AGENT, parts=[Part(text="x")]),
            configuration=SendMessageConfiguration(return_immediately=True),
        ),
        pb.SendMessageRequest,
    ),
    (Operation.GET_TASK, GetTaskRequest(id="t", history_length=5), pb.GetTaskRequest),
    (Operation.GET_TASK, GetTaskRequest(id="t"), pb.GetTaskRequest),
    (Operation.CANCEL_TASK, CancelTaskRequest(id="t"), pb.CancelTaskRequest),
    (Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id="t"), pb.TaskSubscriptionRequest),
    (Operation.CREATE_PUSH_CONFIG, push_config(), pb.CreateTaskPushNotificationConfigRequest),
    (
        Operation.CREATE_PUSH_CONFIG,
        TaskPushNotificationConfig(task_id="t", url="https://h"),
        pb.CreateTaskPushNotificationConfigRequest,
    ),
    (
        Operation.GET_PUSH_CONFIG,
        GetTaskPushNotificationConfigRequest(task_id="t", id="c"),
        pb.GetTaskPushNotificationConfigRequest,
    ),
    (
        Operation.LIST_PUSH_CONFIGS,
        ListTaskPushNotificationConfigsRequest(task_id="t", page_size=10, page_token="p"),
        pb.ListTaskPushNotificationConfigRequest,
    ),
    (
        Operation.LIST_PUSH_CONFIGS,
        ListTaskPushNotificationConfigsRequest(task_id="t"),
        pb.ListTaskPushNotificationConfigRequest,
    ),
    (
        Operation.DELETE_PUSH_CONFIG,
        DeleteTaskPushNotificationConfigRequest(task_id="t", id="c"),
        pb.DeleteTaskPushNotificationConfigRequest,
    ),
    (Operation.GET_EXTENDED_CARD, GetExtendedAgentCardRequest(), pb.GetAgentCardRequest),
]


@pytest.mark.parametrize(("op", "request_model", "proto"), REQUESTS)
@pytest.mark.parametrize("snake", [False, True])
def test_request_round_trip(
    op: Operation, request_model: Any, proto: type[ProtoMessage], snake: bool
) -> None:
    body = CODEC.encode_request(op, request_model)
    assert CODEC.decode_request(op, body) == request_model
    assert CODEC.decode_request(op, through_proto(body, proto(), snake=snake)) == request_model


@pytest.mark.parametrize(("op", "request_model", "proto"), REQUESTS)
def test_split_and_assemble_round_trip(
    op: Operation, request_model: Any, proto: type[ProtoMessage]
) -> None:
    del proto
    call = split_request(op, CODEC.encode_request(op, request_model))
    assert call.path.startswith("/v1/")
    task_id = config_id = None
    parts = call.path.split("/")
    if len(parts) > 3 and parts[2] == "tasks":
        task_id = parts[3].split(":")[0]
        config_id = parts[5] if len(parts) > 5 else None
    rebuilt = assemble_request(
        op, task_id=task_id, config_id=config_id, query=call.query, body=call.body
    )
    assert CODEC.decode_request(op, rebuilt) == request_model


def test_routes() -> None:
    get = split_request(Operation.GET_TASK, {"name": "tasks/a b", "historyLength": 2})
    assert get == ("GET", "/v1/tasks/a%20b", {"historyLength": "2"}, None)
    cancel = split_request(Operation.CANCEL_TASK, {"name": "tasks/t"})
    assert (cancel.method, cancel.path, cancel.body) == ("POST", "/v1/tasks/t:cancel", {})
    delete = split_request(
        Operation.DELETE_PUSH_CONFIG, {"name": "tasks/t/pushNotificationConfigs/c"}
    )
    assert (delete.method, delete.path) == ("DELETE", "/v1/tasks/t/pushNotificationConfigs/c")
    assert split_request(Operation.GET_EXTENDED_CARD, {}).path == "/v1/card"
    with pytest.raises(UnsupportedOperationError):
        split_request(Operation.LIST_TASKS, {})


RESULTS: list[tuple[Operation, Any, type[ProtoMessage] | None]] = [
    (Operation.SEND_MESSAGE, full_task(), pb.SendMessageResponse),
    (Operation.SEND_MESSAGE, full_message(Role.AGENT), pb.SendMessageResponse),
    (Operation.SEND_STREAMING_MESSAGE, full_task(TaskState.SUBMITTED), pb.StreamResponse),
    (Operation.SEND_STREAMING_MESSAGE, full_message(Role.AGENT), pb.StreamResponse),
    (Operation.SEND_STREAMING_MESSAGE, status_event(TaskState.INPUT_REQUIRED), pb.StreamResponse),
    (Operation.SUBSCRIBE_TO_TASK, artifact_event(), pb.StreamResponse),
    (Operation.GET_TASK, full_task(TaskState.COMPLETED), pb.Task),
    (
        Operation.GET_TASK,
        Task(id="t", status=TaskStatus(state=TaskState.UNSPECIFIED)),
        pb.Task,
    ),
    (Operation.CANCEL_TASK, full_task(TaskState.CANCELED), pb.Task),
    (Operation.CREATE_PUSH_CONFIG, push_config(), pb.TaskPushNotificationConfig),
    (
        Operation.GET_PUSH_CONFIG,
        TaskPushNotificationConfig(task_id="t", id="c", url="https://h"),
        pb.TaskPushNotificationConfig,
    ),
    (
        Operation.LIST_PUSH_CONFIGS,
        ListTaskPushNotificationConfigsResponse(
            configs=[push_config(), push_config("t2")], next_page_token="next"
        ),
        pb.ListTaskPushNotificationConfigResponse,
    ),
    (
        Operation.LIST_PUSH_CONFIGS,
        ListTaskPushNotificationConfigsResponse(),
        pb.ListTaskPushNotificationConfigResponse,
    ),
    (Operation.DELETE_PUSH_CONFIG, None, None),
    (Operation.GET_EXTENDED_CARD, full_card(), pb.AgentCard),
]


@pytest.mark.parametrize(("op", "result", "proto"), RESULTS)
def test_result_round_trip(op: Operation, result: Any, proto: type[ProtoMessage] | None) -> None:
    wire = CODEC.encode_result(op, result)
    assert CODEC.decode_result(op, wire) == result
    if proto is not None:
        assert CODEC.decode_result(op, through_proto(wire, proto())) == result
        assert CODEC.decode_result(op, through_proto(wire, proto(), snake=True)) == result
    else:
        assert wire == {}


def test_events_from_the_proto() -> None:
    """Events built with the 0.3 protobuf classes decode to what they say."""
    proto = pb.StreamResponse(
        status_update=pb.TaskStatusUpdateEvent(
            task_id="t",
            context_id="c",
            status=pb.TaskStatus(
                state=pb.TASK_STATE_CANCELLED,
                update=pb.Message(
                    message_id="m",
                    role=pb.ROLE_AGENT,
                    content=[
                        pb.Part(text="bye"),
                        pb.Part(file=pb.FilePart(file_with_bytes=b"\x01\x02", mime_type="x/y")),
                        pb.Part(file=pb.FilePart(file_with_uri="https://f", name="f")),
                    ],
                ),
            ),
            final=True,
        )
    )
    event = CODEC.decode_event(MessageToDict(proto))
    assert event == TaskStatusUpdateEvent(
        task_id="t",
        context_id="c",
        status=TaskStatus(
            state=TaskState.CANCELED,
            message=Message(
                message_id="m",
                role=Role.AGENT,
                parts=[
                    Part(text="bye"),
                    Part(raw=b"\x01\x02", media_type="x/y"),
                    Part(url="https://f", filename="f"),
                ],
            ),
        ),
    )
    msg = pb.SendMessageResponse(msg=pb.Message(message_id="m", content=[pb.Part(text="x")]))
    decoded = CODEC.decode_result(Operation.SEND_MESSAGE, MessageToDict(msg))
    assert decoded == Message(message_id="m", role=Role.UNSPECIFIED, parts=[Part(text="x")])
    assert (
        CODEC.decode_result(
            Operation.SEND_MESSAGE, MessageToDict(msg, preserving_proto_field_name=True)
        )
        == decoded
    )


def test_large_base64_round_trip() -> None:
    message = Message(message_id="m", role=Role.USER, parts=[Part(raw=BIG)])
    body = CODEC.encode_request(Operation.SEND_MESSAGE, SendMessageRequest(message=message))
    assert body["message"]["content"][0]["file"]["fileWithBytes"] == base64.b64encode(BIG).decode()
    decoded = CODEC.decode_request(
        Operation.SEND_MESSAGE, through_proto(body, pb.SendMessageRequest())
    )
    assert isinstance(decoded, SendMessageRequest)
    assert decoded.message.parts[0].raw == BIG


def test_unknown_fields_are_ignored() -> None:
    body = CODEC.encode_request(Operation.SEND_MESSAGE, SendMessageRequest(message=full_message()))
    body["future"] = 1
    body["message"]["referenceTaskIds"] = ["from a confused client"]
    body["message"]["content"][0]["kind"] = "text"
    body["message"]["content"][2]["file"]["sha"] = "x"
    assert CODEC.decode_request(Operation.SEND_MESSAGE, body) == SendMessageRequest(
        message=full_message()
    )


@given(
    st.lists(
        st.one_of(
            st.builds(Part, text=st.text(max_size=20)),
            st.builds(
                Part,
                raw=st.binary(max_size=40),
                filename=st.none() | st.text(min_size=1, max_size=8),
            ),
            st.builds(
                Part,
                url=st.text(max_size=20),
                media_type=st.none() | st.text(min_size=1, max_size=8),
            ),
            st.builds(
                Part,
                data=st.dictionaries(
                    st.text(max_size=5), st.integers(-(2**53), 2**53) | st.text(max_size=5)
                ),
            ),
        ),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from(list(TaskState)),
    st.text(min_size=1, max_size=10),
)
@settings(max_examples=60)
def test_task_round_trip_property(parts: list[Part], state: TaskState, text: str) -> None:
    task = Task(
        id=text,
        context_id=text,
        status=TaskStatus(state=state),
        history=[Message(message_id=text, role=Role.AGENT, parts=parts, context_id=text)],
        artifacts=[Artifact(artifact_id=text, parts=parts, name=text)],
    )
    wire = CODEC.encode_result(Operation.GET_TASK, task)
    assert CODEC.decode_result(Operation.GET_TASK, wire) == task
    assert CODEC.decode_result(Operation.GET_TASK, through_proto(wire, pb.Task())) == task


# unrepresentable -------------------------------------------------------------


@pytest.mark.parametrize("data", [[1], "s", 1, 1.5, True])
def test_non_object_data_is_wrapped_in_an_object(data: Any) -> None:
    message = Message(message_id="m", role=Role.USER, parts=[Part(data=data)])
    part = CODEC.encode_event(message)["message"]["content"][0]
    assert part == {"data": {"data": {"value": data}}, "metadata": {V1_KEY: {"dataWrapped": True}}}
    with pytest.raises(UnrepresentableError):  # a request stays strict
        CODEC.encode_request(Operation.SEND_MESSAGE, SendMessageRequest(message=message))


def test_unrepresentable_values() -> None:
    referencing = Message(
        message_id="m", role=Role.USER, parts=[Part(text="x")], reference_task_ids=["t"]
    )
    encoded = CODEC.encode_event(referencing)["message"]
    assert encoded["metadata"] == {V1_KEY: {"referenceTaskIds": ["t"]}}
    with pytest.raises(UnrepresentableError, match="referenceTaskIds"):
        CODEC.encode_request(Operation.SEND_MESSAGE, SendMessageRequest(message=referencing))
    html = Message(message_id="m", role=Role.USER, parts=[Part(text="x", media_type="text/html")])
    encoded = CODEC.encode_event(html)["message"]
    assert encoded["content"][0]["metadata"] == {V1_KEY: {"mediaType": "text/html"}}
    cases: list[tuple[Operation, Any]] = [
        (Operation.CANCEL_TASK, CancelTaskRequest(id="t", metadata={"a": 1})),
        (Operation.CANCEL_TASK, CancelTaskRequest(id="t", tenant="x")),
        (Operation.GET_TASK, GetTaskRequest(id="a/b")),
        (Operation.GET_TASK, GetTaskRequest(id="")),
        (Operation.GET_PUSH_CONFIG, GetTaskPushNotificationConfigRequest(task_id="t", id="")),
        (Operation.CREATE_PUSH_CONFIG, push_config(task_id=None)),
    ]
    for op, request in cases:
        with pytest.raises(UnrepresentableError):
            CODEC.encode_request(op, request)
    device = full_card()
    device.security_schemes["d"] = SecurityScheme(
        oauth2_security_scheme=OAuth2SecurityScheme(
            flows=OAuthFlows(
                device_code=DeviceCodeOAuthFlow(device_authorization_url="d", token_url="t")
            )
        )
    )
    with pytest.raises(UnrepresentableError):
        CODEC.encode_card(device)


def test_list_tasks_has_no_03_route() -> None:
    with pytest.raises(MethodNotFoundError):
        CODEC.decode_request(Operation.LIST_TASKS, {})
    with pytest.raises(UnsupportedOperationError):
        CODEC.encode_request(Operation.LIST_TASKS, ListTasksRequest())


# malformed input ---------------------------------------------------------------

MSG = {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "x"}]}
BAD_REQUESTS: list[tuple[Operation, Any]] = [
    (Operation.SEND_MESSAGE, None),
    (Operation.SEND_MESSAGE, []),
    (Operation.SEND_MESSAGE, {}),
    (Operation.SEND_MESSAGE, {"message": {**MSG, "content": []}}),
    (Operation.SEND_MESSAGE, {"message": {**MSG, "role": "ROLE_ROBOT"}}),
    (Operation.SEND_MESSAGE, {"message": {**MSG, "content": [{}]}}),
    (Operation.SEND_MESSAGE, {"message": {**MSG, "content": [{"text": "a", "data": {}}]}}),
    (Operation.SEND_MESSAGE, {"message": {**MSG, "content": [{"file": {}}]}}),
    (Operation.SEND_MESSAGE, {"message": {**MSG, "content": [{"file": "x"}]}}),
    (Operation.SEND_MESSAGE, {"message": {**MSG, "content": [{"data": {"data": [1]}}]}}),
    (Operation.SEND_MESSAGE, {"message": {**MSG, "content": [{"data": 5}]}}),
    (Operation.SEND_MESSAGE, {"message": MSG, "configuration": {"blocking": "no"}}),
    (Operation.SEND_MESSAGE, {"message": MSG, "configuration": {"pushNotification": 3}}),
    (Operation.GET_TASK, {"name": "t"}),
    (Operation.GET_TASK, {"name": "tasks/"}),
    (Operation.GET_TASK, {"name": "tasks/a/b"}),
    (Operation.GET_TASK, {"name": 5}),
    (Operation.GET_TASK, {"name": "tasks/t", "historyLength": -2}),
    (Operation.CANCEL_TASK, {}),
    (Operation.SUBSCRIBE_TO_TASK, {"id": "t"}),
    (Operation.CREATE_PUSH_CONFIG, {"parent": "tasks/t", "config": {}}),
    (Operation.CREATE_PUSH_CONFIG, {"config": {"url": "u"}}),
    (Operation.GET_PUSH_CONFIG, {"name": "tasks/t"}),
    (Operation.DELETE_PUSH_CONFIG, {"name": ["tasks/t/pushNotificationConfigs/c"]}),
    (Operation.LIST_PUSH_CONFIGS, {"parent": "nope"}),
    (Operation.LIST_PUSH_CONFIGS, {"parent": "tasks/t", "pageSize": "x"}),
    (Operation.GET_EXTENDED_CARD, "x"),
]


@pytest.mark.parametrize(("op", "value"), BAD_REQUESTS)
def test_malformed_requests_are_invalid_params(op: Operation, value: Any) -> None:
    with pytest.raises(InvalidParamsError):
        CODEC.decode_request(op, value)


def test_part_limit() -> None:
    codec = V03RestCodec(DecodeLimits(max_parts=1))
    body = {"message": {**MSG, "content": [{"text": "a"}, {"text": "b"}]}}
    with pytest.raises(PayloadTooLargeError):
        codec.decode_request(Operation.SEND_MESSAGE, body)


BAD_RESULTS: list[tuple[Operation, Any]] = [
    (Operation.SEND_MESSAGE, {}),
    (Operation.SEND_MESSAGE, {"task": {"id": "t", "status": {}}, "message": MSG}),
    (Operation.SEND_MESSAGE, {"statusUpdate": {"taskId": "t", "status": {}}}),
    (Operation.SEND_STREAMING_MESSAGE, {"artifactUpdate": {"taskId": "t"}}),
    (Operation.SEND_STREAMING_MESSAGE, {"statusUpdate": "x"}),
    (Operation.GET_TASK, {"id": "t", "status": {"state": "TASK_STATE_NAPPING"}}),
    (Operation.GET_TASK, {"status": {}}),
    (
        Operation.SEND_STREAMING_MESSAGE,
        {"statusUpdate": {"taskId": "t", "status": {"timestamp": "0001-01-01T00:00:00+23:00"}}},
    ),
    (Operation.CREATE_PUSH_CONFIG, {"name": "x", "pushNotificationConfig": {"url": "u"}}),
    (Operation.GET_PUSH_CONFIG, {"name": "tasks/t/pushNotificationConfigs/c"}),
    (Operation.LIST_PUSH_CONFIGS, []),
    (Operation.LIST_PUSH_CONFIGS, {"configs": [{}]}),
    (Operation.GET_EXTENDED_CARD, []),
    (
        Operation.GET_EXTENDED_CARD,
        {"name": "n", "securitySchemes": {"a": {"apiKeySecurityScheme": 1}}},
    ),
]


@pytest.mark.parametrize(("op", "value"), BAD_RESULTS)
def test_malformed_results_are_invalid_agent_response(op: Operation, value: Any) -> None:
    with pytest.raises(InvalidAgentResponseError):
        CODEC.decode_result(op, value)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
keys = st.sampled_from(
    [
        "name",
        "parent",
        "config",
        "configId",
        "message",
        "request",
        "messageId",
        "role",
        "content",
        "text",
        "file",
        "fileWithUri",
        "fileWithBytes",
        "data",
        "configuration",
        "blocking",
        "pushNotification",
        "historyLength",
        "task",
        "msg",
        "statusUpdate",
        "artifactUpdate",
        "status",
        "state",
        "update",
        "artifact",
        "pushNotificationConfig",
        "authentication",
        "schemes",
        "url",
        "securitySchemes",
        "security",
        "skills",
        "capabilities",
    ]
)
names = st.sampled_from(["tasks/t", "tasks/t/pushNotificationConfigs/c", "tasks/", "x"])
shaped = st.recursive(
    json_values | names,
    lambda inner: st.dictionaries(keys, inner, max_size=6) | st.lists(inner, max_size=3),
    max_leaves=30,
)


@given(st.sampled_from([op for op in Operation if op is not Operation.LIST_TASKS]), shaped)
@settings(max_examples=300)
def test_random_requests_raise_only_our_errors(op: Operation, value: Any) -> None:
    with contextlib.suppress(InvalidParamsError, PayloadTooLargeError):
        CODEC.decode_request(op, value)


@given(st.sampled_from(list(Operation)), shaped)
@settings(max_examples=300)
def test_random_results_raise_only_our_errors(op: Operation, value: Any) -> None:
    with contextlib.suppress(InvalidAgentResponseError, UnsupportedOperationError):
        CODEC.decode_result(op, value)
    with contextlib.suppress(InvalidAgentResponseError):
        CODEC.decode_event(value)
    with contextlib.suppress(InvalidAgentResponseError):
        CODEC.decode_card(value)
