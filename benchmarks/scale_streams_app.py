"""The waiting agent of ``scale_streams.py`` on a2a_core's public server API.

Each task reports ``working``, then waits to be released (``POST /bench/release``,
JSON ``{"task": "<id>"}`` or ``{"task": "*"}`` for every task waiting now); then it
emits ``SCALE_K`` events: ``SCALE_K - 1`` artifact updates (the first one's text is
``t=<time.monotonic() when it was produced>``, read by the client for the fan-out
latency) and the final ``completed`` status. ``memory://`` store (the default);
up to 20,000 concurrent runs (``max_background_tasks``; the default is 512).

    uvicorn --factory benchmarks.scale_streams_app:create_app --port 8001
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from a2a_core.server import A2AService, AgentExecutor, ManagerConfig, RequestContext, TaskUpdater
from a2a_core.server.asgi import create_app as create_a2a_app

from benchmarks._scale_release import Releases
from benchmarks.echo_app import build_card

__all__ = ["WaitingAgent", "create_app"]


class WaitingAgent(AgentExecutor):
    """Working, then waits for its release, then K events."""

    def __init__(self, releases: Releases, k: int) -> None:
        self.releases = releases
        self.k = max(1, k)

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        await self.releases.wait(context.task_id)
        for i in range(self.k - 1):
            text = f"t={time.monotonic():.6f}" if i == 0 else f"chunk {i}"
            await updater.add_artifact(text, artifact_id="a", append=i > 0, last_chunk=False)
        await updater.complete()


def create_app() -> Any:
    """The A2A app plus the ``/bench/release`` route."""
    port = int(os.environ.get("ECHO_PORT", "8001"))
    releases = Releases()
    agent = WaitingAgent(releases, int(os.environ.get("SCALE_K", "20")))
    # The default bound of concurrent runs (512) is a policy; this bench holds 10,000.
    config = ManagerConfig(max_background_tasks=20_000)
    service = A2AService(agent, build_card(f"http://127.0.0.1:{port}"), config=config)
    inner = create_a2a_app(service)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/bench/release":
            body = b""
            while True:
                message = await receive()
                body += message.get("body", b"")
                if not message.get("more_body"):
                    break
            count = releases.release(json.loads(body)["task"])
            out = json.dumps({"released": count}).encode()
            headers = [(b"content-type", b"application/json")]
            headers.append((b"content-length", str(len(out)).encode()))
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": out})
            return
        await inner(scope, receive, send)

    return app
