"""Request and response shapes of every A2A operation (1.0 names)."""

from __future__ import annotations

from typing import Self

from pydantic import Field, model_validator

from ._base import A2AModel, Struct, Timestamp, falsy, is_empty, not_none, opt
from ._card import AgentCard
from ._enums import TaskState
from ._messages import Message, Task
from ._push import TaskPushNotificationConfig

__all__ = [
    "CancelTaskRequest",
    "DeleteTaskPushNotificationConfigRequest",
    "GetExtendedAgentCardRequest",
    "GetTaskPushNotificationConfigRequest",
    "GetTaskRequest",
    "ListTaskPushNotificationConfigsRequest",
    "ListTaskPushNotificationConfigsResponse",
    "ListTasksRequest",
    "ListTasksResponse",
    "SendMessageConfiguration",
    "SendMessageRequest",
    "SendMessageResponse",
    "SubscribeToTaskRequest",
]

INT32_MAX = 2**31 - 1
_HISTORY = Field(default=None, ge=0, le=INT32_MAX, exclude_if=not_none)


class SendMessageConfiguration(A2AModel):
    """How the server should handle a sent message."""

    accepted_output_modes: list[str] = Field(default_factory=list[str], exclude_if=is_empty)
    task_push_notification_config: TaskPushNotificationConfig | None = opt()
    history_length: int | None = _HISTORY
    return_immediately: bool = Field(default=False, exclude_if=falsy)


class SendMessageRequest(A2AModel):
    """``SendMessage`` and ``SendStreamingMessage``."""

    tenant: str | None = opt()
    message: Message
    configuration: SendMessageConfiguration | None = opt()
    metadata: Struct | None = opt()


class SendMessageResponse(A2AModel):
    """The result of ``SendMessage``: a task or a direct message reply."""

    task: Task | None = opt()
    message: Message | None = opt()

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        if (self.task is None) == (self.message is None):
            raise ValueError("a send response holds exactly one of task or message")
        return self

    @property
    def result(self) -> Task | Message:
        """The task or message."""
        return self.task if self.task is not None else self.message  # type: ignore[return-value]


class GetTaskRequest(A2AModel):
    """Ask for one task by id, with at most ``history_length`` messages of its history."""

    tenant: str | None = opt()
    id: str
    history_length: int | None = _HISTORY


class ListTasksRequest(A2AModel):
    """``ListTasks``: filters and cursor pagination, newest status first."""

    tenant: str | None = opt()
    context_id: str | None = opt()
    status: TaskState | None = opt()
    page_size: int | None = Field(default=None, ge=1, le=100, exclude_if=not_none)
    page_token: str | None = opt()
    history_length: int | None = _HISTORY
    status_timestamp_after: Timestamp | None = opt()
    include_artifacts: bool | None = opt()


class ListTasksResponse(A2AModel):
    """A page of tasks. ``next_page_token`` is empty on the last page."""

    tasks: list[Task] = Field(default_factory=list[Task])
    next_page_token: str = ""
    page_size: int = 0
    total_size: int = 0


class CancelTaskRequest(A2AModel):
    """Ask the agent to cancel a task it is running."""

    tenant: str | None = opt()
    id: str
    metadata: Struct | None = opt()


class SubscribeToTaskRequest(A2AModel):
    """Follow a running task's events as a stream."""

    tenant: str | None = opt()
    id: str


class GetTaskPushNotificationConfigRequest(A2AModel):
    """Ask for one webhook configuration of a task."""

    tenant: str | None = opt()
    task_id: str
    id: str


class DeleteTaskPushNotificationConfigRequest(A2AModel):
    """Remove one webhook configuration of a task."""

    tenant: str | None = opt()
    task_id: str
    id: str


class ListTaskPushNotificationConfigsRequest(A2AModel):
    """List a task's webhook configurations, a page at a time."""

    tenant: str | None = opt()
    task_id: str
    page_size: int | None = Field(default=None, ge=0, le=INT32_MAX, exclude_if=not_none)
    page_token: str | None = opt()


class ListTaskPushNotificationConfigsResponse(A2AModel):
    """One page of a task's webhook configurations; ``next_page_token`` is empty on the last."""

    configs: list[TaskPushNotificationConfig] = Field(
        default_factory=list[TaskPushNotificationConfig]
    )
    next_page_token: str = ""


class GetExtendedAgentCardRequest(A2AModel):
    """Ask for the extended agent card, which an authenticated caller may see."""

    tenant: str | None = opt()


# Keep the card type importable next to its request for readers of this module.
_ = AgentCard
