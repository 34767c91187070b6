"""Offline CrewAI pieces for the tests: small crews and tools around ``ScriptedLLM``."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import Any

from a2a_crewai.testing import ScriptedLLM, last_user_text, tool_call, tool_result_text
from crewai import Agent, BaseLLM, Crew, Task
from crewai.events import crewai_event_bus
from crewai.events.types.crew_events import CrewKickoffFailedEvent
from crewai.tools import BaseTool
from pydantic import BaseModel, Field, PrivateAttr

__all__ = [
    "AdderTool",
    "ScriptedLLM",
    "TickTool",
    "asking_step",
    "echo_crew",
    "echo_step",
    "last_user_text",
    "report_crew",
    "ticking_crew",
    "tool_call",
    "tool_echo_crew",
    "tool_result_text",
    "when_crew_fails",
]

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


class PrefixArgs(BaseModel):
    text: str


class PrefixTool(BaseTool):
    """Puts ``echo: `` in front of a text (the echo crew's tool)."""

    name: str = "prefixer"
    description: str = "Prefix a text with 'echo: '."
    args_schema: type[BaseModel] = PrefixArgs

    def _run(self, text: str) -> str:
        return f"echo: {text}"


def tool_echo_crew(*, stream: bool = False) -> Crew:
    """The echo crew, done with a tool: the model calls ``prefixer``, then answers its result."""

    def call_the_tool(messages: Any, tools: Any) -> Any:
        found = _MARKED.search(last_user_text(messages))
        return tool_call("prefixer", text=found.group(1) if found else "")

    model = ScriptedLLM(
        model="tool-echo-fake",
        script=[call_the_tool, lambda messages, tools: tool_result_text(messages)],
    )
    agent = Agent(
        role="Echo",
        goal="Repeat what you are given, with the prefixer",
        backstory="Uses its tool.",
        llm=model,
        tools=[PrefixTool()],
        max_iter=3,
        max_retry_limit=0,
    )
    task = Task(description="Repeat exactly: <<{input}>>", expected_output="The text", agent=agent)
    return Crew(agents=[agent], tasks=[task], stream=stream, name="Tool echo crew")


# -- a two-task crew with a tool ----------------------------------------------------------


def report_crew(*, stream: bool = False) -> tuple[Crew, AdderTool]:
    """Two agents: one adds with a tool, the other writes a report about ``{topic}``."""
    adder = AdderTool()

    def sum_answer(messages: Any, tools: Any) -> str:
        return f"The sum is {tool_result_text(messages)}."

    def report(messages: Any, tools: Any) -> str:
        text = last_user_text(messages)
        topic = re.search(r"report about (.+?)\.", text)
        fact = re.search(r"(The sum is \d+\.)", text)
        return f"Report on {topic.group(1) if topic else '?'}: {fact.group(1) if fact else '?'}"

    analyst = Agent(
        role="Analyst",
        goal="Add numbers",
        backstory="Precise.",
        llm=ScriptedLLM(model="analyst", script=[tool_call("adder", a=2, b=3), sum_answer]),
        tools=[adder],
        max_retry_limit=0,
    )
    writer = Agent(
        role="Writer",
        goal="Write reports",
        backstory="Concise.",
        llm=ScriptedLLM(model="writer", script=[report]),
        max_retry_limit=0,
    )
    tasks = [
        Task(
            description="Add 2 and 3 with the adder.",
            expected_output="The sum",
            agent=analyst,
            name="Add",
        ),
        Task(
            description="Write a report about {topic}.",
            expected_output="A one-line report",
            agent=writer,
            name="Report",
        ),
    ]
    return Crew(agents=[analyst, writer], tasks=tasks, name="Reporting crew", stream=stream), adder
