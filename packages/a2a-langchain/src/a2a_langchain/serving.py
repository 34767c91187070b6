"""``serve(runnable)``: one call from a LangChain Runnable to a running A2A server.

Options are split by name: those of ``LangChainAgent`` configure the agent
(``name``, ``description``, ``skills``, ``input_mode``, ``answer_model``,
``stream``, ``config``...), everything else goes to ``a2a_core``'s
``serve`` (``host``, ``port``, ``card``, ``store_url``, ``bearer_tokens``...).
``serve_async`` runs in an existing event loop; ``running_server`` starts a
server in the background for tests and embedding.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import a2a_core.server.serve as core_serve
from a2a_core.adapters import ResolvedAgent
from a2a_core.server.serve import RunningServer

from .agent import LangChainAgent

__all__ = ["agent_for", "running_server", "serve", "serve_async"]

_AGENT_KWARGS = frozenset(inspect.signature(LangChainAgent.__init__).parameters) - {
    "self",
    "runnable",
}


def _split(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    agent = {k: v for k, v in options.items() if k in _AGENT_KWARGS}
    rest = {k: v for k, v in options.items() if k not in _AGENT_KWARGS}
    return agent, rest


def agent_for(runnable: Any, **agent_options: Any) -> ResolvedAgent:
    """The servable agent for ``runnable`` (a Runnable or a ready ``LangChainAgent``)."""
    if isinstance(runnable, LangChainAgent):
        if agent_options:
            raise TypeError(
                "serve() got agent options for a ready LangChainAgent "
                f"({', '.join(sorted(agent_options))}): configure the LangChainAgent itself"
            )
        return runnable.resolved()
    return LangChainAgent(runnable, **agent_options).resolved()


def serve(runnable: Any, **options: Any) -> None:
    """Serve ``runnable`` over A2A until interrupted (Ctrl+C).

    ``serve(chain, name="Helper", port=8000)``: agent options configure the
    ``LangChainAgent``, the rest are ``a2a_core.server.serve.serve`` options.
    """
    agent_options, server_options = _split(options)
    core_serve.serve(agent_for(runnable, **agent_options), **server_options)


async def serve_async(runnable: Any, **options: Any) -> None:
    """``serve`` in the running event loop (until cancelled)."""
    agent_options, server_options = _split(options)
    await core_serve.serve_async(agent_for(runnable, **agent_options), **server_options)


@asynccontextmanager
async def running_server(runnable: Any, **options: Any) -> AsyncGenerator[RunningServer]:
    """Serve ``runnable`` in the background (a free port by default); stop on exit."""
    agent_options, server_options = _split(options)
    async with core_serve.running_server(
        agent_for(runnable, **agent_options), **server_options
    ) as server:
        yield server
