"""Wrap my chain: a LangChain chain served as an A2A agent in one call.

Run it (offline: a small built-in model that answers from the question)::

    python examples/langchain_agent.py                 # serves on http://localhost:8000
    python examples/langchain_agent.py --ask "What is A2A?"   # serve, ask once, stop

With ``OPENAI_API_KEY`` set and ``langchain-openai`` installed
(``pip install langchain-openai``), the chain uses a real chat model
(``OPENAI_MODEL``, default ``gpt-4o-mini``). Any other LangChain chat model works
the same way: change ``chat_model()``.

Then talk to it from another terminal::

    a2a send http://localhost:8000 "What is the Agent2Agent protocol?"
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Iterator
from typing import Any

from a2a_langchain import serve
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.prompts import ChatPromptTemplate


def build_chain() -> Any:
    """The chain: any LangChain Runnable would do (an agent, a LangGraph graph...)."""
    prompt = ChatPromptTemplate.from_messages(
        [("system", "You are a concise, friendly assistant."), ("human", "{question}")]
    )
    return prompt | chat_model() | StrOutputParser()


def main() -> None:
    args = parse_args()
    if args.ask:
        asyncio.run(ask_once(args.ask))
        return
    # The whole integration: one call. The card, streaming, cancellation and
    # multi-turn handling come from the chain itself.
    serve(build_chain(), name="Helper", description="Answers questions", port=args.port)


# -- the model: a real one when configured, else an offline stand-in -----------------------


def chat_model() -> BaseChatModel:
    if os.environ.get("OPENAI_API_KEY"):
        try:
            from langchain_openai import ChatOpenAI  # pyright: ignore[reportMissingImports]
        except ImportError:
            print("OPENAI_API_KEY is set but langchain-openai is not installed: offline model")
        else:
            model: BaseChatModel = ChatOpenAI(model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"))
            return model
    return OfflineModel()


class OfflineModel(BaseChatModel):
    """Answers from the question, word by word, without any network (for the demo)."""

    def _reply(self, messages: list[BaseMessage]) -> str:
        question = messages[-1].text if messages else ""
        return f"(offline model) You asked: {question!r}. Set OPENAI_API_KEY for real answers."

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        message = AIMessage(content=self._reply(messages))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        words = self._reply(messages).split(" ")
        for i, word in enumerate(words):
            text = word if i == len(words) - 1 else word + " "
            yield ChatGenerationChunk(message=AIMessageChunk(content=text))

    @property
    def _llm_type(self) -> str:
        return "offline-demo"


# -- --ask: serve in the background, ask once with the A2A client, stop --------------------------


async def ask_once(question: str) -> str:
    """Serve the chain on a free port, stream one answer to stdout, stop; the answer."""
    from a2a_core.client import A2AClient
    from a2a_core.types import TaskArtifactUpdateEvent
    from a2a_langchain import running_server

    async with (
        running_server(build_chain(), name="Helper", description="Answers questions") as server,
        await A2AClient.connect(server.url) as client,
    ):
        print(f"Agent {client.card.name if client.card else '?'} at {server.url}")
        async with client.stream(question) as events:
            async for event in events:
                if isinstance(event, TaskArtifactUpdateEvent):
                    print("".join(p.text or "" for p in event.artifact.parts), end="", flush=True)
            result = await events.result()
        print()
        return result.text


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Serve a LangChain chain as an A2A agent.")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on")
    parser.add_argument("--ask", metavar="QUESTION", help="serve, ask QUESTION once, and stop")
    return parser.parse_args()


if __name__ == "__main__":
    main()
