"""Deterministic, offline LangChain pieces for the a2a-langchain tests.

- ``EchoChatModel``: answers ``prefix + <last human text>``, streaming word by word;
- ``RecallChatModel``: answers with every human text it was given (what it remembers);
- ``ToolLoopModel``: asks for ``tool_name`` with the last human text, then answers
  with the tool's result (streamed), the shape of a real tool-calling agent turn;
- ``ScriptedModel``: replays a list of messages (tool calls included), streaming text;
- ``agent_graph``: the classic agent loop (model -> tools -> model) as a StateGraph.

Every model here is a pure function of its input messages, so one instance serves
concurrent runs.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool


def last_human(messages: Sequence[BaseMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message.text
    return ""


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"(\s)", text) if t]


class _StreamingFake(BaseChatModel):
    """A fake chat model: ``reply(messages)`` decides, ``_stream`` streams it word by word."""

    def reply(self, messages: Sequence[BaseMessage]) -> AIMessage:
        raise NotImplementedError

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, Any]:  # type: ignore[override]
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.reply(messages))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        message = self.reply(messages)
        for token in _tokens(message.text):
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=token))
            if run_manager is not None:
                run_manager.on_llm_new_token(token, chunk=chunk)
            yield chunk
        for index, call in enumerate(message.tool_calls):
            yield ChatGenerationChunk(
                message=AIMessageChunk(
                    content="",
                    tool_call_chunks=[
                        {
                            "name": call["name"],
                            "args": json.dumps(call["args"]),
                            "id": call["id"],
                            "index": index,
                        }
                    ],
                )
            )

    @property
    def _llm_type(self) -> str:
        return "a2a-langchain-test-fake"


class EchoChatModel(_StreamingFake):
    """Answers ``prefix`` + the last human message's text."""

    prefix: str = "echo: "

    def reply(self, messages: Sequence[BaseMessage]) -> AIMessage:
        return AIMessage(content=self.prefix + last_human(messages))


class RecallChatModel(_StreamingFake):
    """Answers with every human message it was given, joined by `` | `` (what it remembers)."""

    def reply(self, messages: Sequence[BaseMessage]) -> AIMessage:
        heard = [m.text for m in messages if isinstance(m, HumanMessage)]
        return AIMessage(content="heard: " + " | ".join(heard))


class FailingChatModel(_StreamingFake):
    """Raises with ``secret`` in the message (after streaming nothing)."""

    secret: str = "secret"

    def reply(self, messages: Sequence[BaseMessage]) -> AIMessage:
        raise RuntimeError(f"model exploded: {self.secret}")


class ToolLoopModel(_StreamingFake):
    """First turn: call ``tool_name`` with the user's text; after the tool: say its result."""

    tool_name: str = "echo"
    arg_name: str = "text"
    preamble: str = ""

    def reply(self, messages: Sequence[BaseMessage]) -> AIMessage:
        last = messages[-1] if messages else None
        if isinstance(last, ToolMessage):
            return AIMessage(content=last.text)
        call_id = f"call-{abs(hash(last_human(messages))) % 10**8}-{len(messages)}"
        return AIMessage(
            content=self.preamble,
            tool_calls=[
                {
                    "name": self.tool_name,
                    "args": {self.arg_name: last_human(messages)},
                    "id": call_id,
                }
            ],
        )


class ScriptedModel(_StreamingFake):
    """Replays ``script`` in order, one message per call (thread-safe)."""

    script: list[AIMessage]
    calls: list[list[BaseMessage]] = []
    _lock: Any = None
    _index: int = 0

    def model_post_init(self, context: Any) -> None:
        self._lock = threading.Lock()
        self.calls = []

    def reply(self, messages: Sequence[BaseMessage]) -> AIMessage:
        assert self._lock is not None
        with self._lock:
            self.calls.append(list(messages))
            if self._index >= len(self.script):
                raise AssertionError(f"ScriptedModel ran out of replies after {self._index}")
            message = self.script[self._index]
            self._index += 1
            return message


def agent_graph(
    model: BaseChatModel,
    tools: Sequence[BaseTool | Callable[..., Any]],
    *,
    checkpointer: Any = None,
    name: str | None = None,
) -> Any:
    """model -> (tool calls?) tools -> model ... -> end, as a compiled StateGraph."""
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    bound = model.bind_tools(list(tools))

    async def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", call_model)
    graph.add_node("tools", ToolNode(list(tools)))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    if name is not None:
        return graph.compile(checkpointer=checkpointer, name=name)
    return graph.compile(checkpointer=checkpointer)
