"""Where push configs live: a small interface and a bounded in-memory store.

Entries hold the secrets (token, credentials) in full; redaction happens in
the service, at the API boundary, so the sender can still authenticate.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
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

    @property
    def keeps_marks(self) -> bool:
        """Whether this store keeps each task's delivered-up-to mark (a shared store does).

        The mark lets the instance that settles a task whose owner died deliver
        what was still waiting in the dead instance's memory. A store only its own
        process reads (memory) has no one to hand the mark to.
        """
        return False

    async def read_mark(self, task_id: str) -> int | None:
        """The task's mark: every event id up to it was finished by every webhook lane.

        None when no mark was written (or it expired with the task's events).
        """
        return None

    async def write_marks(self, marks: Mapping[str, int]) -> None:  # noqa: B027 - optional hook
        """Raise the marks of several tasks (one round trip); a lower mark never wins."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release resources (nothing for the memory store)."""


_to_json = TaskPushNotificationConfig.__pydantic_serializer__.to_json
_ENTRY_OVERHEAD = 300
"""Bytes charged per config beyond its JSON (the entry, its keys, dict slots)."""


def entry_size(entry: PushConfigEntry) -> int:
    """The bytes a stored config is charged: its JSON (secrets included) plus overhead."""
    return len(_to_json(entry.config)) + _ENTRY_OVERHEAD


class MemoryPushConfigStore(PushConfigStore):
    """Configs in a dict, bounded per task, in the number of tasks and in bytes."""

    def __init__(
        self,
        max_configs_per_task: int = 16,
        max_tasks: int = 10_000,
        max_bytes: int = 32 * 1024 * 1024,
    ) -> None:
        if max_configs_per_task <= 0 or max_tasks <= 0 or max_bytes <= 0:
            raise ValueError("max_configs_per_task, max_tasks and max_bytes must be > 0")
        self.max_configs_per_task = max_configs_per_task
        self.max_tasks = max_tasks
        self.max_bytes = max_bytes
        self._tasks: dict[str, dict[str, PushConfigEntry]] = {}
        self._bytes = 0

    @property
    def stored_bytes(self) -> int:
        """The size of the stored configs, counted against ``max_bytes``."""
        return self._bytes

    def __len__(self) -> int:
        """Number of stored configs."""
        return sum(len(configs) for configs in self._tasks.values())

    async def put(self, entry: PushConfigEntry) -> None:
        configs = self._tasks.get(entry.task_id)
        if configs is None and len(self._tasks) >= self.max_tasks:
            raise _full("Too many tasks have push notification configs; retry later")
        replaced = configs.get(entry.config_id) if configs is not None else None
        if configs is not None and replaced is None and len(configs) >= self.max_configs_per_task:
            raise InvalidParamsError(
                f"A task may have at most {self.max_configs_per_task} push notification configs"
            )
        size = entry_size(entry)
        freed = entry_size(replaced) if replaced is not None else 0
        if self._bytes - freed + size > self.max_bytes:
            raise _full("The push notification config store is full; retry later")
        if configs is None:
            configs = self._tasks[entry.task_id] = {}
        configs[entry.config_id] = entry
        self._bytes += size - freed

    async def get(self, task_id: str, config_id: str) -> PushConfigEntry | None:
        return self._tasks.get(task_id, {}).get(config_id)

    async def list(self, task_id: str) -> list[PushConfigEntry]:
        return list(self._tasks.get(task_id, {}).values())

    async def delete(self, task_id: str, config_id: str) -> bool:
        configs = self._tasks.get(task_id)
        removed = configs.pop(config_id, None) if configs is not None else None
        if configs is None or removed is None:
            return False
        self._bytes -= entry_size(removed)
        if not configs:
            del self._tasks[task_id]
        return True

    async def delete_task(self, task_id: str) -> int:
        configs = self._tasks.pop(task_id, {})
        self._bytes -= sum(entry_size(e) for e in configs.values())
        return len(configs)


def _full(message: str) -> ServerBusyError:
    return ServerBusyError(message, data={"reason": "push_config_store_full", "retryable": True})
