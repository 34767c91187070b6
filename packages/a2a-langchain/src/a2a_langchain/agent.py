"""``LangChainAgent``: any LangChain Runnable (chain, agent, LangGraph graph) as an A2A agent.

One run per A2A message: the message becomes the runnable's input (see
``_input``), the run is streamed with ``astream_events`` (v2) and mapped to
task events as they happen (see ``_stream``), and the final output becomes
the ``result`` artifact.

Conversations: the contextId is the conversation (see ``_memory``). It is the
``thread_id`` of every run, so a LangGraph graph with a checkpointer keeps the
conversation itself (it gets only the new message, and runs of one thread are
serialized); a ``RunnableWithMessageHistory`` gets its history keys from the
context; any other runnable that takes messages is given the context's earlier
turns (bounded) and the task's own messages. A LangGraph
``interrupt()`` pauses the task in INPUT_REQUIRED with the interrupt's value;
the next message of the same task resumes the graph (``Command(resume=...)``).
The paused graph lives in its checkpointer: with a durable one shared by every
server instance (``checkpointer=``, ``open_checkpointer``) any instance resumes
it; when the instance answering has no state for the paused thread (an
in-memory checkpointer on another instance, or before a restart), the task
fails with a message saying so and nothing is rerun.

Cancellation cancels the asyncio task running the events loop, which reaches
async tools and model calls; code running in threads can poll
``a2a_context(config).cancelled``. An exception fails the task with the
server's generic message (the details are logged, never sent).
"""

from __future__ import annotations

import asyncio
import logging
import warnings
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, cast

from a2a_core import telemetry
from a2a_core.adapters import ResolvedAgent
from a2a_core.files import FilePolicy, FileRefusedError
from a2a_core.server import AgentExecutor, RequestContext, TaskUpdater
from a2a_core.server.named_inputs import missing_inputs_text
from a2a_core.types import AgentSkill, Message, Part, Role
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import merge_configs

from ._card import (
    default_description,
    default_name,
    default_skill,
    has_checkpointer,
    is_graph,
)
from ._card import input_modes as default_input_modes
from ._card import output_modes as default_output_modes
from ._checkpoint import CheckpointerURL, with_checkpointer
from ._convert import PROGRESS_KEY, data_text, jsonable, output_parts
from ._files import DEFAULT_FILE_POLICY, FileBlocks, accept_files, with_files
from ._hitl import NotAllowedError, hitl_resume, hitl_text, is_hitl
from ._input import InputMode, InputPlan, plan_input, unwrap
from ._memory import Conversation, history_keys, own_memory
from ._stream import EventMapper, ToolUpdates
from ._sync import streamable
from .tracing import OpenTelemetryCallbackHandler, has_handler

__all__ = ["CONTEXT_KEY", "Conversation", "LangChainAgent", "a2a_context"]

CONTEXT_KEY = "a2a_context"
"""The ``configurable`` key holding the A2A ``RequestContext`` of a run."""


logger = logging.getLogger("a2a_langchain")

UNRESUMABLE_TEXT = (
    "The agent asked for input but cannot be resumed (its graph has no checkpointer)."
)
LOST_PAUSE_TEXT = (
    "The agent cannot resume this task: the server instance that received the answer has "
    "no saved state of the paused graph (its checkpointer is not shared by every instance, "
    "or did not survive a restart). Nothing was rerun; send the request again as a new task."
)
MOVED_ON_TEXT = (
    "The agent cannot resume this task: its conversation has no pending question any more "
    "(another task of the same context ran since). Nothing was rerun; send the request "
    "again as a new task."
)

NO_ANSWER_TEXT = "The agent finished without an answer."

_QUESTION_KEYS = ("question", "prompt", "message", "text", "query", "content")


def a2a_context(config: RunnableConfig | None) -> RequestContext | None:
    """The A2A request a run serves, from its config (None outside an A2A run).

    Give a tool or ``RunnableLambda`` a ``config: RunnableConfig`` parameter to
    read the task and context ids, the message's parts (files included) and
    the cancellation flag (``.cancelled``) of the task.
    """
    if not config:
        return None
    found = cast(Mapping[str, Any], config.get("configurable") or {}).get(CONTEXT_KEY)
    return found if isinstance(found, RequestContext) else None


