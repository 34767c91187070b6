"""``MCPServer``: an MCP server's tools served as an A2A agent (``a2a serve file.py:server``).

    server = MCPServer.stdio("python", "weather_server.py")      # a command, over stdio
    server = MCPServer.http("http://localhost:8765/mcp")         # or Streamable HTTP

Each tool is a skill on the card. A message picks its tool by a data part
``{"tool": name, "arguments": {...}}``, or by the skill id its metadata names
(``skillId``, what ``a2a mcp`` sends) with its data part as the arguments,
or goes to the only tool; a message that names no tool among several fails
with the list. Each A2A task has its own MCP session, kept while the task
waits for input: MCP progress becomes status updates, an elicitation
becomes input-required (the reply answers it), and the tool result becomes
artifacts (text, data, files).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from a2a_core import (
    AgentExecutor,
    AgentSkill,
    Part,
    RequestContext,
    TaskState,
    TaskUpdater,
)
from a2a_core.adapters import ResolvedAgent
from mcp import ClientSession, types

__all__ = ["MCPServer", "MCPServerExecutor", "parts_of_result", "pick_tool"]

_EXAMPLE_VALUES: dict[str, object] = {
    "string": "",
    "integer": 0,
    "number": 0,
    "boolean": False,
    "array": [],
    "object": {},
}


@dataclass(frozen=True, slots=True)
class MCPServer:
    """Where an MCP server is: a command to start (stdio) or a Streamable HTTP URL."""

    command: tuple[str, ...] = ()
    url: str | None = None
    env: Mapping[str, str] | None = None
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    name: str | None = None
    description: str | None = None

    def __post_init__(self) -> None:
        if bool(self.command) == bool(self.url):
            raise ValueError("give an MCP server's command (stdio) or its url, not both")

    @classmethod
    def stdio(
        cls, command: str, *args: str, env: Mapping[str, str] | None = None, **card: Any
    ) -> MCPServer:
        """The MCP server ``command args...`` speaks over stdin/stdout (started per task)."""
        return cls(command=(command, *args), env=env, **card)

    @classmethod
    def http(cls, url: str, *, headers: Mapping[str, str] | None = None, **card: Any) -> MCPServer:
        """The MCP server at ``url`` (Streamable HTTP)."""
        return cls(url=url, headers=dict(headers or {}), **card)

    @contextlib.asynccontextmanager
    async def session(self, **callbacks: Any) -> AsyncIterator[ClientSession]:
        """A new, initialized MCP client session with the server."""
        if self.url is not None:
            import httpx
            from mcp.client.streamable_http import streamable_http_client

            async with (
                httpx.AsyncClient(headers=dict(self.headers), timeout=60) as http,
                streamable_http_client(self.url, http_client=http) as (read, write, _),
                ClientSession(read, write, **callbacks) as session,
            ):
                await session.initialize()
                yield session
            return
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        env = {**os.environ, **self.env} if self.env is not None else None
        params = StdioServerParameters(
            command=self.command[0], args=list(self.command[1:]), env=env
        )
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, **callbacks) as session,
        ):
            await session.initialize()
            yield session

    async def list_tools(self) -> tuple[str, list[types.Tool]]:
        """The server's name and tools."""
        async with self.session() as session:
            tools = (await session.list_tools()).tools
            return self.name or "MCP server", tools

    def resolved(self) -> ResolvedAgent:
        """The executor and card defaults (lists the tools now: a server that fails, fails here)."""
        name, tools = _in_thread(self.list_tools)
        where = self.url or " ".join(self.command)
        return ResolvedAgent(
            MCPServerExecutor(self, tools),
            name=name,
            description=self.description or f"The tools of the MCP server {where}.",
            skills=[_skill(t) for t in tools],
            input_modes=("application/json", "text/plain"),
            output_modes=("text/plain", "application/json", "*/*"),
            adapter="mcp",
        )


def _in_thread(func: Any) -> Any:
    """Run ``func()`` (a coroutine function) to completion on a loop of its own."""
    result: list[Any] = []
    error: list[BaseException] = []

    def main() -> None:
        try:
            result.append(asyncio.run(func()))
        except BaseException as exc:
            error.append(exc)

    thread = threading.Thread(target=main, name="a2a-mcp-list-tools")
    thread.start()
    thread.join()
    if error:
        raise error[0]
    return result[0]


