"""Agent adapters: ``a2a_register_adapters``, ``a2a_adapt_agent`` and the core's fallback."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import pytest
from a2a_core.adapters import (
    AdapterRegistrar,
    ResolvedAgent,
    default_card,
    registered_adapters,
    resolve_agent,
)
from a2a_core.hookspecs import hookimpl
from a2a_core.plugins import A2APluginManager, PluginError, create_plugin_manager
from a2a_core.server import AgentExecutor, ConfigurationError, RequestContext, TaskUpdater
from a2a_core.server.executor import FunctionExecutor, GeneratorExecutor
from a2a_core.types import AgentSkill


class Foreign:
    """An object of some framework the core does not know."""

    def __init__(self, label: str = "foreign") -> None:
        self.label = label


class ForeignExecutor(AgentExecutor):
    def __init__(self, agent: Foreign) -> None:
        self.agent = agent

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.finish_with(self.agent.label)


class ForeignAdapter:
    def __init__(self, tag: str = "adapter") -> None:
        self.tag = tag
        self.seen_options: Mapping[str, Any] | None = None

    def adapt(self, agent: Any, options: Mapping[str, Any]) -> ResolvedAgent:
        if not isinstance(agent, Foreign):
            raise TypeError("not a Foreign object")
        self.seen_options = options
        return ResolvedAgent(ForeignExecutor(agent), name=f"{self.tag}:{agent.label}")


class RegistersAdapter:
    def __init__(self, name: str, adapter: object) -> None:
        self.name = name
        self.adapter = adapter

    @hookimpl
    def a2a_register_adapters(self, register: AdapterRegistrar) -> None:
        register(self.name, self.adapter)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


class Claims:
    """Answers ``a2a_adapt_agent`` with ``answer(agent)``."""

    def __init__(self, answer: Callable[[Any], object]) -> None:
        self.answer = answer
        self.calls = 0

    @hookimpl
    def a2a_adapt_agent(self, agent: Any, options: Mapping[str, Any]) -> Any:
        self.calls += 1
        return self.answer(agent)


class ClaimsFirst(Claims):
    @hookimpl(tryfirst=True)
    def a2a_adapt_agent(self, agent: Any, options: Mapping[str, Any]) -> Any:
        self.calls += 1
        return self.answer(agent)


def resolved_by(tag: str) -> Callable[[Any], ResolvedAgent | None]:
    def answer(agent: Any) -> ResolvedAgent | None:
        return ForeignAdapter(tag).adapt(agent, {}) if isinstance(agent, Foreign) else None

    return answer


# -- a2a_register_adapters --------------------------------------------------------------


@pytest.mark.hook("a2a_register_adapters")
def test_named_adapter_serves_the_object(pm: A2APluginManager) -> None:
    adapter = ForeignAdapter()
    pm.register(RegistersAdapter("Foreign-Framework", adapter), name="foreign-plugin")
    resolved = resolve_agent(
        Foreign("x"), {"temperature": 0}, adapter="foreign-framework", plugin_manager=pm
    )
    assert isinstance(resolved.executor, ForeignExecutor)
    assert resolved.name == "adapter:x"
    assert resolved.adapter == "foreign-framework"
    assert adapter.seen_options == {"temperature": 0}
    registration = registered_adapters(pm)["foreign-framework"]
    assert (registration.value, registration.plugin) == (adapter, "foreign-plugin")


@pytest.mark.hook("a2a_register_adapters")
def test_a_named_adapter_wins_over_plugins_claiming_the_object(pm: A2APluginManager) -> None:
    claims = Claims(resolved_by("claimed"))
    pm.register(claims, name="claims")
    pm.register(RegistersAdapter("named", ForeignAdapter("named")), name="named-plugin")
    resolved = resolve_agent(Foreign("x"), adapter="named", plugin_manager=pm)
    assert resolved.name == "named:x"
    assert claims.calls == 0


@pytest.mark.hook("a2a_register_adapters")
def test_unknown_adapter_name_lists_the_installed_ones(pm: A2APluginManager) -> None:
    pm.register(RegistersAdapter("langchain-ish", ForeignAdapter()), name="p")
    with pytest.raises(ConfigurationError, match=r"No agent adapter named 'crewai'.*langchain-ish"):
        resolve_agent(Foreign(), adapter="crewai", plugin_manager=pm)


@pytest.mark.hook("a2a_register_adapters")
def test_two_plugins_registering_one_adapter_name_are_both_named(pm: A2APluginManager) -> None:
    pm.register(RegistersAdapter("same", ForeignAdapter()), name="first")
    pm.register(RegistersAdapter("SAME", ForeignAdapter()), name="second")
    with pytest.raises(PluginError, match=r"'same' is registered by both '(first|second)' and"):
        registered_adapters(pm)


@pytest.mark.hook("a2a_register_adapters")
def test_registering_something_that_is_not_an_adapter_is_named(pm: A2APluginManager) -> None:
    pm.register(RegistersAdapter("broken", object()), name="sloppy")
    with pytest.raises(PluginError, match=r"'sloppy' registered agent adapter 'broken' as object"):
        registered_adapters(pm)


@pytest.mark.hook("a2a_register_adapters")
def test_register_without_a_name_is_refused(pm: A2APluginManager) -> None:
    pm.register(RegistersAdapter("  ", ForeignAdapter()), name="nameless")
    with pytest.raises(PluginError, match=r"'nameless' registered an unnamed agent adapter"):
        registered_adapters(pm)


@pytest.mark.hook("a2a_register_adapters")
def test_register_kept_for_later_is_refused(pm: A2APluginManager) -> None:
    kept: list[AdapterRegistrar] = []

    class Keeps:
        @hookimpl
        def a2a_register_adapters(self, register: AdapterRegistrar) -> None:
            kept.append(register)

    pm.register(Keeps(), name="keeper")
    assert registered_adapters(pm) == {}
    with pytest.raises(PluginError, match=r"'keeper' called register after"):
        kept[0]("late", ForeignAdapter())


@pytest.mark.hook("a2a_register_adapters")
def test_a_failing_named_adapter_is_named(pm: A2APluginManager) -> None:
    pm.register(RegistersAdapter("foreign", ForeignAdapter()), name="foreign-plugin")
    with pytest.raises(PluginError, match=r"'foreign' \(plugin 'foreign-plugin'\).*TypeError"):
        resolve_agent("not foreign", adapter="foreign", plugin_manager=pm)


@pytest.mark.hook("a2a_register_adapters")
def test_a_named_adapter_returning_garbage_is_named(pm: A2APluginManager) -> None:
    class Garbage:
        def adapt(self, agent: Any, options: Mapping[str, Any]) -> Any:
            return "an executor, honest"

    pm.register(RegistersAdapter("garbage", Garbage()), name="garbage-plugin")
    with pytest.raises(PluginError, match=r"'garbage-plugin'.*returned str.*ResolvedAgent"):
        resolve_agent(Foreign(), adapter="garbage", plugin_manager=pm)


@pytest.mark.hook("a2a_register_adapters")
def test_the_test_plugin_registers_its_adapter_through_its_entry_point() -> None:
    from a2a_test_plugin.plugin import FakeFrameworkAgent, FakeFrameworkExecutor

    pm = create_plugin_manager({})
    assert registered_adapters(pm)["test-plugin"].plugin == "a2a-test-plugin"
    resolved = resolve_agent(FakeFrameworkAgent(), adapter="test-plugin", plugin_manager=pm)
    assert isinstance(resolved.executor, FakeFrameworkExecutor)


# -- a2a_adapt_agent --------------------------------------------------------------------


@pytest.mark.hook("a2a_adapt_agent")
def test_the_first_plugin_claiming_the_object_wins(pm: A2APluginManager) -> None:
    older = Claims(resolved_by("older"))
    newer = Claims(resolved_by("newer"))
    pm.register(older, name="older")
    pm.register(newer, name="newer")
    resolved = resolve_agent(Foreign("x"), plugin_manager=pm)
    assert resolved.name == "newer:x"  # pluggy calls the newest registration first
    assert resolved.adapter == "newer"
    assert (newer.calls, older.calls) == (1, 0)


@pytest.mark.hook("a2a_adapt_agent")
def test_tryfirst_beats_registration_order(pm: A2APluginManager) -> None:
    pm.register(ClaimsFirst(resolved_by("specific")), name="specific")
    pm.register(Claims(resolved_by("generic")), name="generic")
    assert resolve_agent(Foreign("x"), plugin_manager=pm).name == "specific:x"


@pytest.mark.hook("a2a_adapt_agent")
def test_declining_plugins_pass_to_the_next(pm: A2APluginManager) -> None:
    declines = Claims(lambda agent: None)
    pm.register(Claims(resolved_by("second")), name="second")
    pm.register(declines, name="declines")
    assert resolve_agent(Foreign("x"), plugin_manager=pm).name == "second:x"
    assert declines.calls == 1


@pytest.mark.hook("a2a_adapt_agent")
def test_options_reach_the_hook_read_only(pm: A2APluginManager) -> None:
    seen: list[Mapping[str, Any]] = []

    class Looks:
        @hookimpl
        def a2a_adapt_agent(self, agent: Any, options: Mapping[str, Any]) -> None:
            seen.append(options)

    pm.register(Looks(), name="looks")

    async def agent(context: RequestContext) -> str:
        return "ok"

    resolve_agent(agent, {"model": "fake"}, plugin_manager=pm)
    assert seen == [{"model": "fake"}]
    with pytest.raises(TypeError):
        seen[0]["model"] = "other"  # type: ignore[index]  # pyright: ignore[reportIndexIssue]


@pytest.mark.hook("a2a_adapt_agent")
def test_an_adapter_result_keeps_its_own_adapter_name(pm: A2APluginManager) -> None:
    def answer(agent: Any) -> ResolvedAgent:
        return ResolvedAgent(ForeignExecutor(agent), adapter="custom")

    pm.register(Claims(answer), name="plugin-name")
    assert resolve_agent(Foreign(), plugin_manager=pm).adapter == "custom"


@pytest.mark.hook("a2a_adapt_agent")
def test_a_raising_adapt_hook_is_named(pm: A2APluginManager) -> None:
    def boom(agent: Any) -> None:
        raise RuntimeError("framework not importable")

    pm.register(Claims(boom), name="exploding")
    with pytest.raises(PluginError, match=r"'exploding' failed in a2a_adapt_agent.*RuntimeError"):
        resolve_agent(Foreign(), plugin_manager=pm)


@pytest.mark.hook("a2a_adapt_agent")
def test_a_wrong_answer_is_named(pm: A2APluginManager) -> None:
    pm.register(Claims(lambda agent: ForeignExecutor(agent)), name="sloppy")
    with pytest.raises(PluginError, match=r"'sloppy'.*returned ForeignExecutor"):
        resolve_agent(Foreign(), plugin_manager=pm)


@pytest.mark.hook("a2a_adapt_agent")
def test_a_resolved_agent_without_a_real_executor_is_named(pm: A2APluginManager) -> None:
    pm.register(Claims(lambda agent: ResolvedAgent(agent)), name="hollow")
    with pytest.raises(PluginError, match=r"'hollow'.*executor is a Foreign, not an AgentExecutor"):
        resolve_agent(Foreign(), plugin_manager=pm)


@pytest.mark.hook("a2a_adapt_agent")
def test_a_coroutine_answer_is_refused_and_closed(pm: A2APluginManager) -> None:
    """A sync impl returning a coroutine slips past registration; its answer is refused."""

    async def later() -> None:
        return None

    pm.register(Claims(lambda agent: later()), name="sneaky")
    with pytest.raises(PluginError, match=r"'sneaky'.*returned coroutine \(a coroutine"):
        resolve_agent(Foreign(), plugin_manager=pm)


@pytest.mark.hook("a2a_adapt_agent")
def test_the_test_plugin_claims_its_objects_through_its_entry_point() -> None:
    from a2a_test_plugin.plugin import FakeFrameworkAgent, FakeFrameworkExecutor

    pm = create_plugin_manager({})
    resolved = resolve_agent(FakeFrameworkAgent(), plugin_manager=pm)
    assert isinstance(resolved.executor, FakeFrameworkExecutor)
    assert resolved.adapter == "a2a-test-plugin"
    assert [s.id for s in resolved.skills] == ["fake"]


@pytest.mark.hook("a2a_adapt_agent")
def test_without_the_plugin_its_objects_cannot_be_served() -> None:
    from a2a_test_plugin.plugin import FakeFrameworkAgent

    pm = create_plugin_manager({"A2A_DISABLE_PLUGIN_AUTOLOAD": "1"})
    with pytest.raises(TypeError, match=r"'FakeFrameworkAgent': no a2a_core plugin recognised"):
        resolve_agent(FakeFrameworkAgent(), plugin_manager=pm)


# -- the core's own fallback --------------------------------------------------------------


async def summarize(context: RequestContext) -> str:
    """Summarizes what you send.

    Longer explanation that is not part of the card.
    """
    return context.text


async def stream_words(context: RequestContext) -> AsyncIterator[str]:
    for word in context.text.split():
        yield word


class DocumentedExecutor(AgentExecutor):
    """Does documented things."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.complete()


class UndocumentedExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.complete()


def test_async_functions_need_no_plugin(pm: A2APluginManager) -> None:
    resolved = resolve_agent(summarize, plugin_manager=pm)
    assert isinstance(resolved.executor, FunctionExecutor)
    assert resolved.name == "summarize"
    assert resolved.description == "Summarizes what you send."
    assert resolved.adapter is None


def test_async_generators_need_no_plugin(pm: A2APluginManager) -> None:
    resolved = resolve_agent(stream_words, plugin_manager=pm)
    assert isinstance(resolved.executor, GeneratorExecutor)
    assert resolved.description is None


def test_executors_are_served_as_they_are(pm: A2APluginManager) -> None:
    executor = DocumentedExecutor()
    resolved = resolve_agent(executor, plugin_manager=pm)
    assert resolved.executor is executor
    assert (resolved.name, resolved.description) == (
        "DocumentedExecutor",
        "Does documented things.",
    )
    # A class without a docstring does not inherit AgentExecutor's.
    assert resolve_agent(UndocumentedExecutor(), plugin_manager=pm).description is None


def test_a_resolved_agent_passes_through(pm: A2APluginManager) -> None:
    resolved = ResolvedAgent(DocumentedExecutor(), name="given")
    assert resolve_agent(resolved, plugin_manager=pm) is resolved


