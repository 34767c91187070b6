"""The A2A demo: a CrewAI crew asks a LangChain chain for help, over A2A.

    python3 dev.py demo                  # or, once set up: uv run python examples/demo.py

1. a2a-langchain serves a LangChain chain (a weather desk) as an A2A agent on localhost;
2. a2a-crewai reads that agent's card and turns it into a CrewAI tool;
3. a CrewAI crew (a trip planner) calls the tool, that is the weather desk, over A2A,
   and writes its plan.

It runs offline: both frameworks use scripted stand-in models. With OPENAI_API_KEY set,
both use a real OpenAI model instead (OPENAI_MODEL, default gpt-4o-mini); the chain then
uses langchain-openai when it is installed, else the openai package directly.
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()  # the wait the user sees includes importing the frameworks

import asyncio  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402

from a2a_crewai import offline_crewai  # noqa: E402

offline_crewai()  # before CrewAI is imported: no telemetry, no prompts, storage in a temp folder

from a2a_crewai import remote_agent_tool  # noqa: E402
from a2a_langchain import running_server  # noqa: E402
from crewai import Agent, Crew, Task  # noqa: E402
from crewai.hooks import after_tool_call, before_tool_call  # noqa: E402
from langchain_core.output_parsers import StrOutputParser  # noqa: E402
from langchain_core.prompts import ChatPromptTemplate  # noqa: E402

CITY = sys.argv[1] if len(sys.argv) > 1 else "Lisbon"
REAL = bool(os.environ.get("OPENAI_API_KEY"))
MODEL = os.environ.get("OPENAI_MODEL", "gpt-4o-mini")


# -- the LangChain side: a chain, served over A2A -------------------------------------------


def weather_chain() -> Any:
    """prompt | model | parser: an ordinary LangChain chain."""
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "You are a weather desk. Answer in one short sentence."),
            ("human", "{question}"),
        ]
    )
    return prompt | chain_model() | StrOutputParser()


def chain_model() -> Any:
    if not REAL:
        from langchain_core.language_models import FakeListChatModel

        return FakeListChatModel(responses=["Sunny and 24 °C, with a light breeze after 3 pm."])
    try:
        from langchain_openai import (  # pyright: ignore[reportMissingImports]
            ChatOpenAI,  # pip install langchain-openai
        )
    except ImportError:
        return openai_directly()
    return ChatOpenAI(model=MODEL)


def openai_directly() -> Any:
    """The OpenAI model through the openai package (CrewAI installs it) as a Runnable."""
    from langchain_core.messages import AIMessage
    from langchain_core.prompt_values import PromptValue
    from langchain_core.runnables import RunnableLambda
    from openai import OpenAI

    def ask(prompt: PromptValue) -> AIMessage:
        roles = {"system": "system", "human": "user", "ai": "assistant"}
        messages: Any = [{"role": roles[m.type], "content": m.text} for m in prompt.to_messages()]
        reply = OpenAI().chat.completions.create(model=MODEL, messages=messages)
        return AIMessage(content=reply.choices[0].message.content or "")

    return RunnableLambda(ask)


# -- the CrewAI side: a crew that uses the remote agent as a tool ----------------------------


def trip_crew(weather_tool: Any) -> Crew:
    planner = Agent(
        role="Trip planner",
        goal="Plan a pleasant day out, checking the weather with the weather desk first",
        backstory="Plans days around the weather.",
        tools=[weather_tool],
        llm=crew_model(weather_tool.name),
    )
    task = Task(
        description="Plan a day out in {city} tomorrow. Ask the weather desk about the weather.",
        expected_output="A three-line plan that fits the weather",
        agent=planner,
    )
    return Crew(agents=[planner], tasks=[task])


def crew_model(tool_name: str) -> Any:
    if REAL:
        from crewai import LLM

        return LLM(model=MODEL)
    from a2a_crewai.testing import ScriptedLLM, tool_call, tool_result_text

    def plan(messages: Any, tools: Any) -> str:
        weather = tool_result_text(messages)
        return (
            f"Morning: a walk through the old town of {CITY} ({weather})\n"
            "Afternoon: lunch on a terrace, out of the breeze\n"
            "Evening: sunset from a viewpoint"
        )

    question = f"What will the weather be like in {CITY} tomorrow?"
    return ScriptedLLM(model="scripted", script=[tool_call(tool_name, message=question), plan])


# -- printing the conversation -------------------------------------------------------------


@before_tool_call
def show_question(context: Any) -> None:
    print(f"   {context.agent.role} -> {context.tool_name}: {context.tool_input.get('message')}")


@after_tool_call
def show_answer(context: Any) -> None:
    print(f"   {context.tool_name} -> {context.agent.role}: {context.tool_result}")


# -- the demo ------------------------------------------------------------------------------


async def main() -> None:
    imported = time.perf_counter() - STARTED
    mode = f"real model: {MODEL}" if REAL else "offline: scripted stand-in models"
    print(f"A2A demo: a CrewAI crew asks a LangChain chain for help, over A2A ({mode})\n")

    async with running_server(weather_chain(), name="Weather desk") as desk:
        print("1. a2a-langchain serves a LangChain chain as an A2A agent")
        print(f"   Weather desk at {desk.url} (card: {desk.url}/.well-known/agent-card.json)\n")

        # CrewAI tools are synchronous: fetch the card and run the crew in worker
        # threads, so that this event loop keeps serving the weather desk meanwhile.
        tool = await asyncio.to_thread(remote_agent_tool, desk.url)
        print("2. a2a-crewai reads the card and makes the agent a CrewAI tool")
        print(f"   tool {tool.name!r}: {tool.description.splitlines()[0]}\n")

        print(f"3. The crew plans a day in {CITY}, asking the weather desk over A2A")
        output = await asyncio.to_thread(trip_crew(tool).kickoff, inputs={"city": CITY})
        tool.close()

    print("\n4. The crew's result")
    for line in str(output).splitlines():  # a CrewOutput prints as the final answer
        print(f"   {line}")
    took = time.perf_counter() - STARTED
    print(
        f"\nDone in {took:.1f} s since the demo started ({imported:.1f} s of it loading"
        " CrewAI and LangChain); the server is stopped."
    )


if __name__ == "__main__":
    asyncio.run(main())
