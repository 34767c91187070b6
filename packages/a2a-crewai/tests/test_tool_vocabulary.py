"""One vocabulary for a remote agent as a tool, in both adapters.

``a2a_crewai.remote_agent_tool`` and ``a2a_langchain.remote_agent_tool`` (and
its async form) take the same names for the same things; the same call
builds a working tool in either, against an agent served on 127.0.0.1.
LangChain's old spellings (``target=``, a card or client as the first
argument) still work, with a ``DeprecationWarning``. LangChain is imported
inside the tests that name it (the CrewAI-only environments of the packaging
tests leave those out with ``-k "not langchain"``).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest
from a2a_core.client import A2AClient
from a2a_core.compose.serve import running_server
from a2a_crewai import remote_agent_tool as crewai_tool
from crewai_servers import weather_agent

pytestmark = pytest.mark.timeout(60)

SHARED = (
    "url",
    "card",
    "client",
    "name",
    "description",
    "headers",
    "timeout",
    "max_answer_chars",
    "passthrough",
    "file_roots",
)


@pytest.mark.parametrize(
    "where",
    [
        "a2a_crewai:remote_agent_tool",
        "a2a_langchain:remote_agent_tool",
        "a2a_langchain:aremote_agent_tool",
    ],
)
def test_both_adapters_name_the_same_options_the_same_way(where: str) -> None:
    module, name = where.split(":")
    parameters = inspect.signature(getattr(importlib.import_module(module), name)).parameters
    assert next(iter(parameters)) == "url"
    assert [p for p in SHARED if p not in parameters] == []
    assert parameters["timeout"].default == 300.0
    assert parameters["max_answer_chars"].default == 20_000
    assert parameters["passthrough"].default is False


async def test_the_same_call_builds_a_working_tool_in_crewai_and_langchain(
    tmp_path: Path,
) -> None:
    from a2a_langchain import aremote_agent_tool as langchain_atool

    options: dict[str, Any] = {
        "name": "weather",
        "headers": {"X-Caller": "tests"},
        "timeout": 10.0,
        "max_answer_chars": 20,
        "passthrough": False,
        "file_roots": [str(tmp_path)],
    }
    async with running_server(weather_agent) as server:
        async with await A2AClient.connect(server.url) as client:
            card = client.card
        crew = await asyncio.to_thread(lambda: crewai_tool(server.url, **options))
        chain = await langchain_atool(url=server.url, **options)
        by_card = [
            await asyncio.to_thread(lambda: crewai_tool(card=card)),
            await langchain_atool(card=card),
        ]
        try:
            assert crew.name == chain.name == "weather"
            assert crew.file_roots == chain.file_roots == (str(tmp_path),)
            said = await asyncio.to_thread(crew.run, message="Porto")
            told = await chain.ainvoke({"message": "Porto"})
            assert said == told == "Weather desk: sunny\u2026"  # cut at max_answer_chars
            assert await asyncio.to_thread(by_card[0].run, message="Faro") == (
                "Weather desk: sunny in Faro"
            )
            assert await by_card[1].ainvoke({"message": "Faro"}) == "Weather desk: sunny in Faro"
        finally:
            crew.close()
            await chain.aclose()
            by_card[0].close()
            await by_card[1].aclose()


async def test_the_old_langchain_spellings_still_work_with_a_warning() -> None:
    from a2a_langchain import aremote_agent_tool as langchain_atool
    from a2a_langchain import remote_agent_tool as langchain_tool

    async with running_server(weather_agent) as server:
        async with await A2AClient.connect(server.url) as client:
            card = client.card
        assert card is not None
        with pytest.warns(DeprecationWarning, match=r"target=\.\.\.\) is deprecated"):
            by_target = await asyncio.to_thread(lambda: langchain_tool(target=server.url))
        with pytest.warns(DeprecationWarning, match="pass it as card="):
            by_card = await langchain_atool(card)  # type: ignore[arg-type]
        connected = await A2AClient.connect(server.url)
        with pytest.warns(DeprecationWarning, match="pass it as client="):
            by_client = await langchain_atool(connected)  # type: ignore[arg-type]
        try:
            for tool in (by_target, by_card, by_client):
                assert await tool.ainvoke({"message": "Braga"}) == "Weather desk: sunny in Braga"
        finally:
            await by_target.aclose()
            await by_card.aclose()
            await connected.aclose()
        with pytest.raises(TypeError, match="needs the agent's url"):
            await langchain_atool()
        with pytest.raises(TypeError, match="needs the agent's url"):
            crewai_tool()
