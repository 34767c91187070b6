"""Serve a crew, agent or flow over HTTP: the one-call entry points.

``serve(crew)`` wraps it in a ``CrewAgent`` and runs the core's server
(``a2a_core.compose.serve``) until interrupted; ``serve_async`` does the same
in a running event loop; ``running_server`` starts it in the background for
tests, demos and embedding. Adapter options go to ``CrewAgent``, every other
keyword to the core (``card``, ``public_url``, ``store_url``, auth...).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from a2a_core.compose.serve import RunningServer
from a2a_core.types import AgentSkill

from .executor import CrewAgent

__all__ = ["running_server", "serve", "serve_async"]


def _agent(
    crew_or_agent: Any,
    name: str | None,
    description: str | None,
    skills: Sequence[AgentSkill] | None,
    adapter_options: dict[str, Any],
) -> Any:
    agent = (
        crew_or_agent
        if isinstance(crew_or_agent, CrewAgent)
        else CrewAgent(
            crew_or_agent, name=name, description=description, skills=skills, **adapter_options
        )
    )
    return agent.resolved()  # served as is, whether or not plugins are loaded


_ADAPTER_KEYS = (
    "version",
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
)


def _split(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    adapter = {k: options.pop(k) for k in _ADAPTER_KEYS if k in options}
    return adapter, options


def serve(
    crew_or_agent: Any,
    *,
    name: str | None = None,
    description: str | None = None,
    skills: Sequence[AgentSkill] | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    **options: Any,
) -> None:
    """Serve a ``Crew``, an ``Agent``, a ``Flow`` or a ``CrewAgent`` until interrupted (Ctrl+C).

    ``max_parallel``, ``inputs_key``, ``per_task_artifacts``, ``stream``,
    ``max_feedback_rounds``, ``input_timeout``, ``max_paused`` and ``version`` configure the
    ``CrewAgent``; other options go to ``a2a_core.compose.serve``.
    """
    from a2a_core.compose.serve import serve as core_serve

    adapter, rest = _split(dict(options))
    core_serve(
        _agent(crew_or_agent, name, description, skills, adapter), host=host, port=port, **rest
    )


async def serve_async(
    crew_or_agent: Any,
    *,
    name: str | None = None,
    description: str | None = None,
    skills: Sequence[AgentSkill] | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    **options: Any,
) -> None:
    """``serve`` in the running event loop (returns when cancelled)."""
    from a2a_core.compose.serve import serve_async as core_serve_async

    adapter, rest = _split(dict(options))
    await core_serve_async(
        _agent(crew_or_agent, name, description, skills, adapter), host=host, port=port, **rest
    )


def running_server(
    crew_or_agent: Any,
    *,
    name: str | None = None,
    description: str | None = None,
    skills: Sequence[AgentSkill] | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    **options: Any,
) -> AbstractAsyncContextManager[RunningServer]:
    """Serve in the background (port 0: a free one) while the ``async with`` block runs."""
    from a2a_core.compose.serve import running_server as core_running_server

    adapter, rest = _split(dict(options))
    return core_running_server(
        _agent(crew_or_agent, name, description, skills, adapter), host=host, port=port, **rest
    )
