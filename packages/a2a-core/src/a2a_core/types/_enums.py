"""Protocol enums, with the 1.0 ProtoJSON names as values."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

__all__ = ["INTERRUPTED_STATES", "TERMINAL_STATES", "Role", "TaskState"]


class _ProtoEnum(StrEnum):
    """A proto enum: the wire value is the SCREAMING_SNAKE name; integers are accepted."""

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            for member in cls:
                if member.number == value:
                    return member
        if isinstance(value, str):
            upper = value.upper()
            for member in cls:
                if member.value == upper:
                    return member
        return None

    @property
    def number(self) -> int:
        """The proto enum number."""
        return _NUMBERS[self.value]


class TaskState(_ProtoEnum):
    """Where a task is in its lifecycle."""

    UNSPECIFIED = "TASK_STATE_UNSPECIFIED"
    SUBMITTED = "TASK_STATE_SUBMITTED"
    WORKING = "TASK_STATE_WORKING"
    COMPLETED = "TASK_STATE_COMPLETED"
    FAILED = "TASK_STATE_FAILED"
    CANCELED = "TASK_STATE_CANCELED"
    INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
    REJECTED = "TASK_STATE_REJECTED"
    AUTH_REQUIRED = "TASK_STATE_AUTH_REQUIRED"

    @property
    def is_terminal(self) -> bool:
        """A terminal task never changes again."""
        return self in TERMINAL_STATES

    @property
    def is_interrupted(self) -> bool:
        """The task waits for the client (input or authentication)."""
        return self in INTERRUPTED_STATES


class Role(_ProtoEnum):
    """Who sent a message."""

    UNSPECIFIED = "ROLE_UNSPECIFIED"
    USER = "ROLE_USER"
    AGENT = "ROLE_AGENT"


_NUMBERS: dict[str, int] = {
    "TASK_STATE_UNSPECIFIED": 0,
    "TASK_STATE_SUBMITTED": 1,
    "TASK_STATE_WORKING": 2,
    "TASK_STATE_COMPLETED": 3,
    "TASK_STATE_FAILED": 4,
    "TASK_STATE_CANCELED": 5,
    "TASK_STATE_INPUT_REQUIRED": 6,
    "TASK_STATE_REJECTED": 7,
    "TASK_STATE_AUTH_REQUIRED": 8,
    "ROLE_UNSPECIFIED": 0,
    "ROLE_USER": 1,
    "ROLE_AGENT": 2,
}

TERMINAL_STATES = frozenset(
    {TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED}
)
"""States a task never leaves: completed, failed, canceled, rejected."""
INTERRUPTED_STATES = frozenset({TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED})
"""States where the task waits for the client (input or authentication) before going on."""
