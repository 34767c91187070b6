"""Push notifications of a streamed answer carry whole text (real webhook on 127.0.0.1)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from _push_support import eventually, webhook_server
from a2a_core.card import AgentCardBuilder
from a2a_core.server import A2AService, RequestContext, ServerCallContext
from a2a_core.server.push import PushNotificationService
from a2a_core.types import (
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskPushNotificationConfig,
)

CARD = (
    AgentCardBuilder("Push test", description="Streams its answer", version="1.0.0")
    .jsonrpc("http://127.0.0.1/a2a")
    .skill("answer", "Answer", "Answers token by token", tags=["demo"])
    .push_notifications()
    .build()
)
TOKENS = ["The ", "answer ", "is ", "forty", "-two", "."]
ANSWER = "".join(TOKENS)


async def token_agent(context: RequestContext) -> AsyncIterator[str]:
    for token in TOKENS:
        await asyncio.sleep(0.005)  # give the sender time to post while tokens come
        yield token


def request(url: str) -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(message_id="m-1", role=Role.USER, parts=[Part(text="go")]),
        configuration=SendMessageConfiguration(
            task_push_notification_config=TaskPushNotificationConfig(url=url)
        ),
    )


def artifact_texts(artifact: dict[str, Any]) -> list[str]:
    return [p["text"] for p in artifact["parts"]]


async def test_10_artifact_notifications_carry_the_whole_artifact_so_far() -> None:
    async with webhook_server() as receiver:
        service = A2AService(
            token_agent, CARD, push=PushNotificationService(allow_private_targets=True)
        )
        try:
            result = await service.send_message(request(receiver.url), ServerCallContext())
            assert isinstance(result, Task)
            await eventually(
                lambda: any(
                    r.json.get("statusUpdate", {}).get("status", {}).get("state")
                    == "TASK_STATE_COMPLETED"
                    for r in receiver.requests
                )
            )
        finally:
            await service.aclose()
    updates = [r.json["artifactUpdate"] for r in receiver.requests if "artifactUpdate" in r.json]
    assert updates, "no artifact notification"
    for update in updates:
        assert "append" not in update  # each one replaces: nothing to reassemble
        [text] = artifact_texts(update["artifact"])
        assert ANSWER.startswith(text)
    assert artifact_texts(updates[-1]["artifact"]) == [ANSWER]
    assert updates[-1]["lastChunk"] is True


async def test_03_notifications_hold_the_whole_text() -> None:
    async with webhook_server() as receiver:
        service = A2AService(
            token_agent, CARD, push=PushNotificationService(allow_private_targets=True)
        )
        try:
            await service.send_message(request(receiver.url), ServerCallContext(version="0.3"))
            await eventually(
                lambda: any(r.json["status"]["state"] == "completed" for r in receiver.requests)
            )
        finally:
            await service.aclose()
    final = receiver.requests[-1].json
    assert [artifact_texts(a) for a in final["artifacts"]] == [[ANSWER]]