def _skill(value: AgentSkill | Mapping[str, Any]) -> AgentSkill:
    return value if isinstance(value, AgentSkill) else AgentSkill.model_validate(value)


def _interrupt_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if is_hitl(value):
        return hitl_text(cast(Mapping[str, Any], value))
    if isinstance(value, Mapping):
        mapping = cast(Mapping[str, Any], value)
        for key in _QUESTION_KEYS:
            found = mapping.get(key)
            if isinstance(found, str) and found:
                return found
    return data_text(jsonable(value))


class LangChainAgent(AgentExecutor):
    """Serves a LangChain ``Runnable``: a chain, an agent, a compiled LangGraph graph.

    - ``name``, ``description``, ``version``, ``skills``, ``input_modes``,
      ``output_modes``: what the card says (derived from the runnable by default);
    - ``input_mode``: ``"auto"`` (from the input schema), ``"text"``,
      ``"messages"`` or ``"dict"``; ``input_key`` names the field that receives
      the text (or the conversation);
    - ``answer_model``: the name(s) or tag(s) of the chat model(s) whose tokens
      are the answer (also matches a LangGraph node name); by default a chain
      streams its own output and a graph every model not called from a tool;
    - ``stream``: False runs ``ainvoke`` and sends the answer once;
    - ``conversation``: what a runnable that takes messages is given:
      ``"context"`` (the context's earlier turns, at most ``history_limit``
      messages, then the task's own), ``"task"`` (the task's messages only),
      ``"thread"`` (the new message only: the runnable remembers by
      ``thread_id``) or ``"auto"`` (thread for a graph with a checkpointer or a
      ``RunnableWithMessageHistory``, else context);
    - ``history_limit``: the most messages of earlier tasks given (``"context"``);
    - ``runnable_config``: a ``RunnableConfig`` merged into every run (callbacks,
      tags, metadata, recursion_limit...); the same name in ``serve``,
      ``a2a_core``'s ``serve``/``running_server`` and ``a2a serve -o`` (``config``
      is an older spelling, kept with a ``DeprecationWarning``);
    - ``tool_updates``: ``"full"`` (tool names, inputs and outputs as WORKING
      status messages), ``"names"`` or ``"off"``;
    - ``file_policy``: which incoming files are accepted (size, count, media
      types; ``a2a_core.files.FilePolicy``, None accepts any); a refused file
      fails the task with the reason;
    - ``file_blocks``: how files reach the model as content blocks: ``"auto"``
      (bytes as base64 blocks, URL files as URL blocks) or ``"base64"`` (URL
      files are downloaded first, within ``file_policy.max_bytes``, through the
      SSRF URL policy ``url_policy``: public addresses only by default), for
      models that take no URLs;
    - ``checkpointer``: a LangGraph ``BaseCheckpointSaver`` the graph runs with
      (replacing the one it was compiled with). A durable one shared by every
      server instance (``a2a_langchain.open_checkpointer``: SQLite, PostgreSQL; or
      any saver, Redis...) lets a task paused by ``interrupt()`` on one
      instance be answered through any other. A URL (``"sqlite:///x.db"``,
      ``"postgresql://..."``; what ``a2a serve -o checkpointer=URL`` gives) is
      checked now, opened in the serving loop at the first run and closed when
      the app stops.
    """

    starts_task_at_once = True  # every run is a task: streams announce it before the run

    def __init__(
        self,
        runnable: Runnable[Any, Any],
        *,
        name: str | None = None,
        description: str | None = None,
        version: str | None = None,
        skills: Sequence[AgentSkill | Mapping[str, Any]] | None = None,
        input_mode: InputMode = "auto",
        input_key: str | None = None,
        answer_model: str | Sequence[str] | None = None,
        stream: bool = True,
        conversation: Conversation = "auto",
        history_limit: int = 40,
        runnable_config: RunnableConfig | None = None,
        tool_updates: ToolUpdates = "full",
        input_modes: Sequence[str] | None = None,
        output_modes: Sequence[str] | None = None,
        file_policy: FilePolicy | None = DEFAULT_FILE_POLICY,
        file_blocks: FileBlocks = "auto",
        url_policy: Any = None,
        checkpointer: Any = None,
        config: RunnableConfig | None = None,
    ) -> None:
        if not isinstance(runnable, Runnable):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(
                f"LangChainAgent serves LangChain Runnables, not {type(runnable).__name__}"
            )
        self.checkpointer_url: CheckpointerURL | None = None
        """The checkpointer given by URL, opened at the first run (None: none, or a saver)."""
        if isinstance(checkpointer, str):
            if not is_graph(runnable):
                raise TypeError("checkpointer= needs a compiled LangGraph graph")
            self.checkpointer_url = CheckpointerURL(checkpointer)
        elif checkpointer is not None:
            runnable = with_checkpointer(runnable, checkpointer)
        self._unsaved_runnable = runnable
        self._attached: Any = None
        if input_mode not in ("auto", "text", "messages", "dict"):
            raise ValueError(f"input_mode must be auto, text, messages or dict, not {input_mode!r}")
        if conversation not in ("auto", "context", "thread", "task"):
            raise ValueError(
                f"conversation must be auto, context, thread or task, not {conversation!r}"
            )
        if history_limit < 0:
            raise ValueError(f"history_limit must be 0 or more, not {history_limit}")
        if tool_updates not in ("full", "names", "off"):
            raise ValueError(f"tool_updates must be full, names or off, not {tool_updates!r}")
        if file_blocks not in ("auto", "base64"):
            raise ValueError(f"file_blocks must be auto or base64, not {file_blocks!r}")
        self.file_policy = file_policy
        self.file_blocks: FileBlocks = file_blocks
        self.url_policy = url_policy
        self.runnable = streamable(runnable)
        self.graph = is_graph(runnable)
        self.plan: InputPlan = plan_input(runnable, input_mode, input_key)
        self.name = name or default_name(runnable)
        self.description = description or default_description(runnable, self.name)
        self.version = version
        self.input_modes = list(input_modes or default_input_modes(self.plan))
        self.output_modes = list(output_modes or default_output_modes(runnable))
        self.skills = (
            [_skill(s) for s in skills]
            if skills is not None
            else [
                default_skill(
                    runnable,
                    self.name,
                    self.description,
                    self.input_modes,
                    self.output_modes,
                    self.plan,
                )
            ]
        )
        if isinstance(answer_model, str):
            answer_model = [answer_model]
        self.answer_model: tuple[str, ...] = tuple(answer_model or ())
        self.stream = stream
        self.resumable = self.graph and (
            self.checkpointer_url is not None or has_checkpointer(runnable)
        )
        """Whether an interrupted run can be resumed (a graph with a checkpointer)."""
        if conversation == "auto":
            remembers = self.resumable or own_memory(runnable, self.graph)
            conversation = "thread" if remembers else "context"
        self.conversation: Conversation = conversation
        self.history_limit = history_limit
        self.threaded = conversation == "thread"
        if config is not None:
            if runnable_config is not None:
                raise TypeError("give runnable_config= only (config= is its older spelling)")
            warnings.warn(
                "LangChainAgent(config=...) is now runnable_config=",
                DeprecationWarning,
                stacklevel=2,
            )
            runnable_config = config
        self.config: RunnableConfig = runnable_config or {}
        """The ``runnable_config`` merged into every run."""
        self.tool_updates: ToolUpdates = tool_updates
        self._thread_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )

    def __repr__(self) -> str:
        return f"LangChainAgent({self.name!r}, input={self.plan.mode}, threaded={self.threaded})"

    def resolved(self) -> ResolvedAgent:
        """This agent with what its card should say (what ``serve`` and the plugin use)."""
        return ResolvedAgent(
            self,
            name=self.name,
            description=self.description,
            version=self.version,
            skills=tuple(self.skills),
            input_modes=tuple(self.input_modes),
            output_modes=tuple(self.output_modes),
            adapter="langchain",
        )

    # -- one run -------------------------------------------------------------------------
    def run_config(self, context: RequestContext) -> RunnableConfig:
        """The config of the run serving ``context``: thread, tracing names and ids."""
        user_configurable = cast(Mapping[str, Any], self.config.get("configurable") or {})
        configurable: dict[str, Any] = {CONTEXT_KEY: context}
        if "thread_id" not in user_configurable:
            configurable["thread_id"] = context.context_id
        configurable.update(history_keys(self.runnable, context, user_configurable))
        own: RunnableConfig = {
            "tags": ["a2a"],
            "metadata": {
                "a2a_task_id": context.task_id,
                "a2a_context_id": context.context_id,
                "a2a_message_id": context.message.message_id,
                "a2a_agent": self.name,
            },
            "configurable": configurable,
        }
        if "run_name" not in self.config:
            own["run_name"] = self.name
        if telemetry.enabled() and not has_handler(self.config.get("callbacks")):
            # Added beside the user's callbacks (LangSmith's tracer too), never instead.
            own["callbacks"] = [OpenTelemetryCallbackHandler()]
        return merge_configs(self.config, own)

    def _thread_lock(self, thread_id: str) -> asyncio.Lock:
        lock = self._thread_locks.get(thread_id)
        if lock is None:
            lock = asyncio.Lock()
            self._thread_locks[thread_id] = lock
        return lock

    async def _input(
        self, context: RequestContext, config: RunnableConfig, message: Message
    ) -> Any:
        if self.resumable and context.is_continuation:
            graph: Any = unwrap(self.runnable)
            state = await graph.aget_state(config)
            pending = list(getattr(state, "interrupts", ()) or ())
            if pending:
                try:
                    return _resume(pending, message)
                except NotAllowedError as exc:
                    return _Reask(str(exc), pending)
            if _asked_by_interrupt(context):
                # Running the graph now would start it over: say why it cannot resume.
                saved = getattr(state, "created_at", None) is not None
                thread = cast(Mapping[str, Any], config.get("configurable") or {})["thread_id"]
                logger.warning(
                    "agent %r: task %s was paused by interrupt(), but the checkpointer %s for "
                    "thread %r; the task fails. Give every instance one durable checkpointer "
                    "(LangChainAgent(checkpointer=...), a2a_langchain.open_checkpointer).",
                    self.name,
                    context.task_id,
                    "has no pending interrupt" if saved else "has no state",
                    thread,
                )
                return _LostPause(MOVED_ON_TEXT if saved else LOST_PAUSE_TEXT)
        history = [
            message if m.message_id == message.message_id else m for m in context.task.history
        ]
        if self.conversation == "context" and self.plan.takes_conversation:
            history = [*await context.earlier_turns(self.history_limit), *history]
        return self.plan.build(message, history, threaded=self.threaded)

    async def _attach_saver(self) -> None:
        """Run on the saver of ``checkpointer_url`` (opened in this loop at the first run)."""
        assert self.checkpointer_url is not None
        saver = await self.checkpointer_url.saver()
        if saver is not self._attached:
            self.runnable = with_checkpointer(self._unsaved_runnable, saver)
            self._attached = saver

    async def aclose_checkpointer(self) -> None:
        """Close the saver opened for ``checkpointer_url`` (the plugin does it at app stop)."""
        if self.checkpointer_url is not None:
            await self.checkpointer_url.aclose()

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        if self.checkpointer_url is not None:
            await self._attach_saver()
        config = self.run_config(context)
        if not (self.threaded or self.resumable):
            await self._run(context, updater, config)
            return
        thread_id = str(cast(Mapping[str, Any], config.get("configurable") or {})["thread_id"])
        lock = self._thread_lock(thread_id)
        async with lock:
            await self._run(context, updater, config)

    async def _run(
        self, context: RequestContext, updater: TaskUpdater, config: RunnableConfig
    ) -> None:
        try:
            message = await accept_files(
                context.message, self.file_policy, self.file_blocks, self.url_policy
            )
        except FileRefusedError as exc:
            await updater.fail(str(exc))
            return
        value = await self._input(context, config, message)
        if isinstance(value, _LostPause):
            await updater.fail(value.text)
            return
        if isinstance(value, _Reask):
            await updater.require_input(_question(updater, value.pending, value.text))
            return
        missing = self.plan.missing(value)
        if missing:
            await updater.fail(missing_inputs_text("agent", missing))
            return
        await updater.start_work()
        mapper = EventMapper(
            updater,
            model_tokens=self.graph or bool(self.answer_model),
            answer_model=self.answer_model,
            tool_updates=self.tool_updates,
        )
        if self.stream:
            async for event in self.runnable.astream_events(value, config, version="v2"):
                await mapper.handle(cast(Mapping[str, Any], event))
            output = mapper.output
        else:
            output = await self.runnable.ainvoke(value, config)
            if isinstance(output, Mapping) and "__interrupt__" in output:
                found = cast(Mapping[str, Any], output)["__interrupt__"]
                mapper.interrupts.extend(cast(Sequence[Any], found or ()))
        if mapper.interrupts and not self.resumable:
            logger.warning(
                "agent %r: the graph called interrupt() but has no checkpointer, so it can "
                "never be resumed; compile it with one (e.g. checkpointer=InMemorySaver())",
                self.name,
            )
            await updater.fail(UNRESUMABLE_TEXT)
            return
        if mapper.interrupts:
            await mapper.answer.close()
            await updater.require_input(_question(updater, mapper.interrupts))
            return
        await mapper.answer.close(with_files(output_parts(output), mapper.files))
        if not mapper.answer.written:
            # ``None`` (or an empty output): say so rather than complete with nothing.
            await updater.complete(updater.new_agent_message([Part(text=NO_ANSWER_TEXT)]))


