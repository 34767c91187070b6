"""The in-memory store's estimate of a task's JSON size, checked against the real JSON."""

from __future__ import annotations

import strategies as s
from a2a_core.stores._sizes import estimated_json_size
from a2a_core.types import Artifact, Message, Part, Role, Task, TaskState, TaskStatus
from hypothesis import given, settings


def _task(*parts: Part, metadata: dict[str, object] | None = None) -> Task:
    message = Message(message_id="m-1", role=Role.USER, parts=list(parts), metadata=metadata)
    return Task(
        id="t-1",
        context_id="c-1",
        status=TaskStatus.now(TaskState.WORKING),
        history=[message],
        artifacts=[Artifact(artifact_id="a-1", name="answer", parts=list(parts))],
    )


@given(s.tasks())
@settings(max_examples=200)
def test_the_estimate_stays_near_the_json(task: Task) -> None:
    real = len(task.model_dump_json(by_alias=True, exclude_none=True))
    estimate = estimated_json_size(task)
    assert real / 2 - 100 <= estimate <= 2 * real + 200


def test_text_counts_its_utf8_bytes() -> None:
    ascii_text, cjk_text = _task(Part(text="a" * 30_000)), _task(Part(text="語" * 10_000))
    assert estimated_json_size(cjk_text) >= 60_000  # 3 bytes each, twice (history, artifact)
    assert abs(estimated_json_size(cjk_text) - estimated_json_size(ascii_text)) < 100


def test_raw_bytes_count_as_base64_and_free_values_as_encoded() -> None:
    raw = _task(Part(raw=b"\x00" * 30_000))
    assert 80_000 <= estimated_json_size(raw) <= 81_000  # 40,000 base64 characters, twice
    data = _task(Part(data={"rows": list(range(5_000))}))
    assert estimated_json_size(data) >= 2 * len(str(list(range(5_000))).replace(" ", ""))
    tagged = _task(Part(text="x"), metadata={"blob": "y" * 20_000})
    assert estimated_json_size(tagged) >= 20_000
