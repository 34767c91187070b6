"""Answers every client can read (real sockets on 127.0.0.1).

- a chain whose model streams token by token is read as whole text by the
  official SDK client, in 1.0 and in its 0.3 compat mode, from a blocking
  send and from GetTask;
- a chain with several inputs says on its card how to send them, and a
  missing one ends the task FAILED with a message naming it.
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from a2a_core.client import A2AClient
from a2a_core.types import Part, TaskState
from a2a_langchain import running_server
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from lc_fakes import EchoChatModel

QUESTION = "what is the tallest mountain on earth"
ANSWER = f"echo: {QUESTION}"


def streaming_chain() -> Any:
    """prompt | a fake chat model streaming word by word | parser."""
    prompt = ChatPromptTemplate.from_messages([("human", "{text}")])
    return prompt | EchoChatModel() | StrOutputParser()


def two_input_chain() -> Any:
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer in {language}."), ("human", "{question}")]
    )
    return prompt | EchoChatModel() | StrOutputParser()


async def sdk_client(url: str, http: httpx.AsyncClient, version: str) -> Any:
    """The official SDK's client for ``url``, speaking ``version`` (1.0, or 0.3 compat)."""
    from a2a.client import ClientConfig, ClientFactory
    from a2a.client.card_resolver import A2ACardResolver
    from a2a.types import AgentCard

    card = await A2ACardResolver(http, url).get_agent_card()
    only = AgentCard()
    only.CopyFrom(card)
    kept = [i for i in card.supported_interfaces if i.protocol_version == version]
    assert kept, f"the card offers no {version} interface"
    del only.supported_interfaces[:]
    only.supported_interfaces.extend(kept)
    return ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(only)


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_the_sdk_client_reads_a_streamed_answer_as_whole_text(version: str) -> None:
    from a2a.types import GetTaskRequest, Message, Role, SendMessageRequest
    from a2a.types import Part as SdkPart

    async with running_server(streaming_chain()) as server, httpx.AsyncClient(timeout=30) as http:
        # The model really streams token by token: a stream shows the chunks.
        async with await A2AClient.connect(server.url) as ours, ours.stream(QUESTION) as events:
            chunks = [e async for e in events if hasattr(e, "artifact")]
        assert len(chunks) > 5
        client = await sdk_client(server.url, http, version)
        try:
            request = SendMessageRequest(
                message=Message(
                    role=Role.ROLE_USER,
                    message_id=str(uuid.uuid4()),
                    parts=[SdkPart(text=QUESTION)],
                )
            )
            responses = [r async for r in client.send_message(request)]
            assert [r.WhichOneof("payload") for r in responses] == ["task"]
            task = responses[0].task
            assert [[p.text for p in a.parts] for a in task.artifacts] == [[ANSWER]]
            got = await client.get_task(GetTaskRequest(id=task.id))
            assert [[p.text for p in a.parts] for a in got.artifacts] == [[ANSWER]]
        finally:
            await client.close()


async def test_a_chain_with_several_inputs_describes_them_and_names_a_missing_one() -> None:
    async with (
        running_server(two_input_chain(), name="Polyglot") as server,
        await A2AClient.connect(server.url) as client,
    ):
        assert client.card is not None
        [skill] = client.card.skills
        assert "language, question" in skill.description
        assert "the message text fills question" in skill.description
        assert '{"language": "..."}' in skill.description
        assert skill.examples == ['{"language": "...", "question": "..."}']

        missing = await client.send("Where is Paris?")
        assert missing.state is TaskState.FAILED
        assert missing.text == (
            "This agent needs the inputs language: send them as a data part holding "
            'a JSON object, e.g. {"language": "..."}'
        )
        nothing = await client.send([Part(data={"tone": "calm"})])
        assert nothing.state is TaskState.FAILED
        assert "language, question" in nothing.text

        answered = await client.send(
            [Part(text="Where is Paris?"), Part(data={"language": "French"})]
        )
        assert answered.state is TaskState.COMPLETED
        assert answered.text == "echo: Where is Paris?"
