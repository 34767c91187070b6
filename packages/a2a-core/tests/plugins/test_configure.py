"""``configure_service``: every hook applied once, giving a working ``A2AService``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from a2a_core.adapters import ResolvedAgent
from a2a_core.auth import compose_authenticator
from a2a_core.compose.builder import configure_service
from a2a_core.hookspecs import hookimpl
from a2a_core.plugins import (
    A2APluginManager,
    PluginError,
    create_plugin_manager,
    get_plugin_manager,
)
from a2a_core.server import A2AService, RequestContext, ServerCallContext
from a2a_core.stores import CompactMemoryTaskStore, MemoryTaskStore
from a2a_core.types import (
    AgentCard,
    Message,
    SendMessageRequest,
    StreamEvent,
    Task,
    TaskState,
)


async def shout(context: RequestContext) -> str:
    """Shouts back."""
    return context.text.upper()


async def ask(service: A2AService, text: str) -> Task:
    result = await service.send_message(
        SendMessageRequest(message=Message.user(text)), ServerCallContext()
    )
    assert isinstance(result, Task)
    return result


async def test_a_plain_function_with_builtins_only(core_pm: A2APluginManager) -> None:
    service = configure_service(shout, plugin_manager=core_pm)
    try:
        assert (service.card.name, service.card.description) == ("shout", "Shouts back.")
        assert service.card.security_schemes == {}
        assert type(service.store) is CompactMemoryTaskStore
        task = await ask(service, "hi")
        assert task.status.state is TaskState.COMPLETED
        assert task.artifacts[0].parts[0].text == "HI"
    finally:
        await service.aclose()


async def test_every_hook_of_the_entry_point_plugin_is_applied() -> None:
    from a2a_test_plugin.plugin import TRANSITIONS, FakeFrameworkAgent, RecordingStore

    pm = create_plugin_manager({})
    options: dict[str, Any] = {"test_plugin_skill": "extra", "test_plugin_token": "t0k"}
    service = configure_service(
        FakeFrameworkAgent("hello from the framework"),
        store_url="test-plugin://db",
        plugin_manager=pm,
        **options,
    )
    try:
        card = service.card
        assert card.name == "Fake framework agent"  # the adapter's defaults
        assert [s.id for s in card.skills] == ["fake", "extra"]  # card hook
        assert set(card.security_schemes) == {"testPluginBearer"}  # auth backend
        assert isinstance(service.store, RecordingStore)  # store by URL
        assert service.store.url == "test-plugin://db"
        task = await ask(service, "ping")
        assert task.artifacts[0].parts[0].text == "hello from the framework: ping"
        assert (TaskState.SUBMITTED, TaskState.COMPLETED) in [
            (old, new) for tid, old, new in TRANSITIONS if tid == task.id
        ]
    finally:
        await service.aclose()
    authenticate = compose_authenticator(pm, options)
    assert authenticate is not None
    principal = await authenticate({"authorization": "Bearer t0k"})
    assert principal is not None
    assert principal.id == "test-plugin-user"


async def test_the_default_manager_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from a2a_test_plugin.plugin import FakeFrameworkAgent

    monkeypatch.setenv("A2A_DISABLE_PLUGIN_AUTOLOAD", "1")
    with pytest.raises(TypeError, match=r"no a2a_core plugin recognised"):
        configure_service(FakeFrameworkAgent())
    service = configure_service(shout)
    assert service.store is not None
    await service.aclose()
    assert get_plugin_manager().is_blocked("a2a-test-plugin")


async def test_an_explicit_card_store_and_observers_are_used(core_pm: A2APluginManager) -> None:
    seen: list[TaskState | None] = []

    def observer(task: Task, event: StreamEvent, previous: TaskState | None) -> None:
        seen.append(previous)

    card = AgentCard(name="Given", description="given card", version="9.0.0")
    store = MemoryTaskStore(max_tasks=3)
    service = configure_service(
        shout,
        card=card,
        store=store,
        store_url="no-such-scheme://ignored",
        plugin_manager=core_pm,
        observers=[observer],
        name="ignored when a card is given",
    )
    try:
        assert (service.card.name, service.card.version) == ("Given", "9.0.0")
        assert service.store is store
        await ask(service, "x")
        assert seen  # the caller's raw observer sees every event (artifact, then status)
        assert set(seen) == {TaskState.SUBMITTED}
    finally:
        await service.aclose()


async def test_builtin_auth_options_put_schemes_on_the_card(core_pm: A2APluginManager) -> None:
    options: dict[str, Any] = {"bearer_tokens": {"tok": "alice"}, "api_keys": {"key": "bob"}}
    service = configure_service(shout, plugin_manager=core_pm, **options)
    try:
        assert set(service.card.security_schemes) == {"bearer", "apiKey"}
        assert len(service.card.security_requirements) == 2
    finally:
        await service.aclose()
    authenticate = compose_authenticator(core_pm, options)
    assert authenticate is not None
    bob = await authenticate({"x-api-key": "key"})
    assert bob is not None
    assert bob.id == "bob"


async def test_options_reach_the_named_adapter_and_card_hooks(core_pm: A2APluginManager) -> None:
    from a2a_test_plugin.plugin import FakeFrameworkAdapter, FakeFrameworkAgent

    seen: dict[str, Mapping[str, Any]] = {}

    class Plugin:
        A2A_OPTIONS = ("release",)

        @hookimpl
        def a2a_register_adapters(self, register: Any) -> None:
            class Spy(FakeFrameworkAdapter):
                def adapt(self, agent: Any, options: Mapping[str, Any]) -> ResolvedAgent:
                    seen["adapter"] = options
                    return super().adapt(agent, options)

            register("spy", Spy())

        @hookimpl
        def a2a_agent_card(self, card: AgentCard, options: Mapping[str, Any]) -> AgentCard:
            seen["card"] = options
            return card.model_copy(update={"version": str(options["release"])})

    core_pm.register(Plugin(), name="spy-plugin")
    service = configure_service(
        FakeFrameworkAgent(), adapter="spy", plugin_manager=core_pm, release="4.2.0"
    )
    await service.aclose()
    assert seen == {"adapter": {"release": "4.2.0"}, "card": {"release": "4.2.0"}}
    assert service.card.version == "4.2.0"


def test_a_failing_card_hook_stops_configuration_with_its_name(core_pm: A2APluginManager) -> None:
    class Broken:
        @hookimpl
        def a2a_agent_card(self, card: AgentCard) -> None:
            raise ValueError("bad skill")

    core_pm.register(Broken(), name="broken-card")
    with pytest.raises(PluginError, match=r"'broken-card' failed in a2a_agent_card"):
        configure_service(shout, plugin_manager=core_pm)
