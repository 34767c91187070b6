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
across instances). See docs/testing.md. Not imported by
``import a2a_core``: it needs pytest.
"""

from __future__ import annotations

import importlib.util

if importlib.util.find_spec("pytest") is None:  # pragma: no cover - depends on the environment
    raise ImportError(
        "a2a_core.testing needs pytest and pytest-asyncio: pip install 'a2a-adapters-core[testing]'"
    )

from .._api import publish as _publish
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
    "card_problems",
    "make_task",
    "opt_out",
]

_publish(__name__, [value for name, value in globals().items() if name in __all__])
