"""Agents and servers for the playground browser tests (and tools/playground_screenshots.py).

Every server runs on 127.0.0.1 in a daemon thread with its own event loop, so
the synchronous Playwright API drives the browser from the test's thread.

- ``helper_agent``: a core function agent: "ask" pauses for input and greets
  the answer, "slow" works until canceled, a data part is answered as data,
  a file is answered with the same file, anything else is echoed in Markdown.
- ``streaming_chain``: a LangChain chain (prompt | fake chat model | parser) whose
  model streams its answer word by word, a little apart, so the page shows it grow.
- ``sdk_app``: the official a2a-sdk serving a small scripted agent.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from typing import Any

CHROMIUM_ENV = "A2A_CHROMIUM"
"""Path of the Chromium binary (default: ``chromium`` on PATH, as Debian installs it)."""


def chromium_path() -> str | None:
    """The system Chromium the tests drive, or None when there is none."""
    given = os.environ.get(CHROMIUM_ENV)
    if given:
        return given if os.path.exists(given) else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


# -- agents ------------------------------------------------------------------------------


async def helper_agent(context: Any, updater: Any) -> Any:
    """Asks, waits, answers data with data and files with files (see the module docstring)."""
    from a2a_core.types import Part

    text = context.text.strip()
    if context.is_continuation:
        return f"Hello, **{text}**!"
    if text == "ask":
        await updater.require_input("What is your name?")
        return None
    if text == "slow":
        await updater.start_work("Working on something slow")
        await asyncio.sleep(120)
        return "too late"
    parts = context.message.parts
    data = [p.data for p in parts if p.data is not None]
    files = [p for p in parts if p.raw is not None]
    if data:
        return Part(data={"received": data[0]})
    if files:
        f = files[0]
        return Part(raw=f.raw, media_type=f.media_type, filename=f"echo-{f.filename}")
    await updater.start_work("Reading your message")
    return f"## You said\n\n*{text}*\n\n- a list item\n- `code` too"


def helper_card() -> Any:
    """The helper agent's card: skills with text and JSON examples."""
    from a2a_core import AgentCardBuilder

    return (
        AgentCardBuilder(
            "Helper", description="A small agent for trying the playground", version="1.0.0"
        )
        .skill(
            "talk",
            "Talk",
            "Echoes your words in Markdown; 'ask' asks you something, 'slow' takes forever",
            tags=["echo"],
            examples=["hello playground", "ask"],
        )
        .skill(
            "data",
            "Data",
            "Answers a data part with data",
            tags=["data"],
            examples=['{"city": "Porto", "days": 3}'],
            input_modes=["application/json"],
            output_modes=["application/json"],
        )
    )


STREAMED_WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "omega"]


def streaming_chain() -> Any:
    """prompt | a chat model streaming ``STREAMED_WORDS`` one by one | text parser."""
    from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
    from langchain_core.prompts import ChatPromptTemplate

    class SlowWords(BaseChatModel):
        """Streams the words with a pause between them (the page must show them arrive)."""

        pause: float = 0.25

        @property
        def _llm_type(self) -> str:
            return "slow-words"

        def _generate(self, messages: list[BaseMessage], *a: Any, **k: Any) -> ChatResult:
            text = " ".join(STREAMED_WORDS)
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

        async def _astream(
            self,
            messages: list[BaseMessage],
            stop: list[str] | None = None,
            run_manager: AsyncCallbackManagerForLLMRun | None = None,
            **kwargs: Any,
        ) -> AsyncIterator[ChatGenerationChunk]:
            for i, word in enumerate(STREAMED_WORDS):
                token = word if i == 0 else f" {word}"
                await asyncio.sleep(self.pause)
                chunk = ChatGenerationChunk(message=AIMessageChunk(content=token))
                if run_manager is not None:
                    await run_manager.on_llm_new_token(token, chunk=chunk)
                yield chunk

    prompt = ChatPromptTemplate.from_messages([("human", "{input}")])
    return (prompt | SlowWords() | StrOutputParser()).with_config(run_name="Word streamer")


def planning_crew() -> Any:
    """A CrewAI crew of two tasks with scripted models: a research step, then the plan.

    Its tasks' history ends with the crew's progress messages, not the question.
    """
    import warnings

    from a2a_crewai import offline_crewai

    offline_crewai()
    with warnings.catch_warnings():  # CrewAI's import warns (deprecations, ImportWarning)
        warnings.simplefilter("ignore")
        from a2a_crewai.testing import ScriptedLLM
        from crewai import Agent, Crew, Task

    def agent(role: str, answer: str) -> Any:
        model = ScriptedLLM(model="scripted", script=[lambda messages, tools: answer])
        return Agent(role=role, goal=role, backstory=role, llm=model, max_iter=2)

    researcher = agent("Researcher", "Notes: mild and sunny")
    planner = agent("Planner", "Plan: a walk by the river")
    return Crew(
        agents=[researcher, planner],
        tasks=[
            Task(description="Research {input}", expected_output="notes", agent=researcher),
            Task(description="Plan a day in {input}", expected_output="a plan", agent=planner),
        ],
        name="Trip crew",
    )


# -- servers ------------------------------------------------------------------------------


def sdk_app(port: int) -> Any:
    """An a2a-sdk server (JSON-RPC at /, HTTP+JSON at /rest): "ask" asks, else it echoes."""
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import (
        create_agent_card_routes,
        create_jsonrpc_routes,
        create_rest_routes,
    )
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types import (
        AgentCapabilities,
        AgentCard,
        AgentInterface,
        AgentSkill,
        Part,
        Task,
        TaskState,
        TaskStatus,
    )
    from starlette.applications import Starlette

    class Scripted(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            text = context.get_user_input()
            task_id, context_id = context.task_id or "", context.context_id or ""
            current = context.current_task
            if current is None:
                await event_queue.enqueue_event(
                    Task(
                        id=task_id,
                        context_id=context_id,
                        status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                        history=[context.message] if context.message else [],
                    )
                )
            updater = TaskUpdater(event_queue, task_id, context_id)
            if current is not None and current.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
                await updater.add_artifact([Part(text=f"Hello, {text}")], name="greeting")
                await updater.complete()
                return
            if text == "ask":
                await updater.requires_input(
                    updater.new_agent_message([Part(text="What is your name?")])
                )
                return
            await updater.start_work()
            await updater.add_artifact([Part(text=f"Echo: {text}")], name="echo")
            await updater.complete()

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()

    base = f"http://127.0.0.1:{port}"
    card = AgentCard(
        name="SDK agent",
        description="The official a2a-sdk serving a scripted agent",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=base + "/", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(
                url=base + "/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"
            ),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=Scripted(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/"),
        *create_rest_routes(handler, path_prefix="/rest"),
    ]
    return Starlette(routes=routes)
