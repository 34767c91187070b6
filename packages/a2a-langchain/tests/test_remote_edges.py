"""Remote tools and runnables at the edges: data arguments, failures, non-streaming agents,
cards given up front, and many threads at once (served on 127.0.0.1 in the test's loop)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from a2a_core.client import A2AClient
from a2a_core.types import TaskState
from a2a_langchain import RemoteA2ARunnable, aremote_agent_tool, remote_agent_tool, running_server
from langchain_core.runnables import RunnableConfig, RunnableLambda


def describe(value: Any) -> str:
    """Says what it received."""
    return f"got {value!r}"


async def test_the_data_argument_reaches_the_remote_agent_as_a_data_part() -> None:
    async with running_server(RunnableLambda(describe), name="Describer") as server:
        tool = await aremote_agent_tool(server.url)
        try:
            only_data = await tool.ainvoke({"message": "", "data": {"city": "Paris"}})
            both = await tool.ainvoke({"message": "hi", "data": {"n": 1}})
        finally:
            await tool.aclose()
    assert only_data == "got {'city': 'Paris'}"
    assert both == "got 'hi\\n{\"n\":1}'"


async def test_a_failed_remote_task_is_reported_to_the_model_not_raised() -> None:
    def broken(text: str) -> str:
        raise RuntimeError("internal detail")

    async with running_server(RunnableLambda(broken), name="Broken") as server:
        tool = await aremote_agent_tool(server.url)
        try:
            message = await tool.ainvoke(
                {"type": "tool_call", "id": "b1", "name": tool.name, "args": {"message": "x"}}
            )
        finally:
            await tool.aclose()
    assert message.content.startswith("The agent 'Broken' did not complete the request (failed)")
    assert "internal detail" not in message.content
    # A handled ToolException: LangChain marks the message as an error (it carries no artifact).
    assert message.status == "error"


async def test_agents_without_streaming_are_called_with_a_blocking_send() -> None:
    async with running_server(RunnableLambda(describe), streaming=False) as server:
        remote = RemoteA2ARunnable(server.url)
        tool = await aremote_agent_tool(server.url)
        try:
            assert await remote.ainvoke("a") == "got 'a'"
            assert [c async for c in remote.astream("b")] == ["got 'b'"]
            assert await tool.ainvoke({"message": "c"}) == "got 'c'"
        finally:
            await remote.aclose()
            await tool.aclose()


async def test_a_card_given_up_front_is_not_fetched_again() -> None:
    async with running_server(RunnableLambda(describe), name="Carded") as server:
        async with await A2AClient.connect(server.url) as client:
            card = client.card
        assert card is not None
        tool = await asyncio.to_thread(lambda: remote_agent_tool(card=card, name="custom_name"))
        try:
            assert tool.name == "custom_name"
            assert await asyncio.to_thread(tool.invoke, {"message": "sync"}) == "got 'sync'"
        finally:
            tool.close()
        client_tool = await aremote_agent_tool(
            client=await A2AClient.connect(server.url), description="My own words"
        )
        assert client_tool.description == "My own words"
        assert await client_tool.ainvoke({"message": "via client"}) == "got 'via client'"
        await (await client_tool.connection.client()).aclose()


async def test_many_threads_keep_their_own_remote_contexts() -> None:
    contexts: dict[str, str] = {}

    def remember(text: str, config: RunnableConfig) -> str:
        from a2a_langchain import a2a_context

        context = a2a_context(config)
        assert context is not None
        contexts.setdefault(text.split(":")[0], context.context_id)
        assert contexts[text.split(":")[0]] == context.context_id
        return "ok"

    async with running_server(RunnableLambda(remember)) as server:
        remote = RemoteA2ARunnable(server.url)
        try:

            async def converse(thread: str) -> None:
                config: Any = {"configurable": {"thread_id": thread}}
                for turn in range(3):
                    assert await remote.ainvoke(f"{thread}:{turn}", config) == "ok"

            await asyncio.gather(*(converse(f"t{i}") for i in range(6)))
        finally:
            await remote.aclose()
    assert len(set(contexts.values())) == 6


async def test_remote_failures_are_tool_exceptions_so_handle_tool_error_applies() -> None:
    from a2a_langchain import RemoteAgentError
    from langchain_core.tools import ToolException

    def broken(text: str) -> str:
        raise RuntimeError("internal detail")

    async with running_server(RunnableLambda(broken), name="Broken") as server:
        raising = await aremote_agent_tool(server.url, handle_tool_error=False)
        fixed = await aremote_agent_tool(server.url, handle_tool_error="Try another agent.")
        try:
            with pytest.raises(RemoteAgentError) as caught:
                await raising.ainvoke({"message": "x"})
            assert await fixed.ainvoke({"message": "x"}) == "Try another agent."
        finally:
            await raising.aclose()
            await fixed.aclose()
        url = server.url
    assert isinstance(caught.value, ToolException)
    assert caught.value.reply.state is TaskState.FAILED
    assert str(caught.value).startswith("The agent 'Broken' did not complete the request")
    # The agent is gone: an unreachable agent is a handled tool error too (sync and async).
    gone = await aremote_agent_tool(url, card=fixed.session.card, timeout=5)
    try:
        said = await gone.ainvoke({"message": "hello?"})
        said_sync = await asyncio.to_thread(gone.invoke, {"message": "hello?"})
    finally:
        await gone.aclose()
    assert said.startswith("The remote agent Broken could not be reached (")
    assert said_sync.startswith("The remote agent Broken could not be reached (")


def test_the_tool_call_id_is_injected_and_the_toolkit_is_a_base_toolkit() -> None:
    from a2a_core.client import RemoteAgentSession
    from a2a_langchain import A2AToolkit, RemoteAgentTool
    from a2a_langchain.tools import RemoteAgentCallInput
    from langchain_core.tools import BaseToolkit

    assert "invoke" not in vars(RemoteAgentTool)
    assert "ainvoke" not in vars(RemoteAgentTool)
    session = RemoteAgentSession("http://127.0.0.1:9")
    pausing = RemoteAgentTool(session, name="pausing", on_input_required="interrupt")
    answering = RemoteAgentTool(session, name="answering")
    assert pausing.args_schema is RemoteAgentCallInput
    # The model never sees the injected id.
    from pydantic import BaseModel

    schema = pausing.tool_call_schema
    assert isinstance(schema, type)
    assert issubclass(schema, BaseModel)
    assert set(schema.model_json_schema()["properties"]) == {"message", "data", "files"}
    with pytest.raises(ValueError, match="InjectedToolCallId"):
        pausing.invoke({"message": "hi"})  # interrupt mode needs a real tool call
    toolkit = A2AToolkit([answering, pausing])
    assert isinstance(toolkit, BaseToolkit)
    assert toolkit.get_tools() == [answering, pausing]
    with pytest.raises(ValueError, match="same tool name"):
        A2AToolkit([answering, answering])
