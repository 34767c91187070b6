"""Which process holds a paused crew, and what an answer that cannot reach it gets.

A crew waiting for human input is a worker thread blocked in one process:
CrewAI keeps no checkpoint of it, so no other process can resume it. The
question a paused crew asks carries the name of the instance it waits in
(``crewai.paused_on`` in the message's metadata). An answer that arrives
where no crew waits for it (through another server instance, after a
restart, or after the crew stopped waiting at ``input_timeout``) fails the
task with a message saying why; the crew is never started over, so nothing
runs twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from a2a_core.server import RequestContext
from a2a_core.types import Role

__all__ = ["PAUSED_ON", "lost_pause_text", "mark_paused", "paused_on"]

PAUSED_ON = "paused_on"
"""The ``crewai`` metadata entry naming the instance a paused crew waits in."""


def mark_paused(metadata: Mapping[str, Any] | None, instance: str) -> dict[str, Any]:
    """The question's metadata: the human-input event's, plus where the crew waits."""
    found = (metadata or {}).get("crewai")
    crewai = dict(cast(Mapping[str, Any], found)) if isinstance(found, Mapping) else {}
    return {**(metadata or {}), "crewai": {**crewai, PAUSED_ON: instance}}


def paused_on(context: RequestContext) -> str | None:
    """The instance the task's crew paused in, when its last agent message was that question."""
    for message in reversed(context.task.history):
        if message.message_id == context.message.message_id or message.role is not Role.AGENT:
            continue
        found = (message.metadata or {}).get("crewai")
        if not isinstance(found, Mapping):
            return None
        instance = cast(Mapping[str, Any], found).get(PAUSED_ON)
        return instance if isinstance(instance, str) else None
    return None


def lost_pause_text(instance: str, here: str, input_timeout: float) -> str:
    """Why an answer cannot resume the crew: it waits elsewhere, or no longer waits."""
    if instance != here:
        return (
            f"This task's crew paused for input on another server instance ({instance}), "
            "or on this server before a restart. A paused crew lives only in the process "
            "that runs it, so the answer cannot resume it here; nothing was rerun and the "
            "task has failed. Send the request again as a new task."
        )
    return (
        "This task's crew no longer waits for input (it stopped waiting after "
        f"{input_timeout:g} s without an answer), so the answer cannot resume it; nothing "
        "was rerun and the task has failed. Send the request again as a new task."
    )
