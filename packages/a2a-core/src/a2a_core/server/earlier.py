"""A context's earlier turns, for agents that hold a conversation across tasks.

The contextId is the conversation: a follow-up in the same context is a new
task, and an agent that takes a conversation (a chat model, a CrewAI agent)
should see what was said before. ``EarlierTurns`` reads the context's earlier
completed tasks from the task store (scoped to the caller, like every read) and
gives each as its user messages followed by its answer (the artifacts' parts,
else the final status message): the agent's progress and questions are left
out, and so are tasks that failed, were canceled or are still open.
It is bounded: at most ``limit`` messages, the newest kept.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..contracts.task_store import TaskQuery, TaskStore
from ..types import Message, Part, Role, Task, TaskState

__all__ = ["EarlierTurns", "task_turns"]

_MAX_TASKS = 100


def task_turns(task: Task) -> list[Message]:
    """One finished exchange of a task: the user's messages, then the answer."""
    turns = [m for m in task.history if m.role is Role.USER]
    parts: list[Part] = [p for a in task.artifacts for p in a.parts]
    if parts:
        turns.append(
            Message(
                role=Role.AGENT,
                parts=parts,
                message_id=f"{task.id}:answer",
                task_id=task.id,
                context_id=task.context_id,
            )
        )
    elif task.status.message is not None and task.status.message.role is Role.AGENT:
        turns.append(task.status.message)
    return turns


class EarlierTurns:
    """Loads the earlier turns of one request's context (see the module docstring)."""

    __slots__ = ("_context_id", "_owner", "_store", "_task_id")

    def __init__(self, store: TaskStore, owner: str | None, context_id: str, task_id: str) -> None:
        self._store = store
        self._owner = owner
        self._context_id = context_id
        self._task_id = task_id

    async def __call__(self, limit: int) -> list[Message]:
        """At most ``limit`` messages of the context's earlier tasks, oldest first."""
        if limit <= 0:
            return []
        # A completed task gives two messages or more: read no more tasks than that needs
        # (each is decoded from the store), plus the current one should it be completed.
        query = TaskQuery(
            context_id=self._context_id,
            state=TaskState.COMPLETED,
            page_size=min((limit + 1) // 2 + 1, _MAX_TASKS),
        )
        page = await self._store.list(query, self._owner)
        earlier: Sequence[Task] = [t for t in reversed(page.tasks) if t.id != self._task_id]
        messages = [m for task in earlier for m in task_turns(task)]
        return messages[-limit:]
