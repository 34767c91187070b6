"""Where push configs live: a small interface and a bounded in-memory store.

Entries hold the secrets (token, credentials) in full; redaction happens in
the service, at the API boundary, so the sender can still authenticate.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from ...errors import InvalidParamsError, ServerBusyError
from ...types import TaskPushNotificationConfig

__all__ = ["MemoryPushConfigStore", "PushConfigEntry", "PushConfigStore"]


@dataclass(frozen=True, slots=True)
class PushConfigEntry:
    """One stored config with what the sender needs besides the config itself."""

    config: TaskPushNotificationConfig
    """With ``task_id`` and ``id`` set, secrets in clear."""
    version: str
    """The protocol version it was created in ("1.0" or "0.3"): the body shape to send."""
    created_ns: int
    """Wall-clock creation time (ns): a config receives only events that happen after it."""

    @property
    def task_id(self) -> str:
        """The task the webhook belongs to."""
        return self.config.task_id or ""

    @property
    def config_id(self) -> str:
        """The webhook configuration's id, unique within its task."""
        return self.config.id or ""


class PushConfigStore(ABC):
    """Push configs keyed by (task id, config id); list order is creation order."""

    @abstractmethod
    async def put(self, entry: PushConfigEntry) -> None:
        """Insert, or replace the entry with the same ids (keeping its place in the list).

        Raises InvalidParamsError (too many configs for the task) or
        ServerBusyError (the store is full).
        """

    @abstractmethod
    async def get(self, task_id: str, config_id: str) -> PushConfigEntry | None:
        """One entry, or None when the task has no configuration with that id."""

    @abstractmethod
    async def list(self, task_id: str) -> list[PushConfigEntry]:
        """Every entry of a task (empty when it has none)."""

    @abstractmethod
    async def delete(self, task_id: str, config_id: str) -> bool:
        """Remove one entry; False when there was none."""

    @abstractmethod
    async def delete_task(self, task_id: str) -> int:
        """Remove every entry of a task; how many were removed."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release resources (nothing for the memory store)."""


class MemoryPushConfigStore(PushConfigStore):
    """Configs in a dict, bounded per task and in the number of tasks."""

    def __init__(self, max_configs_per_task: int = 16, max_tasks: int = 10_000) -> None:
        if max_configs_per_task <= 0 or max_tasks <= 0:
            raise ValueError("max_configs_per_task and max_tasks must be > 0")
        self.max_configs_per_task = max_configs_per_task
        self.max_tasks = max_tasks
        self._tasks: dict[str, dict[str, PushConfigEntry]] = {}

    def __len__(self) -> int:
        """Number of stored configs."""
        return sum(len(configs) for configs in self._tasks.values())

    async def put(self, entry: PushConfigEntry) -> None:
        configs = self._tasks.get(entry.task_id)
        if configs is None:
            if len(self._tasks) >= self.max_tasks:
                raise ServerBusyError(
                    "Too many tasks have push notification configs; retry later",
                    data={"retryable": True},
                )
            configs = self._tasks[entry.task_id] = {}
        if entry.config_id not in configs and len(configs) >= self.max_configs_per_task:
            raise InvalidParamsError(
                f"A task may have at most {self.max_configs_per_task} push notification configs"
            )
        configs[entry.config_id] = entry

    async def get(self, task_id: str, config_id: str) -> PushConfigEntry | None:
        return self._tasks.get(task_id, {}).get(config_id)

    async def list(self, task_id: str) -> list[PushConfigEntry]:
        return list(self._tasks.get(task_id, {}).values())

    async def delete(self, task_id: str, config_id: str) -> bool:
        configs = self._tasks.get(task_id)
        if configs is None or configs.pop(config_id, None) is None:
            return False
        if not configs:
            del self._tasks[task_id]
        return True

    async def delete_task(self, task_id: str) -> int:
        return len(self._tasks.pop(task_id, {}))
