"""Conformance suites for adapter and task-store authors.

Install with ``pip install 'a2a-adapters-core[testing]'``.

Subclass a suite in your package's tests and supply a factory::

    from a2a_core.testing import AdapterConformance, Scenario

    class TestMyAdapter(AdapterConformance):
        entry_point_name = "myframework"

        def make_agent(self, scenario: Scenario) -> object | None: ...

``TaskStoreConformance`` does the same for ``TaskStore`` backends
(``async def make_store(self)``), and ``ClusterConformance`` checks several
service instances on one backend (live streams, replay, cancel and push
across instances). ``served_in_thread`` and ``asgi_in_thread`` serve an agent, or any
ASGI app, on 127.0.0.1 from a thread (for synchronous tests). See docs/testing.md. Not imported by
``import a2a_core``: it needs pytest.
"""

from __future__ import annotations

import importlib.util

if importlib.util.find_spec("pytest") is None:  # pragma: no cover - depends on the environment
    raise ImportError(
        "a2a_core.testing needs pytest and pytest-asyncio: pip install 'a2a-adapters-core[testing]'"
    )

from ..exports import publish as _publish
from ._suite import OPT_OUT_MARKER, ConformanceSuite, opt_out
from .adapter_suite import AdapterConformance, card_problems
from .cluster_suite import ClusterConformance
from .fakes import (
    SCENARIOS,
    AgentProbe,
    AskingAgent,
    FailingAgent,
    Scenario,
    ScenarioName,
    SlowAgent,
    make_task,
)
from .store_suite import TaskStoreConformance
from .threads import asgi_in_thread, free_port, served_in_thread

__all__ = [
    "OPT_OUT_MARKER",
    "SCENARIOS",
    "AdapterConformance",
    "AgentProbe",
    "AskingAgent",
    "ClusterConformance",
    "ConformanceSuite",
    "FailingAgent",
    "Scenario",
    "ScenarioName",
    "SlowAgent",
    "TaskStoreConformance",
    "asgi_in_thread",
    "card_problems",
    "free_port",
    "make_task",
    "opt_out",
    "served_in_thread",
]

_publish(__name__, [value for name, value in globals().items() if name in __all__])
