"""The cancellation token: awaitable, pollable and usable from worker threads."""

from __future__ import annotations

import asyncio
import threading

import pytest
from a2a_core.server import CancellationToken, CancelledByClient


async def test_waiters_callbacks_and_polling_see_one_cancel() -> None:
    token = CancellationToken()
    calls: list[str] = []
    token.on_cancel(lambda: calls.append("callback"))
    waiter = asyncio.ensure_future(token.wait())
    await asyncio.sleep(0)
    assert not token.cancelled
    assert not waiter.done()
    token.raise_if_cancelled()
    token.cancel()
    token.cancel()  # idempotent
    await asyncio.wait_for(waiter, 1)
    assert token.cancelled
    assert calls == ["callback"]
    with pytest.raises(CancelledByClient):
        token.raise_if_cancelled()
    token.on_cancel(lambda: calls.append("late"))  # runs at once
    assert calls == ["callback", "late"]
    await asyncio.wait_for(token.wait(), 1)  # already cancelled: returns at once


async def test_a_thread_blocks_until_cancel() -> None:
    token = CancellationToken()
    assert token.wait_blocking(0.01) is False
    woke = threading.Event()

    def worker() -> None:
        if token.wait_blocking(5):
            woke.set()

    thread = threading.Thread(target=worker)
    thread.start()
    await asyncio.sleep(0.02)
    token.cancel()
    thread.join(5)
    assert woke.is_set()
    assert token.wait_blocking() is True


async def test_cancel_from_a_thread_wakes_the_loop() -> None:
    token = CancellationToken()
    waiter = asyncio.ensure_future(token.wait())
    await asyncio.sleep(0)
    await asyncio.to_thread(token.cancel)
    await asyncio.wait_for(waiter, 1)


async def test_abandoned_waits_do_not_pile_up() -> None:
    token = CancellationToken()
    for _ in range(50):
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(token.wait(), 0.001)
    assert token._waiters == []  # pyright: ignore[reportPrivateUsage]
