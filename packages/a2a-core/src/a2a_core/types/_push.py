"""Push-notification configuration."""

from __future__ import annotations

from ._base import A2AModel, opt

__all__ = ["AuthenticationInfo", "TaskPushNotificationConfig"]


class AuthenticationInfo(A2AModel):
    """How the agent authenticates to the webhook: ``Authorization: <scheme> <credentials>``."""

    scheme: str
    credentials: str | None = opt()


class TaskPushNotificationConfig(A2AModel):
    """Where and how to deliver a task's updates to a webhook."""

    tenant: str | None = opt()
    id: str | None = opt()
    task_id: str | None = opt()
    url: str
    token: str | None = opt()
    authentication: AuthenticationInfo | None = opt()
