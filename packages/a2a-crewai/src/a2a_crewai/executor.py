"""``CrewAgent``: a CrewAI ``Crew``, a single ``Agent`` or a ``Flow`` as an A2A agent executor.

Each request runs on its own copy of the crew (one crew instance cannot run
twice at once), in a worker thread of its own (CrewAI calls models and
tools synchronously), at most ``max_parallel`` at a time. What the crew does
reaches the client while it works:

- task starts and completions, agent steps and tool use: WORKING status
  updates (with a ``crewai`` metadata entry saying which event it was);
- each task's output: an artifact of its own (``task-1``, ``task-2``...,
  marked ``intermediate`` in its metadata: a step, not the answer) when
  ``per_task_artifacts`` is on; the crew's final output: the ``result``
  artifact (text, plus a data part for structured output); with streaming
  models (``Crew(stream=True)``) the outputs arrive token by token;
- a flow (``_flows``): each step's start and end are WORKING updates, its final
  output is the ``result`` artifact, and its ``@human_feedback`` steps and
  ``ask()`` calls go INPUT_REQUIRED (``_flow_human``) like human input below;
- ``Task(human_input=True)``: the task goes INPUT_REQUIRED with the draft
  answer, and the next message on the same task is the feedback; waiting
  crews are bounded in time (``input_timeout``) and in count (``max_paused``);
  a paused crew lives in this process only: an answer that reaches another
  instance (or this one after a restart, or after ``input_timeout``) fails
  the task with a message saying why, and the crew is never started over;
- cancel: the crew stops at its next step and the task ends CANCELED;
- an exception: the task ends FAILED with a generic message (the details
  are logged, never sent).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Literal, cast

from a2a_core import telemetry
from a2a_core.adapters import ResolvedAgent
from a2a_core.errors import ServerBusyError
from a2a_core.files import FilePolicy, FileRefusedError
from a2a_core.server import (
    AgentExecutor,
    ArtifactStream,
    RequestContext,
    TaskUpdater,
    new_instance_id,
)
from a2a_core.server.named_inputs import missing_inputs_text
from a2a_core.types import AgentSkill, Message, Part, TaskState

from . import _events
from ._card import INPUT_MODES, OUTPUT_MODES, default_description, default_name, default_skill
from ._files import DEFAULT_FILE_POLICY, receive_files, redirect_outputs
from ._flow_human import install_providers
from ._flows import (
    FlowOutput,
    check_flow,
    flow_description,
    flow_inputs,
    flow_name,
    flow_text_input,
    is_flow,
    new_flow,
    state_fields,
)
from ._inputs import chat_messages, crew_inputs, placeholders
from ._paused import lost_pause_text, mark_paused, paused_on
from ._runs import (
    Canceled,
    Chunk,
    CrewRun,
    Failed,
    Finished,
    NeedInput,
    Progress,
    TaskDone,
)
from ._work import start_worker
from .tracing import install_tracing

__all__ = ["CrewAgent"]

RESULT_ARTIFACT = "result"
logger = logging.getLogger("a2a_crewai")
DEFAULT_MAX_PAUSED = 64
"""Crews that may wait for input at once, by default (each keeps a thread and its crew copy)."""
_CANCEL_WAIT_SECONDS = 3.0


def _is_crew(target: object) -> bool:
    from crewai import Crew

    return isinstance(target, Crew)


def _kind(target: object) -> str:
    """What ``target`` is: "crew", "agent" or "flow" (TypeError for anything else)."""
    if _is_crew(target):
        return "crew"
    if _is_agent(target):
        return "agent"
    if is_flow(target):
        return "flow"
    kind = target.__name__ if isinstance(target, type) else type(target).__name__
    raise TypeError(f"CrewAgent serves a crewai.Crew, Agent or Flow, not {kind}")


def _is_agent(target: object) -> bool:
    from crewai.agents.agent_builder.base_agent import BaseAgent

    return isinstance(target, BaseAgent)


class _Artifacts:
    """Turns a run's chunks and outputs into artifact updates (one per task, plus ``result``).

    Each artifact streams through the core's ``ArtifactStream``: every chunk
    leaves at once, the end is marked with ``lastChunk``, and a final output that
    differs from what was streamed (a revised answer, tool-call turns) replaces it.
    """

    def __init__(self, run: CrewRun, per_task: bool) -> None:
        self.run = run
        self.per_task = per_task
        self.streams: dict[str, ArtifactStream] = {}
        self.updater: TaskUpdater | None = None

    def _target(self, index: int | None) -> tuple[str, str] | None:
        count = self.run.task_count
        if count <= 1 or index == count:
            return RESULT_ARTIFACT, RESULT_ARTIFACT
        if index is None or not self.per_task:
            return None
        return f"task-{index}", f"task {index}"

    def _new_stream(self, artifact_id: str, name: str) -> ArtifactStream:
        assert self.updater is not None
        step = None if artifact_id == RESULT_ARTIFACT else {"intermediate": True}  # a step
        return ArtifactStream(self.updater, artifact_id, name=name, metadata=step)

    def _stream(self, artifact_id: str, name: str) -> ArtifactStream:
        stream = self.streams.get(artifact_id)
        if stream is None:
            stream = self.streams[artifact_id] = self._new_stream(artifact_id, name)
        return stream

    async def chunk(self, item: Chunk) -> None:
        target = self._target(item.task_index)
        if target is not None:
            await self._stream(*target).write(item.text)

    async def flush(self) -> None:
        """Before pausing: nothing is held any more (every chunk left when it came)."""
        for stream in self.streams.values():
            await stream.flush()

    async def _final(
        self, artifact_id: str, name: str, parts: list[Part], description: str | None = None
    ) -> None:
        stream = self.streams.pop(artifact_id, None)
        if stream is None:
            stream = self._new_stream(artifact_id, name)
        stream.description = description
        await stream.close(parts)

    async def task_done(self, item: TaskDone) -> None:
        if not self.per_task or item.index >= self.run.task_count:
            return  # the last task's output is the crew's: it arrives as ``result``
        await self._final(f"task-{item.index}", item.name, item.parts, item.description or None)

    async def finish(self, item: Finished) -> None:
        await self._final(RESULT_ARTIFACT, RESULT_ARTIFACT, item.parts)


class CrewAgent(AgentExecutor):
    """Serves a CrewAI ``Crew``, ``Agent`` or ``Flow`` over A2A (see the module docstring).

    - ``name``, ``description``, ``skills``, ``version``: what the card says
      (default: from the crew's name, agents and tasks, the agent's role and goal, or the
      flow's name and docstring);
    - ``max_parallel``: crews running at once in this process (others wait);
    - ``inputs_key``: the kickoff input the message text fills (default: the
      crew's only unfilled placeholder, or the only text field of a flow's
      structured state, else ``input``); a data part with a JSON object gives
      named inputs;
    - ``per_task_artifacts``: each task's output as an artifact of its own;
    - ``stream``: forward model tokens as artifact chunks (default: ``crew.stream``);
    - ``max_feedback_rounds``: revisions per human-input task before its answer is final;
    - ``input_timeout``: how long a paused crew waits for the client's answer (seconds);
    - ``file_policy``: which incoming files are accepted (size, count, media
      types; None accepts any); a refused file fails the task with the reason.
      Accepted files are saved for the run and listed in the kickoff text (or a
      ``{files}`` placeholder), and given as ``input_files`` when CrewAI's file
      support is installed (``a2a-crewai[files]``) and every agent's model is multimodal;
    - ``file_tool``: give every agent ``read_input_file`` when files arrive.
    - ``output_dir``: where each run's tasks write their ``output_file``
      (``output_dir/<task id>/...``, kept); default: a private folder per run, removed
      when it ends. Either way concurrent runs never share an output file.
    - ``max_paused``: crews waiting for input at once (each holds a thread and its crew
      copy): beyond it new requests are refused with a retryable ``ServerBusyError``
      (reason ``paused_crews_full``), and a crew that would pause anyway fails its task
      saying so. Answering or canceling a waiting task frees its place.
    - ``conversation`` (a single ``Agent``): ``"context"`` (default) gives the agent
      the context's earlier turns, at most ``history_limit`` messages, before the
      task's own, so a follow-up in the same context is understood; ``"task"``
      gives only the task's messages. A crew takes inputs, not a conversation.
    """

    starts_task_at_once = True  # every kickoff is a task: streams announce it before it runs

    def __init__(
        self,
        crew_or_agent: Any,
        *,
        name: str | None = None,
        description: str | None = None,
        skills: Sequence[AgentSkill] | None = None,
        version: str | None = None,
        max_parallel: int = 4,
        inputs_key: str | None = None,
        per_task_artifacts: bool = True,
        stream: bool | None = None,
        max_feedback_rounds: int = 1,
        input_timeout: float = 3600.0,
        file_policy: FilePolicy | None = DEFAULT_FILE_POLICY,
        file_tool: bool = True,
        max_paused: int = DEFAULT_MAX_PAUSED,
        output_dir: str | os.PathLike[str] | None = None,
        conversation: Literal["context", "task"] = "context",
        history_limit: int = 40,
    ) -> None:
        self.kind = _kind(crew_or_agent)
        self.is_crew = self.kind == "crew"
        if max_parallel < 1:
            raise ValueError("max_parallel must be at least 1")
        if max_feedback_rounds < 1:
            raise ValueError("max_feedback_rounds must be at least 1")
        if max_paused < 1:
            raise ValueError("max_paused must be at least 1")
        if conversation not in ("context", "task"):
            raise ValueError(f"conversation must be context or task, not {conversation!r}")
        if history_limit < 0:
            raise ValueError(f"history_limit must be 0 or more, not {history_limit}")
        self.conversation = conversation
        self.history_limit = history_limit
        self.target = crew_or_agent
        flow = self.kind == "flow"
        self.name = name or (flow_name if flow else default_name)(crew_or_agent)
        self.description = description or (flow_description if flow else default_description)(
            crew_or_agent
        )
        if flow:
            check_flow(crew_or_agent)
            self.expected_inputs = list(state_fields(crew_or_agent) or [])
            text_input = flow_text_input(crew_or_agent, inputs_key)
        else:
            self.expected_inputs = placeholders(crew_or_agent)
            text_input = inputs_key
        self.skills = list(
            skills
            if skills is not None
            else [
                default_skill(
                    crew_or_agent, self.name, self.description, self.expected_inputs, text_input
                )
            ]
        )
        self.version = version
        self.max_parallel = max_parallel
        self.inputs_key = inputs_key
        self.per_task_artifacts = per_task_artifacts
        if flow:  # a flow answers with its last step's value; stream=True would change kickoff
            self.stream = False
        else:
            self.stream = (
                bool(getattr(crew_or_agent, "stream", False)) if stream is None else stream
            )
        self.max_feedback_rounds = max_feedback_rounds
        self.input_timeout = input_timeout
        self.file_policy = file_policy
        self.file_tool = file_tool
        self.max_paused = max_paused
        self.output_dir = output_dir
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )
        self._active: dict[str, CrewRun] = {}
        self._paused: dict[str, CrewRun] = {}
        self.instance = new_instance_id()
        """Names this process's crews in the questions they ask (``crewai.paused_on``)."""

    def resolved(self) -> ResolvedAgent:
        """This executor with its card defaults (what the plugin hands to the core)."""
        return ResolvedAgent(
            self,
            name=self.name,
            description=self.description,
            version=self.version,
            skills=self.skills,
            input_modes=INPUT_MODES,
            output_modes=OUTPUT_MODES,
            adapter="crewai",
        )

    # -- execution ------------------------------------------------------------------
    def admit(self, context: RequestContext) -> None:
        """Refuse new work while ``max_paused`` crews wait for input (answers are admitted)."""
        if context.is_continuation and context.task_id in self._paused:
            return
        if self._waiting() >= self.max_paused:
            raise ServerBusyError(
                f"{self.max_paused} tasks already wait for input on this agent; "
                "answer or cancel one, or retry later",
                data={
                    "reason": "paused_crews_full",
                    "retryable": True,
                    "max_paused": self.max_paused,
                },
            )

    def _waiting(self) -> int:
        """Crews waiting for input (a canceled or ended one leaves at once, not when its
        thread has noticed)."""
        gone = [k for k, r in self._paused.items() if r.cancelled or r.finished.is_set()]
        for task_id in gone:
            del self._paused[task_id]
        return len(self._paused)

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        paused = self._paused.pop(context.task_id, None) if context.is_continuation else None
        if paused is not None and not paused.finished.is_set() and not paused.cancelled:
            await self._continue(paused, context, updater)
        elif not await self._answer_lost(context, updater):
            await self._start(context, updater)

    async def _answer_lost(self, context: RequestContext, updater: TaskUpdater) -> bool:
        """Fail an answer to a crew that does not wait here (never rerun it); True if so."""
        instance = paused_on(context) if context.is_continuation else None
        if instance is None:
            return False
        logger.warning(
            "agent %r: an answer to task %s arrived on instance %s, but its crew paused on %s "
            "and does not wait here; the task fails (paused crews cannot move between "
            "processes: route a task's answers to the instance that asked)",
            self.name,
            context.task_id,
            self.instance,
            instance,
        )
        await updater.fail(lost_pause_text(instance, self.instance, self.input_timeout))
        return True

    async def cancel(self, context: RequestContext, updater: TaskUpdater) -> None:
        """Stop the crew (the token already did) and give it a moment to reach its next step."""
        run = self._active.get(context.task_id)
        if run is None:
            return
        run.cancel()
        await asyncio.to_thread(run.finished.wait, _CANCEL_WAIT_SECONDS)

    def _slot(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        slot = self._slots.get(loop)
        if slot is None:
            slot = self._slots[loop] = asyncio.Semaphore(self.max_parallel)
        return slot

    def _kickoff(
        self, run: CrewRun, context: RequestContext, earlier: Sequence[Message] = ()
    ) -> Callable[[], Any] | str:
        """The call that runs a fresh copy for this request, or why it cannot run
        (``earlier``: the context's earlier turns, for a single agent)."""
        try:
            files = receive_files(context.message, self.file_policy)
        except FileRefusedError as exc:
            return str(exc)
        run.files = files
        listing = files.listing() if files else None
        if self.kind == "flow":
            inputs = flow_inputs(context.message, self.target, self.inputs_key, listing)
            if isinstance(inputs, str):
                files.cleanup()
                return inputs
            flow = run.flow = new_flow(self.target)
            flow.stream = False
            return lambda: FlowOutput.of(flow, flow.kickoff(inputs=inputs))
        if self.is_crew:
            plan = crew_inputs(context.message, self.expected_inputs, self.inputs_key, listing)
            if plan.missing:
                files.cleanup()
                return missing_inputs_text("crew", plan.missing)
            copy = self.target.copy()
            agents = [*copy.agents, *([copy.manager_agent] if copy.manager_agent else [])]
            if getattr(copy, "manager_llm", None) is None or copy.manager_agent is not None:
                run.agent_ids = {str(a.id) for a in agents}  # else: a manager joins at kickoff
            run.outputs = redirect_outputs(copy.tasks, context.task_id, self.output_dir)
            run.task_ids = {str(t.id): i for i, t in enumerate(copy.tasks, start=1)}
            run.task_count = len(copy.tasks)
            if self.stream:
                copy.stream = False  # we read the tokens from the event bus instead
                for agent in agents:
                    _stream_llm(agent)
            if files and self.file_tool:
                for agent in agents:
                    _give_file_tool(agent)
            inputs = plan.inputs
            manager_llm = getattr(copy, "manager_llm", None)
            readers = [*agents, *([_ModelOf(manager_llm)] if manager_llm is not None else [])]
            native = files.input_files(readers)
            if native is not None:
                return lambda: copy.kickoff(inputs=inputs, input_files=native)
            return lambda: copy.kickoff(inputs=inputs)
        messages = chat_messages([*earlier, *context.task.history], context.message, listing)
        if not messages:
            return "Send a message with some text for the agent to work on"
        agent = self.target.copy()
        run.agent_ids = {str(agent.id)}
        if self.stream:
            _stream_llm(agent)
        if files and self.file_tool:
            _give_file_tool(agent)
        native = files.input_files([agent])
        if native is not None:
            return lambda: agent.kickoff(messages=messages, input_files=native)
        return lambda: agent.kickoff(messages=messages)

    async def _start(self, context: RequestContext, updater: TaskUpdater) -> None:
        loop = asyncio.get_running_loop()
        run = CrewRun(
            task_id=context.task_id,
            loop=loop,
            input_timeout=self.input_timeout,
            max_feedback_rounds=self.max_feedback_rounds,
            credential=context.credential,
        )
        earlier = (
            await context.earlier_turns(self.history_limit)
            if not self.is_crew and self.conversation == "context"
            else []
        )
        kickoff = self._kickoff(run, context, earlier)
        if isinstance(kickoff, str):
            await updater.fail(kickoff)
            return
        _events.install()
        if self.kind == "flow":
            install_providers()
        if telemetry.enabled():
            install_tracing()
        slot = self._slot()
        await slot.acquire()
        holder = _SlotHolder(slot)
        if context.cancellation.cancelled:
            holder.release()
            _discard_folders(run)
            return
        run.holder = holder
        run.writer = _Artifacts(run, self.per_task_artifacts)
        self._active[context.task_id] = run
        context.cancellation.on_cancel(run.cancel)
        try:
            await updater.start_work(f"{self.name} started")
            start_worker(run, kickoff, lambda: _call_soon(loop, self._worker_done, run))
        except BaseException:
            holder.release()
            self._active.pop(context.task_id, None)
            _discard_folders(run)
            raise
        await self._drive(run, context, updater)

    async def _continue(self, run: CrewRun, context: RequestContext, updater: TaskUpdater) -> None:
        slot = self._slot()
        await slot.acquire()
        if run.finished.is_set():  # it gave up waiting (timeout) while we waited for a slot
            slot.release()
            await updater.fail(lost_pause_text(self.instance, self.instance, self.input_timeout))
            return
        run.holder = _SlotHolder(slot)
        self._active[context.task_id] = run
        context.cancellation.on_cancel(run.cancel)
        if context.credential is not None:
            run.credential = context.credential  # the answer's token: fresher than the first
        run.resume(_answer_text(context))
        await self._drive(run, context, updater)

    async def _drive(self, run: CrewRun, context: RequestContext, updater: TaskUpdater) -> None:
        """Relay the run's reports until it ends or pauses for input."""
        writer = cast(_Artifacts, run.writer)
        writer.updater = updater
        try:
            while True:
                item = await run.reports.get()
                if isinstance(item, Progress):
                    await updater.update_status(
                        TaskState.WORKING, item.text, metadata=item.metadata
                    )
                elif isinstance(item, Chunk):
                    await writer.chunk(item)
                elif isinstance(item, TaskDone):
                    await writer.task_done(item)
                elif isinstance(item, NeedInput):
                    await writer.flush()
                    if self._waiting() >= self.max_paused:
                        # Others paused since this request was admitted: it cannot wait.
                        run.cancel()
                        await updater.fail(
                            f"The crew needs input, but {self.max_paused} tasks already wait "
                            "for input on this agent (max_paused); retry later"
                        )
                        return
                    self._paused[context.task_id] = run
                    run.pause()
                    run.holder.release()  # a waiting crew does not hold a slot
                    metadata = mark_paused(item.metadata, self.instance)
                    question = updater.new_agent_message(item.question, metadata=metadata)
                    await updater.update_status(
                        TaskState.INPUT_REQUIRED, question, metadata=metadata
                    )
                    return
                elif isinstance(item, Finished):
                    await writer.finish(item)
                    await updater.complete()
                    return
                elif isinstance(item, Failed):
                    if run.cancelled:
                        return
                    raise item.error
                elif isinstance(item, Canceled):  # pyright: ignore[reportUnnecessaryIsInstance]
                    return
        except asyncio.CancelledError:
            run.cancel()
            raise
        finally:
            if self._active.get(context.task_id) is run:
                del self._active[context.task_id]

    def _worker_done(self, run: CrewRun) -> None:
        """On the loop, once the worker thread ended: free its slot, forget it if paused."""
        run.holder.release()
        _discard_folders(run)
        if self._paused.get(run.task_id) is run:
            del self._paused[run.task_id]


class _SlotHolder:
    """One acquisition of a semaphore, released at most once."""

    __slots__ = ("_held", "_slot")

    def __init__(self, slot: asyncio.Semaphore) -> None:
        self._slot = slot
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._slot.release()


def _call_soon(loop: asyncio.AbstractEventLoop, func: Callable[..., None], *args: Any) -> None:
    with contextlib.suppress(RuntimeError):  # the loop is closed: nothing left to release
        loop.call_soon_threadsafe(func, *args)


class _ModelOf:
    """A stand-in agent for a model alone (a hierarchical crew's ``manager_llm``)."""

    def __init__(self, llm: Any) -> None:
        self.llm = llm


def _discard_folders(run: CrewRun) -> None:
    """Remove the run's received files and its output folder (unless that is kept)."""
    if run.files is not None:
        run.files.cleanup()
    if run.outputs is not None:
        run.outputs.cleanup()


def _give_file_tool(agent: Any) -> None:
    """Add ``read_input_file`` to a (copied) agent's tools."""
    from ._file_tool import InputFileTool

    with contextlib.suppress(AttributeError, ValueError, TypeError):
        agent.tools = [*(getattr(agent, "tools", None) or []), InputFileTool()]


def _stream_llm(agent: Any) -> None:
    """Make an agent's (copied) model emit stream chunk events."""
    llm = getattr(agent, "llm", None)
    if llm is not None and hasattr(llm, "stream"):
        with contextlib.suppress(AttributeError, ValueError, TypeError):
            llm.stream = True


def _answer_text(context: RequestContext) -> str:
    message = context.message
    texts = [p.text for p in message.parts if p.text is not None]
    texts += [json.dumps(p.data, ensure_ascii=False) for p in message.parts if p.data is not None]
    return "\n".join(texts)
