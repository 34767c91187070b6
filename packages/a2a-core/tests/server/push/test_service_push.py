"""End to end: A2AService + PushNotificationService + a real webhook on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from _push_support import Receiver, eventually, webhook_server
from a2a_core.card import AgentCardBuilder
from a2a_core.errors import InvalidParamsError
from a2a_core.server import A2AService, RequestContext, ServerCallContext, TaskUpdater
from a2a_core.server.push import REDACTED, PushNotificationService
from a2a_core.types import (
    AuthenticationInfo,
    ListTaskPushNotificationConfigsRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskPushNotificationConfig,
)

CARD = (
    AgentCardBuilder("Push test", description="Sends webhooks", version="1.0.0")
    .jsonrpc("http://127.0.0.1/a2a")
    .skill("answer", "Answer", "Answers with webhooks", tags=["demo"])
    .push_notifications()
    .build()
)


class Agent:
    """Works, adds an artifact, then completes once ``release`` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.release.set()

    async def __call__(self, context: RequestContext, updater: TaskUpdater) -> str:
        await updater.start_work("working on it")
        await self.release.wait()
        await updater.add_artifact("the answer", artifact_id="answer")
        return "all done"


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    async with webhook_server() as served:
        yield served


def send_request(text: str, push: TaskPushNotificationConfig | None = None, **config: Any):
    return SendMessageRequest(
        message=Message(message_id=f"m-{text}", role=Role.USER, parts=[Part(text=text)]),
        configuration=SendMessageConfiguration(task_push_notification_config=push, **config),
    )


def summary(body: dict[str, Any]) -> str:
    if "statusUpdate" in body:
        return body["statusUpdate"]["status"]["state"]
    return "artifact:" + body["artifactUpdate"]["artifact"]["artifactId"]


async def test_inline_config_in_send_message(receiver: Receiver) -> None:
    agent = Agent()
    service = A2AService(agent, CARD, push=PushNotificationService(allow_private_targets=True))
    try:
        inline = TaskPushNotificationConfig(
            url=receiver.url,
            token="tok-1",
            authentication=AuthenticationInfo(scheme="Bearer", credentials="cred-1"),
        )
        result = await service.send_message(send_request("hi", inline), ServerCallContext())
        assert isinstance(result, Task)
        requests = await receiver.wait_for(4)
        bodies = [r.json for r in requests]
        assert [summary(b) for b in bodies] == [
            "TASK_STATE_WORKING",
            "artifact:answer",
            "artifact:result",
            "TASK_STATE_COMPLETED",
        ]
        for body in bodies:
            update = body.get("statusUpdate") or body["artifactUpdate"]
            assert update["taskId"] == result.id
            assert update["contextId"] == result.context_id
        assert all(r.headers["authorization"] == "Bearer cred-1" for r in requests)
        assert all(r.headers["x-a2a-notification-token"] == "tok-1" for r in requests)
        assert all(r.headers["a2a-version"] == "1.0" for r in requests)
    finally:
        await service.aclose()


async def test_config_created_on_a_running_task(receiver: Receiver) -> None:
    agent = Agent()
    agent.release.clear()
    push = PushNotificationService(allow_private_targets=True)
    service = A2AService(agent, CARD, push=push)
    call = ServerCallContext()
    try:
        task = await service.send_message(send_request("hi", return_immediately=True), call)
        assert isinstance(task, Task)
        created = await service.create_push_config(
            TaskPushNotificationConfig(
                task_id=task.id,
                url=receiver.url,
                authentication=AuthenticationInfo(scheme="Bearer", credentials="secret"),
            ),
            call,
        )
        assert created.id
        assert created.authentication is not None
        assert created.authentication.credentials == REDACTED
        listed = await service.list_push_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task.id), call
        )
        assert [c.id for c in listed.configs] == [created.id]
        agent.release.set()
        # Whether the first WORKING update precedes the config depends on scheduling.
        await eventually(
            lambda: any(summary(r.json) == "TASK_STATE_COMPLETED" for r in receiver.requests)
        )
        requests = receiver.requests
        states = [summary(r.json) for r in requests]
        assert states[-3:] == ["artifact:answer", "artifact:result", "TASK_STATE_COMPLETED"]
        assert states[:-3] in ([], ["TASK_STATE_WORKING"])
        assert all(r.headers["authorization"] == "Bearer secret" for r in requests)
        # The final delivery retires the config.
        await eventually(lambda: push.stats.pending == 0)
        listed = await service.list_push_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task.id), call
        )
        assert listed.configs == []
    finally:
        await service.aclose()


async def test_a_03_caller_gets_03_task_bodies(receiver: Receiver) -> None:
    service = A2AService(Agent(), CARD, push=PushNotificationService(allow_private_targets=True))
    try:
        inline = TaskPushNotificationConfig(url=receiver.url, token="t")
        result = await service.send_message(
            send_request("hi", inline), ServerCallContext(version="0.3")
        )
        assert isinstance(result, Task)
        await eventually(
            lambda: any(r.json["status"]["state"] == "completed" for r in receiver.requests)
        )
        requests = receiver.requests
        bodies = [r.json for r in requests]
        assert all(b["kind"] == "task" and b["id"] == result.id for b in bodies)
        # Waiting 0.3 snapshots may be superseded by newer ones: at most 4, ending completed.
        states = [b["status"]["state"] for b in bodies]
        assert 1 <= len(states) <= 4
        assert states[-1] == "completed"
        assert set(states[:-1]) <= {"working"}
        assert [a["artifactId"] for a in bodies[-1]["artifacts"]] == ["answer", "result"]
        assert all(r.headers["x-a2a-notification-token"] == "t" for r in requests)
        assert all(r.headers["content-type"] == "application/json" for r in requests)
    finally:
        await service.aclose()


async def test_a_refused_inline_url_fails_the_send_and_leaves_no_task() -> None:
    service = A2AService(Agent(), CARD, push=PushNotificationService())
    try:
        inline = TaskPushNotificationConfig(url="http://169.254.169.254/latest/meta-data/")
        with pytest.raises(InvalidParamsError, match="URL refused"):
            await service.send_message(send_request("hi", inline), ServerCallContext())
        assert len(service.store) == 0  # type: ignore[arg-type]
    finally:
        await service.aclose()


async def test_v03_get_answers_with_the_tasks_config_whatever_id_is_named() -> None:
    """0.3 servers answered a get with the task's config, and 0.3 clients send e.g. "default"."""
    from a2a_core.errors import TaskNotFoundError
    from a2a_core.types import GetTaskPushNotificationConfigRequest

    push = PushNotificationService(allow_private_targets=True)
    service = A2AService(Agent(), CARD, push=push)
    try:
        task = await service.send_message(send_request("hi"), ServerCallContext())
        assert isinstance(task, Task)
        config = TaskPushNotificationConfig(task_id=task.id, url="https://example.com/hook")
        await service.create_push_config(config, ServerCallContext(version="0.3"))
        named = GetTaskPushNotificationConfigRequest(task_id=task.id, id="default")
        found = await service.get_push_config(named, ServerCallContext(version="0.3"))
        assert found.url == "https://example.com/hook"
        with pytest.raises(TaskNotFoundError):  # 1.0 looks ids up exactly
            await service.get_push_config(named, ServerCallContext(version="1.0"))
    finally:
        await service.aclose()