def _properties(tool: types.Tool) -> dict[str, Any]:
    props = tool.inputSchema.get("properties")
    return cast(dict[str, Any], props) if isinstance(props, dict) else {}


def _skill(tool: types.Tool) -> AgentSkill:
    example = {
        key: _EXAMPLE_VALUES.get(str(spec.get("type")), "") if isinstance(spec, dict) else ""
        for key, spec in _properties(tool).items()
    }
    return AgentSkill(
        id=tool.name,
        name=tool.title or tool.name,
        description=tool.description or f"The MCP tool {tool.name}.",
        tags=["mcp"],
        examples=[json.dumps(example)] if example else [],
        input_modes=["application/json", "text/plain"],
    )


class ToolChoiceError(ValueError):
    """The message names no tool this server has (or no arguments for it)."""


def pick_tool(
    tools: Sequence[types.Tool], parts: Sequence[Part], metadata: Mapping[str, Any] | None
) -> tuple[str, dict[str, Any]]:
    """The tool a message calls and its arguments."""
    by_name = {t.name: t for t in tools}
    data = [p.data for p in parts if isinstance(p.data, dict)]
    text = "".join(p.text for p in parts if p.text is not None)
    for item in data:
        named = cast(dict[str, Any], item)
        if "tool" in named:
            name = str(named["tool"])
            if name not in by_name:
                raise ToolChoiceError(f"no tool {name!r}; the tools are: {', '.join(by_name)}")
            arguments = named.get("arguments") or {}
            if not isinstance(arguments, dict):
                raise ToolChoiceError("arguments must be an object")
            return name, cast(dict[str, Any], arguments)
    wanted = (metadata or {}).get("skillId")
    if isinstance(wanted, str) and wanted in by_name:
        tool = by_name[wanted]
    elif len(tools) == 1:
        tool = tools[0]
    else:
        raise ToolChoiceError(
            "name the tool to call with a data part "
            '{"tool": NAME, "arguments": {...}}; the tools are: ' + ", ".join(by_name)
        )
    if data:
        return tool.name, dict(cast(dict[str, Any], data[0]))
    return tool.name, _text_arguments(tool, text)


def _text_arguments(tool: types.Tool, text: str) -> dict[str, Any]:
    props = _properties(tool)
    if not props:
        return {}
    required = tool.inputSchema.get("required") or list(props)
    strings = [k for k in required if (props.get(k) or {}).get("type", "string") == "string"]
    if len(required) == 1 and strings:
        return {strings[0]: text}
    raise ToolChoiceError(
        f"the tool {tool.name!r} takes {', '.join(props)}: send them as a data part"
    )


def parts_of_result(result: types.CallToolResult) -> list[Part]:
    """An MCP tool result as A2A parts (what structured content and text both say, once)."""
    parts: list[Part] = []
    structured = result.structuredContent
    for block in result.content:
        if isinstance(block, types.TextContent):
            if structured is not None and _same_json(block.text, structured):
                continue
            parts.append(Part(text=block.text))
        elif isinstance(block, types.ImageContent | types.AudioContent):
            parts.append(Part(raw=base64.b64decode(block.data), media_type=block.mimeType))
        elif isinstance(block, types.ResourceLink):
            parts.append(Part(url=str(block.uri), filename=block.name, media_type=block.mimeType))
        elif isinstance(block, types.EmbeddedResource):
            res = block.resource
            name = str(res.uri).rsplit("/", 1)[-1] or None
            if isinstance(res, types.TextResourceContents):
                parts.append(Part(raw=res.text.encode(), filename=name, media_type=res.mimeType))
            else:
                parts.append(
                    Part(raw=base64.b64decode(res.blob), filename=name, media_type=res.mimeType)
                )
    if structured is not None and not _wrapped(structured, parts):
        parts.append(Part(data=structured))
    return parts


def _wrapped(structured: dict[str, Any], parts: Sequence[Part]) -> bool:
    """``{"result": value}`` wrapping a plain value the text already says (FastMCP's way)."""
    if list(structured) != ["result"] or isinstance(structured["result"], dict | list):
        return False
    said = "".join(p.text for p in parts if p.text is not None)
    value = structured["result"]
    return said in (str(value), json.dumps(value))


def _same_json(text: str, value: object) -> bool:
    try:
        return json.loads(text) == value
    except ValueError:
        return False


