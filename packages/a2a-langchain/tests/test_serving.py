"""Serving Runnables: cards, input and output mapping, streaming, tools, threads, interrupts.

Agents run in process (``A2AClient.in_process``) so each test is fast; the
socket paths are in ``test_end_to_end.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast
from uuid import uuid4

import pytest
from a2a_core.adapters import resolve_agent
from a2a_core.client import A2AClient, TaskTracker, text_of
from a2a_core.compose.builder import configure_service
from a2a_core.types import (
    AgentSkill,
    Message,
    Part,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a_langchain import LangChainAgent, a2a_context
from a2a_langchain._convert import PROGRESS_KEY
from a2a_langchain.plugin import a2a_adapt_agent
from a2a_langchain.serving import agent_for
from langchain_core.callbacks import AsyncCallbackHandler, adispatch_custom_event
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt
from lc_fakes import EchoChatModel, ScriptedModel, ToolLoopModel, agent_graph, last_human
from pydantic import BaseModel


@asynccontextmanager
async def served(runnable: Any, **options: Any) -> AsyncIterator[A2AClient]:
    service = configure_service(runnable, **options)
    client = A2AClient.in_process(service)
    try:
        yield client
    finally:
        await client.aclose()
        await service.aclose()


async def stream_all(client: A2AClient, content: Any, **kwargs: Any) -> list[StreamEvent]:
    async with client.stream(content, **kwargs) as events:
        return [event async for event in events]


def final_task(events: list[StreamEvent]) -> Task:
    tracker = TaskTracker()
    for event in events:
        tracker.apply(event)
    assert tracker.task is not None
    return tracker.task


def chunks(events: list[StreamEvent]) -> list[TaskArtifactUpdateEvent]:
    return [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]


def statuses(events: list[StreamEvent]) -> list[TaskStatusUpdateEvent]:
    return [e for e in events if isinstance(e, TaskStatusUpdateEvent)]


def progress_messages(events: list[StreamEvent]) -> list[Message]:
    """The status messages that report progress (not the completed status's answer)."""
    found = [s.status.message for s in statuses(events) if s.status.message is not None]
    return [m for m in found if PROGRESS_KEY in (m.metadata or {})]


def echo_chain() -> Any:
    prompt = ChatPromptTemplate.from_messages([("system", "Repeat."), ("human", "{text}")])
    return prompt | EchoChatModel() | StrOutputParser()


# -- the card ----------------------------------------------------------------------------


def test_card_defaults_come_from_the_runnable() -> None:
    async def summarize(text: str) -> str:
        """Summarizes a text in one line.

        Longer explanation that stays out of the card.
        """
        return text[:10]

    agent = LangChainAgent(RunnableLambda(summarize))
    assert agent.name == "summarize"
    assert agent.description == "Summarizes a text in one line."
    [skill] = agent.skills
    assert (skill.id, skill.name, skill.tags) == ("summarize", "summarize", ["langchain"])
    assert agent.plan.mode == "text"
    assert agent.output_modes == ["text/plain"]

    named = LangChainAgent(echo_chain().with_config(run_name="Echo helper"))
    assert named.name == "Echo helper"
    graph = agent_graph(EchoChatModel(), [])
    assert LangChainAgent(graph).name == "LangGraph agent"
    assert LangChainAgent(graph).skills[0].tags == ["langchain", "langgraph"]
    assert LangChainAgent(echo_chain()).name == "LangChain agent"


def test_every_card_field_can_be_overridden() -> None:
    skill = AgentSkill(id="sum", name="Sum", description="Adds", tags=["math"])
    agent = LangChainAgent(
        echo_chain(),
        name="Adder",
        description="Adds numbers",
        version="2.0.0",
        skills=[skill, {"id": "x", "name": "X", "description": "x", "tags": ["y"]}],
        input_modes=["application/json"],
        output_modes=["application/json"],
    )
    resolved = agent.resolved()
    assert (resolved.name, resolved.description, resolved.version) == (
        "Adder",
        "Adds numbers",
        "2.0.0",
    )
    assert [s.id for s in resolved.skills] == ["sum", "x"]
    assert resolved.input_modes == ("application/json",)
    assert resolved.adapter == "langchain"


def test_the_plugin_claims_runnables_and_ready_agents_only() -> None:
    chain = echo_chain()
    resolved = resolve_agent(chain, {"name": "From options", "input_mode": "text"})
    assert resolved.adapter == "langchain"
    assert resolved.name == "From options"
    assert isinstance(resolved.executor, LangChainAgent)
    assert resolved.executor.plan.mode == "text"
    ready = LangChainAgent(chain, name="Ready")
    assert resolve_agent(ready).name == "Ready"  # not the core's class-name fallback
    assert a2a_adapt_agent(object(), {}) is None
    assert a2a_adapt_agent(lambda: None, {}) is None
    named = resolve_agent(chain, adapter="langchain")
    assert named.adapter == "langchain"


def test_serve_refuses_agent_options_for_a_ready_agent() -> None:
    with pytest.raises(TypeError, match="configure the LangChainAgent itself"):
        agent_for(LangChainAgent(echo_chain()), name="x")
    assert agent_for(echo_chain(), name="Named").name == "Named"


def test_bad_options_are_refused_at_construction() -> None:
    with pytest.raises(TypeError):
        LangChainAgent(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="input_mode"):
        LangChainAgent(echo_chain(), input_mode="xml")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="conversation"):
        LangChainAgent(echo_chain(), conversation="global")  # type: ignore[arg-type]


