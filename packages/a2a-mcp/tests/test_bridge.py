"""``a2a mcp`` driven by the official MCP SDK's client, over stdio and Streamable HTTP.

Every test runs the real command in a subprocess against agents served by the
core on 127.0.0.1: tools from cards, streamed progress, input-required as
elicitation or as a task_id to continue, cancellation reaching the agent,
files both ways, and a dead agent that fails one call but not the session.
"""

from __future__ import annotations

import base64
import re
from typing import Any

import anyio
import pytest
from a2a_core import A2AClient, TaskState
from mcp import ClientSession, types
from mcp_agents import (
    LARGE,
    PNG,
    AskingAgent,
    FilesAgent,
    SlowAgent,
    asking_card,
    chain,
    chain_card,
    dead_url,
    echo_agent,
    echo_card,
    files_card,
    served,
    slow_card,
)
from mcp_support import TRANSPORTS, Seen, bridge_session, text_of

STATE_LINE = re.compile(r"^(submitted|working|completed)(:|$)")
"""A status update's progress line (the rest are the answer's chunks)."""

pytestmark = [pytest.mark.parametrize("transport", TRANSPORTS), pytest.mark.timeout(90)]


async def tool_names(session: ClientSession) -> list[str]:
    return [t.name for t in (await session.list_tools()).tools]


async def test_the_echo_agent_is_a_typed_tool(transport: str) -> None:
    async with served(echo_agent(), echo_card()) as url, bridge_session(transport, [url]) as mcp:
        tools = (await mcp.list_tools()).tools
        assert [t.name for t in tools] == ["Echo_echo"]
        tool = tools[0]
        assert "Repeats what it is told" in (tool.description or "")
        assert tool.inputSchema["required"] == ["text"]
        assert {"text", "data", "files", "task_id"} <= set(tool.inputSchema["properties"])
        result = await mcp.call_tool("Echo_echo", {"text": "hello"})
        assert not result.isError
        assert text_of(result) == "echo: hello"
        assert result.meta is not None
        assert result.meta["a2a"]["taskId"]


async def test_a_streaming_chain_reports_progress_before_the_result(transport: str) -> None:
    updates: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, message))

    seen = Seen()
    async with (
        served(chain(), chain_card()) as url,
        bridge_session(transport, [url], seen=seen) as mcp,
    ):
        [name] = await tool_names(mcp)
        result = await mcp.call_tool(
            name, {"text": "capital of France?"}, progress_callback=on_progress
        )
        assert text_of(result) == "Paris is the capital of France, on the Seine."
    # Progress notifications come before the response: the client took them while the call ran.
    chunks = [m for _, m in updates if m and not STATE_LINE.match(m)]
    assert len(chunks) >= 3, updates
    assert "".join(chunks).replace(" ", "") == "ParisisthecapitalofFrance,ontheSeine."
    assert [v for v, _ in updates] == sorted(v for v, _ in updates)
    assert any(isinstance(log, dict) and log.get("update") for log in seen.logs)


async def test_input_required_becomes_an_elicitation(transport: str) -> None:
    asked: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": "Lisbon"})

    async with (
        served(AskingAgent(), asking_card()) as url,
        bridge_session(transport, [url], elicit=elicit) as mcp,
    ):
        result = await mcp.call_tool("Weather_forecast", {"text": "weather please"})
        assert asked == ["Which city?"]
        assert (result.isError, text_of(result)) == (False, "Sunny in Lisbon")


async def test_a_declined_elicitation_cancels_the_task(transport: str) -> None:
    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    async with (
        served(AskingAgent(), asking_card()) as url,
        bridge_session(transport, [url], elicit=elicit) as mcp,
    ):
        result = await mcp.call_tool("Weather_forecast", {"text": "weather please"})
        assert result.isError
        assert text_of(result) == "the user did not answer the agent's question: Which city?"


async def test_without_elicitation_the_question_comes_back_with_a_task_id(transport: str) -> None:
    async with (
        served(AskingAgent(), asking_card()) as url,
        bridge_session(transport, [url]) as mcp,
    ):
        first = await mcp.call_tool("Weather_forecast", {"text": "weather please"})
        assert not first.isError
        assert first.structuredContent is not None
        assert first.structuredContent["state"] == "input-required"
        assert first.structuredContent["question"] == "Which city?"
        task_id = first.structuredContent["task_id"]
        assert f'task_id="{task_id}"' in text_of(first)
        second = await mcp.call_tool("Weather_forecast", {"text": "Porto", "task_id": task_id})
        assert (second.isError, text_of(second)) == (False, "Sunny in Porto")
        assert second.meta is not None
        assert second.meta["a2a"]["taskId"] == task_id


