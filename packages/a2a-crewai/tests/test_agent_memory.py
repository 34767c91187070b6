"""A single served ``Agent`` hears the earlier turns of its context (over a real socket).

A follow-up in the same context is a new task; the agent is given the
context's earlier exchanges (bounded by ``history_limit``) before the new
message, as ``Agent.kickoff(messages=...)``; ``conversation="task"`` turns it off.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from a2a_core.client import A2AClient
from a2a_crewai import running_server
from a2a_crewai.testing import ScriptedLLM
from crewai import Agent

pytestmark = pytest.mark.timeout(90)


def recall(messages: Any, tools: Any) -> str:
    """Answers with every user message the model was shown (what it remembers)."""
    heard = [
        str(m.get("content", "")).strip()
        for m in messages
        if isinstance(m, dict) and m.get("role") == "user"
    ]
    return "heard: " + " | ".join(h for h in heard if h)


def assistant() -> Agent:
    return Agent(
        role="Assistant",
        goal="Help the user",
        backstory="Remembers what was said.",
        llm=ScriptedLLM(model="recall-fake", script=[recall]),
    )


async def conversation(url: str, *texts: str) -> list[str]:
    context = str(uuid.uuid4())
    async with await A2AClient.connect(url) as client:
        return [(await client.send(text, context_id=context)).text for text in texts]


async def test_a_single_agent_remembers_its_context() -> None:
    async with running_server(assistant()) as server:
        answers = await conversation(server.url, "my name is Ada", "what is my name?")
        other = await conversation(server.url, "who am I?")
    # CrewAI frames the newest message as the current task; earlier turns come before it
    # (as chat messages, or inside the prompt on older 1.15 releases).
    first, second = answers
    assert first.startswith("heard: Current Task: my name is Ada")
    assert "my name is Ada" in second
    assert "what is my name?" in second
    assert second.index("my name is Ada") < second.index("what is my name?")
    assert other[0].startswith("heard: Current Task: who am I?")
    assert "Ada" not in other[0]  # another context has its own turns


async def test_the_agent_memory_can_be_switched_off() -> None:
    async with running_server(assistant(), conversation="task") as server:
        answers = await conversation(server.url, "my name is Ada", "what is my name?")
    assert answers[1].startswith("heard: Current Task: what is my name?")
