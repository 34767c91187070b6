"""Artifact events applied together equal the same events applied one by one.

A run holding streamed chunks in memory applies them in one go (``apply_artifacts``,
text joined once); the task it saves must be exactly the task that applying each event
in turn would give: appended text joined, data parts kept apart, a replaced artifact
losing what was appended before, metadata merged, a missing name filled.
"""

from __future__ import annotations

import random

from a2a_core.server.task_state import apply_artifact, apply_artifacts
from a2a_core.types import (
    Artifact,
    Part,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
)


def _part(rng: random.Random) -> Part:
    kind = rng.random()
    if kind < 0.7:
        return Part(text=rng.choice(["a", "bc", "", "é", " d"]))
    if kind < 0.85:
        return Part(text="x", media_type="text/markdown")
    return Part(data={"n": rng.randint(0, 9)})


def _events(rng: random.Random, n: int) -> list[TaskArtifactUpdateEvent]:
    events = []
    for _ in range(n):
        artifact = Artifact(
            artifact_id=rng.choice(["a1", "a2", "a3"]),
            name=rng.choice([None, None, "named"]),
            parts=[_part(rng) for _ in range(rng.randint(1, 3))],
            metadata=rng.choice([None, None, {"k": rng.randint(0, 3)}]),
        )
        events.append(
            TaskArtifactUpdateEvent(
                task_id="t", context_id="c", artifact=artifact, append=rng.random() < 0.8
            )
        )
    return events


def test_batched_equals_one_by_one() -> None:
    rng = random.Random(1234)
    start = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    for _ in range(300):
        events = _events(rng, rng.randint(1, 40))
        one_by_one = start
        for event in events:
            one_by_one = apply_artifact(one_by_one, event)
        assert apply_artifacts(start, events) == one_by_one


def test_a_hundred_chunks_join_into_one_text_part() -> None:
    start = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    events = [
        TaskArtifactUpdateEvent(
            task_id="t",
            context_id="c",
            artifact=Artifact(artifact_id="a", parts=[Part(text=f"tok{i} ")]),
            append=i > 0,
        )
        for i in range(100)
    ]
    task = apply_artifacts(start, events)
    assert [p.text for p in task.artifacts[0].parts] == ["".join(f"tok{i} " for i in range(100))]