# -- input mapping -----------------------------------------------------------------------


async def test_prompt_variable_receives_the_text_and_data_fills_other_variables() -> None:
    prompt = ChatPromptTemplate.from_messages([("human", "{tone}: {question}")])

    def show(value: Any) -> str:
        return value.to_string()

    chain = prompt | RunnableLambda(show)
    async with served(chain) as client:
        result = await client.send([Part(text="why?"), Part(data={"tone": "calm"})])
    assert result.text == "Human: calm: why?"


async def test_data_only_message_reaches_an_untyped_lambda_as_data() -> None:
    seen: list[Any] = []

    def record(value):  # untyped: the input schema says nothing
        seen.append(value)
        return {"keys": sorted(value) if isinstance(value, dict) else value}

    async with served(RunnableLambda(record)) as client:
        result = await client.send([Part(data={"b": 1, "a": 2})])
        text_result = await client.send("plain")
    assert seen == [{"b": 1, "a": 2}, "plain"]
    task = result.task
    assert task is not None
    assert task.artifacts[0].parts[0].data == {"keys": ["a", "b"]}
    assert text_result.artifacts[0].parts[0].data == {"keys": "plain"}


async def test_files_reach_the_runnable_in_each_mode() -> None:
    seen: list[Any] = []

    def take_messages(messages: list[BaseMessage]) -> str:
        seen.append(messages)
        return "ok"

    def take_text(text: str, config: RunnableConfig) -> str:
        context = a2a_context(config)
        assert context is not None
        seen.append((text, [p.filename for p in context.message.parts if p.filename]))
        return "ok"

    image = Part(raw=b"\x89PNG fake", media_type="image/png", filename="cat.png")
    notes = Part(raw=b"line one\nline two", media_type="text/plain", filename="notes.txt")
    async with served(RunnableLambda(take_messages), input_mode="messages") as client:
        await client.send([Part(text="look"), image, notes])
    async with served(RunnableLambda(take_text)) as client:
        await client.send([Part(text="read"), notes, image])

    [message] = seen[0]
    assert isinstance(message, HumanMessage)
    blocks = cast(list[dict[str, Any]], message.content)
    assert blocks[0] == {"type": "text", "text": "look"}
    assert blocks[1]["type"] == "image"
    assert blocks[1]["mime_type"] == "image/png"
    assert blocks[1]["extras"] == {"filename": "cat.png"}
    assert blocks[2] == {
        "type": "text-plain",
        "text": "line one\nline two",
        "mime_type": "text/plain",
        "title": "notes.txt",
    }
    text, names = seen[1]
    assert text == "read\n[file notes.txt]\nline one\nline two\n[file cat.png]"
    assert names == ["notes.txt", "cat.png"]


