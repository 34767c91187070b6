"""An MCP server written with the official SDK, served as an A2A agent (``a2a_mcp.MCPServer``
through the core's adapt hook), called by our client and by the official A2A SDK's client:
tools as skills, the tool a message picks, progress, elicitation as input-required, results
as artifacts."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from a2a_core import (
    A2AClient,
    Message,
    Part,
    Role,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    new_id,
    running_server,
)
from a2a_mcp import MCPServer
from mcp_support import free_port
from tools_mcp_server import PNG

SERVER = str(Path(__file__).with_name("tools_mcp_server.py"))
TOOLS = ["add", "shout", "count", "book", "forecast", "dot"]

pytestmark = pytest.mark.timeout(90)


def stdio_server() -> MCPServer:
    return MCPServer.stdio(sys.executable, SERVER, name="Travel tools")


def call(tool: str, arguments: dict[str, Any]) -> Message:
    return Message(
        message_id=new_id(),
        role=Role.USER,
        parts=[Part(data={"tool": tool, "arguments": arguments})],
    )


async def test_each_tool_is_a_skill_and_a_data_part_picks_it() -> None:
    async with (
        running_server(stdio_server()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        assert client.card is not None
        assert client.card.name == "Travel tools"
        assert [s.id for s in client.card.skills] == TOOLS
        add = client.card.skills[0]
        assert add.description == "Add two numbers."
        assert json.loads(add.examples[0]) == {"a": 0, "b": 0}
        result = await client.send(call("add", {"a": 2, "b": 3}))
        assert result.state is TaskState.COMPLETED
        assert result.text == "5"


async def test_the_skill_id_or_the_only_tool_picks_it_and_no_tool_fails_with_the_list() -> None:
    async with (
        running_server(stdio_server()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        by_skill = Message(
            message_id=new_id(),
            role=Role.USER,
            parts=[Part(text="quiet please")],
            metadata={"skillId": "shout"},
        )
        assert (await client.send(by_skill)).text == "QUIET PLEASE"
        unnamed = await client.send("hello")
        assert unnamed.state is TaskState.FAILED
        assert unnamed.text == (
            'name the tool to call with a data part {"tool": NAME, "arguments": {...}}; '
            "the tools are: " + ", ".join(TOOLS)
        )
    only = MCPServer.stdio(sys.executable, SERVER)
    executor = only.resolved().executor
    executor.tools = [t for t in executor.tools if t.name == "shout"]  # type: ignore[attr-defined]
    async with running_server(executor) as server, await A2AClient.connect(server.url) as client:
        assert (await client.send("only one")).text == "ONLY ONE"


async def test_progress_becomes_status_updates() -> None:
    async with (
        running_server(stdio_server()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        events = [e async for e in client.stream(call("count", {"n": 3}))]
    texts = [
        e.status.message.text
        for e in events
        if isinstance(e, TaskStatusUpdateEvent) and e.status.message is not None
    ]
    assert [t for t in texts if t.startswith("step")] == [
        "step 1 (1/3)",
        "step 2 (2/3)",
        "step 3 (3/3)",
    ]
    chunks = [
        p.text for e in events if isinstance(e, TaskArtifactUpdateEvent) for p in e.artifact.parts
    ]
    assert chunks == ["counted to 3"]


async def test_an_elicitation_is_input_required_and_the_reply_answers_it() -> None:
    async with (
        running_server(stdio_server()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        asked = await client.send(call("book", {"city": "Porto"}))
        assert asked.state is TaskState.INPUT_REQUIRED
        assert asked.text == "How many nights in Porto?"
        task = asked.task
        assert task is not None
        assert task.status.message is not None
        schema = task.status.message.parts[1].data["requestedSchema"]
        assert list(schema["properties"]) == ["nights"]
        done = await client.send("3", task=asked)
        assert done.state is TaskState.COMPLETED
        assert done.text == "Booked 3 nights in Porto"
        declined = await client.send(call("book", {"city": "Oslo"}))
        assert (await client.send("decline", task=declined)).text == "Not booked"


async def test_results_become_data_and_file_artifacts() -> None:
    async with (
        running_server(stdio_server()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        forecast = await client.send(call("forecast", {"city": "Faro"}))
        [part] = forecast.artifacts[0].parts
        assert part.data == {"city": "Faro", "sky": "sunny", "high": 24}
        dot = await client.send(call("dot", {}))
        [image] = dot.artifacts[0].parts
        assert (image.raw, image.media_type) == (PNG, "image/png")


async def test_a_tool_error_fails_the_task() -> None:
    async with (
        running_server(stdio_server()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        bad = await client.send(call("add", {"a": "two", "b": 3}))
        assert bad.state is TaskState.FAILED
        assert "validation error" in bad.text.lower()
        unknown = await client.send(call("fly", {}))
        assert unknown.state is TaskState.FAILED
        assert unknown.text.startswith("no tool 'fly'; the tools are: add, shout")


async def test_the_official_a2a_sdk_client_calls_the_tools_including_progress_and_elicitation() -> (
    None
):
    from a2a.client import ClientConfig, ClientFactory
    from a2a.client.card_resolver import A2ACardResolver
    from a2a.types import Message as SdkMessage
    from a2a.types import Part as SdkPart
    from a2a.types import Role as SdkRole
    from a2a.types import SendMessageRequest
    from a2a.types import TaskState as SdkState
    from google.protobuf import json_format, struct_pb2

    def data(value: dict[str, Any]) -> SdkPart:
        return SdkPart(data=json_format.ParseDict(value, struct_pb2.Value()))

    def message(*parts: SdkPart, task_id: str = "", context_id: str = "") -> SendMessageRequest:
        return SendMessageRequest(
            message=SdkMessage(
                role=SdkRole.ROLE_USER,
                message_id=str(uuid.uuid4()),
                parts=list(parts),
                task_id=task_id,
                context_id=context_id,
            )
        )

    async with running_server(stdio_server()) as server, httpx.AsyncClient(timeout=60) as http:
        card = await A2ACardResolver(http, server.url).get_agent_card()
        assert [s.id for s in card.skills] == TOOLS
        client = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card)
        try:
            updates = [
                r
                async for r in client.send_message(
                    message(data({"tool": "count", "arguments": {"n": 2}}))
                )
            ]
            texts = [
                p.text
                for r in updates
                if r.WhichOneof("payload") == "status_update"
                for p in r.status_update.status.message.parts
            ]
            assert "step 2 (2/2)" in texts
            asked = [
                r
                async for r in client.send_message(
                    message(data({"tool": "book", "arguments": {"city": "Nice"}}))
                )
            ]
            last = asked[-1]
            state = (
                last.status_update.status.state
                if last.WhichOneof("payload") == "status_update"
                else last.task.status.state
            )
            assert state == SdkState.TASK_STATE_INPUT_REQUIRED
            task_id = last.status_update.task_id or last.task.id
            context_id = last.status_update.context_id or last.task.context_id
            answer = [
                r
                async for r in client.send_message(
                    message(data({"nights": 2}), task_id=task_id, context_id=context_id)
                )
            ]
            artifacts = [
                p.text
                for r in answer
                if r.WhichOneof("payload") == "artifact_update"
                for p in r.artifact_update.artifact.parts
            ]
            assert artifacts == ["Booked 2 nights in Nice"]
        finally:
            await client.close()


async def wait_listening(port: int, proc: subprocess.Popen[bytes]) -> None:
    with anyio.fail_after(60):
        while True:
            assert proc.poll() is None, "the server exited"
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                await anyio.sleep(0.1)
                continue
            await stream.aclose()
            return


@contextlib.contextmanager
def process(*args: str) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        [sys.executable, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    )
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - a stuck server
            proc.kill()
            proc.wait()


async def test_an_mcp_server_over_streamable_http_is_served_too() -> None:
    port = free_port()
    with process(SERVER, "http", str(port)) as proc:
        await wait_listening(port, proc)
        mcp = MCPServer.http(f"http://127.0.0.1:{port}/mcp")
        async with (
            running_server(mcp) as server,
            await A2AClient.connect(server.url) as client,
        ):
            assert (await client.send(call("add", {"a": 20, "b": 22}))).text == "42"
            asked = await client.send(call("book", {"city": "Bern"}))
            assert asked.state is TaskState.INPUT_REQUIRED
            assert (await client.send("1", task=asked)).text == "Booked 1 nights in Bern"


async def test_a2a_serve_takes_an_mcp_server_from_a_file() -> None:
    port = free_port()
    target = f"{Path(__file__).with_name('served_mcp.py')}:server"
    with process("-m", "a2a_core.cli", "serve", target, "--port", str(port)) as proc:
        await wait_listening(port, proc)
        async with await A2AClient.connect(f"http://127.0.0.1:{port}") as client:
            assert client.card is not None
            assert [s.id for s in client.card.skills] == TOOLS
            assert (await client.send(call("shout", {"text": "hi"}))).text == "HI"
