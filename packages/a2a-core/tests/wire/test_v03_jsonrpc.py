"""The A2A 0.3 JSON-RPC codec: shapes, round trips, unrepresentable values, bad input."""

from __future__ import annotations

import base64
import contextlib
from datetime import UTC, datetime
from typing import Any

import pytest
from a2a_core.errors import (
    A2AError,
    InvalidAgentResponseError,
    InvalidParamsError,
    MethodNotFoundError,
    PayloadTooLargeError,
    TaskNotFoundError,
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
    ImplicitOAuthFlow,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    Message,
    MutualTlsSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    Part,
    PasswordOAuthFlow,
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
from a2a_core.wire.v03 import V03JsonRpcCodec
from hypothesis import given, settings
from hypothesis import strategies as st

CODEC = V03JsonRpcCodec()
STAMP = datetime(2025, 7, 30, 12, 0, 1, 123000, tzinfo=UTC)
BIG = bytes(range(256)) * 4096  # 1 MiB


# samples -------------------------------------------------------------------


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
        Part(text="with meta", metadata={"x": {"y": [1, 2]}}),
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
        reference_task_ids=["task-0"],
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
        history=[
            full_message(),
            Message(message_id="m-2", role=Role.AGENT, parts=[Part(text="r")], context_id="ctx-1"),
        ],
        metadata={"owner": "me"},
    )


def minimal_task() -> Task:
    return Task(id="t", context_id="c", status=TaskStatus(state=TaskState.SUBMITTED))


def push_config(task_id: str | None = "task-1") -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        id="cfg-1",
        task_id=task_id,
        url="https://hook.example/a2a",
        token="tok",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="secret"),
    )


def every_scheme() -> dict[str, SecurityScheme]:
    return {
        "key": SecurityScheme(
            api_key_security_scheme=APIKeySecurityScheme(
                location="header", name="X-Key", description="api key"
            )
        ),
        "bearer": SecurityScheme(
            http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer", bearer_format="JWT")
        ),
        "code": SecurityScheme(
            oauth2_security_scheme=OAuth2SecurityScheme(
                description="oauth",
                flows=OAuthFlows(
                    authorization_code=AuthorizationCodeOAuthFlow(
                        authorization_url="https://auth/a",
                        token_url="https://auth/t",
                        refresh_url="https://auth/r",
                        scopes={"read": "Read"},
                    )
                ),
                oauth2_metadata_url="https://auth/.well-known",
            )
        ),
        "cc": SecurityScheme(
            oauth2_security_scheme=OAuth2SecurityScheme(
                flows=OAuthFlows(
                    client_credentials=ClientCredentialsOAuthFlow(token_url="https://auth/t")
                )
            )
        ),
        "implicit": SecurityScheme(
            oauth2_security_scheme=OAuth2SecurityScheme(
                flows=OAuthFlows(
                    implicit=ImplicitOAuthFlow(authorization_url="https://a", scopes={"s": "S"})
                )
            )
        ),
        "password": SecurityScheme(
            oauth2_security_scheme=OAuth2SecurityScheme(
                flows=OAuthFlows(password=PasswordOAuthFlow(token_url="https://t"))
            )
        ),
        "oidc": SecurityScheme(
            open_id_connect_security_scheme=OpenIdConnectSecurityScheme(
                open_id_connect_url="https://id/.well-known/openid-configuration"
            )
        ),
        "mtls": SecurityScheme(mtls_security_scheme=MutualTlsSecurityScheme()),
        "mtls2": SecurityScheme(
            mtls_security_scheme=MutualTlsSecurityScheme(description="client certs")
        ),
    }


def requirement(**schemes: list[str]) -> SecurityRequirement:
    return SecurityRequirement(schemes={k: StringList(list=v) for k, v in schemes.items()})


def full_card(version: str = "0.3") -> AgentCard:
    return AgentCard(
        name="Agent ✨",
        description="does things",
        supported_interfaces=[
            AgentInterface(
                url="https://a.example/rpc", protocol_binding="JSONRPC", protocol_version=version
            ),
            AgentInterface(
                url="https://a.example/rest", protocol_binding="HTTP+JSON", protocol_version=version
            ),
        ],
        provider=AgentProvider(url="https://example.com", organization="Example"),
        version="1.2.3",
        documentation_url="https://docs.example",
        capabilities=AgentCapabilities(
            streaming=True,
            push_notifications=False,
            extensions=[
                AgentExtension(
                    uri="https://ext/1", description="d", required=True, params={"p": 1}
                ),
                AgentExtension(uri="https://ext/2"),
            ],
            extended_agent_card=True,
        ),
        security_schemes=every_scheme(),
        security_requirements=[requirement(code=["read"], key=[]), requirement()],
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain", "application/json"],
        skills=[
            AgentSkill(
                id="s1",
                name="Skill",
                description="a skill",
                tags=["t"],
                examples=["do it"],
                input_modes=["text/plain"],
                output_modes=["image/png"],
                security_requirements=[requirement(oidc=["openid"])],
            ),
            AgentSkill(id="s2", name="Bare", description="bare", tags=[]),
        ],
        signatures=[AgentCardSignature(protected="eyJ", signature="sig", header={"kid": "1"})],
        icon_url="https://a.example/icon.png",
    )


