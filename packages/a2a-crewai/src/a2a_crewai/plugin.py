"""The ``a2a_core`` plugin: ``serve(crew)`` and ``a2a serve module:crew`` find CrewAI objects
(crews, agents, and flows: a ``Flow`` instance or subclass).

Registered as the ``crewai`` entry point of the ``a2a_core`` group. Importing
this module does not import CrewAI (every A2A server loads its plugins at
startup): objects are recognised by the modules their classes come from
before anything heavy is imported.

Options given to ``serve`` / ``configure_service`` that ``CrewAgent`` knows
(``max_parallel``, ``inputs_key``, ``per_task_artifacts``, ``stream``,
``max_feedback_rounds``, ``input_timeout``, ``max_paused``, ``skills``) reach it; ``name``,
``description`` and ``version`` go to the card as for any agent.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from a2a_core.hookspecs import hookimpl

if TYPE_CHECKING:
    from a2a_core.adapters import AdapterRegistrar, ResolvedAgent
    from a2a_core.types import Task, TaskState

__all__ = ["CrewAIAdapter", "a2a_adapt_agent", "a2a_register_adapters", "a2a_task_transition"]

ADAPTER_OPTIONS = (
    "max_parallel",
    "inputs_key",
    "per_task_artifacts",
    "stream",
    "max_feedback_rounds",
    "input_timeout",
    "file_policy",
    "file_tool",
    "output_dir",
    "max_paused",
    "conversation",
    "history_limit",
    "skills",
)
A2A_OPTIONS = ADAPTER_OPTIONS
"""Every server option this plugin reads (``a2a_core`` refuses names no plugin declares)."""
_PACKAGES = frozenset({"crewai", "a2a_crewai"})


def _from_crewai(agent: object) -> bool:
    """Whether a class in the object's hierarchy (or the class's, for a class such as a
    ``Flow`` subclass) comes from CrewAI (or this package)."""
    classes = agent.__mro__ if isinstance(agent, type) else type(agent).__mro__
    return any(cls.__module__.split(".", 1)[0] in _PACKAGES for cls in classes)


class CrewAIAdapter:
    """The ``crewai`` agent adapter: a ``Crew``, ``Agent``, ``Flow`` or ready ``CrewAgent``."""

    def adapt(self, agent: Any, options: Mapping[str, Any]) -> ResolvedAgent:
        from .executor import CrewAgent

        if isinstance(agent, CrewAgent):
            return agent.resolved()
        kwargs = {key: options[key] for key in ADAPTER_OPTIONS if key in options}
        return CrewAgent(agent, **kwargs).resolved()  # TypeError for anything else


@hookimpl
def a2a_register_adapters(register: AdapterRegistrar) -> None:
    register("crewai", CrewAIAdapter())


@hookimpl
def a2a_adapt_agent(agent: Any, options: Mapping[str, Any]) -> ResolvedAgent | None:
    if not _from_crewai(agent):
        return None
    from crewai import Crew
    from crewai.agents.agent_builder.base_agent import BaseAgent

    from ._flows import is_flow
    from .executor import CrewAgent

    if isinstance(agent, Crew | BaseAgent | CrewAgent) or is_flow(agent):
        return CrewAIAdapter().adapt(agent, options)
    return None


@hookimpl
def a2a_task_transition(task: Task, old: TaskState | None, new: TaskState) -> None:
    """A task paused for human input was canceled (or ended): release its waiting crew."""
    if old is None or not old.is_interrupted or not new.is_terminal:
        return
    runs = sys.modules.get("a2a_crewai._runs")
    if runs is None:  # no crew was ever served in this process
        return
    run = runs.paused_run(task.id)
    if run is not None:
        run.cancel()
