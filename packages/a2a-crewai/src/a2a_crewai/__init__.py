"""Serve CrewAI crews, agents and flows over A2A, and call remote A2A agents from crews.

Serving::

    from a2a_crewai import serve

    serve(crew, port=8000)              # or: a2a serve my_module:crew (a Flow too)

Calling::

    from a2a_crewai import RemoteA2AAgent, remote_agent_tool

    tool = remote_agent_tool("http://localhost:8000")       # a CrewAI tool
    member = RemoteA2AAgent.connect("http://localhost:8000")  # a crew member

Offline (tests, demos): call ``offline_crewai()`` before importing CrewAI, and
give agents a ``a2a_crewai.testing.ScriptedLLM``.

Names load on first use: importing the package does not import CrewAI.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._env import offline_crewai
    from .executor import CrewAgent
    from .member import RemoteA2AAgent
    from .serving import running_server, serve, serve_async
    from .tools import A2ATool, catalog_tools, remote_agent_tool
    from .tracing import install_tracing

__version__ = "0.1.0"

__all__ = [
    "A2ATool",
    "CrewAgent",
    "RemoteA2AAgent",
    "catalog_tools",
    "install_tracing",
    "offline_crewai",
    "remote_agent_tool",
    "running_server",
    "serve",
    "serve_async",
]

_LAZY = {
    "offline_crewai": "._env",
    "CrewAgent": ".executor",
    "RemoteA2AAgent": ".member",
    "A2ATool": ".tools",
    "remote_agent_tool": ".tools",
    "catalog_tools": ".tools",
    "serve": ".serving",
    "serve_async": ".serving",
    "running_server": ".serving",
    "install_tracing": ".tracing",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from a2a_core.exports import publish

    if module != "._env":
        from ._quiet import import_crewai

        import_crewai()
    value = getattr(importlib.import_module(module, __name__), name)
    publish(__name__, [value])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