def status_event(state: TaskState) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(
        task_id="task-1",
        context_id="ctx-1",
        status=TaskStatus(state=state, timestamp=STAMP),
        metadata={"seq": 3},
    )


def artifact_event(append: bool, last: bool) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id="task-1",
        context_id="ctx-1",
        artifact=Artifact(artifact_id="a", parts=[Part(text="chunk")]),
        append=append,
        last_chunk=last,
    )


# wire shapes -----------------------------------------------------------------


def test_parts_have_kind_and_nested_file() -> None:
    wire = CODEC.encode_event(full_message())
    assert wire["kind"] == "message"
    assert wire["role"] == "user"
    parts = wire["parts"]
    assert parts[0] == {"kind": "text", "text": "héllo 👋 — ünïcode"}
    assert parts[2] == {
        "kind": "file",
        "file": {
            "bytes": base64.b64encode(b"\x00\xffbinary").decode(),
            "mimeType": "application/octet-stream",
            "name": "a.bin",
        },
    }
    assert parts[3] == {"kind": "file", "file": {"bytes": ""}}
    assert parts[4]["file"] == {
        "uri": "https://example.com/f.png",
        "mimeType": "image/png",
        "name": "f.png",
    }
    assert parts[5] == {"kind": "file", "file": {"uri": "file:///tmp/x"}, "metadata": {"k": "v"}}
    assert parts[7] == {"kind": "data", "data": {}}
    assert wire["referenceTaskIds"] == ["task-0"]
    assert wire["extensions"] == ["https://ext.example/v1"]


@pytest.mark.parametrize(
    ("state", "name", "final"),
    [
        (TaskState.UNSPECIFIED, "unknown", False),
        (TaskState.SUBMITTED, "submitted", False),
        (TaskState.WORKING, "working", False),
        (TaskState.COMPLETED, "completed", True),
        (TaskState.FAILED, "failed", True),
        (TaskState.CANCELED, "canceled", True),
        (TaskState.INPUT_REQUIRED, "input-required", True),
        (TaskState.REJECTED, "rejected", True),
        (TaskState.AUTH_REQUIRED, "auth-required", True),
    ],
)
def test_states_and_final(state: TaskState, name: str, final: bool) -> None:
    wire = CODEC.encode_event(status_event(state))
    assert wire["kind"] == "status-update"
    assert wire["status"]["state"] == name
    assert wire["final"] is final
    assert wire["status"]["timestamp"] == "2025-07-30T12:00:01.123Z"
    assert CODEC.decode_event(wire) == status_event(state)
    task_wire = CODEC.encode_result(Operation.GET_TASK, full_task(state))
    assert task_wire["status"]["state"] == name
    assert CODEC.decode_result(Operation.GET_TASK, task_wire) == full_task(state)


def test_cancelled_with_two_ls_is_accepted() -> None:
    wire = CODEC.encode_result(Operation.GET_TASK, minimal_task())
    wire["status"]["state"] = "cancelled"
    assert CODEC.decode_result(Operation.GET_TASK, wire).status.state is TaskState.CANCELED


def test_artifact_update_flags() -> None:
    assert "append" not in CODEC.encode_event(artifact_event(False, False))
    wire = CODEC.encode_event(artifact_event(True, True))
    assert wire["kind"] == "artifact-update"
    assert (wire["append"], wire["lastChunk"]) == (True, True)
    for append in (False, True):
        for last in (False, True):
            event = artifact_event(append, last)
            assert CODEC.decode_event(CODEC.encode_event(event)) == event


def test_send_params_shape_and_blocking() -> None:
    request = SendMessageRequest(
        message=full_message(),
        configuration=SendMessageConfiguration(
            accepted_output_modes=["text/plain"],
            history_length=0,
            return_immediately=True,
            task_push_notification_config=push_config(task_id=None),
        ),
        metadata={"m": True},
    )
    params = CODEC.encode_request(Operation.SEND_MESSAGE, request)
    assert params["configuration"] == {
        "acceptedOutputModes": ["text/plain"],
        "historyLength": 0,
        "pushNotificationConfig": {
            "id": "cfg-1",
            "url": "https://hook.example/a2a",
            "token": "tok",
            "authentication": {"schemes": ["Bearer"], "credentials": "secret"},
        },
        "blocking": False,
    }
    assert params["metadata"] == {"m": True}
    assert CODEC.decode_request(Operation.SEND_MESSAGE, params) == request


@pytest.mark.parametrize(
    ("configuration", "return_immediately"),
    [({}, False), ({"blocking": True}, False), ({"blocking": False}, True)],
)
def test_absent_blocking_means_blocking(
    configuration: dict[str, Any], return_immediately: bool
) -> None:
    params = {"message": CODEC.encode_event(Message.user("hi")), "configuration": configuration}
    decoded = CODEC.decode_request(Operation.SEND_MESSAGE, params)
    assert isinstance(decoded, SendMessageRequest)
    assert decoded.configuration is not None
    assert decoded.configuration.return_immediately is return_immediately