async def test_an_mcp_cancellation_cancels_the_a2a_task(transport: str) -> None:
    agent = SlowAgent()
    started = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    async with served(agent, slow_card()) as url, bridge_session(transport, [url]) as mcp:
        failure: list[BaseException] = []
        answered = anyio.Event()

        async def call() -> None:
            try:
                await mcp.call_tool("Slow_slow", {"text": "go"}, progress_callback=on_progress)
            except Exception as exc:  # the SDK answers a cancelled request with an error
                failure.append(exc)
            finally:
                answered.set()

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            with anyio.fail_after(20):
                await started.wait()
            request_id = mcp._request_id - 1  # the call's id: the last one sent
            await mcp.send_notification(
                types.ClientNotification(
                    types.CancelledNotification(
                        params=types.CancelledNotificationParams(requestId=request_id)
                    )
                )
            )
            with anyio.fail_after(20):
                await agent.stopped.wait()
            # Let the call take the answer to the cancelled request: cancelling the call
            # while that answer comes in ends the MCP client's session (the SDK client's
            # receive loop finds the call's response stream closed). An SDK that sends no
            # answer to a cancelled request leaves the call waiting: then it is cancelled.
            with anyio.move_on_after(10):
                await answered.wait()
            group.cancel_scope.cancel()
        async with await A2AClient.connect(url) as a2a:
            task = await a2a.get_task(agent.canceled[0])
        assert task.status.state is TaskState.CANCELED
        assert await tool_names(mcp) == ["Slow_slow"]  # the session lives on


async def test_files_go_both_ways(transport: str) -> None:
    note = base64.b64encode(b"hi there").decode()
    async with served(FilesAgent(), files_card()) as url, bridge_session(transport, [url]) as mcp:
        result = await mcp.call_tool(
            "Files_trade",
            {
                "text": "here",
                "files": [
                    {"name": "note.txt", "mimeType": "text/plain", "data": note},
                    {"name": "far.pdf", "uri": "https://example.com/far.pdf"},
                ],
            },
        )
        assert not result.isError, text_of(result)
        assert result.structuredContent == {
            "received": [
                {"name": "note.txt", "mime": "text/plain", "size": 8, "url": None},
                {
                    "name": "far.pdf",
                    "mime": None,
                    "size": None,
                    "url": "https://example.com/far.pdf",
                },
            ]
        }
        images = [c for c in result.content if isinstance(c, types.ImageContent)]
        assert [(i.mimeType, base64.b64decode(i.data)) for i in images] == [("image/png", PNG)]
        [embedded] = [c for c in result.content if isinstance(c, types.EmbeddedResource)]
        assert isinstance(embedded.resource, types.BlobResourceContents)
        assert embedded.resource.mimeType == "text/csv"
        assert str(embedded.resource.uri).endswith("/table.csv")
        assert base64.b64decode(embedded.resource.blob) == b"a,b\n1,2\n"
        [link] = [c for c in result.content if isinstance(c, types.ResourceLink)]
        assert (link.name, link.size) == ("big.bin", len(LARGE))
        read = await mcp.read_resource(link.uri)
        [blob] = read.contents
        assert isinstance(blob, types.BlobResourceContents)
        assert base64.b64decode(blob.blob) == LARGE


async def test_a_dead_agent_fails_its_call_and_the_session_lives_on(transport: str) -> None:
    dead = dead_url()
    async with (
        served(echo_agent(), echo_card()) as url,
        bridge_session(transport, [dead, url]) as mcp,
    ):
        names = await tool_names(mcp)
        port = dead.rsplit(":", 1)[1]
        assert names == [f"127_0_0_1_{port}", "Echo_echo"]
        result = await mcp.call_tool(names[0], {"text": "anyone?"})
        assert result.isError
        line = text_of(result)
        assert line.startswith(f"cannot reach the A2A agent at {dead}")
        assert "\n" not in line
        ok = await mcp.call_tool("Echo_echo", {"text": "still here"})
        assert text_of(ok) == "echo: still here"
