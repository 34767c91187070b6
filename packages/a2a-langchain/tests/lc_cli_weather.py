"""A graph for ``a2a serve lc_cli_weather.py:weather -o checkpointer=URL`` (two processes).

It asks "Which city?" with ``interrupt()``; the answer names the instance that
finished it (``A2A_TEST_LABEL``) and the first message of the conversation, so
a resume from another process's checkpoint can be told from a restart.
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt

LABEL = os.environ.get("A2A_TEST_LABEL", "?")


async def ask(state: MessagesState) -> dict[str, Any]:
    city = interrupt("Which city?")
    return {"messages": [AIMessage(content=f"city: {city}")]}


async def answer(state: MessagesState) -> dict[str, Any]:
    first = state["messages"][0].text
    city = state["messages"][-1].text.removeprefix("city: ")
    return {"messages": [AIMessage(content=f"{LABEL}: sunny in {city} (you asked {first!r})")]}


_builder = StateGraph(MessagesState)
_builder.add_node("ask", ask)
_builder.add_node("answer", answer)
_builder.add_edge(START, "ask")
_builder.add_edge("ask", "answer")
_builder.add_edge("answer", END)
weather = _builder.compile(checkpointer=InMemorySaver(), name="Weather")