def test_push_config_shapes() -> None:
    wire = CODEC.encode_result(Operation.CREATE_PUSH_CONFIG, push_config())
    assert wire == {
        "taskId": "task-1",
        "pushNotificationConfig": {
            "id": "cfg-1",
            "url": "https://hook.example/a2a",
            "token": "tok",
            "authentication": {"schemes": ["Bearer"], "credentials": "secret"},
        },
    }
    several = {
        "taskId": "t",
        "pushNotificationConfig": {
            "url": "https://h",
            "authentication": {"schemes": ["Basic", "Bearer"]},
        },
    }
    decoded = CODEC.decode_request(Operation.CREATE_PUSH_CONFIG, several)
    assert decoded == TaskPushNotificationConfig(
        task_id="t", url="https://h", authentication=AuthenticationInfo(scheme="Basic")
    )
    empty = {
        "taskId": "t",
        "pushNotificationConfig": {"url": "u", "authentication": {"schemes": []}},
    }
    decoded = CODEC.decode_request(Operation.CREATE_PUSH_CONFIG, empty)
    assert isinstance(decoded, TaskPushNotificationConfig)
    assert decoded.authentication == AuthenticationInfo(scheme="")
    assert CODEC.encode_request(Operation.CREATE_PUSH_CONFIG, decoded) == empty


def test_push_get_without_config_id() -> None:
    decoded = CODEC.decode_request(Operation.GET_PUSH_CONFIG, {"id": "t"})
    assert decoded == GetTaskPushNotificationConfigRequest(task_id="t", id="")
    assert CODEC.encode_request(Operation.GET_PUSH_CONFIG, decoded) == {"id": "t"}
    with_id = {"id": "t", "pushNotificationConfigId": "c", "metadata": {"ignored": 1}}
    assert CODEC.decode_request(Operation.GET_PUSH_CONFIG, with_id) == (
        GetTaskPushNotificationConfigRequest(task_id="t", id="c")
    )


def test_push_list_and_delete_results() -> None:
    response = ListTaskPushNotificationConfigsResponse(configs=[push_config(), push_config("t2")])
    wire = CODEC.encode_result(Operation.LIST_PUSH_CONFIGS, response)
    assert isinstance(wire, list)
    assert [c["taskId"] for c in wire] == ["task-1", "t2"]
    assert CODEC.decode_result(Operation.LIST_PUSH_CONFIGS, wire) == response
    assert CODEC.encode_result(Operation.LIST_PUSH_CONFIGS, [push_config()]) == wire[:1]
    assert CODEC.decode_result(Operation.LIST_PUSH_CONFIGS, []) == (
        ListTaskPushNotificationConfigsResponse()
    )
    assert CODEC.encode_result(Operation.DELETE_PUSH_CONFIG, None) is None
    assert CODEC.decode_result(Operation.DELETE_PUSH_CONFIG, None) is None


def test_send_result_is_bare_task_or_message() -> None:
    task_wire = CODEC.encode_result(Operation.SEND_MESSAGE, full_task())
    assert task_wire["kind"] == "task"
    assert "task" not in task_wire
    assert CODEC.decode_result(Operation.SEND_MESSAGE, task_wire) == full_task()
    message_wire = CODEC.encode_result(Operation.SEND_MESSAGE, full_message(Role.AGENT))
    assert message_wire["kind"] == "message"
    assert CODEC.decode_result(Operation.SEND_MESSAGE, message_wire) == full_message(Role.AGENT)
    with pytest.raises(InvalidAgentResponseError):
        CODEC.decode_result(
            Operation.SEND_MESSAGE, CODEC.encode_event(status_event(TaskState.WORKING))
        )


def test_card_shape() -> None:
    wire = CODEC.encode_card(full_card())
    assert wire["protocolVersion"] == "0.3.0"
    assert wire["url"] == "https://a.example/rpc"
    assert wire["preferredTransport"] == "JSONRPC"
    assert wire["additionalInterfaces"] == [
        {"url": "https://a.example/rpc", "transport": "JSONRPC"},
        {"url": "https://a.example/rest", "transport": "HTTP+JSON"},
    ]
    assert wire["supportsAuthenticatedExtendedCard"] is True
    assert "extendedAgentCard" not in wire["capabilities"]
    assert wire["security"] == [{"code": ["read"], "key": []}, {}]
    assert wire["skills"][0]["security"] == [{"oidc": ["openid"]}]
    schemes = wire["securitySchemes"]
    assert schemes["key"] == {
        "type": "apiKey",
        "in": "header",
        "name": "X-Key",
        "description": "api key",
    }
    assert schemes["bearer"] == {"type": "http", "scheme": "Bearer", "bearerFormat": "JWT"}
    assert schemes["code"]["type"] == "oauth2"
    assert schemes["code"]["flows"] == {
        "authorizationCode": {
            "authorizationUrl": "https://auth/a",
            "tokenUrl": "https://auth/t",
            "refreshUrl": "https://auth/r",
            "scopes": {"read": "Read"},
        }
    }
    assert schemes["cc"]["flows"] == {
        "clientCredentials": {"tokenUrl": "https://auth/t", "scopes": {}}
    }
    assert schemes["oidc"]["type"] == "openIdConnect"
    assert schemes["mtls"] == {"type": "mutualTLS"}


