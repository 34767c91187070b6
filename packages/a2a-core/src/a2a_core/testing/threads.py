"""Real servers on 127.0.0.1 in a background thread, for synchronous tests and long fixtures.

Each server runs on its own event loop in a daemon thread, so it serves code that blocks
(a CrewAI tool, ``SyncA2AClient``, a subprocess) and outlives pytest-asyncio's per-test
loops (module-scoped fixtures). Both context managers yield the base URL
(``http://127.0.0.1:<port>``) and stop the server on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Callable, Generator
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal

__all__ = ["asgi_in_thread", "free_port", "served_in_thread"]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def served_in_thread(
    agent: Any,
    *,
    startup_timeout: float = 30.0,
    running: Callable[..., AbstractAsyncContextManager[Any]] | None = None,
    **options: Any,
) -> Generator[str]:
    """Serve ``agent`` with ``running(agent, **options)`` in a thread.

    ``running`` defaults to ``a2a_core.compose.serve.running_server``; an adapter's own
    (``a2a_langchain.running_server``, which also takes the agent's options) works too.
    """
    if running is None:
        from ..compose.serve import running_server as running

    ready = threading.Event()
    ports: list[int] = []
    errors: list[BaseException] = []
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    async def main() -> None:
        try:
            async with running(agent, **options) as server:
                ports.append(server.port)
                ready.set()
                await stop.wait()
        except BaseException as exc:
            errors.append(exc)
            ready.set()

    thread = threading.Thread(
        target=loop.run_until_complete, args=(main(),), name="a2a-served", daemon=True
    )
    thread.start()

    def shut() -> None:
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=20)
        if not thread.is_alive():
            loop.close()

    if not ready.wait(startup_timeout) or errors:
        shut()
        raise RuntimeError(f"the test server did not start: {errors or 'timed out'}")
    try:
        yield f"http://127.0.0.1:{ports[0]}"
    finally:
        shut()


@contextlib.contextmanager
def asgi_in_thread(
    app: Any,
    *,
    port: int | None = None,
    lifespan: Literal["on", "off", "auto"] = "on",
    startup_timeout: float = 30.0,
    beside: Callable[[], AbstractAsyncContextManager[Any]] | None = None,
    keep_alive: float | None = None,
) -> Generator[str]:
    """Serve any ASGI ``app`` (another A2A implementation's, say) under uvicorn in a thread.

    ``beside``: an async context manager entered in the server's loop before it serves
    and left after it stops (a gRPC server next to the HTTP one, for example).
    ``keep_alive``: seconds an idle connection stays open (uvicorn's default: 5).
    """
    import uvicorn

    port = port or free_port()
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan=lifespan,
        access_log=False,
    )
    if keep_alive is not None:
        config.timeout_keep_alive = keep_alive  # pyright: ignore[reportAttributeAccessIssue] - a float works
    server = uvicorn.Server(config)

    async def serve() -> None:
        if beside is None:
            await server.serve()
            return
        async with beside():
            await server.serve()

    thread = threading.Thread(
        target=asyncio.run, args=(serve(),), name=f"uvicorn-{port}", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            server.should_exit = True
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
