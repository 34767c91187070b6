"""Every published card lists a skill, also for plain functions and executors (real sockets)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from a2a_core.card import default_skill, with_default_skill
from a2a_core.compose.serve import running_server
from a2a_core.server import A2AService, AgentExecutor, RequestContext, TaskUpdater
from a2a_core.server.asgi import create_app
from a2a_core.types import AgentCard, AgentSkill
from a2a_http_support import make_card


async def summarize_text(context: RequestContext) -> str:
    """Summarizes the text it is given.

    Longer explanation that stays out of the card.
    """
    return context.text[:10]


class Translator(AgentExecutor):
    """Translates between languages."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.complete("done")


async def card_of(agent: Any, **options: Any) -> dict[str, Any]:
    async with (
        running_server(agent, **options) as srv,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{srv.port}", timeout=10) as client,
    ):
        return (await client.get("/.well-known/agent-card.json")).json()


@pytest.mark.parametrize(
    ("agent", "name", "skill_id", "description"),
    [
        (summarize_text, "summarize_text", "summarize-text", "Summarizes the text it is given."),
        (Translator(), "Translator", "translator", "Translates between languages."),
    ],
)
async def test_functions_and_executors_publish_a_derived_skill(
    agent: Any, name: str, skill_id: str, description: str
) -> None:
    card = await card_of(agent)
    [skill] = card["skills"]
    assert skill["id"] == skill_id
    assert skill["name"] == name
    assert skill["description"] == description
    assert skill["tags"]
    assert skill["inputModes"] == card["defaultInputModes"] == ["text/plain"]
    assert skill["outputModes"] == card["defaultOutputModes"] == ["text/plain"]


async def test_the_name_and_description_options_name_the_skill_too() -> None:
    card = await card_of(summarize_text, name="Summarizer", description="Short summaries")
    [skill] = card["skills"]
    assert (skill["id"], skill["name"], skill["description"]) == (
        "summarizer",
        "Summarizer",
        "Short summaries",
    )


async def test_a_card_without_skills_given_to_the_service_or_the_app_gets_one() -> None:
    bare = make_card().model_copy(update={"skills": []})
    service = A2AService(summarize_text, bare)
    try:
        assert [s.id for s in service.card.skills] == ["echo"]
        for app in (create_app(service), create_app(service, card=bare)):
            async with httpx.AsyncClient(
                transport=httpx.ASGITransport(app), base_url="http://agent.test"
            ) as client:
                card = (await client.get("/.well-known/agent-card.json")).json()
            assert [s["id"] for s in card["skills"]] == ["echo"]
            assert card["skills"][0]["tags"] == ["echo"]
    finally:
        await service.aclose()


def test_cards_with_skills_are_left_alone() -> None:
    card = make_card()
    assert with_default_skill(card) is card
    odd = AgentCard(name="!!!", description="", version="1", skills=[])
    skill = default_skill(odd)
    assert skill == AgentSkill(id="agent", name="!!!", description="!!!", tags=["agent"])
