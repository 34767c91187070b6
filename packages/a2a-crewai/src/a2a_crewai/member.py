"""A remote A2A agent as a crew member.

``RemoteA2AAgent`` is a CrewAI agent whose work is done by a remote A2A
agent: a task assigned to it (or delegated to it by a coworker or a
manager) is sent to the remote agent, with the task's expected output and
the context from earlier tasks, and the remote answer is the task's output.
It has no model of its own. Its role, goal and backstory come from the
remote card unless given, cleaned, bounded and labelled as untrusted.

When the remote agent needs more input, the output says so (with the
question) and the remote task is kept: the next task this member works on
in the same request continues it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from a2a_core.client import A2AClient, describe_card, sanitize_text
from a2a_core.types import AgentCard
from crewai.agents.agent_builder.base_agent import BaseAgent
from crewai.tools import BaseTool
from pydantic import PrivateAttr

from ._remote import RemoteAgent

__all__ = ["RemoteA2AAgent"]

CONTINUE_HINT = "A new task for this agent continues the same request with its answer."


def _task_message(task: Any, context: str | None) -> str:
    parts = [str(getattr(task, "description", "") or "")]
    expected = getattr(task, "expected_output", None)
    if expected:
        parts.append(f"Expected output: {expected}")
    if context:
        parts.append(f"Context:\n{context}")
    return "\n\n".join(p for p in parts if p)


class RemoteA2AAgent(BaseAgent):
    """A crew member backed by the remote A2A agent at ``url``.

    Build it with ``RemoteA2AAgent.connect(url)`` (fills role, goal and
    backstory from the card), or give them yourself:
    ``RemoteA2AAgent(url=..., role=..., goal=..., backstory=...)``.
    """

    url: str
    function_calling_llm: Any = None
    step_callback: Any = None
    _remote: RemoteAgent | None = PrivateAttr(default=None)

    @classmethod
    def connect(
        cls,
        url: str,
        *,
        role: str | None = None,
        goal: str | None = None,
        backstory: str | None = None,
        card: AgentCard | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 300.0,
        max_answer_chars: int = 20_000,
        client: A2AClient | None = None,
        auth: Any = None,
        passthrough: bool = False,
        **fields: Any,
    ) -> RemoteA2AAgent:
        """A member for the agent at ``url``; its card is fetched now (unless given).

        ``auth``: an ``httpx.Auth`` such as ``ClientCredentials``; ``passthrough``:
        forward the served request's token instead (see docs/security.md).
        Other keywords are CrewAI agent fields (``allow_delegation``, ``verbose``...).
        """
        connect: dict[str, Any] = {"auth": auth} if auth is not None else {}
        remote = RemoteAgent(
            url,
            card=card,
            headers=headers,
            timeout=timeout,
            max_answer_chars=max_answer_chars,
            client=client,
            passthrough=passthrough,
            **connect,
        )
        found = remote.card()
        name = sanitize_text(found.name, 80, single_line=True) or "Remote agent"
        agent = cls(
            url=url,
            role=role or name,
            goal=goal or f"Complete the tasks given to the remote A2A agent {name!r}.",
            backstory=backstory or describe_card(found, url, lead="A crew member backed by"),
            **fields,
        )
        agent._remote = remote
        return agent

    @property
    def remote(self) -> RemoteAgent:
        """The remote agent that does this member's work."""
        if self._remote is None:
            self._remote = RemoteAgent(self.url)
        return self._remote

    @property
    def last_messages(self) -> list[Any]:  # read by CrewAI when a task fails
        """No local LLM messages: CrewAI reads this when a task fails."""
        return []

    def copy(self) -> RemoteA2AAgent:  # type: ignore[override]
        """A copy for a concurrent run; it shares the connection and conversation state."""
        clone = super().copy()
        clone._remote = self._remote
        return clone

    # -- work ---------------------------------------------------------------------------
    def execute_task(
        self, task: Any, context: str | None = None, tools: list[BaseTool] | None = None
    ) -> str:
        """Do the crew's task by asking the remote agent; its answer as text."""
        message = self._started(task, context, tools)
        try:
            output = self.remote.ask(message).describe(CONTINUE_HINT)
        except Exception as exc:
            self._failed(task, exc)
            raise
        return self._completed(task, output)

    async def aexecute_task(
        self, task: Any, context: str | None = None, tools: list[BaseTool] | None = None
    ) -> str:
        message = self._started(task, context, tools)
        try:
            output = (await self.remote.aask(message)).describe(CONTINUE_HINT)
        except Exception as exc:
            self._failed(task, exc)
            raise
        return self._completed(task, output)

    def _started(self, task: Any, context: str | None, tools: list[BaseTool] | None) -> str:
        from crewai.events import crewai_event_bus
        from crewai.events.types.agent_events import AgentExecutionStartedEvent

        message = _task_message(task, context)
        crewai_event_bus.emit(
            self,
            AgentExecutionStartedEvent(agent=self, task=task, tools=tools, task_prompt=message),
        )
        return message

    def _failed(self, task: Any, exc: Exception) -> None:
        from crewai.events import crewai_event_bus
        from crewai.events.types.agent_events import AgentExecutionErrorEvent

        crewai_event_bus.emit(
            self, AgentExecutionErrorEvent(agent=self, task=task, error=type(exc).__name__)
        )

    def _completed(self, task: Any, output: str) -> str:
        from crewai.events import crewai_event_bus
        from crewai.events.types.agent_events import AgentExecutionCompletedEvent

        crewai_event_bus.emit(
            self, AgentExecutionCompletedEvent(agent=self, task=task, output=output)
        )
        return output

    def create_agent_executor(self, tools: list[BaseTool] | None = None) -> None:
        """Nothing to build: the remote agent runs its own loop (CrewAI calls this)."""
        return None

    def get_delegation_tools(self, agents: Sequence[BaseAgent]) -> list[BaseTool]:
        return []

    def get_platform_tools(self, apps: Any) -> list[BaseTool]:
        return []

    def get_mcp_tools(self, mcps: Any) -> list[BaseTool]:
        return []