def test_messages_placeholder_gets_earlier_turns_and_the_variable_the_new_text() -> None:
    from a2a_langchain._input import plan_input

    prompt = ChatPromptTemplate.from_messages(
        [("system", "s"), MessagesPlaceholder("history"), ("human", "{question}")]
    )
    plan = plan_input(prompt)
    assert (plan.mode, plan.text_key, plan.history_key) == ("dict", "question", "history")
    first = Message.user("first")
    reply = Message.agent("answer")
    progress = Message.agent("Calling tool x", metadata={PROGRESS_KEY: {"progress": "tool"}})
    now = Message.user("second")
    value = plan.build(now, [first, reply, progress, now], threaded=False)
    assert value["question"] == "second"
    assert [(type(m).__name__, m.text) for m in value["history"]] == [
        ("HumanMessage", "first"),
        ("AIMessage", "answer"),
    ]
    assert plan.build(now, [first, now], threaded=True)["history"] == []


def test_input_modes_from_schemas() -> None:
    from a2a_langchain._input import plan_input

    assert plan_input(EchoChatModel()).mode == "messages"
    assert plan_input(EchoChatModel() | StrOutputParser()).mode == "messages"
    graph_plan = plan_input(agent_graph(EchoChatModel(), []))
    assert (graph_plan.mode, graph_plan.messages_key) == ("messages", "messages")
    assert plan_input(RunnableLambda(lambda x: x)).mode == "any"
    assert plan_input(echo_chain(), "text").mode == "text"
    forced = plan_input(echo_chain(), "dict", input_key="text")
    assert (forced.mode, forced.text_key) == ("dict", "text")


# -- output mapping -----------------------------------------------------------------------


class Weather(BaseModel):
    city: str
    degrees: int


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("plain text", [Part(text="plain text")]),
        (AIMessage(content="from a message"), [Part(text="from a message")]),
        ({"answer": 42}, [Part(data={"answer": 42})]),
        (Weather(city="Paris", degrees=21), [Part(data={"city": "Paris", "degrees": 21})]),
        (
            {"messages": [HumanMessage("q"), AIMessage("a")], "structured_response": {"k": 1}},
            [Part(text="a"), Part(data={"k": 1})],
        ),
        ({"messages": [AIMessage("old"), HumanMessage("unanswered")]}, []),
        ([1, 2, 3], [Part(data=[1, 2, 3])]),
    ],
    ids=["str", "message", "dict", "pydantic", "state", "user-last", "list"],
)
async def test_outputs_become_text_or_data(output: Any, expected: list[Part]) -> None:
    async def produce(text: str) -> Any:
        return output

    async with served(RunnableLambda(produce)) as client:
        result = await client.send("go")
    task = result.task
    assert task is not None
    assert task.status.state is TaskState.COMPLETED
    got = [p for a in task.artifacts for p in a.parts]
    assert got == expected


async def test_image_blocks_in_the_answer_become_file_parts() -> None:
    import base64

    async def draw(text: str) -> AIMessage:
        encoded = base64.b64encode(b"GIF89a").decode()
        return AIMessage(
            content=[
                {"type": "text", "text": "here"},
                {"type": "image", "base64": encoded, "mime_type": "image/gif"},
                {"type": "image", "url": "https://example.com/x.png"},
            ]
        )

    async with served(RunnableLambda(draw)) as client:
        result = await client.send("draw")
    assert result.artifacts[0].parts == [
        Part(text="here"),
        Part(raw=b"GIF89a", media_type="image/gif"),
        Part(url="https://example.com/x.png"),
    ]


# -- streaming -----------------------------------------------------------------------------


async def test_chain_tokens_stream_as_artifact_chunks() -> None:
    async with served(echo_chain()) as client:
        events = await stream_all(client, "one two three")
    *parts, end = chunks(events)
    assert [c.artifact.parts[0].text for c in parts] == [
        "echo:",
        " ",
        "one",
        " ",
        "two",
        " ",
        "three",
    ]
    assert [c.append for c in parts] == [False] + [True] * 6
    assert not any(c.last_chunk for c in parts)
    # The end: the whole answer, replacing the chunks (ManagerConfig.whole_answers).
    assert (end.append, end.last_chunk) == (False, True)
    assert end.artifact.parts == [Part(text="echo: one two three")]
    assert isinstance(events[0], Task)
    assert statuses(events)[0].status.state is TaskState.WORKING
    assert final_task(events).status.state is TaskState.COMPLETED


