"""What an idle streamed send keeps alive: no object its stream does not need yet.

``benchmarks/scale_streams.py`` holds thousands of such streams open (issue #40); every
object made per run or per stream for later is paid for by each of them for as long as it
waits. These tests count objects, they do not time.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc

from a2a_core.server import RequestContext, TaskUpdater
from a2a_core.server.oneshot import OneShot
from a2a_core.server.run import TaskRun
from a2a_core.types import Task
from a2a_core.wire.operations import Operation
from server_core_support import CALL, ServiceFactory, eventually, send

STREAMS = 20


def _count(kind: type) -> int:
    return sum(1 for obj in gc.get_objects() if type(obj) is kind)


async def test_idle_runs_make_no_event_nor_deque(make_service: ServiceFactory) -> None:
    """A waiting run's milestones (settled, done) make no waiters' structure nobody awaits
    (an ``asyncio.Event`` each held a deque, ~600 bytes, and a dict for the run's life),
    and its task holds no coroutine of its own around the agent's."""
    loop = asyncio.get_running_loop()
    gate = loop.create_future()  # no Event of the agent's own
    waiting: list[str] = []

    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        waiting.append(context.task_id)
        await asyncio.shield(gate)
        await updater.complete()

    service = make_service(agent)
    await service.open_stream(Operation.SEND_STREAMING_MESSAGE, send(), CALL)  # warm-up
    gc.collect()
    events, deques = _count(asyncio.Event), _count(collections.deque)
    streams = [
        await service.open_stream(Operation.SEND_STREAMING_MESSAGE, send(), CALL)
        for _ in range(STREAMS)
    ]
    firsts = [await anext(stream) for stream in streams]
    assert all(isinstance(first, Task) for first in firsts)
    await eventually(lambda: len(waiting) == STREAMS + 1)
    gc.collect()
    assert _count(asyncio.Event) - events < STREAMS // 4  # two per run before
    assert _count(collections.deque) - deques < STREAMS // 4
    # The run's task steps the agent's coroutine chain with no coroutine around it.
    runs = list(service.manager._active.values())
    assert len(runs) == STREAMS + 1
    for run in runs:
        assert run.handle is not None
        assert run.handle.get_coro().cr_code is TaskRun._execute.__code__  # type: ignore[union-attr]
    gate.set_result(None)
    for stream in streams:
        async for _ in stream:
            pass


async def test_a_oneshot_wakes_its_waiters_and_lets_a_cancelled_one_go() -> None:
    flag = OneShot()
    assert not flag.is_set()
    assert flag._waiters is None  # nothing made before someone waits
    first = asyncio.ensure_future(flag.wait())
    gone = asyncio.ensure_future(flag.wait())
    await asyncio.sleep(0)
    assert flag._waiters is not None
    assert len(flag._waiters) == 2
    gone.cancel()
    await asyncio.gather(gone, return_exceptions=True)
    assert len(flag._waiters) == 1  # a cancelled waiter is not kept
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(flag.wait(), 0.01)
    assert len(flag._waiters) == 1
    flag.set()
    assert flag.is_set()
    assert await first is True
    assert flag._waiters is None  # the list went with the wake-up
    flag.set()  # idempotent
    assert await flag.wait() is True  # at once when set
