"""The waiting agent of ``scale_streams.py`` on the official a2a-sdk (public API).

The twin of ``scale_streams_app.py``: ``working``, wait for ``POST /bench/release``,
then ``SCALE_K`` events (``SCALE_K - 1`` artifact updates, the first with
``t=<monotonic>``, then ``completed``). SDK ``InMemoryTaskStore``, JSON-RPC at ``/``.
"""

from __future__ import annotations

import json
import os
import time

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Part,
    Task,
    TaskState,
    TaskStatus,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from benchmarks._scale_release import Releases

__all__ = ["create_app"]


class WaitingExecutor(AgentExecutor):
    def __init__(self, releases: Releases, k: int) -> None:
        self.releases = releases
        self.k = max(1, k)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id = context.task_id or ""
        context_id = context.context_id or ""
        if context.current_task is None:
            await event_queue.enqueue_event(
                Task(
                    id=task_id,
                    context_id=context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=[context.message] if context.message else [],
                )
            )
        updater = TaskUpdater(event_queue, task_id, context_id)
        await updater.start_work()
        await self.releases.wait(task_id)
        for i in range(self.k - 1):
            text = f"t={time.monotonic():.6f}" if i == 0 else f"chunk {i}"
            await updater.add_artifact(
                [Part(text=text)], artifact_id="a", append=i > 0, last_chunk=False
            )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()


def _card(port: int) -> AgentCard:
    base = f"http://127.0.0.1:{port}"
    return AgentCard(
        name="Waiting Agent",
        description="Works, waits for a release, then streams K events (benchmark).",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="wait", name="Wait", description="Wait", tags=["wait"])],
        supported_interfaces=[
            AgentInterface(protocol_binding="JSONRPC", protocol_version="1.0", url=f"{base}/"),
        ],
    )


def create_app() -> Starlette:
    port = int(os.environ.get("ECHO_PORT", "8001"))
    releases = Releases()
    card = _card(port)
    handler = DefaultRequestHandler(
        agent_executor=WaitingExecutor(releases, int(os.environ.get("SCALE_K", "20"))),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )

    async def release(request: Request) -> JSONResponse:
        body = json.loads(await request.body())
        return JSONResponse({"released": releases.release(body["task"])})

    routes = [
        *create_agent_card_routes(agent_card=card),
        *create_jsonrpc_routes(request_handler=handler, rpc_url="/"),
        Route("/bench/release", release, methods=["POST"]),
    ]
    return Starlette(routes=routes)
