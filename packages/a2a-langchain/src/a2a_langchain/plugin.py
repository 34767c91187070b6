"""The ``langchain`` plugin: ``serve(runnable)`` and ``a2a serve module:chain`` find LangChain here.

Registered under the ``a2a_core`` entry-point group. ``a2a_adapt_agent``
claims any ``langchain_core`` ``Runnable`` (chains, chat models, agents,
compiled LangGraph graphs) and ready ``LangChainAgent`` objects, and answers
None for everything else without importing LangChain. Options given to
``serve``/``configure_service`` that ``LangChainAgent`` understands (``name``,
``description``, ``input_mode``, ``answer_model``, ``runnable_config``...)
configure the agent.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, cast

from a2a_core.adapters import AdapterRegistrar, ResolvedAgent
from a2a_core.hookspecs import hookimpl

__all__ = [
    "AGENT_OPTIONS",
    "LangChainAdapter",
    "a2a_adapt_agent",
    "a2a_lifespan",
    "a2a_register_adapters",
]

AGENT_OPTIONS = frozenset(
    {
        "name",
        "description",
        "version",
        "skills",
        "input_mode",
        "input_key",
        "answer_model",
        "stream",
        "conversation",
        "history_limit",
        "tool_updates",
        "file_policy",
        "file_blocks",
        "url_policy",
        "input_modes",
        "output_modes",
        "checkpointer",
        "runnable_config",
    }
)
"""Server options passed on to ``LangChainAgent`` as they are."""

A2A_OPTIONS = AGENT_OPTIONS
"""Every server option this plugin reads (``a2a_core`` refuses names no plugin declares)."""


def agent_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The ``LangChainAgent`` keyword arguments among server ``options``."""
    if isinstance(options.get("config"), Mapping):  # `a2a serve -o config={...}`
        raise TypeError(
            "config= is the task manager's ManagerConfig; a LangChain RunnableConfig "
            "(callbacks, tags, recursion_limit...) is runnable_config="
        )
    return {k: v for k, v in options.items() if k in AGENT_OPTIONS and v is not None}


class LangChainAdapter:
    """The ``langchain`` adapter: LangChain Runnables and ``LangChainAgent`` objects."""

    def adapt(self, agent: Any, options: Mapping[str, Any]) -> ResolvedAgent:
        from langchain_core.runnables import Runnable

        from .agent import LangChainAgent

        if isinstance(agent, LangChainAgent):
            return agent.resolved()
        if not isinstance(agent, Runnable):
            raise TypeError(
                f"the langchain adapter serves LangChain Runnables, not {type(agent).__name__}"
            )
        runnable = cast(Runnable[Any, Any], agent)
        return LangChainAgent(runnable, **agent_options(options)).resolved()


def _is_langchain(agent: Any) -> bool:
    # An object cannot be a Runnable unless langchain_core was imported: check cheaply.
    if "langchain_core.runnables" not in sys.modules:
        return False
    from langchain_core.runnables import Runnable

    from .agent import LangChainAgent

    return isinstance(agent, Runnable | LangChainAgent)


@hookimpl
def a2a_register_adapters(register: AdapterRegistrar) -> None:
    register("langchain", LangChainAdapter())


@hookimpl
def a2a_adapt_agent(agent: Any, options: Mapping[str, Any]) -> ResolvedAgent | None:
    if not _is_langchain(agent):
        return None
    return LangChainAdapter().adapt(agent, options)


@hookimpl
def a2a_lifespan(app: Any) -> AbstractAsyncContextManager[object] | None:
    """Close the checkpointer a served agent opened from a URL when its app stops."""
    if "a2a_langchain.agent" not in sys.modules:
        return None  # no LangChainAgent was ever built
    from .agent import LangChainAgent

    manager = getattr(getattr(app, "service", None), "manager", None)
    agent = getattr(manager, "executor", None)
    if not isinstance(agent, LangChainAgent) or agent.checkpointer_url is None:
        return None
    return _closing_checkpointer(agent)


@contextlib.asynccontextmanager
async def _closing_checkpointer(agent: Any) -> AsyncIterator[None]:
    try:
        yield
    finally:
        await agent.aclose_checkpointer()
