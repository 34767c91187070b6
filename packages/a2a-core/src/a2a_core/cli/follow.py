"""Following a task that a blocking send got back unfinished (``a2a send``, both paths)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..client import A2AClient
    from ..types import Task
    from .render import Console

__all__ = ["follow_unfinished", "unfinished"]

_FIRST_POLL, _LONGEST_POLL = 0.1, 2.0


def unfinished(result: object) -> bool:
    """Whether a blocking send's answer is a task still submitted or working (a server
    that ignored ``blocking``, or answered before its agent was done)."""
    from ..types import Task, TaskState

    return isinstance(result, Task) and result.status.state in (
        TaskState.SUBMITTED,
        TaskState.WORKING,
    )


async def follow_unfinished(client: A2AClient, task: Task, console: Console) -> Task:
    """Poll ``task`` until it ends or pauses (input, authentication), saying so on stderr."""
    import asyncio

    from .render import state_label

    print(
        f"a2a: the agent answered before task {task.id} was done "
        f"({state_label(task.status.state)}); following it until it ends or needs input",
        file=sys.stderr,
    )
    delay = _FIRST_POLL
    async with console.progress("following the task"):
        while task.status.state.value in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"):
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, _LONGEST_POLL)
            task = await client.get_task(task.id)
    return task
