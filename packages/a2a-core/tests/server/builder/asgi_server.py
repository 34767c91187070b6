"""Serve any ASGI app (ours, a FastAPI app hosting ours) with uvicorn on 127.0.0.1, port 0."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any, Literal

import uvicorn


@contextlib.asynccontextmanager
async def serving(app: Any, *, lifespan: Literal["on", "off"] = "on") -> AsyncIterator[int]:
    """Run ``app`` in this event loop until the block ends; yields the port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    config = uvicorn.Config(
        app, lifespan=lifespan, log_level="warning", access_log=False, proxy_headers=False
    )
    server = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    try:
        for _ in range(1000):
            if server.started or task.done():
                break
            await asyncio.sleep(0.01)
        if not server.started:
            if task.done():
                task.result()
            raise RuntimeError("the test server did not start")
        yield port
    finally:
        server.should_exit = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, timeout=15)
        sock.close()
