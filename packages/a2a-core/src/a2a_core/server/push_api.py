"""What the service needs from push notifications (implemented in ``server.push``)."""

from __future__ import annotations

from typing import Protocol

from ..types import StreamEvent, Task, TaskPushNotificationConfig, TaskState

__all__ = ["PushNotifier"]


class PushNotifier(Protocol):
    """Stores webhook configs per task and delivers task updates to them off the request path."""

    async def set_config(
        self, config: TaskPushNotificationConfig, version: str
    ) -> TaskPushNotificationConfig:
        """Validate (URL policy) and store a config; assigns ``id`` when absent.

        ``version`` ("1.0" or "0.3") selects the body shape deliveries use.
        """
        ...

    async def get_config(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        """One config of a task (secrets redacted), or None."""
        ...

    async def list_configs(self, task_id: str) -> list[TaskPushNotificationConfig]:
        """Every config of a task (secrets redacted)."""
        ...

    async def delete_config(self, task_id: str, config_id: str) -> bool:
        """Remove a config; False when it did not exist."""
        ...

    def on_event(self, task: Task, event: StreamEvent, previous: TaskState | None) -> None:
        """Queue deliveries for an applied event (a TaskObserver: must not block)."""
        ...

    async def aclose(self) -> None:
        """Stop the sender after a bounded drain."""
        ...
