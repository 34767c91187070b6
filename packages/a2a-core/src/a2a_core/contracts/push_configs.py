"""The push-config store contract: where webhook configs live, keyed by (task, config id).

Entries hold the secrets (token, credentials) in full; redaction happens in
the service, at the API boundary, so the sender can still authenticate. The
in-process store is ``a2a_core.server.push.MemoryPushConfigStore``; a shared
store comes from a store's channel (``TaskChannel.push_configs()``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass

from ..types import TaskPushNotificationConfig

__all__ = ["PushConfigEntry", "PushConfigStore"]


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