async def test_a_stream_announces_its_task_before_the_runnable_answers() -> None:
    """Every run is a task (``starts_task_at_once``): the client has its id at once."""
    gate = asyncio.Event()

    async def slow(text: str) -> str:
        await gate.wait()
        return text

    assert LangChainAgent(RunnableLambda(slow)).starts_task_at_once
    async with served(RunnableLambda(slow)) as client, client.stream("wait") as events:
        first = await asyncio.wait_for(anext(events), 5)
        assert isinstance(first, Task)
        assert first.status.state is TaskState.SUBMITTED
        assert not gate.is_set()
        gate.set()
        rest = [event async for event in events]
    assert final_task([first, *rest]).status.state is TaskState.COMPLETED


async def test_a_chain_that_does_not_stream_still_answers_once() -> None:
    def shout(text: str) -> str:
        return text.upper()

    async with served(echo_chain() | RunnableLambda(shout)) as client:
        events = await stream_all(client, "quiet words")
    only, end = chunks(events)  # sent when it came, then the end that marks it whole
    assert only.artifact.parts == end.artifact.parts == [Part(text="ECHO: QUIET WORDS")]
    assert (only.append, only.last_chunk, end.append, end.last_chunk) == (False, False, False, True)


async def test_stream_false_runs_ainvoke() -> None:
    async with served(echo_chain(), stream=False) as client:
        events = await stream_all(client, "at once")
    [only] = chunks(events)
    assert only.artifact.parts == [Part(text="echo: at once")]


async def test_a_graph_streams_model_tokens_and_reports_tool_calls() -> None:
    @tool
    def lookup(text: str) -> str:
        """Look something up."""
        return f"found {text}"

    graph = agent_graph(ToolLoopModel(tool_name="lookup"), [lookup])
    async with served(graph) as client:
        events = await stream_all(client, "paris")
    task = final_task(events)
    assert text_of(task) == "found paris"
    assert len(chunks(events)) == 4  # "found", " ", "paris", then all of it
    progress = progress_messages(events)
    assert [m.parts[0].text for m in progress] == ["Calling tool lookup", "Tool lookup finished"]
    assert progress[0].parts[1].data == {"tool": "lookup", "input": {"text": "paris"}}
    assert progress[1].parts[1].data == {"tool": "lookup", "output": "found paris"}
    assert all(PROGRESS_KEY in (m.metadata or {}) for m in progress)


async def test_tool_updates_can_be_reduced_or_switched_off() -> None:
    @tool
    def lookup(text: str) -> str:
        """Look something up."""
        return "secret internal value"

    graph = agent_graph(ToolLoopModel(tool_name="lookup"), [lookup])
    async with served(graph, tool_updates="names") as client:
        events = await stream_all(client, "x")
    messages = progress_messages(events)
    assert [m.parts[1].data for m in messages] == [{"tool": "lookup"}, {"tool": "lookup"}]
    async with served(graph, tool_updates="off") as client:
        events = await stream_all(client, "x")
    assert progress_messages(events) == []


async def test_a_streamed_preamble_is_replaced_by_the_final_answer() -> None:
    @tool
    def lookup(text: str) -> str:
        """Look something up."""
        return f"found {text}"

    graph = agent_graph(ToolLoopModel(tool_name="lookup", preamble="Let me check."), [lookup])
    async with served(graph) as client:
        events = await stream_all(client, "rome")
        stored = await client.get_task(final_task(events).id)
    parts = chunks(events)
    streamed = "".join(p.text or "" for c in parts[:-1] for p in c.artifact.parts)
    assert streamed.startswith("Let me check.")
    last = parts[-1]
    assert (last.append, last.last_chunk) == (False, True)  # replaces the artifact
    assert last.artifact.parts == [Part(text="found rome")]
    assert text_of(stored) == "found rome"


