"""A served chain's tokens reach every reader when the model makes them (real sockets).

``prompt | slow streaming chat model | parser`` on two instances sharing a Redis
or PostgreSQL store: the streaming client on A, a subscriber on A and one on B
each get every token within 150 ms of the model producing it (before, each
token waited for the next one, a full model step). The stored task holds the
whole answer; every stream ends with one update carrying all of it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from a2a_core.testing.timing import SHARED_STORES, Produced, chunk_arrivals, shared_store
from a2a_core.types import TaskState
from a2a_langchain import LangChainAgent
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.prompts import ChatPromptTemplate
from pydantic import ConfigDict

pytestmark = pytest.mark.timeout(60)

BOUND = 0.150
"""How late a token may reach a reader (seconds after the model made it): half the
0.3 s a token waited for the next before, with room for a loaded two-core box."""
TOKENS = ["The ", "tallest ", "is ", "Everest."]
GAP = 0.3


class SlowChatModel(BaseChatModel):
    """Streams ``TOKENS``, one every ``GAP`` seconds, after ``gate`` opens; notes each."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    produced: Produced
    gate: asyncio.Event

    @property
    def _llm_type(self) -> str:
        return "slow-fake"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="".join(TOKENS)))])

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        await self.gate.wait()
        for n, token in enumerate(TOKENS):
            if n:
                await asyncio.sleep(GAP)
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=token))
            self.produced.mark(token)
            if run_manager is not None:
                await run_manager.on_llm_new_token(token, chunk=chunk)
            yield chunk


@pytest.mark.parametrize("kind", SHARED_STORES)
async def test_tokens_reach_every_reader_when_the_model_makes_them(kind: str) -> None:
    produced, gate = Produced(), asyncio.Event()
    prompt = ChatPromptTemplate.from_messages([("human", "{text}")])
    chain = prompt | SlowChatModel(produced=produced, gate=gate) | StrOutputParser()
    with shared_store(kind) as url:
        arrivals = await chunk_arrivals(LangChainAgent(chain), url, "tallest?", gate.set)
    whole = "".join(TOKENS)
    for reader, delays in arrivals.delays(produced).items():
        late = [round(d * 1000, 1) for d in delays if not 0 <= d <= BOUND]
        assert not late, f"{reader}: tokens arrived {late} ms after the model made them"
        end, _ = arrivals.updates[reader][-1]
        assert (end.append, end.last_chunk) == (False, True), reader
        assert end.artifact.parts[0].text == whole, reader
    assert arrivals.stored.status.state is TaskState.COMPLETED
    assert [[p.text for p in a.parts] for a in arrivals.stored.artifacts] == [[whole]]
