"""One delivery: an event on its way to one of its task's webhook configs, its id, the counts."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ...types import StreamEvent, Task

__all__ = ["Counters", "Delivery", "delivery_id"]


@dataclass(frozen=True, slots=True)
class Delivery:
    """What a lane sends: the event (whole artifact so far) and what its id and mark need."""

    task_id: str
    config_id: str
    task: Task
    event: StreamEvent
    final: bool
    trace: Any = None
    event_id: int | None = None
    ref: str | None = None
    redelivered_at: int | None = None


def delivery_id(task_id: str, ref: str, config_id: str) -> str:
    """The ``webhook-id`` of one event's delivery to one config: the same on every instance.

    A survivor that delivers again what a dead instance may have sent already
    uses the id that instance used, so a receiver can drop the second copy.
    """
    digest = hashlib.blake2b(
        f"{task_id}\n{ref}\n{config_id}".encode("utf-8", "surrogatepass"), digest_size=16
    )
    return f"msg_{digest.hexdigest()}"


@dataclass(slots=True)
class Counters:
    """What the notifier's parts count for ``PushStats``."""

    delivered: int = 0
    failed: int = 0
    dropped: int = 0
