"""``a2a_agent_card``: plugins adjust the card, in call order, once at configuration."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from a2a_core.hookspecs import hookimpl
from a2a_core.plugins import A2APluginManager, PluginError, apply_card_hooks, create_plugin_manager
from a2a_core.types import AgentCard, AgentExtension, AgentSkill

pytestmark = pytest.mark.hook("a2a_agent_card")


def base_card() -> AgentCard:
    return AgentCard(
        name="Base",
        description="A card",
        version="1.0.0",
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="base", name="Base", description="base skill")],
    )


class AddsSkill:
    def __init__(self, skill_id: str) -> None:
        self.skill_id = skill_id
        self.seen: list[list[str]] = []

    @hookimpl
    def a2a_agent_card(self, card: AgentCard, options: Mapping[str, Any]) -> AgentCard:
        self.seen.append([s.id for s in card.skills])
        skill = AgentSkill(id=self.skill_id, name=self.skill_id, description="added")
        return card.model_copy(update={"skills": [*card.skills, skill]})


def test_each_plugin_sees_the_card_left_by_the_previous(pm: A2APluginManager) -> None:
    first_registered = AddsSkill("older")
    last_registered = AddsSkill("newer")
    pm.register(first_registered, name="older")
    pm.register(last_registered, name="newer")
    card = apply_card_hooks(pm, base_card(), {})
    assert [s.id for s in card.skills] == ["base", "newer", "older"]
    assert last_registered.seen == [["base"]]
    assert first_registered.seen == [["base", "newer"]]


def test_tryfirst_runs_first(pm: A2APluginManager) -> None:
    class First(AddsSkill):
        @hookimpl(tryfirst=True)
        def a2a_agent_card(self, card: AgentCard, options: Mapping[str, Any]) -> AgentCard:
            return super().a2a_agent_card(card, options)

    pm.register(First("first"), name="first")
    pm.register(AddsSkill("normal"), name="normal")
    assert [s.id for s in apply_card_hooks(pm, base_card(), {}).skills] == [
        "base",
        "first",
        "normal",
    ]


def test_none_leaves_the_card_and_options_are_passed(pm: A2APluginManager) -> None:
    seen: list[Mapping[str, Any]] = []

    class Watches:
        @hookimpl
        def a2a_agent_card(self, card: AgentCard, options: Mapping[str, Any]) -> None:
            seen.append(options)

    pm.register(Watches(), name="watches")
    original = base_card()
    card = apply_card_hooks(pm, original, {"region": "eu"})
    assert card == original
    assert seen == [{"region": "eu"}]


def test_the_callers_card_is_never_mutated(pm: A2APluginManager) -> None:
    class MutatesInPlace:
        @hookimpl
        def a2a_agent_card(self, card: AgentCard) -> None:
            card.capabilities.extensions.append(AgentExtension(uri="urn:x", required=False))
            card.name = "Mutated"

    pm.register(MutatesInPlace(), name="mutates")
    original = base_card()
    card = apply_card_hooks(pm, original, {})
    assert card.name == "Mutated"
    assert [e.uri for e in card.capabilities.extensions] == ["urn:x"]
    assert original.name == "Base"
    assert original.capabilities.extensions == []


def test_returning_something_else_is_named(pm: A2APluginManager) -> None:
    class ReturnsDict:
        @hookimpl
        def a2a_agent_card(self, card: AgentCard) -> Any:
            return card.model_dump()

    pm.register(ReturnsDict(), name="dicty")
    with pytest.raises(PluginError, match=r"'dicty': a2a_agent_card returned dict") as info:
        apply_card_hooks(pm, base_card(), {})
    assert info.value.hook == "a2a_agent_card"


def test_a_raising_card_hook_is_named(pm: A2APluginManager) -> None:
    class Raises:
        @hookimpl
        def a2a_agent_card(self, card: AgentCard) -> None:
            raise KeyError("skills")

    pm.register(Raises(), name="raiser")
    with pytest.raises(PluginError, match=r"'raiser' failed in a2a_agent_card: KeyError"):
        apply_card_hooks(pm, base_card(), {})


def test_the_test_plugin_card_hook_is_inert_until_asked() -> None:
    pm = create_plugin_manager({})
    assert apply_card_hooks(pm, base_card(), {}) == base_card()
    card = apply_card_hooks(pm, base_card(), {"test_plugin_skill": "extra"})
    assert [s.id for s in card.skills] == ["base", "extra"]
