"""What the replay buffers of finished streams cost the garbage collector's full collections.

    uv run python benchmarks/replay_gc_bench.py [--tasks 1000] [--events 102] [--runs 5]

A ``MemoryEventBus`` at its default bound (1,000 buffers) holds the events of that many
finished streams (each: the task, ``events - 2`` artifact chunks, the final status), as
their JSON, encoded when each event was published. Then:
full collections (``gc.collect()``) with the startup objects frozen as the server
does (``freeze_startup_objects``), median of ``--runs`` after evicting the CPU caches
(a full collection in a serving process runs cold: it comes every few hundred
requests). Every request of the server waits while one runs.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

from a2a_core.server import MemoryEventBus
from a2a_core.types import (
    Artifact,
    Part,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

_EVICT = bytearray(32 << 20)


def _evict_caches() -> None:
    for i in range(0, len(_EVICT), 64):
        _EVICT[i] = 1


def fill(bus: MemoryEventBus, tasks: int, events: int) -> None:
    for n in range(tasks):
        task_id, context_id = f"task-{n}", f"ctx-{n}"
        bus.record(task_id, 0)
        sub = bus.subscribe(task_id)
        stream: list[StreamEvent] = [
            Task(id=task_id, context_id=context_id, status=TaskStatus(state=TaskState.SUBMITTED))
        ]
        stream += [
            TaskArtifactUpdateEvent(
                task_id=task_id,
                context_id=context_id,
                artifact=Artifact(artifact_id="a", parts=[Part(text=f"chunk {i} of the answer")]),
                append=i > 0,
            )
            for i in range(events - 2)
        ]
        stream.append(
            TaskStatusUpdateEvent(
                task_id=task_id, context_id=context_id, status=TaskStatus(state=TaskState.COMPLETED)
            )
        )
        for event_id, event in enumerate(stream, 1):
            bus.publish(task_id, event, event_id)
        bus.end(task_id)
        sub.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--events", type=int, default=102)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    gc.collect()
    gc.freeze()  # the startup objects, as the server freezes them
    bus = MemoryEventBus()
    fill(bus, args.tasks, args.events)
    gc.collect()
    times = []
    for _ in range(args.runs):
        _evict_caches()
        t0 = time.perf_counter()
        gc.collect()
        times.append((time.perf_counter() - t0) * 1e3)
    print(
        f"{args.tasks} buffers of {args.events} events: a full collection takes "
        f"{statistics.median(times):.2f} ms (median of {args.runs}, caches evicted); "
        f"{len(gc.get_objects())} objects tracked besides the frozen ones"
    )


if __name__ == "__main__":
    main()
