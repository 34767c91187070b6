"""Push notification configs through every transport, and one delivery to a local webhook."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from a2a_core import AuthenticationInfo, TaskNotFoundError, TaskPushNotificationConfig
from a2a_core.client import A2AClient
from a2a_core.server import A2AService
from a2a_core.server.push import PushNotificationService
from a2a_core.wire import loads
from servers import (
    free_port,
    our_app,
    read_body,
    respond,
    running,
    scripted_card,
    scripted_executor,
    wait_for,
)

TRANSPORTS = [
    ("inprocess", "1.0"),
    ("inprocess", "0.3"),
    ("JSONRPC", "1.0"),
    ("JSONRPC", "0.3"),
    ("HTTP+JSON", "1.0"),
    ("HTTP+JSON", "0.3"),
]


class Webhook:
    """Receives push notifications on loopback."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], Any]] = []
        self.lock = threading.Lock()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        body = await read_body(receive)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        with self.lock:
            self.received.append((headers, loads(body)))
        await respond(send, 200, b"{}")


@pytest.fixture(scope="module")
def setup() -> Iterator[dict[str, Any]]:
    hook = Webhook()
    service = A2AService(
        scripted_executor(),
        scripted_card(push_notifications=True),
        push=PushNotificationService(allow_private_targets=True),
    )
    port = free_port()
    with running(hook) as hook_url, running(our_app(service, port), port) as url:
        yield {"service": service, "url": url, "hook": hook, "hook_url": hook_url}


def client_for(setup: dict[str, Any], binding: str, version: str) -> A2AClient:
    if binding == "inprocess":
        return A2AClient.in_process(setup["service"], version=version)
    path = setup["url"] + ("/" if binding == "JSONRPC" else "/rest")
    return A2AClient.for_endpoint(path, binding=binding, version=version, timeout=10)


@pytest.mark.parametrize(("binding", "version"), TRANSPORTS)
async def test_push_config_lifecycle(setup: dict[str, Any], binding: str, version: str) -> None:
    hook_url = setup["hook_url"] + f"/{binding}-{version}"
    async with client_for(setup, binding, version) as client:
        task = await client.send("ask")  # paused: configs may be added
        created = await client.create_push_config(
            task,
            hook_url,
            token="tok-1",
            authentication=AuthenticationInfo(scheme="Bearer", credentials="cred"),
        )
        assert created.id
        assert created.task_id == task.task_id
        assert created.url == hook_url
        fetched = await client.get_push_config(task, created.id)
        assert fetched.id == created.id
        assert fetched.url == hook_url
        listed = await client.list_push_configs(task)
        assert [c.id for c in listed.configs] == [created.id]
        await client.delete_push_config(task, created.id)
        with pytest.raises(TaskNotFoundError):
            await client.get_push_config(task, created.id)
        assert (await client.list_push_configs(task)).configs == []


async def test_a_configured_webhook_receives_the_task_updates(setup: dict[str, Any]) -> None:
    hook: Webhook = setup["hook"]
    hook_url = setup["hook_url"] + "/delivery"
    async with client_for(setup, "JSONRPC", "1.0") as client:
        task = await client.send("ask")
        config = TaskPushNotificationConfig(url=hook_url, token="tok-2")
        await client.create_push_config(task, config)
        answered = await client.send("Ada", task=task)
    assert answered.text == "Hello, Ada"

    def delivered() -> bool:
        with hook.lock:
            return any(
                (update := body.get("statusUpdate")) is not None
                and update.get("taskId") == task.task_id
                and update["status"]["state"] == "TASK_STATE_COMPLETED"
                for _, body in hook.received
            )

    assert wait_for(delivered, timeout=10)
