"""Task stores by URL: ``a2a_register_task_stores`` and the built-in ``memory://``."""

from __future__ import annotations

from typing import Any

import pytest
from a2a_core.adapters import TaskStoreRegistrar, open_task_store, registered_task_stores
from a2a_core.hookspecs import hookimpl
from a2a_core.plugins import A2APluginManager, PluginError, create_plugin_manager
from a2a_core.server import ConfigurationError
from a2a_core.stores import CompactMemoryTaskStore, MemoryTaskStore
from a2a_core.types import Task, TaskState, TaskStatus


class FakeStore(MemoryTaskStore):
    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url


class RegistersStore:
    def __init__(self, scheme: str, factory: object) -> None:
        self.scheme = scheme
        self.factory = factory

    @hookimpl
    def a2a_register_task_stores(self, register: TaskStoreRegistrar) -> None:
        register(self.scheme, self.factory)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


@pytest.mark.hook("a2a_register_task_stores")
def test_a_plugin_store_is_opened_by_its_scheme(pm: A2APluginManager) -> None:
    pm.register(RegistersStore("fakedb", FakeStore), name="fakedb-plugin")
    store = open_task_store("FakeDB://user@host/db?x=1", plugin_manager=pm)
    assert isinstance(store, FakeStore)
    assert store.url == "FakeDB://user@host/db?x=1"  # the factory gets the whole URL
    assert registered_task_stores(pm)["fakedb"].plugin == "fakedb-plugin"


@pytest.mark.hook("a2a_register_task_stores")
def test_one_scheme_from_two_plugins_is_refused(pm: A2APluginManager) -> None:
    pm.register(RegistersStore("memory", FakeStore), name="shadow")
    pm.register(RegistersStore("memory", FakeStore), name="shadow-too")
    with pytest.raises(PluginError, match=r"scheme 'memory' is registered by both"):
        open_task_store("memory://", plugin_manager=pm)


@pytest.mark.hook("a2a_register_task_stores")
def test_a_factory_that_is_not_callable_is_named(pm: A2APluginManager) -> None:
    pm.register(RegistersStore("odd", "not a factory"), name="odd-plugin")
    with pytest.raises(
        PluginError, match=r"'odd-plugin' registered task store scheme 'odd' as str"
    ):
        registered_task_stores(pm)


@pytest.mark.hook("a2a_register_task_stores")
def test_a_failing_factory_is_named_and_the_password_hidden(pm: A2APluginManager) -> None:
    def refuse(url: str) -> Any:
        raise ValueError("bad database")

    pm.register(RegistersStore("secretdb", refuse), name="secret-plugin")
    with pytest.raises(PluginError, match=r"plugin 'secret-plugin'.*bad database") as info:
        open_task_store("secretdb://admin:hunter2@db.internal:5432/x", plugin_manager=pm)
    assert "hunter2" not in str(info.value)
    assert "admin:***@db.internal:5432" in str(info.value)


@pytest.mark.hook("a2a_register_task_stores")
def test_a_factory_returning_no_store_is_named(pm: A2APluginManager) -> None:
    pm.register(RegistersStore("nostore", lambda url: {"tasks": []}), name="dict-plugin")
    with pytest.raises(PluginError, match=r"'dict-plugin'\) returned a dict, not a TaskStore"):
        open_task_store("nostore://", plugin_manager=pm)


@pytest.mark.hook("a2a_register_task_stores")
def test_unknown_schemes_list_the_available_ones(pm: A2APluginManager) -> None:
    pm.register(RegistersStore("fakedb", FakeStore), name="p")
    with pytest.raises(ConfigurationError, match=r"No task store for redis:// .*fakedb://"):
        open_task_store("redis://localhost:6379/0", plugin_manager=pm)


@pytest.mark.parametrize("url", ["memory", "", "://x", "tasks.db"])
def test_urls_without_a_scheme_are_refused(pm: A2APluginManager, url: str) -> None:
    with pytest.raises(ConfigurationError, match=r"has no scheme"):
        open_task_store(url, plugin_manager=pm)


@pytest.mark.hook("a2a_register_task_stores")
def test_the_test_plugin_scheme_comes_through_its_entry_point() -> None:
    from a2a_test_plugin.plugin import RecordingStore

    store = open_task_store("test-plugin://anything", plugin_manager=create_plugin_manager({}))
    assert isinstance(store, RecordingStore)
    disabled = create_plugin_manager({"A2A_DISABLE_PLUGIN_AUTOLOAD": "1"})
    with pytest.raises(ConfigurationError, match=r"No task store for test-plugin://"):
        open_task_store("test-plugin://anything", plugin_manager=disabled)


# -- the built-in memory:// plugin ------------------------------------------------------------


@pytest.fixture
def builtins_only() -> A2APluginManager:
    return create_plugin_manager({"A2A_DISABLE_PLUGIN_AUTOLOAD": "1"})


@pytest.mark.hook("a2a_register_task_stores")
def test_memory_is_a_builtin_plugin(builtins_only: A2APluginManager) -> None:
    registration = registered_task_stores(builtins_only)["memory"]
    assert registration.plugin == "a2a_core.memory_store"
    store = open_task_store("memory://", plugin_manager=builtins_only)
    assert type(store) is CompactMemoryTaskStore
    assert store.max_tasks == CompactMemoryTaskStore().max_tasks


@pytest.mark.parametrize("url", ["memory://?max_tasks=2", "MEMORY:///?max_tasks=2"])
async def test_memory_max_tasks_bounds_the_store(builtins_only: A2APluginManager, url: str) -> None:
    store = open_task_store(url, plugin_manager=builtins_only)
    assert isinstance(store, CompactMemoryTaskStore)
    assert store.max_tasks == 2
    for i in range(4):
        task = Task(id=f"t{i}", context_id="c", status=TaskStatus.now(TaskState.COMPLETED))
        await store.create(task, None)
    assert len(store) == 2


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("memory://?max_tasks=0", "max_tasks must be one positive integer"),
        ("memory://?max_tasks=ten", "max_tasks must be one positive integer"),
        ("memory://?max_tasks=1&max_tasks=2", "max_tasks must be one positive integer"),
        ("memory://?size=3", "unknown memory:// option\\(s\\): size"),
        ("memory://somehost", "takes no host or path"),
        ("memory:///some/path", "takes no host or path"),
    ],
)
def test_memory_urls_are_checked(builtins_only: A2APluginManager, url: str, problem: str) -> None:
    with pytest.raises(PluginError, match=f"plugin 'a2a_core.memory_store'.*{problem}"):
        open_task_store(url, plugin_manager=builtins_only)
