"""Helpers shared by the server-core tests (requests, cards, waiting)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from a2a_core.server import A2AService, ServerCallContext
from a2a_core.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    Message,
    SendMessageConfiguration,
    SendMessageRequest,
)

ServiceFactory = Callable[..., A2AService]
"""The ``make_service`` fixture: ``make_service(agent, **A2AService options)``."""

CALL = ServerCallContext(version="1.0")
CALL_03 = ServerCallContext(version="0.3")


def make_card(
    *,
    streaming: bool | None = True,
    output_modes: list[str] | None = None,
    skill_output_modes: list[str] | None = None,
    **capabilities: Any,
) -> AgentCard:
    skills = []
    if skill_output_modes is not None:
        skills.append(
            AgentSkill(id="s", name="s", description="a skill", output_modes=skill_output_modes)
        )
    return AgentCard(
        name="test",
        description="an agent under test",
        version="1.0.0",
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"] if output_modes is None else output_modes,
        capabilities=AgentCapabilities(streaming=streaming, **capabilities),
        skills=skills,
    )


def send(
    text: str = "hello",
    *,
    task_id: str | None = None,
    context_id: str | None = None,
    immediate: bool = False,
    history_length: int | None = None,
    accepted: list[str] | None = None,
    metadata: dict[str, Any] | None = None,
    message_metadata: dict[str, Any] | None = None,
) -> SendMessageRequest:
    """A SendMessageRequest with one user text message."""
    configuration = None
    if immediate or history_length is not None or accepted is not None:
        configuration = SendMessageConfiguration(
            return_immediately=immediate,
            history_length=history_length,
            accepted_output_modes=accepted or [],
        )
    return SendMessageRequest(
        message=Message.user(
            text, task_id=task_id, context_id=context_id, metadata=message_metadata
        ),
        configuration=configuration,
        metadata=metadata,
    )


async def eventually(predicate: Callable[[], bool], within: float = 5.0) -> None:
    """Wait until ``predicate()`` holds (polling), failing after ``within`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.005)
