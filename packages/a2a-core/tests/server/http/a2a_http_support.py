"""Agents, cards and an SSE parser shared by the HTTP layer tests."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from a2a_core.server import AgentExecutor, RequestContext, TaskUpdater
from a2a_core.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
)

V10 = {"A2A-Version": "1.0"}


def make_card(
    *,
    streaming: bool = True,
    extensions: list[AgentExtension] | None = None,
    **fields: Any,
) -> AgentCard:
    base = "http://localhost:9999"
    return AgentCard(
        name="Echo",
        description="Echoes what it is told",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=base, protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=base, protocol_binding="JSONRPC", protocol_version="0.3"),
            AgentInterface(url=base, protocol_binding="HTTP+JSON", protocol_version="1.0"),
            AgentInterface(url=base, protocol_binding="HTTP+JSON", protocol_version="0.3"),
        ],
        capabilities=AgentCapabilities(streaming=streaming, extensions=extensions or []),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"])],
        **fields,
    )


async def echo(context: RequestContext) -> str:
    return f"echo: {context.text}"


class WaitingAgent(AgentExecutor):
    """Starts working, then waits until released (or cancelled); counts its runs."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started = 0

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        self.started += 1
        await updater.start_work("working")
        await self.release.wait()
        await updater.add_artifact(f"done: {context.text}", artifact_id="result")
        await updater.complete()


def v10_message(text: str = "hello", message_id: str = "m-1", **extra: Any) -> dict[str, Any]:
    return {"role": "ROLE_USER", "parts": [{"text": text}], "messageId": message_id, **extra}


def v03_message(text: str = "hello", message_id: str = "m-1", **extra: Any) -> dict[str, Any]:
    return {
        "kind": "message",
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
        "messageId": message_id,
        **extra,
    }


def v03_rest_message(text: str = "hello", message_id: str = "m-1") -> dict[str, Any]:
    return {"role": "ROLE_USER", "content": [{"text": text}], "messageId": message_id}


def rpc(method: str, params: Any = None, rid: Any = 1, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method, **extra}
    if params is not None:
        body["params"] = params
    return body


def parse_sse(text: str) -> list[Any]:
    """The JSON ``data`` of each event (multi-line data joined; comments skipped).

    Fails on anything that is not well-formed SSE as we send it: every event
    ends with a blank line and every data line holds part of one JSON value.
    """
    assert text == "" or text.endswith("\n\n"), f"stream does not end with a blank line: {text!r}"
    events: list[Any] = []
    data: list[str] = []
    for line in text.split("\n"):
        if line == "":
            if data:
                events.append(json.loads("\n".join(data)))
                data = []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            data.append(value)
        else:
            assert field in ("event", "id", "retry"), f"unexpected SSE field {field!r}"
    assert not data, "stream ended inside an event"
    return events
