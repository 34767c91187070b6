"""``astream_events`` (v2) of one run, turned into A2A task events as they happen.

- answer tokens become chunks of the ``result`` artifact, each sent when the
  model makes it through the core's ``ArtifactStream`` (``append`` from the
  second chunk on; the end of the answer is marked with ``lastChunk``);
  for a chain they are the runnable's own output stream, for a LangGraph
  graph (or with ``answer_model``) the tokens of the answering chat model;
- tool starts, ends and errors become WORKING status messages (a text and a
  data part), marked as progress so they never re-enter a conversation;
- a custom event named ``a2a.status`` becomes a WORKING status message;
- a LangGraph ``__interrupt__`` is collected for the caller to ask for input.

At the end the final output decides (``ArtifactStream.close``): when it says
the same as the streamed text, the closing update carries it whole; otherwise
the artifact is replaced by the final answer (a streamed preamble before a tool call, a chain step
that rewrote the model's text, structured output).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

from a2a_core.server import ArtifactStream, TaskUpdater
from a2a_core.types import Part, TaskState
from langchain_core.messages import BaseMessage, ToolMessage

from ._convert import PROGRESS_KEY, jsonable
from ._files import files_in

__all__ = ["ANSWER_ARTIFACT", "EventMapper", "ToolUpdates"]

ANSWER_ARTIFACT = "result"
ToolUpdates = Literal["full", "names", "off"]

_MAX_DETAIL_CHARS = 4000
_NOSTREAM_TAGS = frozenset({"nostream", "langsmith:nostream"})


def _bounded(value: Any) -> Any:
    """Tool inputs and outputs as JSON data, cut to a readable size."""
    if isinstance(value, ToolMessage):
        value = value.content
    data = jsonable(value)
    text = json.dumps(data, ensure_ascii=False, default=str)
    if len(text) <= _MAX_DETAIL_CHARS:
        return data
    return text[: _MAX_DETAIL_CHARS - 1] + "\u2026"


def chunk_text(chunk: Any) -> str | None:
    """The text of a stream chunk (str, message chunk, generation chunk), None if not text."""
    if isinstance(chunk, str):
        return chunk
    if isinstance(chunk, BaseMessage):
        return chunk.text
    text = getattr(chunk, "text", None)
    if isinstance(text, str) and not isinstance(chunk, Mapping):
        return text
    return None


class EventMapper:
    """Maps the events of one run; holds what the caller needs at the end."""

    def __init__(
        self,
        updater: TaskUpdater,
        *,
        model_tokens: bool,
        answer_model: Sequence[str] = (),
        tool_updates: ToolUpdates = "full",
    ) -> None:
        self.updater = updater
        self.answer = ArtifactStream(updater, ANSWER_ARTIFACT)
        self.model_tokens = model_tokens
        self.answer_model = frozenset(answer_model)
        self.tool_updates = tool_updates
        self.root_id: str | None = None
        self.output: Any = None
        self.finished = False
        self.interrupts: list[Any] = []
        self.files: list[Part] = []
        """Files the run's tools returned (they join the answer)."""
        self._tool_runs: set[str] = set()

    def _in_tool(self, event: Mapping[str, Any]) -> bool:
        parents = cast(Sequence[str], event.get("parent_ids") or ())
        return any(p in self._tool_runs for p in parents)

    def _is_answer_model(self, event: Mapping[str, Any]) -> bool:
        tags = set(cast(Sequence[str], event.get("tags") or ()))
        if self.answer_model:
            metadata = cast(Mapping[str, Any], event.get("metadata") or {})
            names = {event.get("name"), metadata.get("langgraph_node")}
            return bool(self.answer_model & (names | tags))
        return not (tags & _NOSTREAM_TAGS) and not self._in_tool(event)

    async def handle(self, event: Mapping[str, Any]) -> None:
        kind = cast(str, event.get("event", ""))
        run_id = cast(str, event.get("run_id", ""))
        data = cast(Mapping[str, Any], event.get("data") or {})
        if self.root_id is None:
            self.root_id = run_id
        is_root = run_id == self.root_id
        if kind == "on_chat_model_stream":
            if (self.model_tokens and self._is_answer_model(event)) or (
                is_root and not self.model_tokens
            ):
                await self._token(data.get("chunk"))
        elif kind.endswith("_stream") and is_root:
            chunk = data.get("chunk")
            if isinstance(chunk, Mapping) and "__interrupt__" in chunk:
                found = cast(Mapping[str, Any], chunk)["__interrupt__"]
                self.interrupts.extend(cast(Sequence[Any], found or ()))
            elif not self.model_tokens:
                await self._token(chunk)
        elif kind.endswith("_end") and is_root:
            self.output = data.get("output")
            self.finished = True
        elif kind == "on_tool_start":
            nested = self._in_tool(event)
            self._tool_runs.add(run_id)
            if not nested:
                await self._tool_status(event, "tool_start", data.get("input"))
        elif kind in ("on_tool_end", "on_tool_error") and run_id in self._tool_runs:
            if not self._in_tool(event):
                if kind == "on_tool_end":
                    self.files.extend(files_in(data.get("output")))
                    await self._tool_status(event, "tool_end", data.get("output"))
                else:
                    await self._tool_status(event, "tool_error", data.get("error"))
        elif kind == "on_custom_event" and event.get("name") == "a2a.status":
            await self._custom_status(data)

    async def _token(self, chunk: Any) -> None:
        text = chunk_text(chunk)
        if text:
            await self.answer.write(text)

    async def _tool_status(self, event: Mapping[str, Any], what: str, detail: Any) -> None:
        if self.tool_updates == "off":
            return
        name = str(event.get("name") or "tool")
        text = {
            "tool_start": f"Calling tool {name}",
            "tool_end": f"Tool {name} finished",
            "tool_error": f"Tool {name} failed",
        }[what]
        info: dict[str, Any] = {"tool": name}
        if what == "tool_error":
            info["error"] = type(detail).__name__ if isinstance(detail, BaseException) else "error"
        elif self.tool_updates == "full":
            info["input" if what == "tool_start" else "output"] = _bounded(detail)
        message = self.updater.new_agent_message(
            [Part(text=text), Part(data=info)],
            metadata={PROGRESS_KEY: {"progress": what, "run_id": str(event.get("run_id", ""))}},
        )
        await self.updater.update_status(TaskState.WORKING, message)

    async def _custom_status(self, data: Any) -> None:
        parts = [Part(text=data)] if isinstance(data, str) else [Part(data=jsonable(data))]
        message = self.updater.new_agent_message(
            parts, metadata={PROGRESS_KEY: {"progress": "custom"}}
        )
        await self.updater.update_status(TaskState.WORKING, message)
