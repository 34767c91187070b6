"""GetTask and ListTasks: history trimming, filters, pagination, artifacts, owner scoping."""

from __future__ import annotations

from datetime import timedelta

import pytest
from a2a_core.errors import InvalidParamsError, TaskNotFoundError
from a2a_core.server import A2AService, Principal, RequestContext, ServerCallContext, TaskUpdater
from a2a_core.types import GetTaskRequest, ListTasksRequest, Task, TaskState
from server_core_support import CALL, ServiceFactory, send

ALICE = ServerCallContext(principal=Principal("alice"))


async def chatty(context: RequestContext, updater: TaskUpdater) -> None:
    """Three history entries and an artifact; pauses when asked to."""
    await updater.start_work("working")
    await updater.add_artifact("out")
    if context.text == "pause":
        await updater.require_input("more?")
    else:
        await updater.complete("done")


async def _task(service: A2AService, text: str = "go", **options: object) -> Task:
    task = await service.send_message(send(text, **options), CALL)  # type: ignore[arg-type]
    assert isinstance(task, Task)
    return task


@pytest.mark.parametrize(("length", "expected"), [(None, 3), (0, 0), (1, 1), (2, 2), (50, 3)])
async def test_get_trims_history(
    make_service: ServiceFactory, length: int | None, expected: int
) -> None:
    service = make_service(chatty)
    task = await _task(service)
    got = await service.get_task(GetTaskRequest(id=task.id, history_length=length), CALL)
    assert [m.text for m in got.history] == ["go", "working", "done"][3 - expected :]
    assert got.artifacts  # get always includes artifacts
    again = await service.get_task(GetTaskRequest(id=task.id), CALL)
    assert len(again.history) == 3  # trimming never changed the stored task


async def test_get_is_owner_scoped(make_service: ServiceFactory) -> None:
    service = make_service(chatty)
    theirs = await service.send_message(send(), ALICE)
    assert isinstance(theirs, Task)
    with pytest.raises(TaskNotFoundError):
        await service.get_task(GetTaskRequest(id=theirs.id), CALL)
    with pytest.raises(TaskNotFoundError):
        await service.get_task(GetTaskRequest(id="missing"), CALL)
    mine = await service.get_task(GetTaskRequest(id=theirs.id), ALICE)
    assert mine.id == theirs.id


async def test_list_filters_by_context_status_and_time(make_service: ServiceFactory) -> None:
    service = make_service(chatty)
    a1 = await _task(service, context_id="c1")
    a2 = await _task(service, "pause", context_id="c1")
    b1 = await _task(service, context_id="c2")

    async def ids(request: ListTasksRequest) -> list[str]:
        return [t.id for t in (await service.list_tasks(request, CALL)).tasks]

    assert await ids(ListTasksRequest()) == [b1.id, a2.id, a1.id]  # newest status first
    assert await ids(ListTasksRequest(context_id="c1")) == [a2.id, a1.id]
    assert await ids(ListTasksRequest(status=TaskState.INPUT_REQUIRED)) == [a2.id]
    assert await ids(ListTasksRequest(context_id="c2", status=TaskState.INPUT_REQUIRED)) == []
    after = a2.status.timestamp
    assert after is not None
    assert await ids(ListTasksRequest(status_timestamp_after=after)) == [b1.id, a2.id]
    later = after + timedelta(microseconds=1)
    assert await ids(ListTasksRequest(status_timestamp_after=later)) == [b1.id]
    with pytest.raises(InvalidParamsError):
        await service.list_tasks(ListTasksRequest(status=TaskState.UNSPECIFIED), CALL)


async def test_list_pages_cover_everything_once(make_service: ServiceFactory) -> None:
    service = make_service(chatty)
    created = [await _task(service) for _ in range(23)]
    seen: list[str] = []
    sizes: list[int] = []
    token: str | None = None
    while True:
        page = await service.list_tasks(ListTasksRequest(page_size=5, page_token=token), CALL)
        assert page.page_size == len(page.tasks)
        assert page.total_size == 23
        sizes.append(page.page_size)
        seen.extend(t.id for t in page.tasks)
        if not page.next_page_token:
            assert page.next_page_token == ""
            break
        token = page.next_page_token
    assert sizes == [5, 5, 5, 5, 3]
    assert seen == [t.id for t in reversed(created)]
    one_page = await service.list_tasks(ListTasksRequest(), CALL)
    assert len(one_page.tasks) == 23
    assert one_page.next_page_token == ""


async def test_list_rejects_a_malformed_page_token(make_service: ServiceFactory) -> None:
    service = make_service(chatty)
    with pytest.raises(InvalidParamsError):
        await service.list_tasks(ListTasksRequest(page_token="%%%not-a-token"), CALL)


async def test_list_omits_artifacts_unless_asked_and_trims_history(
    make_service: ServiceFactory,
) -> None:
    service = make_service(chatty)
    task = await _task(service)
    default = (await service.list_tasks(ListTasksRequest(), CALL)).tasks[0]
    assert default.artifacts == []
    assert "artifacts" not in default.model_dump(mode="json", by_alias=True)
    with_artifacts = await service.list_tasks(ListTasksRequest(include_artifacts=True), CALL)
    assert with_artifacts.tasks[0].artifacts[0].parts[0].text == "out"
    trimmed = await service.list_tasks(ListTasksRequest(history_length=1), CALL)
    assert [m.text for m in trimmed.tasks[0].history] == ["done"]
    stored = await service.get_task(GetTaskRequest(id=task.id), CALL)
    assert stored.artifacts
    assert len(stored.history) == 3


async def test_list_is_owner_scoped(make_service: ServiceFactory) -> None:
    service = make_service(chatty)
    mine = await _task(service)
    theirs = await service.send_message(send(), ALICE)
    assert isinstance(theirs, Task)
    anonymous = await service.list_tasks(ListTasksRequest(), CALL)
    assert [t.id for t in anonymous.tasks] == [mine.id]
    assert anonymous.total_size == 1
    alices = await service.list_tasks(ListTasksRequest(), ALICE)
    assert [t.id for t in alices.tasks] == [theirs.id]
    bob = ServerCallContext(principal=Principal("bob"))
    assert (await service.list_tasks(ListTasksRequest(), bob)).tasks == []
