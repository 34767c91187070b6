"""Offline CrewAI for tests, demos and examples: a model that answers from a script.

``ScriptedLLM`` is a CrewAI ``BaseLLM`` that never touches the network. Each
call takes the next step of its script (the last one repeats):

- a string: the final answer;
- ``tool_call(name, **arguments)``: an OpenAI-style tool call, which CrewAI
  executes before calling the model again;
- an exception instance: raised, as a failing model would;
- a function ``(messages, tools) -> step``: computed from the conversation
  (``last_user_text`` and ``tool_result_text`` help).

When CrewAI streams (``Crew(stream=True)``), text answers are emitted word
by word as stream chunk events, as a real streaming model does. Each copy
of an agent gets its own script position (``crew.copy()``), so concurrent
requests of a served crew do not share it.
"""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import Field, PrivateAttr

from ._quiet import import_crewai

import_crewai()

from crewai import BaseLLM  # noqa: E402
from crewai.events.types.llm_events import LLMCallType  # noqa: E402
from crewai.llms.base_llm import llm_call_context  # noqa: E402

__all__ = ["ScriptedLLM", "last_user_text", "tool_call", "tool_result_text"]


def tool_call(name: str, **arguments: Any) -> list[dict[str, Any]]:
    """One OpenAI-style tool call, as a model returns it."""
    return [
        {
            "id": f"call_{name}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
    ]


def last_user_text(messages: Any) -> str:
    """The content of the latest user message."""
    if isinstance(messages, str):
        return messages
    for message in reversed(messages):
        if message.get("role") == "user":
            return str(message.get("content") or "")
    return ""


def tool_result_text(messages: Any) -> str:
    """The content of the latest tool result."""
    if isinstance(messages, str):
        return ""
    for message in reversed(messages):
        if message.get("role") == "tool":
            return str(message.get("content") or "")
    return ""


class ScriptedLLM(BaseLLM):
    """A model that answers from ``script`` (see the module docstring)."""

    script: list[Any] = Field(default_factory=list)
    delay: float = 0.0
    """Seconds each call takes (to watch progress, or a cancel)."""
    calls: list[dict[str, Any]] = Field(default_factory=list)
    """Every call's messages and tools (shared by the copies of this model)."""
    _position: int = PrivateAttr(default=0)

    def supports_function_calling(self) -> bool:
        """True: the script may answer with tool calls, like a real model."""
        return True

    def supports_stop_words(self) -> bool:
        return False

    def get_context_window_size(self) -> int:
        return 8192

    def get_input_tokens_count(
        self, messages: Any, tools: Any = None, response_model: Any = None
    ) -> int:
        return 0

    def call(  # pyright: ignore[reportIncompatibleMethodOverride]
        self,
        messages: Any,
        tools: Any = None,
        callbacks: Any = None,
        available_functions: Any = None,
        from_task: Any = None,
        from_agent: Any = None,
        response_model: Any = None,
    ) -> Any:
        snapshot = list(messages) if isinstance(messages, list) else messages
        self.calls.append({"messages": snapshot, "tools": tools})
        if not self.script:
            raise ValueError("ScriptedLLM has an empty script")
        step = self.script[min(self._position, len(self.script) - 1)]
        self._position += 1
        # Like CrewAI's own providers: LLM call events around the call (tracing sees them).
        with llm_call_context():
            self._emit_call_started_event(
                messages=snapshot, tools=tools, from_task=from_task, from_agent=from_agent
            )
            try:
                step = self._answer(step, snapshot, tools, from_task, from_agent)
            except BaseException as exc:
                self._emit_call_failed_event(
                    type(exc).__name__, from_task=from_task, from_agent=from_agent
                )
                raise
            kind = LLMCallType.LLM_CALL if isinstance(step, str) else LLMCallType.TOOL_CALL
            self._emit_call_completed_event(
                step, kind, from_task=from_task, from_agent=from_agent, messages=snapshot
            )
        return step

    def _answer(self, step: Any, snapshot: Any, tools: Any, from_task: Any, from_agent: Any) -> Any:
        if self.delay:
            time.sleep(self.delay)
        if callable(step) and not isinstance(step, type):
            step = step(snapshot, tools)
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, str) and self.stream:
            words = step.split(" ")
            for i, word in enumerate(words):
                chunk = word if i == len(words) - 1 else word + " "
                self._emit_stream_chunk_event(chunk, from_task=from_task, from_agent=from_agent)
        return step

    async def acall(self, *args: Any, **kwargs: Any) -> Any:  # pyright: ignore[reportIncompatibleMethodOverride]
        return self.call(*args, **kwargs)
