"""Echo agent on a2a_core's public server API, the twin of the SDK's benchmark echo agent.

Behaviour is chosen by environment variables, so it survives ``uvicorn --factory``:

- ``ECHO_MODE=message`` (default): the agent answers with one Message (no task).
- ``ECHO_MODE=task``: a Task (SUBMITTED) -> one artifact echoing the text -> COMPLETED.
- ``ECHO_CHUNKS=K`` (task mode): K artifact chunks with ``append`` instead of one,
  so a streamed send yields K + 2 events (task, K artifact updates, final status).
- ``ECHO_MAX_TASKS=N``: the in-memory store's bound (default: the store's own).
- ``ECHO_STORE=compact`` (default, what ``memory://`` opens) or ``ECHO_STORE=reference``:
  ``CompactMemoryTaskStore`` or the reference ``MemoryTaskStore``.

Serves JSON-RPC (1.0 and 0.3) at ``POST /``, the HTTP+JSON routes and the card
at ``/.well-known/agent-card.json``. Run from the repository root::

    ECHO_MODE=task uvicorn --factory benchmarks.echo_app:create_app \
        --host 127.0.0.1 --port 8001 --workers 1 --no-access-log --log-level warning

or by path: ``uvicorn --app-dir benchmarks --factory echo_app:create_app``, or
``python benchmarks/echo_app.py [--port 8001]``.
"""

from __future__ import annotations

import os

from a2a_core import AgentCard, AgentCardBuilder
from a2a_core.server import A2AService, AgentExecutor, RequestContext, TaskUpdater
from a2a_core.server.asgi import A2AApp
from a2a_core.server.asgi import create_app as create_a2a_app
from a2a_core.stores import CompactMemoryTaskStore, MemoryTaskStore

__all__ = ["EchoAgent", "build_card", "create_app"]


class EchoAgent(AgentExecutor):
    """Replies with the user's text, as a message or as a task's artifact (in chunks)."""

    def __init__(self, mode: str = "message", chunks: int = 1) -> None:
        if mode not in ("message", "task"):
            raise ValueError(f"ECHO_MODE must be 'message' or 'task', not {mode!r}")
        self.mode = mode
        self.chunks = max(1, chunks)
        # In task mode every send is a task, as the SDK twin's first event says: announce it.
        self.starts_task_at_once = mode == "task"

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        text = context.text
        if self.mode == "message":
            await updater.reply(text)
            return
        if self.chunks == 1:
            await updater.add_artifact(text, name="echo", last_chunk=True)
        else:
            last = self.chunks - 1
            for i in range(self.chunks):
                await updater.add_artifact(
                    text, artifact_id="echo", name="echo", append=i > 0, last_chunk=i == last
                )
        await updater.complete()


def build_card(base_url: str) -> AgentCard:
    """The same card the SDK echo agent publishes: JSON-RPC 1.0/0.3 and HTTP+JSON 1.0."""
    return (
        AgentCardBuilder(
            "Echo Agent",
            description="Echoes the user text back (benchmark twin).",
            version="1.0.0",
        )
        .skill("echo", "Echo", "Echo input", tags=["echo"])
        .input_modes("text/plain")
        .output_modes("text/plain")
        .streaming()
        .jsonrpc(f"{base_url}/", ("1.0", "0.3"))
        .http_json(base_url, ("1.0",))
        .build()
    )


def create_app() -> A2AApp:
    """The ASGI app, configured from the ``ECHO_*`` variables above."""
    mode = os.environ.get("ECHO_MODE", "message")
    chunks = int(os.environ.get("ECHO_CHUNKS", "1"))
    host = os.environ.get("ECHO_HOST", "127.0.0.1")
    port = int(os.environ.get("ECHO_PORT", "8001"))
    max_tasks = os.environ.get("ECHO_MAX_TASKS")
    reference = os.environ.get("ECHO_STORE") == "reference"
    kind = MemoryTaskStore if reference else CompactMemoryTaskStore
    store = kind(int(max_tasks)) if max_tasks else kind()
    service = A2AService(EchoAgent(mode, chunks), build_card(f"http://{host}:{port}"), store=store)
    return create_a2a_app(service)


if __name__ == "__main__":
    import argparse

    import uvicorn

    parser = argparse.ArgumentParser(description="Serve the benchmark echo agent.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    args = parser.parse_args()
    os.environ.setdefault("ECHO_PORT", str(args.port))
    uvicorn.run(create_app(), host=args.host, port=args.port, log_level="warning", access_log=False)
