"""Truthful discovery (the card follows the configuration) and operation dispatch."""

from __future__ import annotations

import pytest
from a2a_core.errors import (
    InternalError,
    PushNotificationNotSupportedError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_core.server import A2AService, ConfigurationError, RequestContext
from a2a_core.stores import MemoryTaskStore, StoredTask
from a2a_core.types import (
    AgentCard,
    GetTaskRequest,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a_core.wire.operations import Operation
from server_core_support import CALL, make_card, send


async def echo(context: RequestContext) -> str:
    return context.text


class FakePush:
    """The smallest PushNotifier: keeps configs in a dict."""

    def __init__(self) -> None:
        self.configs: dict[tuple[str, str], TaskPushNotificationConfig] = {}
        self.events: list[StreamEvent] = []

    async def set_config(
        self, config: TaskPushNotificationConfig, version: str
    ) -> TaskPushNotificationConfig:
        config = config.model_copy(update={"id": config.id or "cfg"})
        self.configs[(config.task_id or "", config.id or "")] = config
        return config

    async def get_config(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        return self.configs.get((task_id, config_id))

    async def list_configs(self, task_id: str) -> list[TaskPushNotificationConfig]:
        return [c for (t, _), c in self.configs.items() if t == task_id]

    async def delete_config(self, task_id: str, config_id: str) -> bool:
        return self.configs.pop((task_id, config_id), None) is not None

    def on_event(self, task: Task, event: StreamEvent, previous: TaskState | None) -> None:
        self.events.append(event)

    async def aclose(self) -> None:
        pass


def test_capabilities_follow_the_configuration() -> None:
    plain = A2AService(echo, make_card(streaming=None))
    caps = plain.card.capabilities
    assert (caps.streaming, caps.push_notifications, caps.extended_agent_card) == (
        True,
        False,
        None,
    )
    full = A2AService(echo, make_card(), push=FakePush(), extended_card=make_card(), streaming=True)
    caps = full.card.capabilities
    assert (caps.streaming, caps.push_notifications, caps.extended_agent_card) == (
        True,
        True,
        True,
    )
    quiet = A2AService(echo, make_card(streaming=None), streaming=False)
    assert quiet.card.capabilities.streaming is False


@pytest.mark.parametrize(
    ("card", "streaming"),
    [
        (make_card(push_notifications=True), True),
        (make_card(extended_agent_card=True), True),
        (make_card(streaming=True), False),
    ],
)
def test_a_card_that_over_claims_is_refused(card: AgentCard, streaming: bool) -> None:
    with pytest.raises(ConfigurationError, match="does not provide"):
        A2AService(echo, card, streaming=streaming)


async def test_streaming_off_refuses_streams_before_they_start() -> None:
    service = A2AService(echo, make_card(streaming=None), streaming=False)
    with pytest.raises(UnsupportedOperationError):
        await service.open_stream(Operation.SEND_STREAMING_MESSAGE, send(), CALL)
    task = await service.send_message(send(), CALL)
    assert isinstance(task, Task)
    with pytest.raises(UnsupportedOperationError):
        await service.open_stream(
            Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id=task.id), CALL
        )
    assert service.manager.active_count == 0
    await service.aclose()


async def test_inline_push_config_needs_push_support() -> None:
    service = A2AService(echo, make_card())
    request = SendMessageRequest(
        message=send().message,
        configuration=SendMessageConfiguration(
            task_push_notification_config=TaskPushNotificationConfig(url="https://example.com/h")
        ),
    )
    with pytest.raises(PushNotificationNotSupportedError):
        await service.send_message(request, CALL)
    assert service.manager.active_count == 0
    await service.aclose()


async def test_inline_push_config_is_stored_for_the_new_task_and_observed() -> None:
    push = FakePush()
    service = A2AService(echo, make_card(), push=push)
    request = SendMessageRequest(
        message=send().message,
        configuration=SendMessageConfiguration(
            task_push_notification_config=TaskPushNotificationConfig(url="https://example.com/h")
        ),
    )
    task = await service.send_message(request, CALL)
    assert isinstance(task, Task)  # never a direct Message: it would have no task to push
    assert list(push.configs) == [(task.id, "cfg")]
    last = push.events[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.status.state is TaskState.COMPLETED
    await service.aclose()


async def test_handle_dispatches_and_types_every_failure() -> None:
    class BrokenStore(MemoryTaskStore):
        async def get(self, task_id: str, owner: str | None) -> StoredTask | None:
            raise OSError("disk on fire")

    service = A2AService(echo, make_card(), store=BrokenStore())
    task = await service.handle(Operation.SEND_MESSAGE, send(), CALL)
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    with pytest.raises(InternalError) as caught:
        await service.handle(Operation.GET_TASK, GetTaskRequest(id=task.id), CALL)
    assert "disk on fire" not in caught.value.message
    with pytest.raises(InternalError):
        await service.open_stream(
            Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id=task.id), CALL
        )
    with pytest.raises(UnsupportedOperationError):
        await service.handle(Operation.SEND_STREAMING_MESSAGE, send(), CALL)
    with pytest.raises(UnsupportedOperationError):
        await service.open_stream(Operation.GET_TASK, GetTaskRequest(id=task.id), CALL)
    await service.aclose()


async def test_open_stream_raises_not_found_before_the_first_event() -> None:
    service = A2AService(echo, make_card())
    with pytest.raises(TaskNotFoundError):
        await service.open_stream(
            Operation.SUBSCRIBE_TO_TASK, SubscribeToTaskRequest(id="nope"), CALL
        )
    with pytest.raises(TaskNotFoundError):
        await service.open_stream(Operation.SEND_STREAMING_MESSAGE, send(task_id="nope"), CALL)
    await service.aclose()
