"""Calls after an idle gap never fail on a connection the server is closing.

A server closes a connection idle for its keep-alive (5 s for uvicorn, so for
``a2a serve``); a call sent just then meets a closed connection. The client
drops idle connections first (``IDLE_SECONDS``, below the usual 5 s) and
retries once, on a fresh connection, a request safe to repeat that failed
before its answer came. Over real sockets, the server here keeps idle
connections only ``KEEP_ALIVE`` seconds, so that 200 calls at gaps across that
boundary take seconds, not 1000.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from a2a_core.client import A2AClient
from a2a_core.client.transports._http import IDLE_SECONDS
from a2a_core.testing import asgi_in_thread
from a2a_core.types import Message, Part, Role, TaskState
from servers import free_port, our_app, scripted_service

KEEP_ALIVE = 0.5
"""The server's keep-alive here (uvicorn's default is 5 s)."""
CLIENTS = 20
ROUNDS = 10
SPREAD = 0.02
"""The gaps run from KEEP_ALIVE - SPREAD to KEEP_ALIVE + SPREAD seconds."""

pytestmark = pytest.mark.timeout(120)


class Connections:
    """Our app, recording the client address (so the connection) of every request."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.peers: list[tuple[str, int]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.peers.append(tuple(scope["client"]))
        await self.app(scope, receive, send)


def _message(text: str, message_id: str) -> Message:
    return Message(message_id=message_id, role=Role.USER, parts=[Part(text=text)])


async def test_200_calls_at_gaps_across_the_keep_alive_boundary_all_succeed() -> None:
    port = free_port()
    app = our_app(scripted_service(), port)
    with asgi_in_thread(app, port=port, lifespan="off", keep_alive=KEEP_ALIVE) as url:
        clients = [await A2AClient.connect(url, timeout=10.0) for _ in range(CLIENTS)]
        try:
            first = await clients[0].send("hello")
            assert first.task is not None
            task_id = first.task.id
            total = CLIENTS * ROUNDS
            gaps = [KEEP_ALIVE - SPREAD + 2 * SPREAD * i / (total - 1) for i in range(total)]
            failures: list[BaseException] = []

            async def calls(n: int, client: A2AClient) -> None:
                await client.get_task(task_id)  # a connection, then idle gaps
                for r in range(ROUNDS):
                    await asyncio.sleep(gaps[r * CLIENTS + n])
                    try:
                        if r % 2:  # a send carrying a messageId: safe to repeat
                            sent = await client.send(_message("hello", f"m-{n}-{r}"))
                            assert sent.state is TaskState.COMPLETED
                        else:  # a read
                            await client.get_task(task_id)
                    except Exception as exc:
                        failures.append(exc)

            await asyncio.gather(*(calls(n, c) for n, c in enumerate(clients)))
            assert not failures, f"{len(failures)} of {total} calls failed: {failures[:3]!r}"
        finally:
            for client in clients:
                await client.aclose()


async def test_an_idle_connection_is_dropped_before_the_usual_server_keep_alive() -> None:
    """Idle past ``IDLE_SECONDS`` (and not yet 5 s): the next call opens a new connection."""
    assert IDLE_SECONDS < 5.0
    port = free_port()
    app = Connections(our_app(scripted_service(), port))
    with asgi_in_thread(app, port=port, lifespan="off") as url:  # uvicorn's 5 s keep-alive
        async with await A2AClient.connect(url, timeout=10.0) as client:
            task = (await client.send("hello")).task
            assert task is not None
            await client.get_task(task.id)
            quick = len(set(app.peers))
            await asyncio.sleep(IDLE_SECONDS + 0.3)
            await client.get_task(task.id)
    assert quick == 1  # back-to-back calls share one connection
    assert len(set(app.peers)) == 2, app.peers  # after the idle gap, a fresh one
