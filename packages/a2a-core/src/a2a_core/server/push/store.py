"""The bounded in-memory push-config store (the contract is ``a2a_core.contracts.push_configs``)."""

from __future__ import annotations

from ...contracts.push_configs import PushConfigEntry, PushConfigStore
from ...errors import InvalidParamsError, ServerBusyError
from ...types import TaskPushNotificationConfig

__all__ = ["MemoryPushConfigStore", "PushConfigEntry", "PushConfigStore"]


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
