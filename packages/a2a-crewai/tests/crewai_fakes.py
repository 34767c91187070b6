"""Offline CrewAI pieces for the tests: scripted models, tools and small crews.

``ScriptedLLM`` answers from a script: text, OpenAI-style tool calls, an
exception to raise, or a function of the messages (for answers that depend
on the request). When CrewAI streams (``llm.stream``), text answers are
emitted word by word as stream chunk events, like a real streaming model.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from crewai import Agent, BaseLLM, Crew, Task
from crewai.events import crewai_event_bus
from crewai.events.types.crew_events import CrewKickoffFailedEvent
from crewai.llms.base_llm import llm_call_context
from crewai.tools import BaseTool
from pydantic import BaseModel, Field, PrivateAttr

Step = Any  # str | list[dict] | BaseException | Callable[[list[dict], list | None], Any]


def tool_call(name: str, **arguments: Any) -> list[dict[str, Any]]:
    """One OpenAI-style tool call, as a model would return it."""
    return [
        {
            "id": f"call_{name}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
    ]


def last_user_text(messages: Any) -> str:
    if isinstance(messages, str):
        return messages
    for message in reversed(messages):
        if message.get("role") == "user":
            return str(message.get("content") or "")
    return ""


def tool_result_text(messages: Any) -> str:
    """The content of the latest tool result in the conversation."""
    for message in reversed(messages):
        if message.get("role") == "tool":
            return str(message.get("content") or "")
    return ""


class ScriptedLLM(BaseLLM):
    """A model that answers from ``script`` (the last step repeats)."""

    script: list[Any] = Field(default_factory=list)
    delay: float = 0.0
    calls: list[dict[str, Any]] = Field(default_factory=list)
    _i: int = PrivateAttr(default=0)

    def supports_function_calling(self) -> bool:
        return True

    def supports_stop_words(self) -> bool:
        return False

    def get_context_window_size(self) -> int:
        return 8192

    def get_input_tokens_count(
        self, messages: Any, tools: Any = None, response_model: Any = None
    ) -> int:
        return 0

    def call(  # type: ignore[override]
        self,
        messages: Any,
        tools: Any = None,
        callbacks: Any = None,
        available_functions: Any = None,
        from_task: Any = None,
        from_agent: Any = None,
        response_model: Any = None,
    ) -> Any:
        self.calls.append({"messages": messages, "tools": tools})
        step = self.script[min(self._i, len(self.script) - 1)]
        self._i += 1
        if self.delay:
            time.sleep(self.delay)
        if callable(step) and not isinstance(step, type):
            step = step(messages, tools)
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, str) and self.stream:
            with llm_call_context():
                words = step.split(" ")
                for i, word in enumerate(words):
                    chunk = word if i == len(words) - 1 else word + " "
                    self._emit_stream_chunk_event(chunk, from_task=from_task, from_agent=from_agent)
        return step

    async def acall(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return self.call(*args, **kwargs)


# -- echo: answers with what the task was given ---------------------------------------

_MARKED = re.compile(r"<<(.*?)>>", re.DOTALL)
_FEEDBACK = re.compile(r"User feedback: (.*?)\nInstructions:", re.DOTALL)


def echo_step(prefix: str = "echo: ") -> Callable[[Any, Any], str]:
    def answer(messages: Any, tools: Any) -> str:
        text = last_user_text(messages)
        found = _FEEDBACK.search(text) or _MARKED.search(text)
        return prefix + (found.group(1) if found else text)

    return answer


def asking_step(
    question: str = "What should I echo?", prefix: str = "echo: "
) -> Callable[[Any, Any], str]:
    """First a question (as the draft answer), then an echo of the human feedback."""

    def answer(messages: Any, tools: Any) -> str:
        found = _FEEDBACK.search(last_user_text(messages))
        return prefix + found.group(1) if found else question

    return answer


def echo_crew(
    *,
    stream: bool = False,
    human_input: bool = False,
    name: str = "Echo crew",
    llm: BaseLLM | None = None,
) -> Crew:
    """One agent, one task: repeats the ``input`` (marked ``<<...>>`` in the task)."""
    model = llm or ScriptedLLM(
        model="echo-fake", script=[asking_step() if human_input else echo_step()]
    )
    agent = Agent(
        role="Echo",
        goal="Repeat what you are given",
        backstory="A careful parrot.",
        llm=model,
        max_iter=3,
        max_retry_limit=0,
    )
    task = Task(
        description="Repeat exactly: <<{input}>>",
        expected_output="The same text",
        agent=agent,
        human_input=human_input,
    )
    return Crew(agents=[agent], tasks=[task], stream=stream, name=name)


# -- tools ------------------------------------------------------------------------------


class AdderArgs(BaseModel):
    a: int
    b: int


class AdderTool(BaseTool):
    name: str = "adder"
    description: str = "Add two integers."
    args_schema: type[BaseModel] = AdderArgs
    runs: list[tuple[int, int]] = Field(default_factory=list)

    def _run(self, a: int, b: int) -> str:
        self.runs.append((a, b))
        return str(a + b)


class TickArgs(BaseModel):
    n: int = 0


class TickTool(BaseTool):
    """A short synchronous step, reporting to a callback (to watch a crew that never ends)."""

    name: str = "tick"
    description: str = "Wait a moment."
    args_schema: type[BaseModel] = TickArgs
    seconds: float = 0.02
    on_tick: Any = None
    count: int = 0
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def _run(self, n: int = 0) -> str:
        with self._lock:
            self.count += 1
        if self.on_tick is not None:
            self.on_tick()
        time.sleep(self.seconds)
        return "tick"


def ticking_crew(
    name: str, on_tick: Callable[[], None] | None = None, seconds: float = 0.02
) -> tuple[Crew, TickTool]:
    """A crew whose agent uses a tool forever (until canceled)."""
    tool = TickTool(on_tick=on_tick, seconds=seconds)
    llm = ScriptedLLM(model="tick-fake", script=[tool_call("tick", n=1)])
    agent = Agent(
        role="Ticker",
        goal="Keep ticking",
        backstory="Never stops.",
        llm=llm,
        tools=[tool],
        max_iter=100_000,
        max_retry_limit=0,
    )
    task = Task(description="Tick forever. {input}", expected_output="Nothing", agent=agent)
    return Crew(agents=[agent], tasks=[task], name=name), tool


# -- crews that report when they stop ---------------------------------------------------

_STOP_WATCHERS: dict[str, Callable[[], None]] = {}
_installed = False


def _on_kickoff_failed(source: Any, event: Any) -> None:
    callback = _STOP_WATCHERS.pop(str(event.crew_name), None)
    if callback is not None:
        callback()


def when_crew_fails(crew_name: str, callback: Callable[[], None]) -> None:
    """Call ``callback`` when a crew named ``crew_name`` stops with an error (or a cancel)."""
    global _installed
    if not _installed:
        crewai_event_bus.on(CrewKickoffFailedEvent)(_on_kickoff_failed)
        _installed = True
    _STOP_WATCHERS[crew_name] = callback