def test_card_prefers_interfaces_tagged_03() -> None:
    card = full_card(version="1.0")
    card.supported_interfaces.append(
        AgentInterface(
            url="https://a.example/v03", protocol_binding="JSONRPC", protocol_version="0.3"
        )
    )
    wire = CODEC.encode_card(card)
    assert wire["url"] == "https://a.example/v03"
    assert "additionalInterfaces" not in wire
    decoded = CODEC.decode_card(wire)
    assert [(i.url, i.protocol_version) for i in decoded.supported_interfaces] == [
        ("https://a.example/v03", "0.3")
    ]
    # Without any interface tagged 0.3, all of them describe the agent.
    untagged = CODEC.encode_card(full_card(version="1.0"))
    assert untagged["url"] == "https://a.example/rpc"
    assert len(untagged["additionalInterfaces"]) == 2


def test_card_decode_interfaces_and_defaults() -> None:
    wire = {
        "name": "n",
        "description": "d",
        "url": "https://main",
        "version": "1",
        "capabilities": {"stateTransitionHistory": True},
        "defaultInputModes": [],
        "defaultOutputModes": [],
        "skills": [],
        "additionalInterfaces": [
            {"url": "https://main", "transport": "JSONRPC"},
            {"url": "https://grpc", "transport": "GRPC"},
        ],
    }
    card = CODEC.decode_card(wire)
    assert [(i.url, i.protocol_binding, i.protocol_version) for i in card.supported_interfaces] == [
        ("https://main", "JSONRPC", "0.3"),
        ("https://grpc", "GRPC", "0.3"),
    ]
    assert card.capabilities == AgentCapabilities()


def test_card_oauth_with_several_flows_keeps_the_first() -> None:
    wire = CODEC.encode_card(full_card())
    wire["securitySchemes"]["multi"] = {
        "type": "oauth2",
        "flows": {
            "password": {"tokenUrl": "https://p", "scopes": {}},
            "clientCredentials": {"tokenUrl": "https://cc", "scopes": {"a": "A"}},
            "authorizationCode": {
                "authorizationUrl": "https://a",
                "tokenUrl": "https://t",
                "scopes": {},
            },
        },
    }
    card = CODEC.decode_card(wire)
    flows = card.security_schemes["multi"].oauth2_security_scheme
    assert flows is not None
    assert flows.flows.authorization_code is not None
    assert flows.flows.client_credentials is None
    del wire["securitySchemes"]["multi"]["flows"]["authorizationCode"]
    flows = CODEC.decode_card(wire).security_schemes["multi"].oauth2_security_scheme
    assert flows is not None
    assert flows.flows.client_credentials is not None


# round trips -------------------------------------------------------------------

REQUESTS: list[tuple[Operation, Any]] = [
    (Operation.SEND_MESSAGE, SendMessageRequest(message=full_message())),
    (
        Operation.SEND_STREAMING_MESSAGE,
        SendMessageRequest(
            message=Message.user("x"),
            configuration=SendMessageConfiguration(),
            metadata={},
        ),
    ),
    (Operation.GET_TASK, GetTaskRequest(id="t", history_length=5)),
    (Operation.GET_TASK, GetTaskRequest(id="t")),
    (Operation.CANCEL_TASK, CancelTaskRequest(id="t", metadata={"why": "because"})),
    (Operation.CANCEL_TASK, CancelTaskRequest(id="t")),
    (Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id="t")),
    (Operation.CREATE_PUSH_CONFIG, push_config()),
    (Operation.CREATE_PUSH_CONFIG, TaskPushNotificationConfig(task_id="t", url="https://h")),
    (Operation.GET_PUSH_CONFIG, GetTaskPushNotificationConfigRequest(task_id="t", id="c")),
    (Operation.LIST_PUSH_CONFIGS, ListTaskPushNotificationConfigsRequest(task_id="t")),
    (Operation.DELETE_PUSH_CONFIG, DeleteTaskPushNotificationConfigRequest(task_id="t", id="c")),
    (Operation.GET_EXTENDED_CARD, GetExtendedAgentCardRequest()),
]


@pytest.mark.parametrize(("op", "request_model"), REQUESTS)
def test_request_round_trip(op: Operation, request_model: Any) -> None:
    params = CODEC.encode_request(op, request_model)
    assert CODEC.decode_request(op, params) == request_model


