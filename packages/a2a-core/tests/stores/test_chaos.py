"""Chaos over real sockets: three ``a2a serve`` processes on one backend, one killed with -9.

Run on ``redis://`` and ``postgresql://``.

Clients stream through different instances (tasks running there, and tasks
running elsewhere followed through them). Instance A is killed with
``kill -9`` mid-stream. Every client whose stream broke resubscribes through
a surviving instance with ``Last-Event-ID`` and must receive every event
exactly once: event ids strictly increasing across the broken and the
resumed stream, the numbered chunks in order with no gap and no repeat.
Every task must end: those running on B and C complete with all their
chunks; those that ran on A are settled FAILED by a survivor once their
lease expires (short leases through the ``a2a serve`` lease flags). Nothing
is lost: what each client assembled equals the task as stored. (Should A die
between saving a chunk and publishing it, the survivor's final status
reveals the hole and the client gets the Task instead of the missing chunk:
a snapshot may stand in for events, never go back before what it had.)
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass, field

from a2a_core import A2AClient
from a2a_core.client import EventStream
from a2a_core.client.transports.errors import A2AConnectionError
from a2a_core.types import (
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from cli_support import (  # pyright: ignore[reportMissingImports] - tests/cli/cli_support.py
    AGENTS_FILE,
    ServeProcess,
)

CHUNKS = 60
PAUSE = 0.05  # seconds between chunks: A is killed early, every task still runs
SHORT_LEASES = [
    "--lease-seconds",
    "1",
    "--lease-renew-seconds",
    "0.2",
    "--orphan-sweep-seconds",
    "0.2",
]


@dataclass
class Follower:
    """One client's view of one task across its streams (the broken one and the resumed)."""

    name: str
    runs_on: int
    """The instance (0 = A, the one killed) running the task."""
    via: int
    """The instance the client streams through first."""
    stream: EventStream
    log: list[tuple[int, object]] = field(default_factory=list)
    """(SSE event id, event) in the order received, over every stream."""
    resumed_from: list[int] = field(default_factory=list)
    """The Last-Event-ID of each resubscribe."""
    broke: BaseException | None = None
    resumed_at: int | None = None
    """Where in ``log`` the resumed stream's events begin."""

    @property
    def chunks_seen(self) -> int:
        return sum(isinstance(e, TaskArtifactUpdateEvent) for _, e in self.log)

    async def read(self) -> None:
        """Read the current stream to its end; a broken connection is recorded, not raised."""
        try:
            async for event in self.stream:
                event_id = self.stream.last_event_id
                assert event_id is not None, f"{self.name}: an event without an id"
                self.log.append((int(event_id), event))
        except A2AConnectionError as exc:
            self.broke = exc


def _numbers(text: str) -> list[int]:
    return [int(n) for n in text.split(";") if n]


def _artifact_text(task: Task) -> str:
    return "".join(p.text or "" for a in task.artifacts for p in a.parts)


def check_exactly_once(follower: Follower, final: Task) -> None:
    """Ids strictly increase; chunks come in order, each once; the result equals ``final``."""
    ids = [event_id for event_id, _ in follower.log]
    assert ids == sorted(set(ids)), f"{follower.name}: repeated or reordered ids {ids}"
    expected = 0  # the next chunk number this client has not seen
    for _, event in follower.log:
        if isinstance(event, Task):  # a snapshot: the first event, or after lost events
            have = len(_numbers(_artifact_text(event)))
            assert have >= expected, f"{follower.name}: a snapshot went back to chunk {have}"
            expected = have
        elif isinstance(event, TaskArtifactUpdateEvent):
            got = _numbers("".join(p.text or "" for p in event.artifact.parts))
            assert got == [expected], f"{follower.name}: chunk {got} where {expected} was next"
            expected += 1
    stored = _numbers(_artifact_text(final))
    assert stored == list(range(len(stored)))
    assert expected == len(stored), f"{follower.name}: saw {expected} of {len(stored)} chunks"
    assert follower.stream.text == _artifact_text(final)
    last = follower.log[-1][1]  # the final status (a Task after a hole at A's death)
    assert isinstance(last, TaskStatusUpdateEvent | Task)
    assert last.status.state is final.status.state


