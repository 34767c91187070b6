"""Cross-checks of the 0.3 JSON-RPC codec against the official SDK's 0.3 pydantic types.

What we emit must validate as the SDK's 0.3 models, and what those models
emit must decode with our codec and survive the trip back unchanged.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from a2a.compat.v0_3 import types as t03
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
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    HTTPAuthSecurityScheme,
    ImplicitOAuthFlow,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
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
from a2a_core.wire import Operation
from a2a_core.wire.v03 import V03JsonRpcCodec
from pydantic import BaseModel

CODEC = V03JsonRpcCodec()
STAMP = datetime(2025, 7, 30, 12, 0, 1, 123000, tzinfo=UTC)
STAMP_WIRE = "2025-07-30T12:00:01.123Z"


def dump(model: BaseModel) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


# ours -> SDK -----------------------------------------------------------------------


def message() -> Message:
    return Message(
        message_id="m1",
        context_id="c1",
        task_id="t1",
        role=Role.USER,
        parts=[
            Part(text="hi ✓"),
            Part(raw=b"\x00\x01\x02", filename="b.bin", media_type="application/octet-stream"),
            Part(url="https://f.example/x.png", media_type="image/png"),
            Part(data={"a": [1, {"b": None}]}, metadata={"m": 1}),
        ],
        metadata={"k": "v"},
        extensions=["https://ext/1"],
        reference_task_ids=["t0"],
    )


def task(state: TaskState = TaskState.COMPLETED) -> Task:
    return Task(
        id="t1",
        context_id="c1",
        status=TaskStatus(state=state, timestamp=STAMP, message=message()),
        artifacts=[
            Artifact(artifact_id="a1", name="n", parts=[Part(text="out")], extensions=["e"])
        ],
        history=[message()],
        metadata={"x": 1},
    )


def card() -> AgentCard:
    return AgentCard(
        name="agent",
        description="desc",
        supported_interfaces=[
            AgentInterface(url="https://a/rpc", protocol_binding="JSONRPC", protocol_version="0.3"),
            AgentInterface(url="https://a/grpc", protocol_binding="GRPC", protocol_version="0.3"),
        ],
        provider=AgentProvider(url="https://org", organization="Org"),
        version="2.0",
        documentation_url="https://docs",
        capabilities=AgentCapabilities(
            streaming=True,
            push_notifications=True,
            extensions=[AgentExtension(uri="https://ext", description="d", params={"a": 1})],
            extended_agent_card=False,
        ),
        security_schemes={
            "key": SecurityScheme(
                api_key_security_scheme=APIKeySecurityScheme(location="query", name="k")
            ),
            "http": SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Basic")
            ),
            "oauth": SecurityScheme(
                oauth2_security_scheme=OAuth2SecurityScheme(
                    flows=OAuthFlows(
                        authorization_code=AuthorizationCodeOAuthFlow(
                            authorization_url="https://a", token_url="https://t", scopes={"s": "S"}
                        )
                    )
                )
            ),
            "implicit": SecurityScheme(
                oauth2_security_scheme=OAuth2SecurityScheme(
                    flows=OAuthFlows(implicit=ImplicitOAuthFlow(authorization_url="https://a"))
                )
            ),
            "password": SecurityScheme(
                oauth2_security_scheme=OAuth2SecurityScheme(
                    flows=OAuthFlows(password=PasswordOAuthFlow(token_url="https://t"))
                )
            ),
            "oidc": SecurityScheme(
                open_id_connect_security_scheme=OpenIdConnectSecurityScheme(
                    open_id_connect_url="https://o", description="oidc"
                )
            ),
            "mtls": SecurityScheme(mtls_security_scheme=MutualTlsSecurityScheme()),
        },
        security_requirements=[
            SecurityRequirement(schemes={"oauth": StringList(list=["s"]), "key": StringList()})
        ],
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="s",
                name="S",
                description="d",
                tags=["x"],
                security_requirements=[SecurityRequirement(schemes={"oidc": StringList()})],
            )
        ],
        signatures=[AgentCardSignature(protected="p", signature="s")],
        icon_url="https://a/i.png",
    )


def push() -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        task_id="t1",
        id="p1",
        url="https://hook",
        token="tok",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="c"),
    )


EVENTS: list[tuple[Any, type[BaseModel]]] = [
    (task(), t03.Task),
    (message(), t03.Message),
    (
        TaskStatusUpdateEvent(
            task_id="t1", context_id="c1", status=TaskStatus(state=TaskState.INPUT_REQUIRED)
        ),
        t03.TaskStatusUpdateEvent,
    ),
    (
        TaskArtifactUpdateEvent(
            task_id="t1",
            context_id="c1",
            artifact=Artifact(artifact_id="a", parts=[Part(data={"d": 1})]),
            append=True,
        ),
        t03.TaskArtifactUpdateEvent,
    ),
]


@pytest.mark.parametrize(("event", "sdk_type"), EVENTS)
def test_events_validate_as_sdk_types(event: Any, sdk_type: type[BaseModel]) -> None:
    wire = CODEC.encode_event(event)
    parsed = sdk_type.model_validate(wire)
    assert CODEC.decode_event(dump(parsed)) == event
    response = t03.SendStreamingMessageSuccessResponse.model_validate(
        {"jsonrpc": "2.0", "id": 1, "result": wire}
    )
    assert isinstance(response.result, sdk_type)


@pytest.mark.parametrize("state", list(TaskState))
def test_every_state_validates(state: TaskState) -> None:
    parsed = t03.Task.model_validate(CODEC.encode_result(Operation.GET_TASK, task(state)))
    assert CODEC.decode_result(Operation.GET_TASK, dump(parsed)) == task(state)


REQUESTS: list[tuple[Operation, Any, type[BaseModel]]] = [
    (
        Operation.SEND_MESSAGE,
        SendMessageRequest(
            message=message(),
            configuration=SendMessageConfiguration(
                accepted_output_modes=["text/plain"],
                history_length=2,
                return_immediately=True,
                task_push_notification_config=TaskPushNotificationConfig(
                    url="https://h", authentication=AuthenticationInfo(scheme="Bearer")
                ),
            ),
            metadata={"a": "b"},
        ),
        t03.SendMessageRequest,
    ),
    (
        Operation.SEND_STREAMING_MESSAGE,
        SendMessageRequest(message=message()),
        t03.SendStreamingMessageRequest,
    ),
    (Operation.GET_TASK, GetTaskRequest(id="t1", history_length=4), t03.GetTaskRequest),
    (Operation.CANCEL_TASK, CancelTaskRequest(id="t1", metadata={"r": 1}), t03.CancelTaskRequest),
    (Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id="t1"), t03.TaskResubscriptionRequest),
    (Operation.CREATE_PUSH_CONFIG, push(), t03.SetTaskPushNotificationConfigRequest),
    (
        Operation.GET_PUSH_CONFIG,
        GetTaskPushNotificationConfigRequest(task_id="t1", id="p1"),
        t03.GetTaskPushNotificationConfigRequest,
    ),
    (
        Operation.LIST_PUSH_CONFIGS,
        ListTaskPushNotificationConfigsRequest(task_id="t1"),
        t03.ListTaskPushNotificationConfigRequest,
    ),
    (
        Operation.DELETE_PUSH_CONFIG,
        DeleteTaskPushNotificationConfigRequest(task_id="t1", id="p1"),
        t03.DeleteTaskPushNotificationConfigRequest,
    ),
]


@pytest.mark.parametrize(("op", "request_model", "sdk_type"), REQUESTS)
def test_requests_validate_as_sdk_requests(
    op: Operation, request_model: Any, sdk_type: type[BaseModel]
) -> None:
    params = CODEC.encode_request(op, request_model)
    envelope = {"jsonrpc": "2.0", "id": 7, "method": op.method("0.3"), "params": params}
    parsed = sdk_type.model_validate(envelope)
    again = dump(parsed)["params"]
    assert CODEC.decode_request(op, again) == request_model


def test_extended_card_request_has_no_params() -> None:
    assert (
        CODEC.encode_request(
            Operation.GET_EXTENDED_CARD, CODEC.decode_request(Operation.GET_EXTENDED_CARD, None)
        )
        is None
    )
    envelope = {"jsonrpc": "2.0", "id": 1, "method": "agent/getAuthenticatedExtendedCard"}
    t03.GetAuthenticatedExtendedCardRequest.model_validate(envelope)


RESULTS: list[tuple[Operation, Any, type[BaseModel]]] = [
    (Operation.SEND_MESSAGE, task(), t03.SendMessageSuccessResponse),
    (Operation.SEND_MESSAGE, message(), t03.SendMessageSuccessResponse),
    (Operation.GET_TASK, task(TaskState.WORKING), t03.GetTaskSuccessResponse),
    (Operation.CANCEL_TASK, task(TaskState.CANCELED), t03.CancelTaskSuccessResponse),
    (Operation.CREATE_PUSH_CONFIG, push(), t03.SetTaskPushNotificationConfigSuccessResponse),
    (Operation.GET_PUSH_CONFIG, push(), t03.GetTaskPushNotificationConfigSuccessResponse),
    (
        Operation.LIST_PUSH_CONFIGS,
        ListTaskPushNotificationConfigsResponse(configs=[push(), push()]),
        t03.ListTaskPushNotificationConfigSuccessResponse,
    ),
    (Operation.DELETE_PUSH_CONFIG, None, t03.DeleteTaskPushNotificationConfigSuccessResponse),
    (Operation.GET_EXTENDED_CARD, card(), t03.GetAuthenticatedExtendedCardSuccessResponse),
]


@pytest.mark.parametrize(("op", "result", "sdk_type"), RESULTS)
def test_results_validate_as_sdk_responses(
    op: Operation, result: Any, sdk_type: type[BaseModel]
) -> None:
    wire = CODEC.encode_result(op, result)
    parsed = sdk_type.model_validate({"jsonrpc": "2.0", "id": 7, "result": wire})
    again = parsed.model_dump(mode="json", by_alias=True, exclude_none=True).get("result")
    assert CODEC.decode_result(op, again) == result


def test_card_validates_and_keeps_every_scheme() -> None:
    parsed = t03.AgentCard.model_validate(CODEC.encode_card(card()))
    assert parsed.url == "https://a/rpc"
    assert parsed.preferred_transport == "JSONRPC"
    assert [i.url for i in parsed.additional_interfaces or []] == [
        "https://a/rpc",
        "https://a/grpc",
    ]
    assert parsed.supports_authenticated_extended_card is False
    assert parsed.security_schemes is not None
    kinds = {name: scheme.root.type for name, scheme in parsed.security_schemes.items()}
    assert kinds == {
        "key": "apiKey",
        "http": "http",
        "oauth": "oauth2",
        "implicit": "oauth2",
        "password": "oauth2",
        "oidc": "openIdConnect",
        "mtls": "mutualTLS",
    }
    assert CODEC.decode_card(dump(parsed)) == card()


# SDK -> ours -----------------------------------------------------------------------


def sdk_message() -> t03.Message:
    return t03.Message(
        message_id="m9",
        role=t03.Role.agent,
        context_id="c9",
        parts=[
            t03.Part(root=t03.TextPart(text="résumé")),
            t03.Part(
                root=t03.FilePart(file=t03.FileWithBytes(bytes="AAEC", mime_type="x/y", name="n"))
            ),
            t03.Part(root=t03.FilePart(file=t03.FileWithUri(uri="https://u"), metadata={"a": 1})),
            t03.Part(root=t03.DataPart(data={"k": [True, None]})),
        ],
        reference_task_ids=["r1"],
        extensions=["e"],
        metadata={"z": {"y": 1}},
    )


def sdk_task(state: t03.TaskState) -> t03.Task:
    return t03.Task(
        id="t9",
        context_id="c9",
        status=t03.TaskStatus(state=state, message=sdk_message(), timestamp=STAMP_WIRE),
        history=[sdk_message()],
        artifacts=[
            t03.Artifact(artifact_id="a9", parts=[t03.Part(root=t03.TextPart(text="x"))], name="n")
        ],
        metadata={"q": 1},
    )


SDK_OBJECTS: list[tuple[Operation, BaseModel]] = [
    *[(Operation.GET_TASK, sdk_task(state)) for state in t03.TaskState],
    (Operation.SEND_MESSAGE, sdk_message()),
    (
        Operation.SEND_STREAMING_MESSAGE,
        t03.TaskStatusUpdateEvent(
            task_id="t9",
            context_id="c9",
            status=t03.TaskStatus(state=t03.TaskState.completed, timestamp=STAMP_WIRE),
            final=True,
            metadata={"m": 1},
        ),
    ),
    (
        Operation.SUBSCRIBE_TO_TASK,
        t03.TaskArtifactUpdateEvent(
            task_id="t9",
            context_id="c9",
            artifact=t03.Artifact(artifact_id="a", parts=[t03.Part(root=t03.DataPart(data={}))]),
            append=True,
            last_chunk=True,
        ),
    ),
    (
        Operation.GET_PUSH_CONFIG,
        t03.TaskPushNotificationConfig(
            task_id="t9",
            push_notification_config=t03.PushNotificationConfig(
                id="p",
                url="https://h",
                token="tok",
                authentication=t03.PushNotificationAuthenticationInfo(
                    schemes=["Bearer"], credentials="c"
                ),
            ),
        ),
    ),
]


@pytest.mark.parametrize(("op", "sdk_object"), SDK_OBJECTS)
def test_sdk_objects_decode_and_round_trip(op: Operation, sdk_object: BaseModel) -> None:
    ours = CODEC.decode_result(op, dump(sdk_object))
    back = type(sdk_object).model_validate(CODEC.encode_result(op, ours))
    assert back == sdk_object


def test_sdk_send_params_decode_and_round_trip() -> None:
    params = t03.MessageSendParams(
        message=t03.Message(
            message_id="m", role=t03.Role.user, parts=[t03.Part(root=t03.TextPart(text="x"))]
        ),
        configuration=t03.MessageSendConfiguration(
            accepted_output_modes=["text/plain"],
            blocking=False,
            history_length=0,
            push_notification_config=t03.PushNotificationConfig(url="https://h"),
        ),
        metadata={"a": 1},
    )
    request = CODEC.decode_request(Operation.SEND_MESSAGE, dump(params))
    assert isinstance(request, SendMessageRequest)
    assert request.configuration is not None
    assert request.configuration.return_immediately is True
    assert request.configuration.history_length == 0
    back = t03.MessageSendParams.model_validate(
        CODEC.encode_request(Operation.SEND_MESSAGE, request)
    )
    assert back == params


def test_sdk_card_decodes_and_round_trips() -> None:
    sdk_card = t03.AgentCard(
        name="n",
        description="d",
        url="https://main",
        preferred_transport="HTTP+JSON",
        additional_interfaces=[
            t03.AgentInterface(url="https://main", transport="HTTP+JSON"),
            t03.AgentInterface(url="https://rpc", transport="JSONRPC"),
        ],
        version="1",
        capabilities=t03.AgentCapabilities(streaming=False, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            t03.AgentSkill(id="s", name="s", description="d", tags=[], security=[{"o": ["x"]}])
        ],
        security_schemes={
            "o": t03.SecurityScheme(
                root=t03.OAuth2SecurityScheme(
                    flows=t03.OAuthFlows(
                        client_credentials=t03.ClientCredentialsOAuthFlow(
                            token_url="https://t", scopes={"x": "X"}
                        )
                    ),
                    oauth2_metadata_url="https://m",
                )
            ),
            "k": t03.SecurityScheme(
                root=t03.APIKeySecurityScheme(in_=t03.In.cookie, name="sid", description="d")
            ),
        },
        security=[{"o": ["x"]}, {"k": []}],
        supports_authenticated_extended_card=True,
        signatures=[t03.AgentCardSignature(protected="p", signature="s", header={"kid": "1"})],
    )
    ours = CODEC.decode_card(dump(sdk_card))
    assert [i.protocol_version for i in ours.supported_interfaces] == ["0.3", "0.3"]
    assert ours.capabilities.extended_agent_card is True
    assert t03.AgentCard.model_validate(CODEC.encode_card(ours)) == sdk_card
