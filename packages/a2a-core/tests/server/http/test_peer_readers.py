"""Every client gets the whole streamed answer of a function agent (real sockets).

An async generator agent streams its answer in chunks. Read by:
- Google ADK's ``RemoteA2aAgent`` and CrewAI's built-in delegation (default
  mode), their requests and reading reproduced (``a2a_core.testing.peers``):
  each has the whole answer (before, ADK kept the last chunk only and CrewAI
  nothing at all);
- the official SDK's client, 1.0 and 0.3: every chunk once while streaming,
  and the artifact whole when the updates are applied the SDK's own way;
- ours: the text once, whole.
With ``whole_answers=False`` (the switch) the stream carries every byte once,
and the two peers lose the answer again: what the docs say.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from a2a_core.client import A2AClient
from a2a_core.compose.serve import running_server
from a2a_core.server import ManagerConfig, RequestContext
from a2a_core.testing.peers import (
    adk_request,
    adk_session_texts,
    crewai_default_request,
    crewai_history_texts,
    stream_results,
)
from a2a_core.types import TaskArtifactUpdateEvent

CHUNKS = ["The tallest ", "mountain is ", "Everest."]
ANSWER = "".join(CHUNKS)


async def tokens(context: RequestContext) -> AsyncIterator[str]:
    """Streams its answer in three chunks."""
    for chunk in CHUNKS:
        await asyncio.sleep(0.01)
        yield chunk


@pytest.mark.parametrize("whole_answers", [True, False])
async def test_adk_and_crewai_read_the_whole_streamed_answer(whole_answers: bool) -> None:
    config = ManagerConfig(whole_answers=whole_answers)
    async with running_server(tokens, config=config) as server:
        adk = adk_session_texts(await stream_results(server.url, adk_request("tallest?")))
        crewai = crewai_history_texts(
            await stream_results(server.url, crewai_default_request("tallest?"))
        )
    if whole_answers:
        # ADK: the closing update and the completed status message; CrewAI: the latter.
        assert adk == [ANSWER, ANSWER]
        assert crewai == [ANSWER]
    else:
        assert adk == []  # the end is an empty part: ADK keeps nothing of the answer
        assert crewai == []


async def test_our_client_reads_it_whole_and_once() -> None:
    async with (
        running_server(tokens) as server,
        await A2AClient.connect(server.url) as client,
        client.stream("tallest?") as events,
    ):
        chunks = [e async for e in events if isinstance(e, TaskArtifactUpdateEvent)]
        assert events.text == ANSWER
        assert events.task is not None
        stored = await client.get_task(events.task.id)
    assert [c.artifact.parts[0].text for c in chunks] == [*CHUNKS, ANSWER]
    assert [[p.text for p in a.parts] for a in stored.artifacts] == [[ANSWER]]
    assert stored.status.message is not None
    assert stored.status.message.text == ANSWER  # what CrewAI reads
    assert [m.text for m in stored.history] == ["tallest?"]  # not repeated in the history


async def sdk_stream(url: str, http: httpx.AsyncClient, version: str) -> list[Any]:
    """Stream one question with the official SDK's client speaking ``version``."""
    from a2a.client import ClientConfig, ClientFactory
    from a2a.client.card_resolver import A2ACardResolver
    from a2a.types import AgentCard, Message, Part, Role, SendMessageRequest

    card = await A2ACardResolver(http, url).get_agent_card()
    only = AgentCard()
    only.CopyFrom(card)
    kept = [i for i in card.supported_interfaces if i.protocol_version == version]
    del only.supported_interfaces[:]
    only.supported_interfaces.extend(kept)
    client = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(only)
    try:
        request = SendMessageRequest(
            message=Message(
                role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text="tallest?")]
            )
        )
        return [r async for r in client.send_message(request)]
    finally:
        await client.close()


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_the_sdk_client_sees_each_chunk_once_and_the_artifact_whole(version: str) -> None:
    from a2a.server.tasks.task_manager import append_artifact_to_task
    from a2a.types import Task

    async with running_server(tokens) as server, httpx.AsyncClient(timeout=30) as http:
        responses = await sdk_stream(server.url, http, version)
    updates = [r.artifact_update for r in responses if r.WhichOneof("payload") == "artifact_update"]
    streamed = [u for u in updates if not u.last_chunk]
    assert [u.artifact.parts[0].text for u in streamed] == CHUNKS  # each chunk once
    [end] = [u for u in updates if u.last_chunk]
    assert not end.append
    task = Task()
    for update in updates:  # applied as the SDK's own task manager applies them
        append_artifact_to_task(task, update)
    assert [[p.text for p in a.parts] for a in task.artifacts] == [[ANSWER]]
    final = [r.status_update for r in responses if r.WhichOneof("payload") == "status_update"][-1]
    assert [p.text for p in final.status.message.parts] == [ANSWER]
