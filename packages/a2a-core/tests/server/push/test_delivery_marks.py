"""The delivered-up-to mark and deterministic webhook ids (mock HTTP, a store that keeps marks).

The mark of a task is the highest event id up to which every lane (task,
config) has finished; a survivor re-sends what is after it when the
instance holding the lanes dies. It must never pass an event some lane
still holds, whatever order the lanes finish in.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx
import pytest
from _push_support import eventually, fake_policy, make_task, status_event
from a2a_core.server.push import (
    MemoryPushConfigStore,
    PushNotificationService,
    RetryPolicy,
)
from a2a_core.server.push.notifier import delivery_id
from a2a_core.types import Task, TaskPushNotificationConfig, TaskState
from a2a_core.webhooks import new_webhook_secret


class MarkingStore(MemoryPushConfigStore):
    """A memory store that keeps marks (as the shared stores do) and records each write."""

    def __init__(self) -> None:
        super().__init__()
        self.marks: dict[str, int] = {}
        self.writes: list[dict[str, int]] = []

    @property
    def keeps_marks(self) -> bool:
        return True

    async def read_mark(self, task_id: str) -> int | None:
        return self.marks.get(task_id)

    async def write_marks(self, marks: Mapping[str, int]) -> None:
        self.writes.append(dict(marks))
        for task_id, mark in marks.items():
            self.marks[task_id] = max(mark, self.marks.get(task_id, -1))


class Gates:
    """A MockTransport handler: one gate per URL path; records (path, webhook-id, state)."""

    def __init__(self) -> None:
        self.gates: dict[str, asyncio.Event] = {}
        self.seen: list[tuple[str, str, str]] = []

    def gate(self, path: str) -> asyncio.Event:
        return self.gates.setdefault(path, asyncio.Event())

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        body = request.read().decode()
        self.seen.append((request.url.path, request.headers.get("webhook-id", ""), body))
        await self.gate(request.url.path).wait()
        return httpx.Response(200, text="ok")

    def count(self, path: str) -> int:
        return sum(1 for seen_path, _, _ in self.seen if seen_path == path)


@pytest.fixture
async def setup() -> AsyncIterator[tuple[PushNotificationService, MarkingStore, Gates]]:
    store, gates = MarkingStore(), Gates()
    push = PushNotificationService(
        store=store,
        policy=fake_policy(),
        transport=httpx.MockTransport(gates),
        retry=RetryPolicy(max_retries=0),
        signing_secret=new_webhook_secret(),
        mark_interval=0.0,
    )
    for name in ("x", "y"):
        await push.set_config(
            TaskPushNotificationConfig(
                task_id="task-1", id=name, url=f"https://hooks.example/{name}"
            ),
            "1.0",
        )
    yield push, store, gates
    for gate in gates.gates.values():
        gate.set()
    push.drain_timeout = 0
    await push.aclose()


def _emit(push: PushNotificationService, task: Task, event_id: int, text: str) -> Task:
    event = status_event(task, TaskState.WORKING, text)
    push.on_saved_event(task, event, task.status.state, event_id)
    return task.model_copy(update={"status": event.status})


async def test_the_mark_waits_for_the_slowest_lane_in_either_order(setup: Any) -> None:
    push, store, gates = setup
    x, y = gates.gate("/x"), gates.gate("/y")
    x.set()  # x answers at once; y holds the first event in flight
    task = make_task()
    for event_id, text in ((5, "a"), (7, "b"), (9, "c")):  # ids are versions: not contiguous
        task = _emit(push, task, event_id, text)
    await eventually(lambda: gates.count("/x") == 3 and gates.count("/y") == 1)
    await eventually(lambda: store.marks.get("task-1") == 4)
    await asyncio.sleep(0.05)  # x finished everything: still the mark waits for y's 5
    assert store.marks["task-1"] == 4
    # Now the other way round: x stalls on the next event while y catches up.
    x.clear()
    task = _emit(push, task, 11, "d")
    await eventually(lambda: gates.count("/x") == 4)
    y.set()
    await eventually(lambda: gates.count("/y") == 4)
    await eventually(lambda: store.marks.get("task-1") == 10)
    await asyncio.sleep(0.05)
    assert store.marks["task-1"] == 10  # y is done with 11, x is not
    x.set()
    await eventually(lambda: store.marks.get("task-1") == 11)
    written = [w["task-1"] for w in store.writes]
    assert written == sorted(written)  # never lowered
    assert all(mark in (4, 5, 7, 9, 10, 11) for mark in written)


async def test_a_delivery_cut_off_at_shutdown_is_not_finished(setup: Any) -> None:
    push, store, gates = setup
    gates.gate("/x").set()
    _emit(push, make_task(), 3, "a")
    await eventually(lambda: gates.count("/y") == 1)
    await eventually(lambda: store.marks.get("task-1") == 2)
    push.drain_timeout = 0
    await push.aclose()  # y's delivery of 3 is cancelled: a survivor must send it again
    assert store.marks["task-1"] == 2


async def test_webhook_ids_come_from_task_event_and_config(setup: Any) -> None:
    push, _, gates = setup
    gates.gate("/x").set()
    gates.gate("/y").set()
    task = _emit(push, make_task(), 5, "a")
    _emit(push, task, 6, "b")
    await eventually(lambda: len(gates.seen) == 4)
    ids = {(path, webhook_id) for path, webhook_id, _ in gates.seen}
    assert ids == {(f"/{c}", delivery_id("task-1", str(e), c)) for c in ("x", "y") for e in (5, 6)}
    assert len({webhook_id for _, webhook_id in ids}) == 4
    # Without an event id (a plain observer call) each delivery gets a random one.
    push.on_event(task, status_event(task, TaskState.WORKING, "c"), TaskState.WORKING)
    await eventually(lambda: len(gates.seen) == 6)
    assert len({webhook_id for _, webhook_id, _ in gates.seen}) == 6
