"""Helpers for the push tests: tasks and events, a fake resolver, a real webhook receiver."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from a2a_core.server.push import PushNotificationService, UrlPolicy
from a2a_core.types import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

PUBLIC_IP = "93.184.216.34"
HOOK_URL = "https://hooks.example/a2a?tenant=acme"


class FakeResolver:
    """Name -> addresses from a dict the test may change; no DNS involved."""

    def __init__(self, answers: dict[str, list[str]] | None = None) -> None:
        self.answers: dict[str, list[str]] = {"hooks.example": [PUBLIC_IP], **(answers or {})}
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append(host)
        try:
            return list(self.answers[host])
        except KeyError:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known") from None


def fake_policy(resolver: FakeResolver | None = None, **kwargs: Any) -> UrlPolicy:
    return UrlPolicy.build(resolver=resolver or FakeResolver(), **kwargs)


def make_task(task_id: str = "task-1", state: TaskState = TaskState.WORKING) -> Task:
    return Task(id=task_id, context_id="ctx-1", status=TaskStatus(state=state))


def status_event(task: Task, state: TaskState, text: str | None = None) -> TaskStatusUpdateEvent:
    status = TaskStatus.now(state)
    if text is not None:
        status = TaskStatus.now(
            state, Message(message_id=f"m-{text}", role=Role.AGENT, parts=[Part(text=text)])
        )
    return TaskStatusUpdateEvent(task_id=task.id, context_id=task.context_id, status=status)


def artifact_event(task: Task, text: str) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id=task.id,
        context_id=task.context_id,
        artifact=Artifact(artifact_id="result", parts=[Part(text=text)]),
    )


def emit(
    service: PushNotificationService, task: Task, state: TaskState, text: str | None = None
) -> Task:
    """Apply a status change to ``task`` as the manager would and tell the service."""
    event = status_event(task, state, text)
    new_task = task.model_copy(update={"status": event.status})
    service.on_event(new_task, event, task.status.state)
    return new_task


async def eventually(
    predicate: Callable[[], bool], within: float = 5.0, what: str = "condition"
) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


# -- a real webhook receiver on 127.0.0.1 ---------------------------------------------


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    """A raw ASGI webhook: records requests, answers with scripted statuses (then 200)."""

    requests: list[Received] = field(default_factory=list[Received])
    statuses: list[int] = field(default_factory=list[int])
    url: str = ""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        self.requests.append(Received(scope["path"], headers, body))
        status = self.statuses.pop(0) if self.statuses else 200
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"text/plain")],
            }
        )
        await send({"type": "http.response.body", "body": b"ok"})

    async def wait_for(self, count: int, within: float = 5.0) -> list[Received]:
        await eventually(lambda: len(self.requests) >= count, within, f"{count} webhook calls")
        return self.requests


@asynccontextmanager
async def webhook_server() -> AsyncIterator[Receiver]:
    """Serve a Receiver with uvicorn on a free 127.0.0.1 port for the duration."""
    receiver = Receiver()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    receiver.url = f"http://127.0.0.1:{port}/webhook"
    config = uvicorn.Config(
        receiver, lifespan="off", log_level="warning", access_log=False, ws="none", http="h11"
    )
    server = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    try:
        await eventually(lambda: server.started or task.done(), 5.0, "uvicorn to start")
        if task.done():
            task.result()
        yield receiver
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 5.0)
        sock.close()
