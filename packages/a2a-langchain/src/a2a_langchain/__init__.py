"""Serve LangChain Runnables as A2A agents, and call remote A2A agents from LangChain.

Serving::

    from a2a_langchain import serve

    serve(prompt | model | StrOutputParser(), name="Helper", port=8000)

Calling::

    from a2a_langchain import A2AToolkit, RemoteA2ARunnable, remote_agent_tool

    tool = remote_agent_tool("http://localhost:8000")       # a LangChain tool
    agent = RemoteA2ARunnable("http://localhost:8000")       # a Runnable
    tools = A2AToolkit.from_urls([url1, url2]).get_tools()  # several agents

Names load on first use, so importing the package stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._checkpoint import open_checkpointer
    from ._remote import CREDENTIAL_KEY, caller_credential
    from .agent import LangChainAgent, a2a_context
    from .runnable import RemoteA2ARunnable
    from .serving import running_server, serve, serve_async
    from .tools import (
        A2AToolkit,
        RemoteAgentError,
        RemoteAgentTool,
        aremote_agent_tool,
        remote_agent_tool,
    )
    from .tracing import OpenTelemetryCallbackHandler

__version__ = "0.1.0"

__all__ = [
    "CREDENTIAL_KEY",
    "A2AToolkit",
    "LangChainAgent",
    "OpenTelemetryCallbackHandler",
    "RemoteA2ARunnable",
    "RemoteAgentError",
    "RemoteAgentTool",
    "a2a_context",
    "aremote_agent_tool",
    "caller_credential",
    "open_checkpointer",
    "remote_agent_tool",
    "running_server",
    "serve",
    "serve_async",
]

_LAZY = {
    "CREDENTIAL_KEY": "._remote",
    "caller_credential": "._remote",
    "LangChainAgent": ".agent",
    "a2a_context": ".agent",
    "RemoteA2ARunnable": ".runnable",
    "open_checkpointer": "._checkpoint",
    "serve": ".serving",
    "serve_async": ".serving",
    "running_server": ".serving",
    "A2AToolkit": ".tools",
    "RemoteAgentError": ".tools",
    "RemoteAgentTool": ".tools",
    "remote_agent_tool": ".tools",
    "aremote_agent_tool": ".tools",
    "OpenTelemetryCallbackHandler": ".tracing",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from a2a_core.exports import publish

    value = getattr(importlib.import_module(module, __name__), name)
    publish(__name__, [value])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
