"""Many requests at once: every task complete, isolated, and accounted for."""

from __future__ import annotations

import asyncio
import random

from a2a_core.server import RequestContext, TaskUpdater
from a2a_core.types import CancelTaskRequest, GetTaskRequest, ListTasksRequest, Task, TaskState
from server_core_support import CALL, ServiceFactory, eventually, send


async def test_200_concurrent_blocking_sends_are_isolated(make_service: ServiceFactory) -> None:
    async def agent(context: RequestContext, updater: TaskUpdater) -> str:
        await updater.start_work(f"working on {context.text}")
        await asyncio.sleep(0)
        assert context.task.id == context.task_id
        return f"answer to {context.text}"

    service = make_service(agent)
    results = await asyncio.gather(*(service.send_message(send(f"q{n}"), CALL) for n in range(200)))
    ids = set()
    for n, task in enumerate(results):
        assert isinstance(task, Task)
        assert task.status.state is TaskState.COMPLETED
        assert task.artifacts[0].parts[0].text == f"answer to q{n}"
        assert [m.text for m in task.history] == [f"q{n}", f"working on q{n}"]
        assert {m.task_id for m in task.history} == {task.id}
        ids.add(task.id)
    assert len(ids) == 200
    assert len({t.context_id for t in results if isinstance(t, Task)}) == 200
    assert service.manager.active_count == 0
    listed = await service.list_tasks(ListTasksRequest(page_size=100), CALL)
    assert listed.total_size == 200


async def test_mixed_concurrent_traffic_stays_consistent(make_service: ServiceFactory) -> None:
    rng = random.Random(7)

    async def agent(context: RequestContext, updater: TaskUpdater) -> str:
        await updater.start_work()
        for _ in range(rng.randint(0, 3)):
            await asyncio.sleep(0.001)
        return "ok"

    service = make_service(agent)
    tasks = await asyncio.gather(
        *(service.send_message(send(f"q{n}", immediate=True), CALL) for n in range(60))
    )
    ids = [t.id for t in tasks if isinstance(t, Task)]
    assert len(ids) == 60

    async def cancel(task_id: str) -> str:
        try:
            return (await service.cancel_task(CancelTaskRequest(id=task_id), CALL)).status.state
        except Exception as exc:  # losing the race with completion is allowed
            return type(exc).__name__

    outcomes = await asyncio.gather(
        *(cancel(i) for i in ids[::2]),
        *(service.get_task(GetTaskRequest(id=i), CALL) for i in ids[1::2]),
    )
    assert all(o in (TaskState.CANCELED, "TaskNotCancelableError") for o in outcomes[:30]), (
        outcomes[:30]
    )
    await eventually(lambda: service.manager.active_count == 0)
    for task_id, outcome in zip(ids[::2], outcomes[:30], strict=True):
        final = await service.get_task(GetTaskRequest(id=task_id), CALL)
        expected = TaskState.CANCELED if outcome == TaskState.CANCELED else TaskState.COMPLETED
        assert final.status.state is expected
    for task_id in ids[1::2]:
        final = await service.get_task(GetTaskRequest(id=task_id), CALL)
        assert final.status.state is TaskState.COMPLETED
