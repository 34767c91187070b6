"""Built-in plugin: the ``echo`` adapter, serving ``EchoAgent`` objects.

``EchoAgent`` answers every message with ``prefix + text``, optionally in
several streamed chunks. It exists for demos and smoke tests, and as the
core's own "framework" in the adapter conformance suite: it goes through the
same entry point, ``a2a_register_adapters`` and ``a2a_adapt_agent`` hooks as
a LangChain or CrewAI adapter would.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..adapters import AdapterRegistrar, ResolvedAgent
from ..hookspecs import hookimpl
from ..server.executor import AgentExecutor, RequestContext
from ..server.updater import TaskUpdater
from ..types import AgentSkill

__all__ = ["EchoAdapter", "EchoAgent", "EchoExecutor"]

ECHO_SKILL = AgentSkill(
    id="echo",
    name="Echo",
    description="Answers with the message it was sent",
    tags=["echo", "demo"],
)


class EchoAgent:
    """An agent that answers with what it is told (after ``prefix``).

    With ``chunk_size``, the answer streams as one artifact in chunks of at
    most that many characters (``append`` / ``lastChunk`` set accordingly).
    """

    def __init__(
        self, prefix: str = "echo: ", *, chunk_size: int | None = None, name: str = "Echo"
    ) -> None:
        if chunk_size is not None and chunk_size <= 0:
            raise ValueError("chunk_size must be > 0")
        self.prefix = prefix
        self.chunk_size = chunk_size
        self.name = name

    def __repr__(self) -> str:
        return f"EchoAgent(prefix={self.prefix!r}, chunk_size={self.chunk_size!r})"


class EchoExecutor(AgentExecutor):
    """Runs an ``EchoAgent``."""

    def __init__(self, agent: EchoAgent) -> None:
        self.agent = agent

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        reply = self.agent.prefix + context.text
        size = self.agent.chunk_size
        if size is None or len(reply) <= size:
            await updater.finish_with(reply)
            return
        await updater.start_work()
        chunks = [reply[i : i + size] for i in range(0, len(reply), size)]
        for i, chunk in enumerate(chunks):
            await updater.add_artifact(
                chunk,
                artifact_id="result",
                name="result",
                append=i > 0,
                last_chunk=i == len(chunks) - 1,
            )
        await updater.complete()


class EchoAdapter:
    """The ``echo`` adapter: ``EchoAgent`` objects only."""

    def adapt(self, agent: Any, options: Mapping[str, Any]) -> ResolvedAgent:
        if not isinstance(agent, EchoAgent):
            raise TypeError(
                f"the echo adapter serves EchoAgent objects, not {type(agent).__name__}"
            )
        return ResolvedAgent(
            EchoExecutor(agent),
            name=agent.name,
            description="Answers with the message it was sent",
            skills=(ECHO_SKILL,),
            adapter="echo",
        )


@hookimpl
def a2a_register_adapters(register: AdapterRegistrar) -> None:
    register("echo", EchoAdapter())


@hookimpl
def a2a_adapt_agent(agent: Any, options: Mapping[str, Any]) -> ResolvedAgent | None:
    if isinstance(agent, EchoAgent):
        return EchoAdapter().adapt(agent, options)
    return None
