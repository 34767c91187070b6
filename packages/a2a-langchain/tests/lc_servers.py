"""Served LangChain agents on 127.0.0.1 that outlive pytest-asyncio's per-test event loops.

``served_in_thread`` runs ``a2a_langchain.running_server`` on a private event
loop in a daemon thread (module-scoped fixtures use it); it yields the base
URL and stops the server on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from a2a_langchain import running_server


@contextlib.contextmanager
def served_in_thread(runnable: Any, startup_timeout: float = 15.0, **options: Any) -> Iterator[str]:
    ready = threading.Event()
    url: list[str] = []
    errors: list[BaseException] = []
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    async def main() -> None:
        try:
            async with running_server(runnable, **options) as server:
                url.append(server.url)
                ready.set()
                await stop.wait()
        except BaseException as exc:
            errors.append(exc)
            ready.set()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    if not ready.wait(startup_timeout) or errors:
        raise RuntimeError(f"the test server did not start: {errors}")
    try:
        yield url[0]
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=15)
        loop.close()
