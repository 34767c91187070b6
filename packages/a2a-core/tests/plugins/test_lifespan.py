"""``a2a_lifespan``: plugins' async context managers around the server's lifetime."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest
from a2a_core.hookspecs import hookimpl
from a2a_core.plugins import A2APluginManager, PluginError, create_plugin_manager, plugin_lifespan

pytestmark = pytest.mark.hook("a2a_lifespan")


class App:
    """Stands in for the ASGI app the hook receives."""


class Resource:
    def __init__(self, name: str, log: list[str], fail_on_enter: bool = False) -> None:
        self.name = name
        self.log = log
        self.fail_on_enter = fail_on_enter
        self.apps: list[object] = []

    @hookimpl
    def a2a_lifespan(self, app: Any) -> AbstractAsyncContextManager[object] | None:
        self.apps.append(app)
        return self._run()

    @asynccontextmanager
    async def _run(self) -> AsyncGenerator[None, None]:
        if self.fail_on_enter:
            raise OSError("port in use")
        self.log.append(f"enter {self.name}")
        try:
            yield
        finally:
            self.log.append(f"exit {self.name}")


async def test_entered_in_call_order_and_exited_in_reverse(pm: A2APluginManager) -> None:
    log: list[str] = []
    older, newer = Resource("older", log), Resource("newer", log)
    pm.register(older, name="older")
    pm.register(newer, name="newer")
    app = App()
    async with plugin_lifespan(pm, app):
        log.append("serving")
    assert log == ["enter newer", "enter older", "serving", "exit older", "exit newer"]
    assert older.apps == [app]
    assert newer.apps == [app]


async def test_none_means_nothing_to_run(pm: A2APluginManager) -> None:
    class Nothing:
        @hookimpl
        def a2a_lifespan(self, app: Any) -> None:
            return None

    pm.register(Nothing(), name="nothing")
    async with plugin_lifespan(pm, App()):
        pass


async def test_exits_run_when_the_server_fails(pm: A2APluginManager) -> None:
    log: list[str] = []
    pm.register(Resource("a", log), name="a")
    with pytest.raises(RuntimeError, match=r"crash"):
        async with plugin_lifespan(pm, App()):
            raise RuntimeError("crash")
    assert log == ["enter a", "exit a"]


async def test_a_failing_start_is_named_and_earlier_ones_are_exited(pm: A2APluginManager) -> None:
    log: list[str] = []
    pm.register(Resource("broken", log, fail_on_enter=True), name="broken")
    pm.register(Resource("good", log), name="good")  # called first
    with pytest.raises(
        PluginError, match=r"'broken' failed starting its lifespan: OSError"
    ) as info:
        async with plugin_lifespan(pm, App()):
            log.append("serving")
    assert info.value.hook == "a2a_lifespan"
    assert log == ["enter good", "exit good"]


async def test_returning_a_non_context_manager_is_named(pm: A2APluginManager) -> None:
    class Wrong:
        @hookimpl
        def a2a_lifespan(self, app: Any) -> Any:
            return "not a context manager"

    pm.register(Wrong(), name="wrong")
    with pytest.raises(PluginError, match=r"'wrong': a2a_lifespan returned str"):
        async with plugin_lifespan(pm, App()):
            pass


async def test_a_raising_hook_is_named(pm: A2APluginManager) -> None:
    class Raises:
        @hookimpl
        def a2a_lifespan(self, app: Any) -> None:
            raise LookupError("config missing")

    pm.register(Raises(), name="raises")
    with pytest.raises(PluginError, match=r"'raises' failed in a2a_lifespan: LookupError"):
        async with plugin_lifespan(pm, App()):
            pass


async def test_the_test_plugin_lifespan_comes_through_its_entry_point() -> None:
    from a2a_test_plugin.plugin import LIFESPAN_EVENTS

    class OptedIn:
        a2a_test_plugin = True

    app = OptedIn()
    async with plugin_lifespan(create_plugin_manager({}), app):
        assert [e for e in LIFESPAN_EVENTS if e[1] is app] == [("enter", app)]
    assert [e for e in LIFESPAN_EVENTS if e[1] is app] == [("enter", app), ("exit", app)]
    async with plugin_lifespan(create_plugin_manager({"A2A_PLUGINS": ""}), app):
        pass
    assert len([e for e in LIFESPAN_EVENTS if e[1] is app]) == 2