RESULTS: list[tuple[Operation, Any]] = [
    (Operation.SEND_MESSAGE, full_task()),
    (Operation.SEND_MESSAGE, minimal_task()),
    (Operation.SEND_MESSAGE, full_message(Role.AGENT)),
    (Operation.SEND_STREAMING_MESSAGE, status_event(TaskState.COMPLETED)),
    (Operation.SUBSCRIBE_TO_TASK, artifact_event(True, False)),
    (Operation.GET_TASK, full_task(TaskState.AUTH_REQUIRED)),
    (Operation.CANCEL_TASK, full_task(TaskState.CANCELED)),
    (Operation.CREATE_PUSH_CONFIG, push_config()),
    (Operation.GET_PUSH_CONFIG, TaskPushNotificationConfig(task_id="t", url="https://h")),
    (Operation.LIST_PUSH_CONFIGS, ListTaskPushNotificationConfigsResponse(configs=[push_config()])),
    (Operation.DELETE_PUSH_CONFIG, None),
    (Operation.GET_EXTENDED_CARD, full_card()),
]


@pytest.mark.parametrize(("op", "result"), RESULTS)
def test_result_round_trip(op: Operation, result: Any) -> None:
    assert CODEC.decode_result(op, CODEC.encode_result(op, result)) == result


def test_card_round_trip_minimal() -> None:
    card = AgentCard(
        name="n",
        description="d",
        version="v",
        supported_interfaces=[
            AgentInterface(url="u", protocol_binding="GRPC", protocol_version="0.3")
        ],
    )
    assert CODEC.decode_card(CODEC.encode_card(card)) == card


def test_large_base64_round_trip() -> None:
    message = Message(message_id="m", role=Role.USER, parts=[Part(raw=BIG, media_type="x/y")])
    params = CODEC.encode_request(Operation.SEND_MESSAGE, SendMessageRequest(message=message))
    assert params["message"]["parts"][0]["file"]["bytes"] == base64.b64encode(BIG).decode()
    decoded = CODEC.decode_request(Operation.SEND_MESSAGE, params)
    assert isinstance(decoded, SendMessageRequest)
    assert decoded.message.parts[0].raw == BIG


def test_unknown_fields_are_ignored() -> None:
    params = CODEC.encode_request(
        Operation.SEND_MESSAGE, SendMessageRequest(message=full_message())
    )
    params["future"] = {"x": 1}
    params["message"]["somethingNew"] = [1]
    params["message"]["parts"][0]["extra"] = True
    params["message"]["parts"][2]["file"]["sha256"] = "abc"
    decoded = CODEC.decode_request(Operation.SEND_MESSAGE, params)
    assert decoded == SendMessageRequest(message=full_message())


def test_implied_media_types_are_left_out() -> None:
    message = Message(
        message_id="m",
        role=Role.AGENT,
        parts=[
            Part(text="t", media_type="text/plain"),
            Part(data={"a": 1}, media_type="application/json"),
        ],
    )
    wire = CODEC.encode_event(message)
    assert wire["parts"] == [{"kind": "text", "text": "t"}, {"kind": "data", "data": {"a": 1}}]


@given(
    st.lists(
        st.one_of(
            st.builds(Part, text=st.text(max_size=20)),
            st.builds(Part, raw=st.binary(max_size=40), filename=st.none() | st.text(max_size=8)),
            st.builds(Part, url=st.text(max_size=20), media_type=st.none() | st.text(max_size=8)),
            st.builds(
                Part,
                data=st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5)),
                metadata=st.none() | st.dictionaries(st.text(max_size=5), st.booleans()),
            ),
        ),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from(list(TaskState)),
    st.text(max_size=10),
)
@settings(max_examples=60)
def test_task_round_trip_property(parts: list[Part], state: TaskState, text: str) -> None:
    task = Task(
        id=text or "id",
        context_id=text,
        status=TaskStatus(state=state),
        history=[Message(message_id="m", role=Role.USER, parts=parts, context_id=text)],
        artifacts=[Artifact(artifact_id="a", parts=parts, name=text)],
    )
    assert (
        CODEC.decode_result(Operation.GET_TASK, CODEC.encode_result(Operation.GET_TASK, task))
        == task
    )


# unrepresentable -------------------------------------------------------------


@pytest.mark.parametrize("data", [[1, 2], "text", 3, 2.5, True, False])
def test_non_object_data_part_is_wrapped_in_an_object(data: Any) -> None:
    """0.3 data parts hold objects: a result keeps the value as {"value": ...}, marked."""
    marked = {V1_KEY: {"dataWrapped": True}}
    message = Message(message_id="m", role=Role.AGENT, parts=[Part(data=data)])
    part = CODEC.encode_event(message)["parts"][0]
    assert part == {"kind": "data", "data": {"value": data}, "metadata": marked}
    task = CODEC.encode_result(
        Operation.GET_TASK,
        Task(
            id="t",
            status=TaskStatus(state=TaskState.COMPLETED),
            artifacts=[Artifact(artifact_id="a", parts=[Part(data=data, metadata={"k": 1})])],
        ),
    )
    assert task["artifacts"][0]["parts"][0]["metadata"] == {"k": 1, **marked}
    with pytest.raises(UnrepresentableError, match="object"):  # a request stays strict
        CODEC.encode_request(Operation.SEND_MESSAGE, SendMessageRequest(message=message))


