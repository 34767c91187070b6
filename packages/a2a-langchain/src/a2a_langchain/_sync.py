"""Sync generator runnables, made to stream in the serving event loop.

A ``RunnableLambda`` over a sync generator function and a ``RunnableGenerator``
over a sync transform only stream from sync code: their async methods raise
("Cannot stream from a generator function asynchronously", "only supports sync
methods"). The agent runs everything with ``astream_events``, so ``streamable``
gives each such step an async form that pulls the sync generator one item at a
time in a worker thread: chunks flow as they are produced, and a cancelled run
stops pulling at the next item. Bindings, sequences and parallel maps are
rebuilt around the steps they wrap; anything else is returned as it is.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, cast

from langchain_core.runnables import (
    Runnable,
    RunnableBinding,
    RunnableConfig,
    RunnableGenerator,
    RunnableLambda,
    RunnableParallel,
    RunnableSequence,
)
from langchain_core.runnables.utils import accepts_config

__all__ = ["streamable"]

_DONE = object()


async def _pulled(iterator: Iterator[Any]) -> AsyncIterator[Any]:
    """The items of a sync iterator, each pulled in a worker thread."""
    while True:
        item = await asyncio.to_thread(next, iterator, _DONE)
        if item is _DONE:
            return
        yield item


def _config_kwargs(func: Callable[..., Any], config: RunnableConfig) -> dict[str, Any]:
    return {"config": config} if accepts_config(func) else {}


def _async_lambda(lam: RunnableLambda[Any, Any]) -> RunnableLambda[Any, Any]:
    func = cast(Callable[..., Iterator[Any]], lam.func)

    async def astream(value: Any, config: RunnableConfig) -> AsyncIterator[Any]:
        async for item in _pulled(func(value, **_config_kwargs(func, config))):
            yield item

    return RunnableLambda(func, afunc=cast(Any, astream), name=lam.get_name())


def _async_generator(gen: RunnableGenerator) -> RunnableGenerator:
    transform = cast(Callable[..., Iterator[Any]], gen._transform)  # pyright: ignore[reportPrivateUsage]

    async def atransform(values: AsyncIterator[Any], config: RunnableConfig) -> AsyncIterator[Any]:
        gathered = [value async for value in values]
        iterator = transform(iter(gathered), **_config_kwargs(transform, config))
        async for item in _pulled(iterator):
            yield item

    return RunnableGenerator(transform, cast(Any, atransform), name=gen.get_name())


def streamable(runnable: Runnable[Any, Any], depth: int = 0) -> Runnable[Any, Any]:
    """``runnable`` with every sync-generator step given an async form (same otherwise)."""
    if depth > 64:
        return runnable
    if isinstance(runnable, RunnableLambda):
        sync_only = not hasattr(runnable, "afunc") and inspect.isgeneratorfunction(runnable.func)
        return _async_lambda(runnable) if sync_only else runnable
    if isinstance(runnable, RunnableGenerator):
        sync_only = hasattr(runnable, "_transform") and not hasattr(runnable, "_atransform")
        return _async_generator(runnable) if sync_only else runnable
    if isinstance(runnable, RunnableBinding):
        inner = streamable(runnable.bound, depth + 1)
        return runnable if inner is runnable.bound else runnable.model_copy(update={"bound": inner})
    if isinstance(runnable, RunnableSequence):
        steps = [streamable(step, depth + 1) for step in runnable.steps]
        if all(new is old for new, old in zip(steps, runnable.steps, strict=True)):
            return runnable
        return RunnableSequence(*steps, name=runnable.name)
    if isinstance(runnable, RunnableParallel):
        branches = {k: streamable(v, depth + 1) for k, v in runnable.steps__.items()}
        if all(branches[k] is v for k, v in runnable.steps__.items()):
            return runnable
        return runnable.model_copy(update={"steps__": branches})
    return runnable