def test_plugins_may_claim_plain_functions_before_the_fallback(pm: A2APluginManager) -> None:
    def answer(agent: Any) -> ResolvedAgent:
        return ResolvedAgent(DocumentedExecutor(), name="wrapped")

    pm.register(Claims(answer), name="wrapper-plugin")
    assert resolve_agent(summarize, plugin_manager=pm).name == "wrapped"


@pytest.mark.parametrize("agent", [42, "text", lambda context: "sync"])
def test_objects_nobody_can_serve_are_a_type_error(pm: A2APluginManager, agent: object) -> None:
    pm.register(Claims(lambda agent: None), name="declines-all")
    with pytest.raises(TypeError, match=r"plugins loaded: declines-all.*adapter package"):
        resolve_agent(agent, plugin_manager=pm)


def test_default_card_from_adapter_defaults_and_options() -> None:
    skill = AgentSkill(id="s", name="S", description="does s")
    resolved = ResolvedAgent(
        DocumentedExecutor(),
        name="Adapted",
        description="From the adapter",
        version="2.0.0",
        skills=[skill],
        output_modes=["application/json"],
    )
    card = default_card(resolved)
    assert (card.name, card.description, card.version) == (
        "Adapted",
        "From the adapter",
        "2.0.0",
    )
    assert card.default_input_modes == ["text/plain"]
    assert card.default_output_modes == ["application/json"]
    assert card.skills == [skill]
    assert card.skills[0] is not skill
    named = default_card(resolved, {"name": "Chosen", "version": "3.1.0"})
    assert (named.name, named.description, named.version) == ("Chosen", "From the adapter", "3.1.0")
    bare = default_card(ResolvedAgent(DocumentedExecutor()))
    assert (bare.name, bare.description, bare.version) == ("Agent", "Agent (A2A agent)", "0.1.0")