@pytest.mark.parametrize(
    "part",
    [
        Part(text="x", media_type="text/markdown"),
        Part(text="x", filename="a.txt"),
        Part(data={"a": 1}, media_type="application/vnd.x+json"),
        Part(data={"a": 1}, filename="a.json"),
    ],
)
def test_hints_on_text_and_data_parts_move_to_metadata(part: Part) -> None:
    encoded = CODEC.encode_event(Message(message_id="m", role=Role.USER, parts=[part]))
    moved = encoded["parts"][0]["metadata"][V1_KEY]
    assert moved == {
        k: v
        for k, v in (("filename", part.filename), ("mediaType", part.media_type))
        if v is not None
    }
    assert "filename" not in encoded["parts"][0]
    with pytest.raises(UnrepresentableError):
        CODEC.encode_request(
            Operation.SEND_MESSAGE,
            SendMessageRequest(message=Message(message_id="m", role=Role.USER, parts=[part])),
        )


def test_unrepresentable_requests_and_results() -> None:
    cases: list[tuple[Operation, Any]] = [
        (Operation.GET_TASK, GetTaskRequest(id="t", tenant="acme")),
        (
            Operation.SEND_MESSAGE,
            SendMessageRequest(
                message=Message.user("x"),
                configuration=SendMessageConfiguration(task_push_notification_config=push_config()),
            ),
        ),
        (
            Operation.SEND_MESSAGE,
            SendMessageRequest(
                message=Message(message_id="m", role=Role.UNSPECIFIED, parts=[Part(text="x")])
            ),
        ),
        (Operation.CREATE_PUSH_CONFIG, push_config(task_id=None)),
        (
            Operation.CREATE_PUSH_CONFIG,
            TaskPushNotificationConfig(task_id="t", url="u", tenant="x"),
        ),
        (
            Operation.LIST_PUSH_CONFIGS,
            ListTaskPushNotificationConfigsRequest(task_id="t", page_size=5),
        ),
        (
            Operation.LIST_PUSH_CONFIGS,
            ListTaskPushNotificationConfigsRequest(task_id="t", page_token="p"),
        ),
    ]
    for op, request in cases:
        with pytest.raises(UnrepresentableError):
            CODEC.encode_request(op, request)
    # A result cannot fail: 0.3 cannot page, so the reader gets the first page.
    first = CODEC.encode_result(
        Operation.LIST_PUSH_CONFIGS,
        ListTaskPushNotificationConfigsResponse(configs=[push_config()], next_page_token="more"),
    )
    assert len(first) == 1
    with pytest.raises(UnrepresentableError):
        CODEC.encode_result(Operation.GET_PUSH_CONFIG, push_config(task_id=None))


def test_unrepresentable_cards() -> None:
    device = full_card()
    device.security_schemes["device"] = SecurityScheme(
        oauth2_security_scheme=OAuth2SecurityScheme(
            flows=OAuthFlows(
                device_code=DeviceCodeOAuthFlow(device_authorization_url="d", token_url="t")
            )
        )
    )
    pkce = full_card()
    pkce.security_schemes["pkce"] = SecurityScheme(
        oauth2_security_scheme=OAuth2SecurityScheme(
            flows=OAuthFlows(
                authorization_code=AuthorizationCodeOAuthFlow(
                    authorization_url="a", token_url="t", pkce_required=True
                )
            )
        )
    )
    location = full_card()
    location.security_schemes["odd"] = SecurityScheme(
        api_key_security_scheme=APIKeySecurityScheme(location="body", name="k")
    )
    no_interface = full_card()
    no_interface.supported_interfaces.clear()
    tenant = full_card()
    tenant.supported_interfaces[0].tenant = "acme"
    for card in (device, pkce, location, no_interface, tenant):
        with pytest.raises(UnrepresentableError):
            CODEC.encode_card(card)


def test_list_tasks_has_no_03_method() -> None:
    with pytest.raises(MethodNotFoundError):
        CODEC.decode_request(Operation.LIST_TASKS, {})
    with pytest.raises(UnsupportedOperationError):
        CODEC.encode_request(Operation.LIST_TASKS, ListTasksRequest())
    with pytest.raises(UnsupportedOperationError):
        CODEC.decode_result(Operation.LIST_TASKS, {})


# malformed input ---------------------------------------------------------------

