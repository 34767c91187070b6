"""The run's lock (every agent event takes it): one holder at a time, first come first
served, and a cancelled waiter never keeps the lock nor loses it for the others."""

from __future__ import annotations

import asyncio

import pytest
from a2a_core.server.manager import _RunLock  # pyright: ignore[reportPrivateUsage]


async def _take(lock: _RunLock, name: str, order: list[str], hold: asyncio.Event) -> None:
    async with lock:
        order.append(name)
        await hold.wait()


async def test_one_holder_at_a_time_in_arrival_order() -> None:
    lock = _RunLock()
    order: list[str] = []
    holders = 0
    most = 0

    async def worker(name: str) -> None:
        nonlocal holders, most
        async with lock:
            holders += 1
            most = max(most, holders)
            order.append(name)
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            holders -= 1

    await asyncio.gather(*(worker(str(n)) for n in range(20)))
    assert most == 1
    assert order == [str(n) for n in range(20)]
    async with lock:  # free again
        pass


async def test_a_waiter_cancelled_while_queued_is_skipped() -> None:
    lock = _RunLock()
    order: list[str] = []
    release = asyncio.Event()
    first = asyncio.create_task(_take(lock, "a", order, release))
    await asyncio.sleep(0)
    second = asyncio.create_task(_take(lock, "b", order, release))
    third = asyncio.create_task(_take(lock, "c", order, release))
    await asyncio.sleep(0)
    release.set()  # "a" releases the lock before the cancelled waiter runs again
    second.cancel()
    await first
    with pytest.raises(asyncio.CancelledError):
        await second
    await third
    assert order == ["a", "c"]
    async with lock:
        pass


async def test_a_waiter_cancelled_after_being_handed_the_lock_passes_it_on() -> None:
    lock = _RunLock()
    order: list[str] = []
    await lock.__aenter__()
    never = asyncio.Event()
    second = asyncio.create_task(_take(lock, "b", order, never))
    third = asyncio.create_task(_take(lock, "c", order, asyncio.Event()))
    await asyncio.sleep(0)
    await lock.__aexit__(None, None, None)  # hands the lock to "b"
    second.cancel()  # before "b" runs again
    with pytest.raises(asyncio.CancelledError):
        await second
    await asyncio.sleep(0)
    assert order == ["c"]  # "c" holds it now
    third.cancel()
    with pytest.raises(asyncio.CancelledError):
        await third
    async with lock:  # "c" released it when cancelled inside
        pass
