"""The client's own logic: results and their text, continuing tasks, event aggregation, cards."""

from __future__ import annotations

from typing import Any

import pytest
from a2a_core import (
    Artifact,
    AuthenticationRequiredError,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_core.client import A2AClient, SendResult, TaskTracker, text_of
from a2a_core.client.results import settles
from a2a_core.server import A2AService, Principal
from servers import free_port, running, scripted_card, scripted_executor


def task(state: TaskState, *, artifacts: list[str] = (), status_text: str | None = None) -> Task:  # type: ignore[assignment]
    message = Message.agent(status_text) if status_text is not None else None
    return Task(
        id="t1",
        context_id="c1",
        status=TaskStatus(state=state, message=message),
        artifacts=[
            Artifact(artifact_id=f"a{i}", parts=[Part(text=text)])
            for i, text in enumerate(artifacts)
        ],
    )


# --- results -----------------------------------------------------------------------------


def test_text_of_a_task_prefers_the_question_when_input_is_needed() -> None:
    waiting = task(TaskState.INPUT_REQUIRED, artifacts=["draft"], status_text="Which city?")
    assert text_of(waiting) == "Which city?"
    assert SendResult(waiting).needs_input


def test_text_of_a_task_is_its_artifacts_then_status_then_history() -> None:
    assert text_of(task(TaskState.COMPLETED, artifacts=["one", "two"])) == "one\ntwo"
    assert text_of(task(TaskState.FAILED, status_text="It broke")) == "It broke"
    with_history = task(TaskState.COMPLETED).model_copy(
        update={"history": [Message.user("q"), Message.agent("answer"), Message.user("later")]}
    )
    assert text_of(with_history) == "answer"
    assert text_of(task(TaskState.WORKING)) == ""


def test_text_of_a_task_leaves_out_intermediate_artifacts() -> None:
    step = Artifact(artifact_id="step", parts=[Part(text="notes")], metadata={"intermediate": True})
    answer = Artifact(artifact_id="result", parts=[Part(text="the answer")])
    done = task(TaskState.COMPLETED).model_copy(update={"artifacts": [step, answer]})
    assert step.intermediate
    assert not answer.intermediate
    assert text_of(done) == "the answer"
    only_steps = done.model_copy(update={"artifacts": [step]})  # the answer is still to come
    assert text_of(only_steps) == "notes"


def test_text_of_other_values() -> None:
    assert text_of(Message.agent("hi")) == "hi"
    assert text_of(None) == ""
    artifact = Artifact(
        artifact_id="a", parts=[Part(text="x"), Part(data={"k": 1}), Part(text="y")]
    )
    assert text_of(artifact) == "xy"
    event = TaskStatusUpdateEvent(
        task_id="t", status=TaskStatus(state=TaskState.WORKING, message=Message.agent("busy"))
    )
    assert text_of(event) == "busy"


def test_send_result_facts() -> None:
    done = SendResult(task(TaskState.COMPLETED, artifacts=["ok"]))
    assert (done.task_id, done.context_id, done.state, done.done) == (
        "t1",
        "c1",
        TaskState.COMPLETED,
        True,
    )
    assert str(done) == "ok"
    assert len(done.artifacts) == 1
    reply = SendResult(Message.agent("hello", context_id="c2"))
    assert (reply.task, reply.state, reply.task_id, reply.context_id) == (None, None, None, "c2")
    assert reply.done
    assert not reply.needs_input
    working = SendResult(task(TaskState.WORKING))
    assert not working.done


@pytest.mark.parametrize(
    ("event", "ends"),
    [
        (Message.agent("x"), True),
        (task(TaskState.SUBMITTED), False),
        (task(TaskState.COMPLETED), True),
        (task(TaskState.INPUT_REQUIRED), True),
        (TaskStatusUpdateEvent(task_id="t", status=TaskStatus(state=TaskState.WORKING)), False),
        (TaskStatusUpdateEvent(task_id="t", status=TaskStatus(state=TaskState.CANCELED)), True),
        (
            TaskStatusUpdateEvent(task_id="t", status=TaskStatus(state=TaskState.AUTH_REQUIRED)),
            False,
        ),
        (
            TaskArtifactUpdateEvent(
                task_id="t", artifact=Artifact(artifact_id="a", parts=[Part(text="x")])
            ),
            False,
        ),
    ],
)
def test_which_events_end_a_stream(event: Any, ends: bool) -> None:
    assert settles(event) is ends


def test_tracker_applies_events_like_the_server() -> None:
    tracker = TaskTracker()
    tracker.apply(
        TaskArtifactUpdateEvent(
            task_id="t1",
            context_id="c1",
            artifact=Artifact(artifact_id="a", parts=[Part(text="he")]),
        )
    )
    tracker.apply(
        TaskArtifactUpdateEvent(
            task_id="t1",
            context_id="c1",
            artifact=Artifact(artifact_id="a", parts=[Part(text="llo")]),
            append=True,
        )
    )
    tracker.apply(
        TaskArtifactUpdateEvent(
            task_id="t1",
            context_id="c1",
            artifact=Artifact(artifact_id="b", parts=[Part(text="1")]),
        )
    )
    tracker.apply(
        TaskArtifactUpdateEvent(
            task_id="t1",
            context_id="c1",
            artifact=Artifact(artifact_id="b", parts=[Part(text="2")]),
        )
    )
    said = Message.agent("done")
    status = TaskStatusUpdateEvent(
        task_id="t1", context_id="c1", status=TaskStatus(state=TaskState.COMPLETED, message=said)
    )
    tracker.apply(status)
    tracker.apply(status)  # a repeated status message is kept once
    assert tracker.task is not None
    assert tracker.task.id == "t1"
    assert [text_of(a) for a in tracker.task.artifacts] == ["hello", "2"]
    assert tracker.task.status.state is TaskState.COMPLETED
    assert [m.message_id for m in tracker.task.history] == [said.message_id]
    result = tracker.result()
    assert result is not None
    assert result.text == "hello\n2"
    assert TaskTracker().result() is None


# --- building requests -------------------------------------------------------------------


def client() -> A2AClient:
    return A2AClient.for_endpoint("http://127.0.0.1:9/", tenant="acme")


def test_text_parts_and_messages_become_user_messages() -> None:
    c = client()
    assert c.build_request("hi").message.parts == [Part(text="hi")]
    parts = [Part(text="a"), Part(data={"x": 1})]
    built = c.build_request(parts).message
    assert built.parts == parts
    assert built.role is Role.USER
    mine = Message.user("exact")
    assert c.build_request(mine).message is mine
    assert c.build_request("x").tenant == "acme"
    assert c.build_request("x").message.message_id != c.build_request("x").message.message_id


def test_task_continues_that_task_in_its_context() -> None:
    waiting = SendResult(task(TaskState.INPUT_REQUIRED))
    message = client().build_request("answer", task=waiting).message
    assert (message.task_id, message.context_id) == ("t1", "c1")
    assert client().build_request("answer", task="t9").message.task_id == "t9"


def test_reply_to_a_finished_task_starts_a_follow_up_in_its_context() -> None:
    finished = task(TaskState.COMPLETED)
    message = client().build_request("more", reply_to=finished).message
    assert message.task_id is None
    assert message.context_id == "c1"
    assert message.reference_task_ids == ["t1"]
    waiting = task(TaskState.INPUT_REQUIRED)
    assert client().build_request("answer", reply_to=waiting).message.task_id == "t1"


def test_a_message_reply_cannot_be_continued_as_a_task() -> None:
    with pytest.raises(ValueError, match="no task id"):
        client().build_request("x", task=SendResult(Message.agent("hi")))


def test_configuration_only_when_needed() -> None:
    c = client()
    assert c.build_request("x").configuration is None
    config = c.build_request(
        "x", blocking=False, history_length=0, accepted_output_modes=["text/plain"]
    ).configuration
    assert config is not None
    assert config.return_immediately
    assert config.history_length == 0
    assert config.accepted_output_modes == ["text/plain"]


# --- the extended card -------------------------------------------------------------------


def extended_service(url: str | None = None) -> A2AService:
    card = scripted_card()
    if url is not None:
        from a2a_core.compose.serve import interfaces_for

        interfaces = interfaces_for(url, rest_prefix="/rest")
        card = card.model_copy(update={"supported_interfaces": interfaces})
    extended = card.model_copy(update={"name": "Scripted agent (members)"})
    return A2AService(scripted_executor(), card, extended_card=extended)


async def test_extended_card_in_process_replaces_the_card() -> None:
    service = extended_service()
    async with A2AClient.in_process(service, principal=Principal("ada")) as c:
        assert c.card is not None
        assert c.card.capabilities.extended_agent_card
        card = await c.get_extended_card()
        assert card.name == "Scripted agent (members)"
        assert c.card is card
    async with A2AClient.in_process(service) as anonymous:
        with pytest.raises(AuthenticationRequiredError):
            await anonymous.get_extended_card()
    await service.aclose()


@pytest.mark.parametrize(
    ("version", "binding"),
    [("1.0", "JSONRPC"), ("1.0", "HTTP+JSON"), ("0.3", "JSONRPC"), ("0.3", "HTTP+JSON")],
)
async def test_extended_card_over_http(version: str, binding: str) -> None:
    from a2a_core.server.asgi import create_app

    port = free_port()
    service = extended_service(f"http://127.0.0.1:{port}")

    async def authenticate(headers: Any) -> Principal | None:
        return Principal("ada") if headers.get("authorization") == "Bearer s3cret" else None

    app = create_app(service, rest_prefix="/rest", authenticate=authenticate)
    with running(app, port) as url:
        async with await A2AClient.connect(
            url,
            preferred_versions=[version],
            preferred_bindings=[binding],
            headers={"Authorization": "Bearer s3cret"},
        ) as c:
            public = c.card
            card = await c.get_extended_card()
            assert public is not None
            assert public.name == "Scripted agent"
            assert card.name == "Scripted agent (members)"
            assert c.card is card
        async with await A2AClient.connect(
            url, preferred_versions=[version], preferred_bindings=[binding]
        ) as anonymous:
            with pytest.raises(AuthenticationRequiredError):
                await anonymous.get_extended_card()
    await service.aclose()


async def test_in_process_call_can_be_cancelled_in_flight() -> None:
    """Cancelling the caller stops its wait; the task itself goes on (as over HTTP)."""
    import asyncio

    from servers import scripted_service

    service: Any = scripted_service()
    async with A2AClient.in_process(service) as c:
        assert c.can_cancel_in_flight
        assert c.concurrent_calls
        waiting = asyncio.get_running_loop().create_task(c.send("slow"))
        await asyncio.sleep(0.05)
        assert not waiting.done()
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        page = await c.list_tasks()
        assert [t.status.state for t in page.tasks] == [TaskState.WORKING]
        await c.cancel(page.tasks[0])
    await service.aclose()
