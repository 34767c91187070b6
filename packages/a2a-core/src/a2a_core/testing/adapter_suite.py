"""The adapter conformance suite: what every framework adapter must do over real A2A.

An adapter package subclasses ``AdapterConformance`` and says how to build a
deterministic, offline agent of its framework for each scenario::

    class TestMyAdapter(AdapterConformance):
        entry_point_name = "myframework"

        def make_agent(self, scenario: Scenario) -> object | None:
            match scenario.name:
                case "echo": return FakeChain(reply_prefix="echo: ")
                ...

Each test serves the agent through the normal plugin resolution
(``configure_service`` -> ``resolve_agent``), behind the real ASGI app
(in process, or on 127.0.0.1 with ``over_socket = True``), and talks to it
with ``A2AClient``. Every HTTP exchange is recorded: a 5xx answer fails
any test.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from importlib import metadata
from typing import Any, ClassVar

import pluggy
import pytest

from ..adapters import registered_adapters, resolve_agent
from ..card import AgentCardBuilder
from ..client import SendResult, TaskTracker, text_of
from ..compose.builder import configure_service
from ..hookspecs import PROJECT
from ..plugins import (
    call_hook_impl,
    create_plugin_manager,
    describe_plugins,
    get_plugin_manager,
    hook_impls,
)
from ..server.service import A2AService
from ..types import (
    AgentCard,
    Artifact,
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
from ..wire.operations import Operation
from ._http import ServedAgent, serve_agent
from ._suite import ConformanceSuite
from .fakes import Scenario, ScenarioName

__all__ = ["AdapterConformance", "card_problems"]


class AdapterConformance(ConformanceSuite):
    """Subclass it (``class TestMyAdapter(AdapterConformance)``) and implement ``make_agent``."""

    _a2a_suite_root: ClassVar[bool] = True
    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [pytest.mark.asyncio]

    # -- what the subclass declares --------------------------------------------------
    supports_streaming: ClassVar[bool] = True
    """Whether the served agent offers SendStreamingMessage (the card must say the same)."""
    supports_multi_turn: ClassVar[bool] = True
    """Whether the framework can pause for input and continue the same task (``ask``)."""
    supports_cancel: ClassVar[bool] = True
    """Whether a cancel request stops the framework's work (``slow``)."""
    emits_artifacts: ClassVar[bool] = True
    """Whether streamed output arrives as artifact chunks (append / lastChunk)."""
    entry_point_name: ClassVar[str | None] = None
    """The adapter's entry point in the ``a2a_core`` group (``[project.entry-points.a2a_core]``)."""
    adapter_name: ClassVar[str | None] = None
    """The name it registers with ``a2a_register_adapters`` (default: ``entry_point_name``)."""
    service_options: ClassVar[Mapping[str, Any]] = {}
    """Extra keyword options for ``configure_service`` (they reach the adapter)."""
    app_options: ClassVar[Mapping[str, Any]] = {}
    """Extra keyword options for ``create_app``."""
    over_socket: ClassVar[bool] = False
    """Serve with uvicorn on 127.0.0.1 instead of calling the ASGI app in process."""
    binding: ClassVar[str] = "JSONRPC"
    """The binding the client uses: "JSONRPC" or "HTTP+JSON"."""
    protocol_version: ClassVar[str] = "1.0"
    """The protocol version the client speaks: "1.0" or "0.3"."""
    concurrency: ClassVar[int] = 10
    """How many tasks run at once in the isolation tests."""

    capability_gates: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "test_streaming_event_order": ("supports_streaming",),
        "test_streamed_artifact_chunks": ("supports_streaming", "emits_artifacts"),
        "test_failure_while_streaming": ("supports_streaming",),
        "test_concurrent_streams_are_isolated": ("supports_streaming",),
        "test_multi_turn_continuation": ("supports_multi_turn",),
        "test_cancel_reaches_the_agent": ("supports_cancel",),
    }
    capability_docs: ClassVar[Mapping[str, str]] = {
        "supports_streaming": "the agent is served without SendStreamingMessage",
        "supports_multi_turn": "the framework cannot pause for input and continue a task",
        "supports_cancel": "the framework's work cannot be stopped by a cancel request",
        "emits_artifacts": "streamed output does not arrive as artifact chunks",
    }

    # -- what the subclass implements ------------------------------------------------
    def make_agent(self, scenario: Scenario) -> object | None:
        """A deterministic, offline agent of the framework for ``scenario`` (see ``ScenarioName``).

        Return None for a scenario the framework cannot express; the tests
        needing it must then be switched off by a capability flag or an opt-out.
        """
        raise NotImplementedError(
            f"{type(self).__qualname__} must implement make_agent(scenario) -> agent object"
        )

    def expected_text(self, scenario: ScenarioName, sent: str) -> str:
        """What the agent answers to ``sent`` in ``scenario`` (default ``"echo: " + sent``)."""
        return f"echo: {sent}"

    def plugin_manager(self) -> pluggy.PluginManager:
        """The plugin manager agents are resolved with (default: the process's)."""
        return get_plugin_manager()

    def make_service(self, agent: object) -> A2AService:
        """The service for ``agent``: ``configure_service``, as ``serve`` does."""
        return configure_service(
            agent,
            plugin_manager=self.plugin_manager(),
            streaming=self.supports_streaming,
            **self.service_options,
        )

    # -- harness ---------------------------------------------------------------------
    @asynccontextmanager
    async def serve(self, name: ScenarioName) -> AsyncGenerator[ServedAgent]:
        """Serve the ``name`` scenario's agent and connect a client; checks no 5xx on exit."""
        scenario = Scenario(name)
        test = self.request.function.__name__
        agent = self.make_agent(scenario)
        if agent is None:
            pytest.fail(
                f"{type(self).__qualname__}.make_agent() returned None for the {name!r} "
                f"scenario, which {test} needs. If the framework cannot express it, switch "
                "the test off with its capability flag or opt out of it with a reason.",
                pytrace=False,
            )
        async with self._deadline(f"{test} ({name!r} scenario)"):
            service = self.make_service(agent)
            async with serve_agent(
                scenario,
                agent,
                service,
                self.plugin_manager(),
                over_socket=self.over_socket,
                binding=self.binding,
                protocol_version=self.protocol_version,
                app_options=self.app_options,
            ) as served:
                yield served
                _check_no_server_errors(served)

    async def stream_events(self, served: ServedAgent, message: Message) -> list[StreamEvent]:
        """Every event of a streaming send, read until the server ends the stream."""
        request = served.client.build_request(message)
        stream = await served.client.transport.open_stream(
            Operation.SEND_STREAMING_MESSAGE, request
        )
        events: list[StreamEvent] = []
        try:
            async for event in stream:
                events.append(event)
        finally:
            await stream.aclose()
        return events

    # -- the tests -------------------------------------------------------------------
    async def test_agent_card(self) -> None:
        """The published card is valid, has skills, and its capabilities match the flags.

        Troubleshooting:
        - no skills: return them from the adapter (``ResolvedAgent(skills=...)``)
          or add them in an ``a2a_agent_card`` hook;
        - streaming mismatch: ``supports_streaming`` must match what the served
          card says (the suite serves with ``streaming=supports_streaming``);
          a card hook may have overwritten the capabilities;
        - other problems are listed by ``AgentCardBuilder`` rules (empty names,
          media types without a slash, skills without tags...).
        """
        async with self.serve("echo") as served:
            response = await served.http.get("/.well-known/agent-card.json")
            assert response.status_code == 200, f"card fetch answered {response.status_code}"
            card = served.client.card
            assert card is not None, "the client found no card"
            problems = card_problems(card)
            assert not problems, "the agent card is invalid:\n- " + "\n- ".join(problems)
            assert card.skills, "the agent card lists no skills"
            streaming = bool(card.capabilities.streaming)
            assert streaming == self.supports_streaming, (
                f"card says streaming={streaming}, "
                f"{type(self).__qualname__}.supports_streaming={self.supports_streaming}"
            )

    async def test_blocking_send(self) -> None:
        """A blocking send returns the completed task (or a message) with the expected text.

        Troubleshooting:
        - wrong text: check ``make_agent("echo")`` answers ``expected_text("echo", sent)``
          (override ``expected_text`` if your fake agent answers differently), and that
          the adapter turns the framework's output into an artifact or message;
        - state WORKING/SUBMITTED: the adapter returned before the framework finished,
          or never completed the task;
        - user message missing from history: the adapter replaced the task's history.
        """
        async with self.serve("echo") as served:
            message = _user_message(f"hello {uuid.uuid4().hex[:8]}")
            result = await served.client.send(message)
            expected = self.expected_text("echo", message.text)
            if result.message is not None:
                assert result.message.role is Role.AGENT, "the reply is not an agent message"
                assert result.text == expected, _text_mismatch(expected, result.text)
                return
            task = _task_of(result)
            assert task.status.state is TaskState.COMPLETED, _state_mismatch(
                TaskState.COMPLETED, task
            )
            assert result.text == expected, _text_mismatch(expected, result.text)
            stored = await served.client.get_task(task.id)
            assert stored.status.state is TaskState.COMPLETED, _state_mismatch(
                TaskState.COMPLETED, stored
            )
            assert message.message_id in [m.message_id for m in stored.history], (
                "the user's message is not in the task's history"
            )
            assert text_of(stored) == expected, _text_mismatch(expected, text_of(stored))

    async def test_streaming_event_order(self) -> None:
        """A streaming send yields the Task first, then updates, then one terminal state, last.

        Troubleshooting:
        - first event not a Task: the adapter emitted an update before the task existed
          (the server normally sends the Task itself; did the adapter reply with a Message?);
        - events after the terminal state: the adapter kept emitting after completing
          (e.g. a late artifact from a framework callback); finish the stream first;
        - no terminal state / timeout: the adapter never completed the task;
        - wrong text: the chunks do not add up to ``expected_text("stream", sent)``.
        """
        async with self.serve("stream") as served:
            message = _user_message(f"stream order {uuid.uuid4().hex[:8]}")
            events = await self.stream_events(served, message)
            task = _checked_stream(events, TaskState.COMPLETED)
            expected = self.expected_text("stream", message.text)
            assert text_of(task) == expected, _text_mismatch(expected, text_of(task), events)

    async def test_streamed_artifact_chunks(self) -> None:
        """Streamed output arrives as several artifact chunks that assemble to the full text.

        The first chunk of an artifact has ``append`` false, the following ones true,
        and only the last update has ``lastChunk``: one more chunk, or the whole
        artifact again (``append`` false, what ``ArtifactStream.close`` sends); the
        stored task holds the same text.

        Troubleshooting:
        - a single chunk: the fake ``stream`` agent must produce two or more pieces,
          and the adapter must forward them as they come (not join them first);
        - append on the first chunk / missing on later ones: keep one artifact id
          per output and set ``append=True`` from the second chunk on;
        - no ``lastChunk``: close the artifact when the output ends
          (``ArtifactStream.close``);
        - stored text differs: the adapter wrote a different final artifact.
        """
        async with self.serve("stream") as served:
            message = _user_message(f"chunks {uuid.uuid4().hex[:8]}")
            events = await self.stream_events(served, message)
            task = _checked_stream(events, TaskState.COMPLETED)
            chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
            assert len(chunks) >= 2, (
                f"expected several artifact chunks, got {len(chunks)}:\n{_describe(events)}"
            )
            problems = _chunk_problems(chunks)
            assert not problems, "\n".join(problems) + "\n" + _describe(events)
            expected = self.expected_text("stream", message.text)
            assert text_of(task) == expected, _text_mismatch(expected, text_of(task), events)
            stored = await served.client.get_task(task.id)
            assert text_of(stored) == expected, (
                "the stored task's artifacts differ from the streamed chunks: "
                + _text_mismatch(expected, text_of(stored))
            )

    async def test_multi_turn_continuation(self) -> None:
        """``ask`` pauses in INPUT_REQUIRED; answering with the taskId completes that task.

        Both user messages end up in the task's history, in order.

        Troubleshooting:
        - first turn COMPLETED: the adapter did not map the framework's "need input"
          signal (interrupt, human-input tool...) to ``updater.require_input``;
        - second turn starts over / a new task: the adapter ignored
          ``context.is_continuation`` / the task's history, or the framework's
          per-conversation state (thread id) is not keyed by task or context id;
        - history missing a turn: the adapter replaced the task's history.
        """
        async with self.serve("ask") as served:
            first = _user_message(f"start {uuid.uuid4().hex[:8]}")
            paused = await served.client.send(first)
            task = _task_of(paused)
            assert task.status.state is TaskState.INPUT_REQUIRED, _state_mismatch(
                TaskState.INPUT_REQUIRED, task
            )
            assert paused.text, "the input-required status carries no question for the user"
            second = _user_message(f"answer {uuid.uuid4().hex[:8]}")
            done = await served.client.send(second, task=paused)
            finished = _task_of(done)
            assert finished.id == task.id, "the answer started a new task instead of continuing"
            assert finished.context_id == task.context_id, "the context changed between turns"
            assert finished.status.state is TaskState.COMPLETED, _state_mismatch(
                TaskState.COMPLETED, finished
            )
            expected = self.expected_text("ask", second.text)
            assert done.text == expected, _text_mismatch(expected, done.text)
            stored = await served.client.get_task(task.id)
            ids = [m.message_id for m in stored.history if m.role is Role.USER]
            for turn in (first, second):
                assert turn.message_id in ids, (
                    f"history lacks the user turn {turn.text!r}: user message ids {ids}"
                )
            assert ids.index(first.message_id) < ids.index(second.message_id), (
                "the turns are out of order in the history"
            )

    async def test_cancel_reaches_the_agent(self) -> None:
        """Cancelling a running task makes it CANCELED and stops the framework's work.

        Troubleshooting:
        - never started: the ``slow`` agent must call ``scenario.probe.mark_started()``
          once it runs;
        - not stopped: the adapter must stop the framework when the asyncio task is
          cancelled or ``context.cancelled`` turns true (threads: poll it), and the
          fake agent must call ``probe.mark_stopped()`` as it unwinds;
        - state changes after CANCELED: the adapter reported completion or failure
          after the cancel (a canceled task stays canceled).
        """
        async with self.serve("slow") as served:
            started = await served.client.send(
                _user_message(f"slow {uuid.uuid4().hex[:8]}"), blocking=False
            )
            task = _task_of(started)
            probe = served.scenario.probe
            assert await probe.wait_started(self.timeout / 2), (
                "the slow agent never reported it started (probe.mark_started())"
            )
            canceled = await served.client.cancel(task.id)
            assert canceled.status.state is TaskState.CANCELED, _state_mismatch(
                TaskState.CANCELED, canceled
            )
            assert await probe.wait_stopped(self.timeout / 2), (
                "the cancel did not reach the framework: the agent never stopped "
                "(probe.mark_stopped() was not called)"
            )
            await asyncio.sleep(0.05)  # let a misbehaving adapter report a late outcome
            stored = await served.client.get_task(task.id)
            assert stored.status.state is TaskState.CANCELED, _state_mismatch(
                TaskState.CANCELED, stored
            )

    async def test_failure_becomes_a_failed_task(self) -> None:
        """A framework exception becomes a FAILED task (never a 5xx), without its text.

        Troubleshooting:
        - HTTP 500 / error response: the adapter let the exception escape somewhere
          the server cannot turn it into a task failure (e.g. a background task);
        - COMPLETED: the adapter swallowed the exception and completed the task;
        - the secret leaked: the adapter put ``str(exc)`` into a status message or
          artifact; show a generic text and log the details instead.
        """
        async with self.serve("fail") as served:
            result = await served.client.send(_user_message(f"fail {uuid.uuid4().hex[:8]}"))
            task = _task_of(result)
            assert task.status.state is TaskState.FAILED, _state_mismatch(TaskState.FAILED, task)
            stored = await served.client.get_task(task.id)
            assert stored.status.state is TaskState.FAILED, _state_mismatch(
                TaskState.FAILED, stored
            )
            _check_no_leak(served, [task, stored])

    async def test_failure_while_streaming(self) -> None:
        """A framework exception during a stream ends it with FAILED, without its text.

        Troubleshooting:
        - the stream breaks off / 5xx: the adapter raised from a place the server
          does not supervise (a callback, a thread) instead of from ``execute``;
        - events after FAILED: the adapter kept emitting after the failure;
        - the secret leaked: see ``test_failure_becomes_a_failed_task``.
        """
        async with self.serve("fail") as served:
            events = await self.stream_events(
                served, _user_message(f"fail stream {uuid.uuid4().hex[:8]}")
            )
            task = _checked_stream(events, TaskState.FAILED)
            _check_no_leak(served, [task, *events])

    async def test_concurrent_tasks_are_isolated(self) -> None:
        """Concurrent sends with distinct texts each get their own answer in their own task.

        Troubleshooting:
        - answers swapped or mixed: the adapter keeps per-request state on a shared
          object (the agent, a module global, one framework session for all tasks);
        - fewer tasks than sends: task ids are reused or derived from the text;
        - timeout: the adapter serialises requests behind a lock held while the
          framework runs, or blocks the event loop (run blocking work in a thread).
        """
        async with self.serve("echo") as served:
            messages = [
                _user_message(f"parallel {i} {uuid.uuid4().hex[:8]}")
                for i in range(self.concurrency)
            ]
            results = await asyncio.gather(*(served.client.send(m) for m in messages))
            task_ids: list[str] = []
            for message, result in zip(messages, results, strict=True):
                expected = self.expected_text("echo", message.text)
                assert result.text == expected, _text_mismatch(expected, result.text)
                if result.task is not None:
                    task_ids.append(result.task.id)
            assert len(set(task_ids)) == len(task_ids), "two sends shared a task"
            for message, result in zip(messages, results, strict=True):
                if result.task is None:
                    continue
                stored = await served.client.get_task(result.task.id)
                users = {m.text for m in stored.history if m.role is Role.USER}
                assert users == {message.text}, (
                    f"task {stored.id} holds other tasks' messages: {sorted(users)}"
                )

    async def test_concurrent_streams_are_isolated(self) -> None:
        """Concurrent streams each carry only their own task's chunks and text.

        Troubleshooting:
        - events of another task in a stream: the adapter routes framework callbacks
          through shared state (one queue or handler for every run);
        - wrong text: chunks of different runs were interleaved in one artifact.
        """
        async with self.serve("stream") as served:
            count = max(2, self.concurrency // 2)
            messages = [_user_message(f"stream {i} {uuid.uuid4().hex[:8]}") for i in range(count)]
            streams = await asyncio.gather(*(self.stream_events(served, m) for m in messages))
            for message, events in zip(messages, streams, strict=True):
                task = _checked_stream(events, TaskState.COMPLETED)
                expected = self.expected_text("stream", message.text)
                assert text_of(task) == expected, _text_mismatch(expected, text_of(task), events)

    async def test_plugin_is_discovered(self) -> None:
        """The adapter's entry point loads, and it claims its framework's agents unasked.

        ``resolve_agent(agent)`` (no adapter named) picks this plugin; its
        ``a2a_adapt_agent`` declines objects of other kinds; the named adapter
        (``adapter_name``) is registered.

        Troubleshooting:
        - no entry point: declare ``[project.entry-points.a2a_core]`` in the
          adapter's pyproject.toml and reinstall the package (``uv sync``);
        - not claimed: implement ``a2a_adapt_agent`` (return a ``ResolvedAgent`` for
          your framework's objects, None for anything else);
        - claims foreign objects: check the agent's type before adapting.
        """
        name = self.entry_point_name
        assert name, (
            f"{type(self).__qualname__}.entry_point_name is not set: name the adapter's "
            "entry point in the a2a_core group (or opt out of this test with a reason)"
        )
        points = {ep.name for ep in metadata.entry_points(group=PROJECT)}
        assert name in points, (
            f"no {PROJECT!r} entry point named {name!r} (installed: {sorted(points)})"
        )
        pm = create_plugin_manager({})
        loaded = {info.name for info in describe_plugins(pm)}
        assert name in loaded, f"entry point {name!r} did not load as a plugin ({sorted(loaded)})"
        agent = self.make_agent(Scenario("echo"))
        assert agent is not None, "make_agent() returned None for the 'echo' scenario"
        expected_adapter = self.adapter_name or name
        resolved = resolve_agent(agent, plugin_manager=pm)
        assert resolved.adapter in {name, expected_adapter}, (
            f"resolve_agent() served the {type(agent).__name__} with "
            f"{resolved.adapter or 'the core fallback'!r}, not the {name!r} plugin"
        )
        adapters = registered_adapters(pm)
        assert expected_adapter.lower() in adapters, (
            f"no adapter registered as {expected_adapter!r} (registered: {sorted(adapters)})"
        )
        for impl in hook_impls(pm, "a2a_adapt_agent"):
            if impl.plugin_name != name:
                continue
            for foreign in (object(), _foreign_function):
                answer = call_hook_impl(impl, "a2a_adapt_agent", {"agent": foreign, "options": {}})
                assert answer is None, (
                    f"{name}'s a2a_adapt_agent claimed a {type(foreign).__name__} "
                    "(answer None for objects of other frameworks)"
                )


# -- helpers ----------------------------------------------------------------------------


async def _foreign_function(context: object) -> str:
    """A plain async function agent: the core serves it, no adapter should claim it."""
    return "not yours"


def _user_message(text: str) -> Message:
    return Message(message_id=new_id(), role=Role.USER, parts=[Part(text=text)])


def _task_of(result: SendResult) -> Task:
    task = result.task
    if task is None:
        pytest.fail(f"expected a task, the agent answered with a message: {result.text!r}")
    return task


def _state_mismatch(expected: TaskState, task: Task) -> str:
    status = task.status.message
    said = f" (status message: {status.text!r})" if status is not None else ""
    return f"task {task.id} is {task.status.state.name}, expected {expected.name}{said}"


def _text_mismatch(expected: str, got: str, events: Sequence[StreamEvent] = ()) -> str:
    out = f"expected the answer {expected!r}, got {got!r}"
    return out + ("\n" + _describe(events) if events else "")


def _describe(events: Sequence[StreamEvent]) -> str:
    """One line per event, for failure messages."""
    lines: list[str] = []
    for i, event in enumerate(events):
        if isinstance(event, Task):
            line = f"Task {event.id[:8]} {event.status.state.name}"
        elif isinstance(event, Message):
            line = f"Message {event.text[:40]!r}"
        elif isinstance(event, TaskStatusUpdateEvent):
            line = f"status {event.status.state.name}"
        else:
            line = (
                f"artifact {event.artifact.artifact_id} append={event.append} "
                f"lastChunk={event.last_chunk} {text_of(event)[:40]!r}"
            )
        lines.append(f"  #{i}: {line}")
    return "events:\n" + "\n".join(lines) if lines else "events: none"


def _checked_stream(events: Sequence[StreamEvent], final: TaskState) -> Task:
    """Check the order rules of a task stream; the task the events describe."""
    listing = _describe(events)
    assert events, "the stream ended without any event"
    first = events[0]
    assert isinstance(first, Task), f"the first event must be the Task\n{listing}"
    tracker = TaskTracker()
    terminal_at: int | None = None
    for i, event in enumerate(events):
        if i > 0:
            assert isinstance(event, TaskStatusUpdateEvent | TaskArtifactUpdateEvent), (
                f"event #{i} is a {type(event).__name__}; after the Task only status and "
                f"artifact updates may follow\n{listing}"
            )
            assert event.task_id == first.id, f"event #{i} is about another task\n{listing}"
            assert event.context_id == first.context_id, (
                f"event #{i} names another context\n{listing}"
            )
        assert terminal_at is None, (
            f"event #{i} came after the terminal state of event #{terminal_at}\n{listing}"
        )
        if isinstance(event, Task | TaskStatusUpdateEvent):
            state = event.status.state
            if i > 0:
                assert state is not TaskState.SUBMITTED, (
                    f"event #{i} went back to SUBMITTED\n{listing}"
                )
            if state.is_terminal:
                terminal_at = i
        tracker.apply(event)
    assert terminal_at is not None, f"the stream ended without a terminal state\n{listing}"
    task = tracker.task
    assert task is not None
    assert task.status.state is final, (
        f"the stream ended in {task.status.state.name}, expected {final.name}\n{listing}"
    )
    return task


def _chunk_problems(chunks: Sequence[TaskArtifactUpdateEvent]) -> list[str]:
    by_id: dict[str, list[TaskArtifactUpdateEvent]] = {}
    for chunk in chunks:
        by_id.setdefault(chunk.artifact.artifact_id, []).append(chunk)
    problems: list[str] = []
    for artifact_id, events in by_id.items():
        if events[0].append:
            problems.append(f"artifact {artifact_id}: the first chunk has append=true")
        if not all(e.append for e in events[1:-1]):
            problems.append(f"artifact {artifact_id}: a later chunk lacks append=true")
        if not events[-1].last_chunk:
            problems.append(f"artifact {artifact_id}: the last chunk lacks lastChunk=true")
        if any(e.last_chunk for e in events[:-1]):
            problems.append(f"artifact {artifact_id}: lastChunk=true before the last chunk")
    return problems


def _check_no_leak(served: ServedAgent, seen: Sequence[Task | StreamEvent | Artifact]) -> None:
    secret = served.scenario.secret
    for item in seen:
        assert secret not in item.model_dump_json(), (
            f"the exception text reached the client in a {type(item).__name__}"
        )
    for exchange in served.exchanges:
        assert secret not in exchange.text, (
            f"the exception text is in the response to {exchange.method} {exchange.url}"
        )


def _check_no_server_errors(served: ServedAgent) -> None:
    failed = [x for x in served.exchanges if x.status >= 500]
    assert not failed, "the server answered with an HTTP 5xx:\n" + "\n".join(
        f"  {x.method} {x.url} -> {x.status}: {x.text[:300]}" for x in failed
    )


def card_problems(card: AgentCard) -> list[str]:
    """Every reason ``AgentCardBuilder`` would refuse ``card`` (empty when it is valid)."""
    builder = AgentCardBuilder(card.name, description=card.description, version=card.version)
    builder.input_modes(*card.default_input_modes).output_modes(*card.default_output_modes)
    for iface in card.supported_interfaces:
        builder.interface(iface.url, iface.protocol_binding, iface.protocol_version, iface.tenant)
    for skill in card.skills:
        builder.skill(skill)
    for ext in card.capabilities.extensions:
        builder.extension(ext.uri, ext.description, ext.required, ext.params)
    for scheme_name, scheme in card.security_schemes.items():
        builder.security_scheme(scheme_name, scheme)
    return builder.problems()
