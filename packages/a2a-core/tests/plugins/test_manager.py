"""The plugin manager: entry-point discovery, environment switches, and refusing bad plugins."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

import pytest
from a2a_core import hookspecs
from a2a_core.adapters import ResolvedAgent, registered_task_stores
from a2a_core.hookspecs import hookimpl
from a2a_core.plugins import (
    A2APluginManager,
    PluginError,
    create_plugin_manager,
    describe_plugins,
    get_plugin_manager,
    hook_impls,
    reset_plugin_manager,
)
from a2a_core.server import ConfigurationError

BUILTINS = {"a2a_core.memory_store", "a2a_core.auth"}
TEST_PLUGIN = "a2a-test-plugin"
FRAGILE = "a2a-test-plugin-fragile"


def registered_names(pm: A2APluginManager) -> set[str]:
    return {name for name, plugin in pm.list_name_plugin() if plugin is not None}


# -- discovery ---------------------------------------------------------------------------


def test_builtins_and_the_installed_test_plugin_are_found_by_entry_point() -> None:
    pm = create_plugin_manager({})
    assert registered_names(pm) >= BUILTINS | {TEST_PLUGIN, FRAGILE}
    infos = {info.name: info for info in describe_plugins(pm)}
    assert infos["a2a_core.memory_store"].builtin
    assert infos["a2a_core.memory_store"].distribution == "a2a-adapters-core"
    assert infos["a2a_core.memory_store"].hooks == ("a2a_register_task_stores",)
    plugin = infos[TEST_PLUGIN]
    assert not plugin.builtin
    assert plugin.distribution == "a2a-test-plugin"
    assert plugin.version == "0.1.0"
    assert set(plugin.hooks) == set(hookspecs_names())


def hookspecs_names() -> list[str]:
    return [n for n in dir(hookspecs) if n.startswith("a2a_")]


def test_third_party_plugins_are_called_before_builtins() -> None:
    """Built-ins register first; pluggy calls the newest registration first."""
    pm = create_plugin_manager({})
    order = [impl.plugin_name for impl in hook_impls(pm, "a2a_register_task_stores")]
    assert order.index(TEST_PLUGIN) < order.index("a2a_core.memory_store")


def test_disable_autoload_keeps_builtins_only() -> None:
    pm = create_plugin_manager({"A2A_DISABLE_PLUGIN_AUTOLOAD": "1"})
    names = registered_names(pm)
    assert names >= BUILTINS
    assert TEST_PLUGIN not in names
    assert FRAGILE not in names
    assert pm.is_blocked(TEST_PLUGIN)
    assert set(registered_task_stores(pm)) == {
        "memory",
        "sqlite",
        "redis",
        "rediss",
        "postgresql",
        "postgres",
    }


@pytest.mark.parametrize("value", ["true", "YES", "on"])
def test_disable_autoload_accepts_the_usual_true_words(value: str) -> None:
    pm = create_plugin_manager({"A2A_DISABLE_PLUGIN_AUTOLOAD": value})
    assert TEST_PLUGIN not in registered_names(pm)


@pytest.mark.parametrize("value", ["0", "false", ""])
def test_disable_autoload_false_words_load_plugins(value: str) -> None:
    pm = create_plugin_manager({"A2A_DISABLE_PLUGIN_AUTOLOAD": value})
    assert TEST_PLUGIN in registered_names(pm)


def test_allowlist_filters_third_party_entry_points() -> None:
    pm = create_plugin_manager({"A2A_PLUGINS": f" {TEST_PLUGIN} "})
    names = registered_names(pm)
    assert TEST_PLUGIN in names
    assert FRAGILE not in names
    assert names >= BUILTINS  # the allowlist does not apply to built-ins


def test_empty_allowlist_loads_no_third_party_plugin() -> None:
    names = registered_names(create_plugin_manager({"A2A_PLUGINS": ""}))
    assert TEST_PLUGIN not in names
    assert names >= BUILTINS


def test_allowlist_naming_a_missing_plugin_is_an_error() -> None:
    with pytest.raises(PluginError, match=r"not installed: no-such-plugin") as info:
        create_plugin_manager({"A2A_PLUGINS": f"{TEST_PLUGIN},no-such-plugin"})
    assert info.value.plugin == "no-such-plugin"


def test_the_environment_is_read_from_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("A2A_PLUGINS", TEST_PLUGIN)
    names = registered_names(get_plugin_manager())
    assert TEST_PLUGIN in names
    assert FRAGILE not in names


def test_get_plugin_manager_is_cached_until_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    first = get_plugin_manager()
    assert get_plugin_manager() is first
    monkeypatch.setenv("A2A_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert TEST_PLUGIN in registered_names(get_plugin_manager())  # still the cached one
    reset_plugin_manager()
    second = get_plugin_manager()
    assert second is not first
    assert TEST_PLUGIN not in registered_names(second)


def test_importing_the_plugin_modules_loads_no_plugin() -> None:
    """The manager is built on first use, never as a side effect of an import."""
    code = (
        "import json, sys; import a2a_core.plugins, a2a_core.adapters, a2a_core.auth; "
        "print(json.dumps(sorted(m for m in sys.modules "
        "if m.startswith(('a2a_test_plugin', 'a2a_core._builtins')))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(out.stdout) == []


# -- failures name the plugin --------------------------------------------------------------


def test_a_plugin_failing_to_import_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "a2a_test_plugin.fragile", raising=False)
    monkeypatch.setenv("A2A_TEST_PLUGIN_FAIL", "import")
    with pytest.raises(PluginError, match=f"'{FRAGILE}'.*failed to load.*ImportError") as info:
        create_plugin_manager({})
    assert info.value.plugin == FRAGILE
    assert isinstance(info.value.__cause__, ImportError)
    assert isinstance(info.value, ConfigurationError)


def test_a_failing_plugin_can_be_left_out_by_the_allowlist(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "a2a_test_plugin.fragile", raising=False)
    monkeypatch.setenv("A2A_TEST_PLUGIN_FAIL", "import")
    pm = create_plugin_manager({"A2A_PLUGINS": TEST_PLUGIN})
    assert FRAGILE not in registered_names(pm)


def test_a_hook_raising_at_configuration_time_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    pm = create_plugin_manager({})
    monkeypatch.setenv("A2A_TEST_PLUGIN_FAIL", "hook")
    with pytest.raises(PluginError, match=f"'{FRAGILE}' failed in a2a_register_task_stores"):
        registered_task_stores(pm)


def test_async_firstresult_impl_is_rejected_at_registration(pm: A2APluginManager) -> None:
    class Eager:
        @hookimpl
        async def a2a_adapt_agent(self, agent: Any, options: Mapping[str, Any]) -> None:
            return None

    with pytest.raises(PluginError, match=r"'eager'.*a2a_adapt_agent.*not `async def`") as info:
        pm.register(Eager(), name="eager")
    assert "firstresult" in str(info.value)
    assert info.value.plugin == "eager"
    assert info.value.hook == "a2a_adapt_agent"
    assert not pm.has_plugin("eager")
    assert hook_impls(pm, "a2a_adapt_agent") == []


def test_async_impl_of_any_hook_is_rejected(pm: A2APluginManager) -> None:
    class Async:
        @hookimpl
        async def a2a_register_task_stores(self, register: Any) -> None:
            pass

    with pytest.raises(PluginError, match=r"'async-stores'.*hooks are synchronous"):
        pm.register(Async(), name="async-stores")
    assert not pm.has_plugin("async-stores")


def test_async_generator_impl_is_rejected(pm: A2APluginManager) -> None:
    class Gen:
        @hookimpl
        async def a2a_lifespan(self, app: Any):  # type: ignore[no-untyped-def]
            yield

    with pytest.raises(PluginError, match=r"a2a_lifespan must be a plain `def`"):
        pm.register(Gen(), name="gen")


def test_hook_wrappers_are_rejected(pm: A2APluginManager) -> None:
    class Wrapper:
        @hookimpl(wrapper=True)
        def a2a_agent_card(self, card: Any, options: Any) -> Any:
            return (yield)

    with pytest.raises(PluginError, match=r"'wrapping'.*may not be a hook wrapper"):
        pm.register(Wrapper(), name="wrapping")


def test_a_signature_not_matching_its_spec_is_named(pm: A2APluginManager) -> None:
    class Wrong:
        @hookimpl
        def a2a_task_transition(self, task: Any, before: Any) -> None:
            pass

    with pytest.raises(PluginError, match=r"'wrong' is invalid"):
        pm.register(Wrong(), name="wrong")


def test_a_misspelt_hook_is_caught_by_check_pending(pm: A2APluginManager) -> None:
    class Typo:
        @hookimpl
        def a2a_register_task_store(self, register: Any) -> None:
            pass

    pm.register(Typo(), name="typo")
    with pytest.raises(PluginError, match=r"'typo'.*a2a_register_task_store.*misspelt") as info:
        pm.check_pending()
    assert info.value.plugin == "typo"


def test_plugins_registered_by_hand_are_described(pm: A2APluginManager) -> None:
    class Plain:
        @hookimpl
        def a2a_adapt_agent(self, agent: Any) -> ResolvedAgent | None:
            return None

    pm.register(Plain(), name="plain")
    (info,) = describe_plugins(pm)
    assert (info.name, info.hooks, info.builtin, info.distribution) == (
        "plain",
        ("a2a_adapt_agent",),
        False,
        None,
    )