async def test_answer_model_picks_which_models_tokens_are_the_answer() -> None:
    drafter = EchoChatModel(prefix="draft: ").with_config(tags=["draft"])
    writer = EchoChatModel(prefix="final: ").with_config(run_name="writer")

    async def draft(state: MessagesState) -> dict[str, Any]:
        await drafter.ainvoke(state["messages"])  # internal: not the answer
        return {}

    async def write(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await writer.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("draft", draft)
    builder.add_node("write", write)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "write")
    builder.add_edge("write", END)
    graph = builder.compile()

    for choice in ("writer", "write"):  # the model's run name, or its LangGraph node
        async with served(graph, answer_model=choice) as client:
            events = await stream_all(client, "hi")
        texts = [p.text for c in chunks(events) for p in c.artifact.parts]
        assert texts == ["final:", " ", "hi", "final: hi"]
        assert all(c.append for c in chunks(events)[1:-1])

    async with served(graph, answer_model="draft") as client:  # by tag
        events = await stream_all(client, "hi")
    texts = [p.text for c in chunks(events) for p in c.artifact.parts]
    assert texts == ["draft:", " ", "hi", "final: hi"]  # the final output replaces the draft
    assert not chunks(events)[-1].append
    assert text_of(final_task(events)) == "final: hi"


async def test_custom_a2a_status_events_become_working_updates() -> None:
    async def work(text: str, config: RunnableConfig) -> str:
        await adispatch_custom_event("a2a.status", "halfway", config=config)
        await adispatch_custom_event("a2a.status", {"percent": 50}, config=config)
        await adispatch_custom_event("other", "ignored", config=config)
        return "done"

    async with served(RunnableLambda(work)) as client:
        events = await stream_all(client, "go")
    messages = progress_messages(events)
    assert [m.parts[0] for m in messages] == [Part(text="halfway"), Part(data={"percent": 50})]


# -- conversations, threads, interrupts --------------------------------------------------


async def test_context_is_a_langgraph_thread_with_a_checkpointer() -> None:
    script = [AIMessage("first answer"), AIMessage("second answer"), AIMessage("third")]
    model = ScriptedModel(script=script)
    graph = agent_graph(model, [], checkpointer=InMemorySaver())
    async with served(graph) as client:
        first = await client.send("hello")
        second = await client.send("again", context_id=first.context_id)
        await client.send("elsewhere")
    assert (first.text, second.text) == ("first answer", "second answer")
    assert [m.text for m in model.calls[1]] == ["hello", "first answer", "again"]
    assert [m.text for m in model.calls[2]] == ["elsewhere"]  # another context, another thread


async def test_without_a_checkpointer_the_task_history_is_the_conversation() -> None:
    seen: list[list[str]] = []

    def chat(messages: list[BaseMessage]) -> AIMessage:
        seen.append([f"{m.type}:{m.text}" for m in messages])
        return AIMessage(content=f"you said {last_human(messages)}")

    async with served(RunnableLambda(chat), input_mode="messages") as client:
        result = await client.send("hi")
    assert result.text == "you said hi"
    assert seen == [["human:hi"]]