class _Reask:
    """A reply the paused graph cannot take (a decision its middleware does not allow)."""

    __slots__ = ("pending", "text")

    def __init__(self, text: str, pending: Sequence[Any]) -> None:
        self.text = text
        self.pending = pending


class _LostPause:
    """A paused task whose graph state is not here: why it cannot be resumed."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _asked_by_interrupt(context: RequestContext) -> bool:
    """Whether the agent's last message in the task was an ``interrupt()`` question."""
    for message in reversed(context.task.history):
        if message.message_id == context.message.message_id or message.role is not Role.AGENT:
            continue
        marker = (message.metadata or {}).get(PROGRESS_KEY)
        return isinstance(marker, Mapping) and "interrupts" in marker
    return False


def _question(updater: TaskUpdater, interrupts: Sequence[Any], note: str = "") -> Message:
    """The input-required message: each interrupt's text, and its value as data
    (``note``: why the previous reply could not be taken)."""
    parts: list[Part] = [Part(text=note)] if note else []
    ids: list[str] = []
    for interrupt in interrupts:
        value = getattr(interrupt, "value", interrupt)
        interrupt_id = getattr(interrupt, "id", None)
        if interrupt_id:
            ids.append(str(interrupt_id))
        parts.append(Part(text=_interrupt_text(value)))
        if not isinstance(value, str):
            parts.append(Part(data=jsonable(value)))
    if not parts:
        parts.append(Part(text="The agent needs more input."))
    return updater.new_agent_message(parts, metadata={PROGRESS_KEY: {"interrupts": ids}})


def _resume_value(message: Message) -> Any:
    """What a reply resumes the graph with: a data-only reply's data, else its text."""
    data = [p.data for p in message.parts if p.data is not None]
    if len(data) == 1 and len(message.parts) == 1:
        return data[0]
    return message.text


def _answer_for(interrupt: Any, message: Message) -> Any:
    """What one interrupt is resumed with: a human-in-the-loop middleware decision
    (``_hitl``), else the reply's data or text."""
    value = getattr(interrupt, "value", None)
    if is_hitl(value):
        return hitl_resume(cast(Mapping[str, Any], value), message)
    return _resume_value(message)


def _resume(pending: Sequence[Any], message: Message) -> Any:
    from langgraph.types import Command

    if len(pending) == 1:
        return Command(resume=_answer_for(pending[0], message))
    ids = [str(getattr(i, "id", "")) for i in pending]
    value: Any = _resume_value(message)
    keyed = cast(Mapping[str, Any], value) if isinstance(value, Mapping) else None
    if keyed is not None and set(keyed) >= set(ids):
        return Command(resume=keyed)
    resume = {i: _answer_for(p, message) for i, p in zip(ids, pending, strict=True)}
    return Command(resume=resume)
