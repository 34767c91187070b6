"""Request and response shapes of every A2A operation (1.0 names)."""

from __future__ import annotations

from typing import Self

from pydantic import Field, model_validator

from ._base import A2AModel, Struct, Timestamp, is_empty
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

_OPT = {"default": None, "exclude_if": is_empty}
_HISTORY = Field(default=None, ge=0, exclude_if=lambda v: v is None)


class SendMessageConfiguration(A2AModel):
    """How the server should handle a sent message."""

    accepted_output_modes: list[str] = Field(default_factory=list[str], exclude_if=is_empty)
    task_push_notification_config: TaskPushNotificationConfig | None = Field(**_OPT)
    history_length: int | None = _HISTORY
    return_immediately: bool = Field(default=False, exclude_if=lambda v: not v)


class SendMessageRequest(A2AModel):
    """``SendMessage`` and ``SendStreamingMessage``."""

    tenant: str | None = Field(**_OPT)
    message: Message
    configuration: SendMessageConfiguration | None = Field(**_OPT)
    metadata: Struct | None = Field(**_OPT)


class SendMessageResponse(A2AModel):
    """The result of ``SendMessage``: a task or a direct message reply."""

    task: Task | None = Field(**_OPT)
    message: Message | None = Field(**_OPT)

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
    tenant: str | None = Field(**_OPT)
    id: str
    history_length: int | None = _HISTORY


class ListTasksRequest(A2AModel):
    """``ListTasks``: filters and cursor pagination, newest status first."""

    tenant: str | None = Field(**_OPT)
    context_id: str | None = Field(**_OPT)
    status: TaskState | None = Field(**_OPT)
    page_size: int | None = Field(default=None, ge=1, le=100, exclude_if=lambda v: v is None)
    page_token: str | None = Field(**_OPT)
    history_length: int | None = _HISTORY
    status_timestamp_after: Timestamp | None = Field(**_OPT)
    include_artifacts: bool | None = Field(**_OPT)


class ListTasksResponse(A2AModel):
    """A page of tasks. ``next_page_token`` is empty on the last page."""

    tasks: list[Task] = Field(default_factory=list[Task])
    next_page_token: str = ""
    page_size: int = 0
    total_size: int = 0


class CancelTaskRequest(A2AModel):
    tenant: str | None = Field(**_OPT)
    id: str
    metadata: Struct | None = Field(**_OPT)


class SubscribeToTaskRequest(A2AModel):
    tenant: str | None = Field(**_OPT)
    id: str


class GetTaskPushNotificationConfigRequest(A2AModel):
    tenant: str | None = Field(**_OPT)
    task_id: str
    id: str


class DeleteTaskPushNotificationConfigRequest(A2AModel):
    tenant: str | None = Field(**_OPT)
    task_id: str
    id: str


class ListTaskPushNotificationConfigsRequest(A2AModel):
    tenant: str | None = Field(**_OPT)
    task_id: str
    page_size: int | None = Field(default=None, ge=0, exclude_if=lambda v: v is None)
    page_token: str | None = Field(**_OPT)


class ListTaskPushNotificationConfigsResponse(A2AModel):
    configs: list[TaskPushNotificationConfig] = Field(
        default_factory=list[TaskPushNotificationConfig]
    )
    next_page_token: str = ""


class GetExtendedAgentCardRequest(A2AModel):
    tenant: str | None = Field(**_OPT)


# Keep the card type importable next to its request for readers of this module.
_ = AgentCard
