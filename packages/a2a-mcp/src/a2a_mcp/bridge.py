"""``AgentBridge``: A2A agents as an MCP server (stdio, Streamable HTTP, or mounted).

    bridge = AgentBridge(["http://localhost:8000"])
    anyio.run(bridge.run_stdio)                 # what `a2a mcp URL` does
    app = bridge.streamable_http_app()          # an ASGI app to run or mount

Each agent's skills are tools (``tooldefs``), each call an A2A streaming
send (``calls``). The bridge reads the cards when it starts and again every
``refresh_seconds``; when the tools change, every open session is told
(``notifications/tools/list_changed``). Each MCP session runs inside the
server's lifespan, so when it ends the tasks it left waiting are canceled.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import Any

import anyio
from a2a_core import __version__ as core_version
from jsonschema import Draft202012Validator
from mcp import types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.models import InitializationOptions
from pydantic import AnyUrl
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from .agents import AgentLink, AgentTarget
from .calls import (
    CallSettings,
    SessionState,
    ToolCall,
    caller_credential,
    failure,
    tool_error,
)
from .content import DEFAULT_LARGE_FILE_BYTES, FileShelf, ToolInputError, message_from_arguments
from .tooldefs import ToolDef, input_schema, tool_name, tools_for_card, unique_names

__all__ = ["AgentBridge"]


class AgentBridge:
    """Serve A2A agents to MCP hosts: one tool per skill (or per agent with ``per_agent``).

    ``agents``: URLs or ``AgentTarget`` objects (headers, OAuth2, bearer
    passthrough). ``call_timeout``: seconds a call may take before its task
    is canceled and the call fails. ``large_file_bytes``: bigger files are
    resource links. ``refresh_seconds``: how often the cards are read again
    (None: only at start and through ``refresh()``).
    """

    def __init__(
        self,
        agents: Sequence[str | AgentTarget],
        *,
        name: str = "a2a",
        per_agent: bool = False,
        call_timeout: float = 300.0,
        connect_timeout: float = 30.0,
        refresh_seconds: float | None = 60.0,
        large_file_bytes: int = DEFAULT_LARGE_FILE_BYTES,
    ) -> None:
        if not agents:
            raise ValueError("give at least one agent URL")
        targets = [a if isinstance(a, AgentTarget) else AgentTarget(a) for a in agents]
        self.links = [AgentLink(t, timeout=connect_timeout) for t in targets]
        self.per_agent = per_agent
        self.call_timeout = call_timeout
        self.refresh_seconds = refresh_seconds
        self.settings = CallSettings(large_file_bytes=large_file_bytes, shelf=FileShelf())
        self.sessions: set[SessionState] = set()
        self._tools: dict[str, ToolDef] = {}
        self._validators: dict[str, Draft202012Validator] = {}
        self._started = 0
        self.server: Server[SessionState, Any] = Server(
            name,
            version=core_version,
            instructions="Tools that call remote A2A agents; their descriptions come from "
            "the agents' cards (remote text).",
            lifespan=self._session,
        )
        self._register()

    # -- tools -----------------------------------------------------------------------------
    @property
    def tools(self) -> list[types.Tool]:
        """The tools as MCP lists them now."""
        return [
            types.Tool(
                name=t.name,
                title=t.title,
                description=t.description,
                inputSchema=t.schema,
                annotations=types.ToolAnnotations(title=t.title, openWorldHint=True),
            )
            for t in self._tools.values()
        ]

    def _rebuild(self) -> bool:
        defs: list[ToolDef] = []
        for index, link in enumerate(self.links):
            if link.card is not None:
                defs.extend(
                    tools_for_card(
                        index,
                        link.card,
                        link.url,
                        per_agent=self.per_agent,
                        prefix=link.target.prefix,
                    )
                )
            else:
                defs.append(_unreachable_tool(index, link))
        names = unique_names(d.name for d in defs)
        tools = {name: replace(d, name=name) for name, d in zip(names, defs, strict=True)}
        self._validators = {name: Draft202012Validator(d.schema) for name, d in tools.items()}
        changed = [(t.name, t.schema, t.description) for t in tools.values()] != [
            (t.name, t.schema, t.description) for t in self._tools.values()
        ]
        self._tools = tools
        return changed

    async def refresh(self) -> bool:
        """Read every card again; when the tools changed, tell the open sessions. Changed?"""
        changed = False
        for link in self.links:
            changed = await link.reload() or changed
        if not (self._rebuild() or changed):
            return False
        await self._notify()
        return True

    async def _tools_changed(self) -> None:
        if self._rebuild():
            await self._notify()

    async def _notify(self) -> None:
        for state in list(self.sessions):
            if state.session is not None:
                with contextlib.suppress(Exception):  # a session that just closed
                    await state.session.send_tool_list_changed()

    # -- lifetime --------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[AgentBridge]:
        """Read the cards, keep them fresh while inside, close the agents' clients after."""
        self._started += 1
        try:
            if self._started > 1:
                yield self
                return
            for link in self.links:
                await link.reload()
            self._rebuild()
            async with anyio.create_task_group() as group:
                if self.refresh_seconds:
                    group.start_soon(self._refresh_loop, self.refresh_seconds)
                try:
                    yield self
                finally:
                    group.cancel_scope.cancel()
        finally:
            self._started -= 1
            if self._started == 0:
                for link in self.links:
                    await link.aclose()

    async def _refresh_loop(self, every: float) -> None:
        while True:
            await anyio.sleep(every)
            await self.refresh()

    @contextlib.asynccontextmanager
    async def _session(self, _: object) -> AsyncIterator[SessionState]:
        state = SessionState()
        self.sessions.add(state)
        try:
            yield state
        finally:
            self.sessions.discard(state)
            waiting, state.waiting = dict(state.waiting), {}
            with anyio.CancelScope(shield=True), anyio.move_on_after(5.0):
                for task_id, link in waiting.items():
                    with contextlib.suppress(Exception):
                        await (await link.ready()).cancel(task_id)

    def initialization_options(self) -> InitializationOptions:
        """What this server tells a host at initialization: its tools list can change."""
        return self.server.create_initialization_options(
            NotificationOptions(tools_changed=True), {}
        )

    # -- transports ------------------------------------------------------------------------
    async def run_stdio(self) -> None:
        """Serve one MCP session over stdin/stdout until the host closes it."""
        from mcp.server.stdio import stdio_server

        async with self.running(), stdio_server() as (read, write):
            await self.server.run(read, write, self.initialization_options())

    def streamable_http_app(self, *, path: str = "/mcp") -> Starlette:
        """An ASGI app serving MCP over Streamable HTTP at ``path``.

        Its lifespan starts the bridge: when mounting it into another app
        (``app.mount("/agents", bridge_app)``), run ``bridge_app.router.lifespan_context``
        from the host app's lifespan, since mounted apps' lifespans do not run.
        """
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        manager = StreamableHTTPSessionManager(app=self.server)

        async def endpoint(scope: Scope, receive: Receive, send: Send) -> None:
            await manager.handle_request(scope, receive, send)

        @contextlib.asynccontextmanager
        async def lifespan(_: Starlette) -> AsyncIterator[None]:
            async with self.running(), manager.run():
                yield

        return Starlette(routes=[Route(path, endpoint=_Asgi(endpoint))], lifespan=lifespan)

    async def run_http(self, host: str = "127.0.0.1", port: int = 8765, path: str = "/mcp") -> None:
        """Serve MCP over Streamable HTTP at ``http://host:port/path`` until stopped."""
        import uvicorn

        config = uvicorn.Config(
            self.streamable_http_app(path=path), host=host, port=port, log_level="warning"
        )
        await uvicorn.Server(config).serve()

    # -- MCP handlers ----------------------------------------------------------------------
    def _register(self) -> None:
        server = self.server

        @server.list_tools()
        async def list_tools() -> list[types.Tool]:
            self._remember_session()
            return self.tools

        # Validated here, against a validator built once per tool: the SDK's own check
        # builds one per call, which costs more than the rest of the bridge's work.
        @server.call_tool(validate_input=False)
        async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
            self._remember_session()
            return await self.call(name, arguments)

        @server.set_logging_level()
        async def set_level(level: types.LoggingLevel) -> None:
            server.request_context.lifespan_context.log_level = level

        @server.list_resources()
        async def list_resources() -> list[types.Resource]:
            return []  # large answers' files are read by the links results give, not listed

        @server.read_resource()
        async def read_resource(uri: AnyUrl) -> list[ReadResourceContents]:
            found = self.settings.shelf.get(str(uri))
            if found is None:
                raise ValueError(f"no such file (or no longer kept): {uri}")
            data, mime = found
            return [ReadResourceContents(content=data, mime_type=mime)]

    def _remember_session(self) -> None:
        ctx = self.server.request_context
        ctx.lifespan_context.session = ctx.session

    async def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """Run tool ``name`` for the current MCP request (a tool error on any failure)."""
        ctx = self.server.request_context
        tool = self._tools.get(name)
        if tool is None:
            return tool_error(f"no tool named {name!r}; list the tools again")
        link = self.links[tool.agent]
        validator = self._validators.get(name)
        problem = next(iter(validator.iter_errors(arguments)), None) if validator else None
        if problem is not None:
            return tool_error(f"Input validation error: {problem.message}")
        task_id = arguments.get("task_id") or None
        try:
            message = message_from_arguments(
                arguments, data_fields=tool.data_fields, skill_id=tool.skill_id
            )
            reached = link.client is None
            client = await link.ready()
            if reached:  # its card is known now: its skills replace the placeholder tool
                await self._tools_changed()
            if link.target.passthrough:
                credential = caller_credential(ctx)
                if credential is None:
                    return tool_error(
                        f"the agent at {link.url} needs the caller's bearer token: call over "
                        "Streamable HTTP with an Authorization: Bearer header"
                    )
                client = client.with_credential(credential)
            call = ToolCall(
                tool=name,
                link=link,
                client=client,
                ctx=ctx,
                state=ctx.lifespan_context,
                settings=self.settings,
            )
            with anyio.fail_after(self.call_timeout):
                return await call.run(message, str(task_id) if task_id else None)
        except ToolInputError as exc:
            return tool_error(f"bad arguments: {exc}")
        except TimeoutError:
            return tool_error(
                f"the A2A agent at {link.url} did not finish within {self.call_timeout:g} s "
                "(its task was canceled)"
            )
        except Exception as exc:
            return failure(exc, link)


class _Asgi:
    """An ASGI callable Starlette routes to as an app (not as a request handler)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


def _unreachable_tool(index: int, link: AgentLink) -> ToolDef:
    why = link.error or "not reached yet"
    return ToolDef(
        name=tool_name(link.fallback_name),
        title=link.fallback_name,
        description=(
            f"The A2A agent at {link.url}. Its card could not be read ({why}); "
            "a call tries to reach it again."
        ),
        schema=input_schema({}, takes_json=True, what="send to the agent"),
        agent=index,
        skill_id=None,
    )