async def _until(check: Callable[[], bool], what: str, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


async def test_kill_9_mid_stream_loses_no_event_and_leaves_no_task_running(
    cluster_url: str,
) -> None:
    args = [
        f"{AGENTS_FILE}:ScriptedAgent",
        "--port",
        "0",
        "--no-playground",
        "--store",
        cluster_url,
        *SHORT_LEASES,
    ]
    count = f"count {CHUNKS} {PAUSE}"
    with ExitStack() as processes:  # each stopped by its PID at the end, whatever happens
        procs = [processes.enter_context(ServeProcess(args)) for _ in range(3)]
        urls = await asyncio.gather(*(asyncio.to_thread(p.start, 60.0) for p in procs))
        async with AsyncExitStack() as stack:
            clients: list[A2AClient] = []
            for url in urls:
                client = await A2AClient.connect(url, timeout=20.0)
                stack.push_async_callback(client.aclose)
                clients.append(client)
            followers: list[Follower] = []
            # Tasks streamed through the instance that runs them ...
            for runs, name in ((0, "A via A #1"), (0, "A via A #2"), (1, "B via B"), (2, "C")):
                followers.append(Follower(name, runs, runs, clients[runs].stream(count)))
            # ... and tasks running on one instance, followed through another.
            for runs, via in ((1, 0), (2, 0), (0, 1), (0, 2)):
                sent = await clients[runs].send(count, blocking=False)
                assert sent.task is not None
                stream = clients[via].subscribe(sent.task.id)
                followers.append(Follower(f"{'ABC'[runs]} via {'ABC'[via]}", runs, via, stream))
            survivors = iter([clients[1], clients[2]] * len(followers))

            async def follow(follower: Follower) -> None:
                await follower.read()
                if follower.broke is not None:  # at once, while the tasks still run
                    last = follower.stream.last_event_id
                    assert last is not None
                    follower.resumed_from.append(int(last))
                    follower.resumed_at = len(follower.log)
                    follower.broke = None
                    follower.stream = next(survivors).resubscribe(follower.stream)
                    await follower.read()

            readers = [asyncio.create_task(follow(f)) for f in followers]
            try:
                await _until(
                    lambda: all(f.chunks_seen >= 3 for f in followers), "every stream to flow"
                )
                assert not any(f.stream.done for f in followers), "a task ended before the kill"
                procs[0].stop(signal.SIGKILL)  # A dies mid-stream: no shutdown, no goodbye
                await asyncio.wait_for(asyncio.gather(*readers), 30)
            finally:
                for reader in readers:
                    reader.cancel()
            # Exactly the streams through A broke, and resumed through a survivor.
            resumed = {f.name for f in followers if f.resumed_at is not None}
            assert resumed == {f.name for f in followers if f.via == 0}
            # Every stream ended normally, every task is final, nothing was lost.
            for follower in followers:
                assert follower.broke is None, f"{follower.name}: {follower.broke!r}"
                task = follower.stream.task
                assert task is not None
                final = await clients[1].get_task(task.id)
                if follower.runs_on == 0:
                    assert final.status.state is TaskState.FAILED, follower.name
                    assert final.status.message is not None
                    assert "stopped" in (final.status.message.parts[0].text or "")
                else:
                    assert final.status.state is TaskState.COMPLETED, follower.name
                    assert len(_numbers(_artifact_text(final))) == CHUNKS
                check_exactly_once(follower, final)
                if follower.resumed_at is not None:
                    after = follower.log[follower.resumed_at :]
                    assert after, f"{follower.name}: the resumed stream was empty"
                    assert after[0][0] > follower.resumed_from[0]
                    if follower.runs_on != 0:  # replayed from the backend: no snapshot needed
                        assert not any(isinstance(e, Task) for _, e in after), follower.name
            listed = await clients[2].list_tasks()
            assert len(listed.tasks) == len(followers)
            assert all(t.status.state.is_terminal for t in listed.tasks)
