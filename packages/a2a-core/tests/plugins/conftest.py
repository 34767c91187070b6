"""Plugin tests: a clean environment per test, bare managers, and the ``hook`` marker.

``@pytest.mark.hook("a2a_...")`` says which hook a test exercises;
``test_hooks_documented.py`` fails when a hook in ``hookspecs.py`` has no
such test (or no section in ``docs/plugins/hooks.md``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from a2a_core.plugins import A2APluginManager, create_plugin_manager, reset_plugin_manager

PLUGIN_ENV_VARS = ("A2A_DISABLE_PLUGIN_AUTOLOAD", "A2A_PLUGINS", "A2A_TEST_PLUGIN_FAIL")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "hook(name): the a2a_core hook this test exercises")


@pytest.fixture(autouse=True)
def clean_plugin_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No A2A plugin variable leaks in from the shell, and no cached manager survives a test."""
    for name in PLUGIN_ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    reset_plugin_manager()
    yield
    reset_plugin_manager()


@pytest.fixture
def pm() -> A2APluginManager:
    """A manager with the hook specs only: tests register exactly the plugins they need."""
    return create_plugin_manager(entry_points=False)


@pytest.fixture
def core_pm() -> A2APluginManager:
    """The built-in plugins only (memory://, bearer / API-key auth), no third-party plugin."""
    return create_plugin_manager({"A2A_DISABLE_PLUGIN_AUTOLOAD": "1"})