def interrupting_graph(question: Any) -> Any:
    async def ask(state: MessagesState) -> dict[str, Any]:
        answer = interrupt(question)
        return {"messages": [AIMessage(content=f"got {answer!r}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=InMemorySaver())


@pytest.mark.parametrize("stream", [True, False])
async def test_interrupt_becomes_input_required_and_the_reply_resumes(stream: bool) -> None:
    question = {"question": "Which city?", "choices": ["Paris", "Rome"]}
    async with served(interrupting_graph(question), stream=stream) as client:
        paused = await client.send("weather please")
        assert paused.state is TaskState.INPUT_REQUIRED
        task = paused.task
        assert task is not None
        status = task.status.message
        assert status is not None
        assert status.parts == [Part(text="Which city?"), Part(data=question)]
        done = await client.send([Part(data={"city": "Rome"})], task=paused)
        assert done.task_id == paused.task_id
        assert done.state is TaskState.COMPLETED
        assert done.text == "got {'city': 'Rome'}"


async def test_an_interrupt_without_a_checkpointer_fails_with_a_clear_message() -> None:
    async def ask(state: MessagesState) -> dict[str, Any]:
        interrupt("Which city?")
        return {}

    builder = StateGraph(MessagesState)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    async with served(builder.compile()) as client:
        result = await client.send("weather")
    assert result.state is TaskState.FAILED
    assert "no checkpointer" in result.text


async def test_task_conversations_still_resume_a_checkpointed_graph() -> None:
    async with served(interrupting_graph("Name?"), conversation="task") as client:
        paused = await client.send("start")
        done = await client.send("Grace", task=paused)
    assert done.text == "got 'Grace'"


def test_questions_stay_in_the_conversation_and_progress_does_not() -> None:
    from a2a_langchain._convert import to_lc_messages

    question = Message.agent("Which city?", metadata={PROGRESS_KEY: {"interrupts": ["i1"]}})
    progress = Message.agent("Calling tool x", metadata={PROGRESS_KEY: {"progress": "tool"}})
    texts = [m.text for m in to_lc_messages([Message.user("hi"), progress, question])]
    assert texts == ["hi", "Which city?"]


async def test_text_reply_resumes_with_text() -> None:
    async with served(interrupting_graph("Name?")) as client:
        paused = await client.send("start")
        assert paused.text == "Name?"
        done = await client.send("Ada", task=paused)
    assert done.text == "got 'Ada'"


async def test_runs_of_one_thread_are_serialized() -> None:
    active = 0
    most = 0

    async def slow_node(state: MessagesState) -> dict[str, Any]:
        nonlocal active, most
        active += 1
        most = max(most, active)
        await asyncio.sleep(0.02)
        active -= 1
        return {"messages": [AIMessage(content="ok")]}

    builder = StateGraph(MessagesState)
    builder.add_node("n", slow_node)
    builder.add_edge(START, "n")
    builder.add_edge("n", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    context = str(uuid4())
    async with served(graph) as client:
        results = await asyncio.gather(
            *(client.send(f"m{i}", context_id=context) for i in range(4))
        )
        assert most == 1  # one context: one run at a time
        others = await asyncio.gather(*(client.send(f"x{i}") for i in range(3)))
        assert most == 3  # distinct contexts run side by side
    assert all(r.text == "ok" for r in [*results, *others])


# -- tracing and cancellation ---------------------------------------------------------------


class Recorder(AsyncCallbackHandler):
    def __init__(self) -> None:
        self.starts: list[dict[str, Any]] = []

    async def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        if kwargs.get("parent_run_id") is None:
            self.starts.append(kwargs)


async def test_runs_carry_a2a_names_tags_and_ids_for_tracing() -> None:
    recorder = Recorder()
    async with served(
        echo_chain(), name="Traced", runnable_config={"callbacks": [recorder], "tags": ["mine"]}
    ) as client:
        result = await client.send("trace me")
    [start] = recorder.starts
    assert start["name"] == "Traced"
    assert {"a2a", "mine"} <= set(start["tags"])
    metadata = start["metadata"]
    assert metadata["a2a_task_id"] == result.task_id
    assert metadata["a2a_context_id"] == result.context_id
    assert metadata["a2a_agent"] == "Traced"


async def test_cancel_reaches_an_async_tool_of_a_graph() -> None:
    started = asyncio.Event()
    stopped = asyncio.Event()

    @tool
    async def wait(text: str) -> str:
        """Wait."""
        started.set()
        try:
            await asyncio.sleep(30)
        finally:
            stopped.set()
        return text

    graph = agent_graph(ToolLoopModel(tool_name="wait"), [wait])
    async with served(graph) as client:
        running = await client.send("x", blocking=False)
        await asyncio.wait_for(started.wait(), 5)
        canceled = await client.cancel(running)
        await asyncio.wait_for(stopped.wait(), 5)
    assert canceled.status.state is TaskState.CANCELED


async def test_a_failure_is_a_failed_task_without_details() -> None:
    def broken(text: str) -> str:
        raise RuntimeError("database password is hunter2")

    async with served(RunnableLambda(broken)) as client:
        result = await client.send("x")
    task = result.task
    assert task is not None
    assert task.status.state is TaskState.FAILED
    assert "hunter2" not in task.model_dump_json()


async def test_the_users_message_stays_in_the_task_history() -> None:
    async with served(echo_chain()) as client:
        message = Message(message_id=str(uuid4()), role=Role.USER, parts=[Part(text="keep")])
        result = await client.send(message)
        stored = await client.get_task(result.task_id or "")
    assert stored.history[0].message_id == message.message_id
