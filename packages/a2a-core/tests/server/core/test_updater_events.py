"""The events and messages ``TaskUpdater`` builds equal the validated models.

Chunks and agent messages from plain values (a ``str``, ``Part`` objects) are built
without validation (``a2a_core.types._base.built``); they must be indistinguishable from
the models that validating the same values gives: equal, the same fields in the same
order, the same wire bytes. Values that validation refuses are still refused.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

import pytest
from a2a_core.server.updater import TaskUpdater
from a2a_core.types import (
    Artifact,
    Message,
    Part,
    StreamEvent,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a_core.types._base import changed
from a2a_core.wire._json import dumps
from pydantic import ValidationError


class Sink:
    """Keeps what the updater emits."""

    def __init__(self) -> None:
        self.events: list[StreamEvent] = []

    @property
    def state(self) -> TaskState:
        return TaskState.WORKING

    async def emit(self, event: StreamEvent) -> None:
        self.events.append(event)


_E = TypeVar("_E", TaskArtifactUpdateEvent, TaskStatusUpdateEvent)


def only_event_and_its_validated_twin(sink: Sink, kind: type[_E]) -> tuple[_E, _E]:
    """The one event emitted, of ``kind``, and the model validating its values gives:
    equal, and the same wire bytes."""
    [event] = sink.events
    assert isinstance(event, kind)
    validated = kind.model_validate(event.model_dump())
    assert event == validated
    assert dumps(event) == dumps(validated)
    return event, validated


CASES: list[dict[str, Any]] = [
    {"content": "hello"},
    {"content": ""},
    {"content": 'é 🙂 \n"quoted"', "artifact_id": "a", "name": "n", "append": True},
    {"content": "x", "append": True, "last_chunk": True},
    {"content": "x", "last_chunk": False, "description": "d"},
    {"content": Part(text="p", media_type="text/markdown")},
    {"content": [Part(text="a"), Part(data={"k": [1, None]}), Part(url="https://x/y")]},
]


@pytest.mark.parametrize("case", CASES)
async def test_built_chunk_equals_the_validated_one(case: dict[str, Any]) -> None:
    sink = Sink()
    updater = TaskUpdater(sink, "task-1", "ctx-1")
    await updater.add_artifact(**case)
    event, validated = only_event_and_its_validated_twin(sink, TaskArtifactUpdateEvent)
    assert list(event.__dict__) == list(TaskArtifactUpdateEvent.model_fields)
    assert list(event.artifact.__dict__) == list(Artifact.model_fields)
    for part in event.artifact.parts:
        assert list(part.__dict__) == list(Part.model_fields)
    # A copy (how runs change tasks) behaves as one of a validated model.
    copy = event.artifact.model_copy(update={"name": "renamed"})
    assert copy.name == "renamed"
    assert copy.parts == validated.artifact.parts


@pytest.mark.parametrize(
    "case",
    [
        {"content": []},
        {"content": ["not a part"]},
        {"content": "x", "artifact_id": 5},
        {"content": "x", "name": 3},
    ],
)
async def test_invalid_values_are_still_refused(case: dict[str, Any]) -> None:
    updater = TaskUpdater(Sink(), "task-1", "ctx-1")
    with pytest.raises(ValidationError):
        await updater.add_artifact(**case)


@pytest.mark.parametrize(
    ("state", "message", "metadata"),
    [
        (TaskState.COMPLETED, None, None),
        (TaskState.INPUT_REQUIRED, "which one?", None),
        (TaskState.FAILED, None, {"why": ["no", 1]}),
    ],
)
async def test_built_status_event_equals_the_validated_one(
    state: TaskState, message: str | None, metadata: dict[str, Any] | None
) -> None:
    sink = Sink()
    await TaskUpdater(sink, "task-1", "ctx-1").update_status(state, message, metadata=metadata)
    event, validated = only_event_and_its_validated_twin(sink, TaskStatusUpdateEvent)
    assert list(event.__dict__) == list(validated.__dict__)


MESSAGES: list[Any] = [
    "hello",
    "",
    'é 🙂 \n"quoted"',
    Part(text="p", media_type="text/markdown"),
    [Part(text="a"), Part(data={"k": [1, None]}), Part(url="https://x/y")],
]


@pytest.mark.parametrize("content", MESSAGES)
def test_built_agent_message_equals_the_validated_one(content: Any) -> None:
    message = TaskUpdater(Sink(), "task-1", "ctx-1").new_agent_message(content)
    validated = Message.model_validate(message.model_dump())
    assert message == validated
    assert dumps(message) == dumps(validated)
    assert list(message.__dict__) == list(Message.model_fields)
    assert (message.task_id, message.context_id, message.role.value) == (
        "task-1",
        "ctx-1",
        "ROLE_AGENT",
    )
    copy = message.model_copy(update={"task_id": "other"})
    assert copy.parts == validated.parts


@pytest.mark.parametrize("content", [[], ["not a part"], [Part(text="a"), "b"]])
def test_agent_messages_of_invalid_values_are_still_refused(content: Any) -> None:
    with pytest.raises(ValidationError):
        TaskUpdater(Sink(), "task-1", "ctx-1").new_agent_message(content)


def test_an_agent_message_with_more_fields_is_validated() -> None:
    updater = TaskUpdater(Sink(), "task-1", "ctx-1")
    message = updater.new_agent_message("x", metadata={"k": 1}, reference_task_ids=["t0"])
    assert message.metadata == {"k": 1}
    assert message.reference_task_ids == ["t0"]
    with pytest.raises(ValidationError):
        updater.new_agent_message("x", reference_task_ids="t0")


async def test_changing_one_built_chunk_leaves_the_others_as_they_were() -> None:
    # Assigning a field, deleting one or copying with changes (pydantic's way and ours)
    # must not reach the other chunks: models are values.
    sink = Sink()
    updater = TaskUpdater(sink, "task-1", "ctx-1")
    for _ in range(3):
        await updater.add_artifact("x", artifact_id="a", append=True, last_chunk=False)
    first, second, third = cast("list[TaskArtifactUpdateEvent]", sink.events)
    before = second.model_dump(exclude_unset=True)
    assert second.model_fields_set == set(TaskArtifactUpdateEvent.model_fields)

    first.metadata = {"k": 1}
    del first.last_chunk
    first.model_fields_set.discard("artifact")
    for copy in (third.model_copy(update={"append": False}), changed(third, {"append": False})):
        copy.model_fields_set.discard("task_id")

    assert second.model_fields_set == set(TaskArtifactUpdateEvent.model_fields)
    assert third.model_fields_set == set(TaskArtifactUpdateEvent.model_fields)
    assert second.model_dump(exclude_unset=True) == before
    assert dumps(second) == dumps(TaskArtifactUpdateEvent.model_validate(before))
