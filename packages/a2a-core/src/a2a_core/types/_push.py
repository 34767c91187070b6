"""Push-notification configuration."""

from __future__ import annotations

from pydantic import Field

from ._base import A2AModel, is_empty

__all__ = ["AuthenticationInfo", "TaskPushNotificationConfig"]

_OPT = {"default": None, "exclude_if": is_empty}


class AuthenticationInfo(A2AModel):
    """How the agent authenticates to the webhook: ``Authorization: <scheme> <credentials>``."""

    scheme: str
    credentials: str | None = Field(**_OPT)


class TaskPushNotificationConfig(A2AModel):
    """Where and how to deliver a task's updates to a webhook."""

    tenant: str | None = Field(**_OPT)
    id: str | None = Field(**_OPT)
    task_id: str | None = Field(**_OPT)
    url: str
    token: str | None = Field(**_OPT)
    authentication: AuthenticationInfo | None = Field(**_OPT)
