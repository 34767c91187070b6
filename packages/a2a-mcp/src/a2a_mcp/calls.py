"""One MCP tool call as an A2A streaming send: progress on the way, the answer as the result.

Status and artifact updates become progress notifications (when the caller
gave a progress token) and log messages. input-required becomes an
elicitation when the host supports it (the reply continues the same task),
else a result with the question and the ``task_id`` the next call passes.
A cancellation (the host's, a timeout, the session ending) cancels the A2A
task. Every failure is a tool error with one line, never a protocol error.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
from a2a_core import (
    A2AClient,
    Message,
    Part,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    new_id,
)
from a2a_core.client import Credential, sanitize_text, text_of
from mcp import types
from mcp.server.session import ServerSession

from .agents import AgentLink, describe_failure
from .content import FileShelf, parts_to_content, structured_of

if TYPE_CHECKING:
    from mcp.shared.context import RequestContext

__all__ = ["CallSettings", "SessionState", "ToolCall", "tool_error"]

_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string", "description": "your answer"}},
    "required": ["answer"],
}
_ENDED = {
    TaskState.FAILED: "the agent failed the task",
    TaskState.REJECTED: "the agent rejected the task",
    TaskState.CANCELED: "the task was canceled",
}


def tool_error(line: str) -> types.CallToolResult:
    """A failed call as MCP wants it: a result with ``isError``, the session lives on."""
    text = sanitize_text(line, 1000, single_line=True) or "the call failed"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=True)


@dataclass(eq=False)
class SessionState:
    """What one MCP session started: tasks to cancel when it ends, its log level."""

    session: ServerSession | None = None
    log_level: str = "info"
    waiting: dict[str, AgentLink] = field(default_factory=dict[str, AgentLink])
    """Tasks left waiting for input (the fallback): canceled if the session ends first."""

    def logs(self, level: str) -> bool:
        return _LEVELS.index(level) >= _LEVELS.index(self.log_level)


@dataclass(frozen=True, slots=True)
class CallSettings:
    large_file_bytes: int
    shelf: FileShelf
    cancel_timeout: float = 5.0


class ToolCall:
    """One call of one tool, from the first send to the result."""

    def __init__(
        self,
        *,
        tool: str,
        link: AgentLink,
        client: A2AClient,
        ctx: RequestContext[ServerSession, Any, Any],
        state: SessionState,
        settings: CallSettings,
    ) -> None:
        self.tool = tool
        self.link = link
        self.client = client
        self.ctx = ctx
        self.state = state
        self.settings = settings
        self.task_id: str | None = None
        self.settled = False
        self._progress = 0
        self._streamed: set[str] = set()
        """Artifacts whose chunks were reported (their closing update repeats them whole)."""
        meta = ctx.meta
        self._token = meta.progressToken if meta is not None else None

    @property
    def _session(self) -> ServerSession:
        return self.ctx.session

    async def run(self, message: Message, task_id: str | None) -> types.CallToolResult:
        """Send, follow, answer: the tool result (a cancellation cancels the remote task)."""
        if task_id:
            self.task_id = task_id
            self.state.waiting.pop(task_id, None)
        try:
            return await self._converse(message, task_id)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self.cancel_remote()
            raise

    async def cancel_remote(self) -> None:
        """Cancel the A2A task this call runs, if it is still running (bounded, quiet)."""
        if self.task_id is None or self.settled:
            return
        with anyio.move_on_after(self.settings.cancel_timeout):
            # An error: already finished, or the agent is gone; nothing left to stop.
            with contextlib.suppress(Exception):
                await self.client.cancel(self.task_id)

    async def _converse(self, message: Message, task_id: str | None) -> types.CallToolResult:
        while True:
            stream = self.client.stream(message, task=task_id)
            try:
                async for event in stream:
                    await self._report(event)
            finally:
                await stream.aclose()
            if stream.message is not None and stream.task is None:
                self.settled = True
                return self._answer(stream.message.parts, None)
            task = stream.task
            if task is None:
                return tool_error(f"the A2A agent at {self.link.url} answered nothing")
            state = task.status.state
            if state is TaskState.COMPLETED:
                self.settled = True
                return self._answer(_answer_parts(task), task)
            if state in _ENDED:
                self.settled = True
                reason = text_of(task) or "no reason given"
                return tool_error(f"{_ENDED[state]}: {reason}")
            if state is TaskState.INPUT_REQUIRED:
                reply = await self._ask(task)
                if isinstance(reply, types.CallToolResult):
                    return reply
                message, task_id = reply, task.id
                continue
            return tool_error(
                f"the A2A agent's stream ended with the task {state.name.lower()} "
                f"(task {task.id}); it may still finish"
            )

    async def _ask(self, task: Task) -> Message | types.CallToolResult:
        """input-required: elicit the answer, or hand the question back with the task id."""
        question = text_of(task) or "The agent needs more input."
        if self._can_elicit():
            result = await self._session.elicit_form(
                question, _ANSWER_SCHEMA, related_request_id=self.ctx.request_id
            )
            if result.action == "accept" and result.content:
                answer = result.content.get("answer")
                text = str(answer) if answer is not None else ""
                parts = [Part(text=text)] if text else [Part(data=dict(result.content))]
                return Message(
                    message_id=new_id(),
                    role=Role.USER,
                    parts=parts,
                    task_id=task.id,
                    context_id=task.context_id,
                )
            await self.cancel_remote()
            self.settled = True
            return tool_error(f"the user did not answer the agent's question: {question}")
        self.settled = True  # waits for the next call, not for this one
        self.state.waiting[task.id] = self.link
        note = (
            f"{question}\n\n[The agent is waiting for an answer. Call {self.tool} again with "
            f'task_id="{task.id}" and the answer as text.]'
        )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=note)],
            structuredContent={
                "task_id": task.id,
                "state": "input-required",
                "question": question,
            },
        )

    def _can_elicit(self) -> bool:
        wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
        return self._session.check_client_capability(wanted)

    def _answer(self, parts: Sequence[Part], task: Task | None) -> types.CallToolResult:
        content = parts_to_content(
            parts, self.settings.shelf, large_file_bytes=self.settings.large_file_bytes
        )
        meta: dict[str, Any] | None = None
        if task is not None:
            meta = {"a2a": {"taskId": task.id, "contextId": task.context_id}}
        return types.CallToolResult(
            content=content,
            structuredContent=structured_of(parts),
            _meta=meta,  # pyright: ignore[reportCallIssue]
        )

    async def _report(self, event: StreamEvent) -> None:
        if isinstance(event, Task):
            self.task_id = event.id
            return
        if isinstance(event, TaskStatusUpdateEvent):
            self.task_id = event.task_id
            text = text_of(event)
            state = event.status.state.name.lower().replace("_", "-")
            line = f"{state}: {text}" if text else state
        elif isinstance(event, TaskArtifactUpdateEvent):
            self.task_id = event.task_id
            artifact_id = event.artifact.artifact_id
            if event.last_chunk and not event.append and artifact_id in self._streamed:
                return  # the whole artifact again, as it ends: the result carries it
            self._streamed.add(artifact_id)
            line = text_of(event)
            if not line:
                line = f"artifact {event.artifact.name or event.artifact.artifact_id}"
        else:
            return
        line = sanitize_text(line, 1000)
        self._progress += 1
        if self._token is not None:
            await self._session.send_progress_notification(
                self._token,
                float(self._progress),
                message=line,
                related_request_id=str(self.ctx.request_id),
            )
        if self.state.logs("info"):
            await self._session.send_log_message(
                "info",
                {"agent": self.link.url, "task": self.task_id, "update": line},
                logger=self.tool,
                related_request_id=self.ctx.request_id,
            )


def _answer_parts(task: Task) -> list[Part]:
    parts = [p for a in task.artifacts for p in a.parts]
    if parts:
        return parts
    if task.status.message is not None:
        return list(task.status.message.parts)
    for message in reversed(task.history):
        if message.role is Role.AGENT:
            return list(message.parts)
    return []


def caller_credential(ctx: RequestContext[ServerSession, Any, Any]) -> Credential | None:
    """The bearer token the MCP caller sent over Streamable HTTP (None over stdio)."""
    request = ctx.request
    headers: Mapping[str, str] | None = getattr(request, "headers", None)
    if headers is None:
        return None
    return Credential.from_authorization(headers.get("authorization"))


def failure(exc: BaseException, link: AgentLink) -> types.CallToolResult:
    return tool_error(describe_failure(exc, link.url))
