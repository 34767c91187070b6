"""``serve(runnable)``: one call from a LangChain Runnable to a running A2A server.

The agent's options are typed keyword parameters (the ``LangChainAgent`` ones:
``name``, ``description``, ``input_mode``, ``answer_model``, ``stream``,
``conversation``, ``runnable_config``...), and so are ``host`` and ``port``;
every other keyword goes to ``a2a_core``'s ``serve`` (``card``, ``store_url``,
``public_url``, ``bearer_tokens``...), which refuses a name nothing takes.
``serve_async`` runs in an existing event loop; ``running_server`` starts a
server in the background for tests and embedding.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import a2a_core.compose.serve as core_serve
from a2a_core.adapters import ResolvedAgent
from a2a_core.compose.serve import RunningServer
from a2a_core.files import FilePolicy
from a2a_core.types import AgentSkill
from langchain_core.runnables import Runnable, RunnableConfig

from ._files import DEFAULT_FILE_POLICY, FileBlocks
from ._input import InputMode
from ._stream import ToolUpdates
from .agent import Conversation, LangChainAgent

__all__ = ["agent_for", "running_server", "serve", "serve_async"]

_DEFAULTS = {
    name: p.default
    for name, p in inspect.signature(LangChainAgent.__init__).parameters.items()
    if p.kind is inspect.Parameter.KEYWORD_ONLY and name != "config"
}


def agent_for(runnable: Runnable[Any, Any] | LangChainAgent, **agent_options: Any) -> ResolvedAgent:
    """The servable agent for ``runnable`` (a Runnable or a ready ``LangChainAgent``).

    Options left at their defaults are not "given": a ready ``LangChainAgent`` is
    configured itself, and any other option for it is a ``TypeError``.
    """
    if isinstance(runnable, LangChainAgent):
        given = sorted(k for k, v in agent_options.items() if v != _DEFAULTS.get(k))
        if given:
            raise TypeError(
                "serve() got agent options for a ready LangChainAgent "
                f"({', '.join(given)}): configure the LangChainAgent itself"
            )
        return runnable.resolved()
    return LangChainAgent(runnable, **agent_options).resolved()


def serve(
    runnable: Runnable[Any, Any] | LangChainAgent,
    *,
    name: str | None = None,
    description: str | None = None,
    version: str | None = None,
    skills: Sequence[AgentSkill | Mapping[str, Any]] | None = None,
    input_mode: InputMode = "auto",
    input_key: str | None = None,
    answer_model: str | Sequence[str] | None = None,
    stream: bool = True,
    conversation: Conversation = "auto",
    history_limit: int = 40,
    runnable_config: RunnableConfig | None = None,
    tool_updates: ToolUpdates = "full",
    input_modes: Sequence[str] | None = None,
    output_modes: Sequence[str] | None = None,
    file_policy: FilePolicy | None = DEFAULT_FILE_POLICY,
    file_blocks: FileBlocks = "auto",
    url_policy: Any = None,
    checkpointer: Any = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    **server_options: Any,
) -> None:
    """Serve ``runnable`` over A2A until interrupted (Ctrl+C).

    ``serve(chain, name="Helper", port=8000)``. The agent options are those of
    ``LangChainAgent`` (see it for each); ``server_options`` go to
    ``a2a_core.compose.serve.serve`` (``card``, ``store_url``, ``public_url``,
    auth...). A ready ``LangChainAgent`` takes server options only.
    """
    agent = agent_for(
        runnable,
        name=name,
        description=description,
        version=version,
        skills=skills,
        input_mode=input_mode,
        input_key=input_key,
        answer_model=answer_model,
        stream=stream,
        conversation=conversation,
        history_limit=history_limit,
        runnable_config=runnable_config,
        tool_updates=tool_updates,
        input_modes=input_modes,
        output_modes=output_modes,
        file_policy=file_policy,
        file_blocks=file_blocks,
        url_policy=url_policy,
        checkpointer=checkpointer,
    )
    core_serve.serve(agent, host=host, port=port, **server_options)


async def serve_async(
    runnable: Runnable[Any, Any] | LangChainAgent,
    *,
    name: str | None = None,
    description: str | None = None,
    version: str | None = None,
    skills: Sequence[AgentSkill | Mapping[str, Any]] | None = None,
    input_mode: InputMode = "auto",
    input_key: str | None = None,
    answer_model: str | Sequence[str] | None = None,
    stream: bool = True,
    conversation: Conversation = "auto",
    history_limit: int = 40,
    runnable_config: RunnableConfig | None = None,
    tool_updates: ToolUpdates = "full",
    input_modes: Sequence[str] | None = None,
    output_modes: Sequence[str] | None = None,
    file_policy: FilePolicy | None = DEFAULT_FILE_POLICY,
    file_blocks: FileBlocks = "auto",
    url_policy: Any = None,
    checkpointer: Any = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    **server_options: Any,
) -> None:
    """``serve`` in the running event loop (until cancelled)."""
    agent = agent_for(
        runnable,
        name=name,
        description=description,
        version=version,
        skills=skills,
        input_mode=input_mode,
        input_key=input_key,
        answer_model=answer_model,
        stream=stream,
        conversation=conversation,
        history_limit=history_limit,
        runnable_config=runnable_config,
        tool_updates=tool_updates,
        input_modes=input_modes,
        output_modes=output_modes,
        file_policy=file_policy,
        file_blocks=file_blocks,
        url_policy=url_policy,
        checkpointer=checkpointer,
    )
    await core_serve.serve_async(agent, host=host, port=port, **server_options)


def running_server(
    runnable: Runnable[Any, Any] | LangChainAgent,
    *,
    name: str | None = None,
    description: str | None = None,
    version: str | None = None,
    skills: Sequence[AgentSkill | Mapping[str, Any]] | None = None,
    input_mode: InputMode = "auto",
    input_key: str | None = None,
    answer_model: str | Sequence[str] | None = None,
    stream: bool = True,
    conversation: Conversation = "auto",
    history_limit: int = 40,
    runnable_config: RunnableConfig | None = None,
    tool_updates: ToolUpdates = "full",
    input_modes: Sequence[str] | None = None,
    output_modes: Sequence[str] | None = None,
    file_policy: FilePolicy | None = DEFAULT_FILE_POLICY,
    file_blocks: FileBlocks = "auto",
    url_policy: Any = None,
    checkpointer: Any = None,
    host: str = "127.0.0.1",
    port: int = 0,
    **server_options: Any,
) -> AbstractAsyncContextManager[RunningServer]:
    """Serve ``runnable`` in the background (port 0: a free one) while the ``async with``
    block runs; the options are ``serve``'s."""
    agent = agent_for(
        runnable,
        name=name,
        description=description,
        version=version,
        skills=skills,
        input_mode=input_mode,
        input_key=input_key,
        answer_model=answer_model,
        stream=stream,
        conversation=conversation,
        history_limit=history_limit,
        runnable_config=runnable_config,
        tool_updates=tool_updates,
        input_modes=input_modes,
        output_modes=output_modes,
        file_policy=file_policy,
        file_blocks=file_blocks,
        url_policy=url_policy,
        checkpointer=checkpointer,
    )
    return core_serve.running_server(agent, host=host, port=port, **server_options)
