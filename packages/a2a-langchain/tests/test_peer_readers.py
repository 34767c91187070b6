"""A served LangChain chain that streams token by token: ADK and CrewAI get the whole answer.

Their requests and their reading are reproduced (``a2a_core.testing.peers``;
their packages need environments of their own); real sockets on 127.0.0.1.
Before, ADK kept the last token only and CrewAI's default mode saw nothing.
"""

from __future__ import annotations

from typing import Any

from a2a_core.testing.peers import (
    adk_request,
    adk_session_texts,
    crewai_default_request,
    crewai_history_texts,
    stream_results,
)
from a2a_langchain import running_server
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from lc_fakes import EchoChatModel

QUESTION = "what is the tallest mountain on earth"
ANSWER = f"echo: {QUESTION}"


def streaming_chain() -> Any:
    """prompt | a fake chat model streaming word by word | parser (a served chain's shape)."""
    prompt = ChatPromptTemplate.from_messages([("human", "{text}")])
    return prompt | EchoChatModel() | StrOutputParser()


async def test_adk_and_crewai_read_a_streamed_chains_whole_answer() -> None:
    async with running_server(streaming_chain()) as server:
        adk_events = await stream_results(server.url, adk_request(QUESTION))
        crewai_events = await stream_results(server.url, crewai_default_request(QUESTION))
    assert sum("artifactUpdate" in e for e in adk_events) > 5  # it really streams
    assert adk_session_texts(adk_events) == [ANSWER, ANSWER]
    assert crewai_history_texts(crewai_events) == [ANSWER]
