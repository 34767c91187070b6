"""The core's adapter conformance suite, run against LangChain objects served by this package.

Three shapes of LangChain program, all offline and deterministic:

- ``TestChainConformance``: LCEL chains (``prompt | model | parser``, ``RunnableLambda``);
- ``TestToolAgentConformance``: a chat-model agent that calls tools (a LangGraph agent
  loop with a checkpointer); its ``ask`` tool pauses with ``interrupt()``;
- ``TestGraphConformance``: a LangGraph graph whose node interrupts, over HTTP+JSON
  on a real socket.
"""

from __future__ import annotations

import asyncio
from typing import Any

from a2a_core.testing import AdapterConformance, Scenario
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from lc_fakes import EchoChatModel, FailingChatModel, ToolLoopModel, agent_graph


def _slow_lambda(scenario: Scenario) -> RunnableLambda[Any, Any]:
    async def slow(text: str) -> str:
        try:
            scenario.probe.mark_started()
            await asyncio.Event().wait()
            return text
        finally:
            scenario.probe.mark_stopped()

    return RunnableLambda(slow, name="slow")


class TestChainConformance(AdapterConformance):
    entry_point_name = "langchain"
    supports_multi_turn = False  # an LCEL chain cannot pause for input (graphs below can)

    def make_agent(self, scenario: Scenario) -> object | None:
        prompt = ChatPromptTemplate.from_messages([("system", "Repeat."), ("human", "{text}")])
        match scenario.name:
            case "echo":
                return prompt | EchoChatModel() | StrOutputParser()
            case "stream":
                return prompt | EchoChatModel() | StrOutputParser()
            case "slow":
                return _slow_lambda(scenario)
            case "fail":
                return prompt | FailingChatModel(secret=scenario.secret) | StrOutputParser()
            case "ask":
                return None


class TestToolAgentConformance(AdapterConformance):
    entry_point_name = "langchain"

    def make_agent(self, scenario: Scenario) -> object | None:
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.types import interrupt

        @tool
        def echo(text: str) -> str:
            """Repeat the text."""
            return f"echo: {text}"

        @tool
        def ask_user(text: str) -> str:
            """Ask the user what to echo."""
            answer = interrupt("What should I echo?")
            return f"echo: {answer}"

        @tool
        async def wait_forever(text: str) -> str:
            """Work until cancelled."""
            try:
                scenario.probe.mark_started()
                await asyncio.Event().wait()
                return text
            finally:
                scenario.probe.mark_stopped()

        match scenario.name:
            case "echo" | "stream":
                return agent_graph(ToolLoopModel(tool_name="echo"), [echo])
            case "ask":
                return agent_graph(
                    ToolLoopModel(tool_name="ask_user"), [ask_user], checkpointer=InMemorySaver()
                )
            case "slow":
                return agent_graph(ToolLoopModel(tool_name="wait_forever"), [wait_forever])
            case "fail":
                return agent_graph(FailingChatModel(secret=scenario.secret), [echo])


class TestGraphConformance(AdapterConformance):
    entry_point_name = "langchain"
    binding = "HTTP+JSON"
    over_socket = True

    def make_agent(self, scenario: Scenario) -> object | None:
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.graph import END, START, MessagesState, StateGraph
        from langgraph.types import interrupt

        model = EchoChatModel()

        async def answer(state: MessagesState) -> dict[str, Any]:
            return {"messages": [await model.ainvoke(state["messages"])]}

        async def ask(state: MessagesState) -> dict[str, Any]:
            reply = interrupt({"question": "What should I echo?"})
            return {"messages": [AIMessage(content=f"echo: {reply}")]}

        async def slow(state: MessagesState) -> dict[str, Any]:
            try:
                scenario.probe.mark_started()
                await asyncio.Event().wait()
                return {}
            finally:
                scenario.probe.mark_stopped()

        async def fail(state: MessagesState) -> dict[str, Any]:
            raise ValueError(f"graph node failed: {scenario.secret}")

        node = {"echo": answer, "stream": answer, "ask": ask, "slow": slow, "fail": fail}[
            scenario.name
        ]
        graph = StateGraph(MessagesState)
        graph.add_node("node", node)
        graph.add_edge(START, "node")
        graph.add_edge("node", END)
        return graph.compile(checkpointer=InMemorySaver())