@dataclass
class _Run:
    """One A2A task's tool call: its session, the events it reports, the answers it awaits."""

    events: asyncio.Queue[tuple[str, Any]] = field(default_factory=asyncio.Queue[tuple[str, Any]])
    answers: asyncio.Queue[types.ElicitResult] = field(
        default_factory=asyncio.Queue[types.ElicitResult]
    )
    task: asyncio.Task[None] | None = None
    schema: dict[str, Any] = field(default_factory=dict[str, Any])


class MCPServerExecutor(AgentExecutor):
    """Runs one MCP tool call per A2A task (see the module's docstring)."""

    def __init__(self, server: MCPServer, tools: Sequence[types.Tool]) -> None:
        self.server = server
        self.tools = list(tools)
        self._runs: dict[str, _Run] = {}

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        run = self._runs.get(context.task_id)
        if run is not None and context.is_continuation:
            await run.answers.put(_answer(context, run.schema))
        else:
            try:
                name, arguments = pick_tool(
                    self.tools, context.message.parts, context.message.metadata
                )
            except ToolChoiceError as exc:
                await updater.fail(str(exc))
                return
            run = _Run()
            run.task = asyncio.create_task(self._call(run, name, arguments))
            self._runs[context.task_id] = run
            await updater.start_work(f"calling {name}")
        await self._follow(context.task_id, run, updater)

    async def _follow(self, task_id: str, run: _Run, updater: TaskUpdater) -> None:
        while True:
            kind, value = await run.events.get()
            if kind == "progress":
                await updater.update_status(TaskState.WORKING, value)
            elif kind == "elicit":
                params = cast(types.ElicitRequestFormParams, value)
                run.schema = dict(params.requestedSchema)
                await updater.require_input(
                    [Part(text=params.message), Part(data={"requestedSchema": run.schema})]
                )
                return  # the task waits; the reply comes as a new execute on this task
            else:
                self._runs.pop(task_id, None)
                if kind == "result":
                    result = cast(types.CallToolResult, value)
                    parts = parts_of_result(result)
                    if result.isError:
                        text = "".join(p.text or "" for p in parts) or "the tool failed"
                        await updater.fail(text)
                        return
                    if parts:
                        await updater.add_artifact(parts, name="result")
                    await updater.complete()
                else:
                    await updater.fail(f"the MCP server failed: {value}")
                return

    async def cancel(self, context: RequestContext, updater: TaskUpdater) -> None:
        run = self._runs.pop(context.task_id, None)
        if run is not None and run.task is not None:
            run.task.cancel()

    async def _call(self, run: _Run, name: str, arguments: dict[str, Any]) -> None:
        async def elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            if not isinstance(params, types.ElicitRequestFormParams):
                return types.ElicitResult(action="decline")
            await run.events.put(("elicit", params))
            return await run.answers.get()

        async def report(progress: float, total: float | None, message: str | None) -> None:
            of = f"{progress:g}/{total:g}" if total else f"{progress:g}"
            text = f"{message} ({of})" if message else f"progress {of}"
            await run.events.put(("progress", text))

        try:
            async with self.server.session(elicitation_callback=elicit) as session:
                result = await session.call_tool(name, arguments, progress_callback=report)
            await run.events.put(("result", result))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            await run.events.put(("error", f"{type(exc).__name__}: {exc}"))


def _answer(context: RequestContext, schema: Mapping[str, Any]) -> types.ElicitResult:
    """The reply to an elicitation: a data part is the form, text fills its one field."""
    parts = context.message.parts
    data = next((p.data for p in parts if isinstance(p.data, dict)), None)
    if data is not None:
        return types.ElicitResult(action="accept", content=cast(dict[str, Any], data))
    text = context.text.strip()
    if text.lower() in ("decline", "cancel"):
        return types.ElicitResult(action=cast(Any, text.lower()))
    props = schema.get("properties")
    fields = list(cast(dict[str, Any], props)) if isinstance(props, dict) else []
    if len(fields) == 1:
        kind = (cast(dict[str, Any], props)[fields[0]] or {}).get("type")
        return types.ElicitResult(action="accept", content={fields[0]: _coerce(text, kind)})
    return types.ElicitResult(action="accept", content={"answer": text})


def _coerce(text: str, kind: object) -> Any:
    if kind == "integer":
        with contextlib.suppress(ValueError):
            return int(text)
    if kind == "number":
        with contextlib.suppress(ValueError):
            return float(text)
    if kind == "boolean":
        return text.lower() in ("yes", "true", "y", "1", "ok")
    return text