BAD_PARAMS: list[tuple[Operation, Any]] = [
    (Operation.SEND_MESSAGE, None),
    (Operation.SEND_MESSAGE, []),
    (Operation.SEND_MESSAGE, "x"),
    (Operation.SEND_MESSAGE, {}),
    (Operation.SEND_MESSAGE, {"message": "x"}),
    (Operation.SEND_MESSAGE, {"message": {"role": "user", "parts": [], "messageId": "m"}}),
    (
        Operation.SEND_MESSAGE,
        {"message": {"role": "robot", "parts": [{"kind": "text", "text": "x"}], "messageId": "m"}},
    ),
    (
        Operation.SEND_MESSAGE,
        {"message": {"role": "user", "parts": [{"kind": "image"}], "messageId": "m"}},
    ),
    (
        Operation.SEND_MESSAGE,
        {"message": {"role": "user", "parts": [{"kind": "file"}], "messageId": "m"}},
    ),
    (
        Operation.SEND_MESSAGE,
        {
            "message": {
                "role": "user",
                "messageId": "m",
                "parts": [{"kind": "file", "file": {"bytes": "AA==", "uri": "u"}}],
            }
        },
    ),
    (
        Operation.SEND_MESSAGE,
        {
            "message": {
                "role": "user",
                "messageId": "m",
                "parts": [{"kind": "file", "file": {"bytes": "!!not base64!!"}}],
            }
        },
    ),
    (
        Operation.SEND_MESSAGE,
        {
            "message": {
                "role": "user",
                "messageId": "m",
                "parts": [{"kind": "data", "data": [1, 2]}],
            }
        },
    ),
    (
        Operation.SEND_MESSAGE,
        {"message": {"role": "user", "messageId": "m", "parts": [{"kind": "text", "text": 5}]}},
    ),
    (
        Operation.SEND_MESSAGE,
        {
            "message": {"role": "user", "messageId": "m", "parts": [{"kind": "text", "text": "x"}]},
            "configuration": {"blocking": "yes"},
        },
    ),
    (
        Operation.SEND_MESSAGE,
        {
            "message": {"role": "user", "messageId": "m", "parts": [{"kind": "text", "text": "x"}]},
            "configuration": {"historyLength": -1},
        },
    ),
    (
        Operation.SEND_MESSAGE,
        {
            "message": {"role": "user", "messageId": "m", "parts": [{"kind": "text", "text": "x"}]},
            "configuration": {
                "pushNotificationConfig": {"url": "u", "authentication": {"schemes": "Bearer"}}
            },
        },
    ),
    (Operation.GET_TASK, {}),
    (Operation.GET_TASK, {"id": 5}),
    (Operation.GET_TASK, {"id": "t", "historyLength": "lots"}),
    (Operation.CANCEL_TASK, {"id": None}),
    (Operation.CANCEL_TASK, {"id": "t", "metadata": [1]}),
    (Operation.SUBSCRIBE_TO_TASK, {"id": {"x": 1}}),
    (Operation.CREATE_PUSH_CONFIG, {"taskId": "t"}),
    (Operation.CREATE_PUSH_CONFIG, {"taskId": "t", "pushNotificationConfig": "u"}),
    (Operation.CREATE_PUSH_CONFIG, {"taskId": "t", "pushNotificationConfig": {"token": "x"}}),
    (Operation.GET_PUSH_CONFIG, {"pushNotificationConfigId": "c"}),
    (Operation.LIST_PUSH_CONFIGS, {"id": []}),
    (Operation.DELETE_PUSH_CONFIG, {"id": "t"}),
    (Operation.GET_EXTENDED_CARD, "x"),
    (Operation.GET_EXTENDED_CARD, [1]),
]


@pytest.mark.parametrize(("op", "params"), BAD_PARAMS)
def test_malformed_params_are_invalid_params(op: Operation, params: Any) -> None:
    with pytest.raises(InvalidParamsError):
        CODEC.decode_request(op, params)


def test_part_limit() -> None:
    codec = V03JsonRpcCodec(DecodeLimits(max_parts=2))
    message = Message(message_id="m", role=Role.USER, parts=[Part(text="x")] * 3)
    params = codec.encode_request(Operation.SEND_MESSAGE, SendMessageRequest(message=message))
    with pytest.raises(PayloadTooLargeError):
        codec.decode_request(Operation.SEND_MESSAGE, params)


BAD_RESULTS: list[tuple[Operation, Any]] = [
    (Operation.SEND_MESSAGE, None),
    (Operation.SEND_MESSAGE, {"kind": "task"}),
    (Operation.SEND_MESSAGE, {"kind": "bogus"}),
    (Operation.GET_TASK, {"id": "t", "status": {"state": "sleeping"}}),
    (Operation.GET_TASK, {"id": "t", "status": {"state": "working", "timestamp": "yesterday"}}),
    (
        Operation.GET_TASK,
        {
            "id": "t",
            "status": {"state": "working"},
            "artifacts": [{"artifactId": "a", "parts": []}],
        },
    ),
    (
        Operation.GET_TASK,
        {"id": "t", "status": {"state": "working", "timestamp": "9999-12-31T23:59:59-23:59"}},
    ),
    (Operation.CANCEL_TASK, []),
    (Operation.CREATE_PUSH_CONFIG, {"taskId": "t"}),
    (Operation.GET_PUSH_CONFIG, "x"),
    (Operation.LIST_PUSH_CONFIGS, {"configs": []}),
    (Operation.LIST_PUSH_CONFIGS, [1]),
    (Operation.GET_EXTENDED_CARD, {"name": "n"}),
    (
        Operation.GET_EXTENDED_CARD,
        {
            "name": "n",
            "description": "d",
            "url": "u",
            "version": "1",
            "securitySchemes": {"x": {"type": "kerberos"}},
        },
    ),
    (
        Operation.GET_EXTENDED_CARD,
        {
            "name": "n",
            "description": "d",
            "url": "u",
            "version": "1",
            "securitySchemes": {"x": {"type": "oauth2", "flows": {}}},
        },
    ),
    (
        Operation.GET_EXTENDED_CARD,
        {"name": "n", "description": "d", "url": "u", "version": "1", "additionalInterfaces": "u"},
    ),
    (Operation.SEND_STREAMING_MESSAGE, {"kind": "status-update", "taskId": "t", "status": 1}),
    (Operation.SUBSCRIBE_TO_TASK, {"kind": "artifact-update", "taskId": "t", "artifact": None}),
]


