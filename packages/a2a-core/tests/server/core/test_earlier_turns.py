"""``RequestContext.earlier_turns``: the context's earlier tasks as conversation turns.

Each earlier completed task is its user messages and its answer (the artifacts'
parts), oldest first; the newest ``limit`` messages are kept; the caller's scope
holds (another principal's tasks in the same context are not seen).
"""

from __future__ import annotations

from a2a_core.server import Principal, RequestContext, ServerCallContext, TaskUpdater
from a2a_core.types import Role, Task, TaskState
from server_core_support import CALL, ServiceFactory, send


class Recorder:
    """Answers ``echo: TEXT`` after recording the earlier turns it was offered."""

    def __init__(self, limit: int = 10) -> None:
        self.limit = limit
        self.seen: list[list[tuple[Role, str]]] = []

    async def __call__(self, context: RequestContext, updater: TaskUpdater) -> str | None:
        if context.text == "ask":
            await updater.require_input("What else?")
            return None
        if context.text == "fail":
            await updater.fail("It broke.")
            return None
        turns = await context.earlier_turns(self.limit)
        self.seen.append([(m.role, m.text) for m in turns])
        return f"echo: {context.text}"


async def test_earlier_tasks_of_the_context_are_turns(make_service: ServiceFactory) -> None:
    agent = Recorder()
    service = make_service(agent)
    for text in ("one", "fail", "two", "three"):
        done = await service.send_message(send(text, context_id="ctx-e"), CALL)
        assert isinstance(done, Task)
        assert done.status.state is (TaskState.FAILED if text == "fail" else TaskState.COMPLETED)
    await service.send_message(send("elsewhere", context_id="ctx-other"), CALL)
    assert agent.seen[0] == []
    assert agent.seen[2] == [
        (Role.USER, "one"),
        (Role.AGENT, "echo: one"),
        (Role.USER, "two"),
        (Role.AGENT, "echo: two"),
    ]
    assert agent.seen[3] == []  # another context; the failed task is no turn at all


async def test_earlier_turns_are_bounded_and_scoped(make_service: ServiceFactory) -> None:
    agent = Recorder(limit=3)
    service = make_service(agent)
    alice = ServerCallContext(principal=Principal("alice"))
    bob = ServerCallContext(principal=Principal("bob"))
    for text in ("a1", "a2", "a3"):
        await service.send_message(send(text, context_id="shared"), alice)
    await service.send_message(send("b1", context_id="shared"), bob)
    assert agent.seen[2] == [(Role.AGENT, "echo: a1"), (Role.USER, "a2"), (Role.AGENT, "echo: a2")]
    assert agent.seen[3] == []  # bob sees none of alice's tasks


async def test_a_continued_task_does_not_see_itself(make_service: ServiceFactory) -> None:
    agent = Recorder()
    service = make_service(agent)
    await service.send_message(send("before", context_id="ctx-c"), CALL)
    paused = await service.send_message(send("ask", context_id="ctx-c"), CALL)
    assert isinstance(paused, Task)
    await service.send_message(send("more", task_id=paused.id), CALL)
    assert agent.seen[-1] == [(Role.USER, "before"), (Role.AGENT, "echo: before")]