@pytest.mark.parametrize(("op", "value"), BAD_RESULTS)
def test_malformed_results_are_invalid_agent_response(op: Operation, value: Any) -> None:
    with pytest.raises(InvalidAgentResponseError):
        CODEC.decode_result(op, value)


REQUEST_OPS = [op for op in Operation if op is not Operation.LIST_TASKS]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
keys = st.sampled_from(
    [
        "kind",
        "id",
        "taskId",
        "contextId",
        "messageId",
        "role",
        "parts",
        "message",
        "status",
        "state",
        "file",
        "bytes",
        "uri",
        "data",
        "text",
        "artifact",
        "configuration",
        "blocking",
        "pushNotificationConfig",
        "authentication",
        "schemes",
        "url",
        "securitySchemes",
        "type",
        "flows",
        "skills",
        "security",
        "capabilities",
        "additionalInterfaces",
        "name",
    ]
)
shaped = st.recursive(
    json_values,
    lambda inner: st.dictionaries(keys, inner, max_size=6) | st.lists(inner, max_size=3),
    max_leaves=30,
)


@given(st.sampled_from(REQUEST_OPS), shaped)
@settings(max_examples=300)
def test_random_params_raise_only_our_errors(op: Operation, params: Any) -> None:
    with contextlib.suppress(InvalidParamsError, PayloadTooLargeError):
        CODEC.decode_request(op, params)


@given(st.sampled_from(list(Operation)), shaped)
@settings(max_examples=300)
def test_random_results_raise_only_our_errors(op: Operation, value: Any) -> None:
    with contextlib.suppress(InvalidAgentResponseError, UnsupportedOperationError):
        CODEC.decode_result(op, value)
    with contextlib.suppress(InvalidAgentResponseError):
        CODEC.decode_event(value)


@given(shaped)
@settings(max_examples=200)
def test_random_cards_raise_only_our_errors(value: Any) -> None:
    with contextlib.suppress(InvalidAgentResponseError):
        CODEC.decode_card(value)


# errors ------------------------------------------------------------------


def test_errors_use_the_03_form() -> None:
    error = TaskNotFoundError("gone", data={"taskId": "t"})
    wire = CODEC.encode_error(error)
    assert wire == {"code": -32001, "message": "gone", "data": {"taskId": "t"}}
    decoded = CODEC.decode_error(wire)
    assert isinstance(decoded, TaskNotFoundError)
    assert decoded == error
    assert isinstance(CODEC.decode_error("junk"), A2AError)


def test_part_with_an_unknown_type_and_no_kind_is_invalid_params() -> None:
    """A part without ``kind`` is read by its one member, unless it says it is something
    else (the conformance kit's ``test_unsupported_part_kind``)."""
    from a2a_core.errors import InvalidParamsError
    from a2a_core.wire import Operation, V03JsonRpcCodec

    params = {
        "message": {
            "kind": "message",
            "messageId": "m1",
            "role": "user",
            "parts": [{"type": "unsupported_type", "text": "no kind"}],
        }
    }
    with pytest.raises(InvalidParamsError):
        V03JsonRpcCodec().decode_request(Operation.SEND_MESSAGE, params)


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        ({"text": "hi"}, {"text": "hi"}),
        ({"type": "text", "text": "hi"}, {"text": "hi"}),
        ({"data": {"n": 1}}, {"data": {"n": 1}}),
        ({"file": {"uri": "https://x.test/a.txt", "mimeType": "text/plain"}}, None),
    ],
)
def test_a_part_without_kind_is_read_by_its_member(part: dict, expected: dict | None) -> None:
    from a2a_core.wire import Operation, V03JsonRpcCodec

    params = {"message": {"kind": "message", "messageId": "m1", "role": "user", "parts": [part]}}
    request = V03JsonRpcCodec().decode_request(Operation.SEND_MESSAGE, params)
    assert isinstance(request, SendMessageRequest)
    [decoded] = request.message.parts
    if expected is None:
        assert (decoded.url, decoded.media_type) == ("https://x.test/a.txt", "text/plain")
    else:
        assert decoded.model_dump(exclude_none=True) == expected


@pytest.mark.parametrize("part", [{}, {"text": "a", "data": {"n": 1}}, {"metadata": {"x": 1}}])
def test_a_part_without_kind_or_with_no_single_member_is_refused(part: dict) -> None:
    from a2a_core.errors import InvalidParamsError
    from a2a_core.wire import Operation, V03JsonRpcCodec

    params = {"message": {"kind": "message", "messageId": "m1", "role": "user", "parts": [part]}}
    with pytest.raises(InvalidParamsError):
        V03JsonRpcCodec().decode_request(Operation.SEND_MESSAGE, params)
