"""CrewAgent in process: inputs, progress, artifacts, streaming, human input, cancel, limits."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from a2a_core.client import A2AClient
from a2a_core.compose.builder import configure_service
from a2a_core.errors import ServerBusyError
from a2a_core.types import (
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
from a2a_crewai import CrewAgent
from crewai import Agent, Crew, Process
from crewai import Task as CrewTask
from crewai_fakes import (
    AdderTool,
    ScriptedLLM,
    echo_crew,
    last_user_text,
    report_crew,
    ticking_crew,
    tool_call,
    tool_result_text,
)

pytestmark = pytest.mark.timeout(60)


@asynccontextmanager
async def served(agent: object, **options: Any) -> AsyncIterator[A2AClient]:
    service = configure_service(agent, **options)
    client = A2AClient.in_process(service)
    try:
        yield client
    finally:
        await client.aclose()
        await service.aclose()


async def stream_all(client: A2AClient, content: Any, **kwargs: Any) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    async with client.stream(content, **kwargs) as stream:
        async for event in stream:
            events.append(event)
    return events


def statuses(events: list[StreamEvent]) -> list[str]:
    return [
        e.status.message.text
        for e in events
        if isinstance(e, TaskStatusUpdateEvent) and e.status.message is not None
    ]


def artifact_text(task: Task, artifact_id: str) -> str:
    for artifact in task.artifacts:
        if artifact.artifact_id == artifact_id:
            return "".join(p.text or "" for p in artifact.parts)
    raise AssertionError(
        f"no artifact {artifact_id!r} in {[a.artifact_id for a in task.artifacts]}"
    )


async def test_progress_and_per_task_artifacts() -> None:
    crew, adder = report_crew()
    async with served(crew) as client:
        events = await stream_all(client, "sales")
        task = await client.get_task(events[0])  # type: ignore[arg-type]
    assert task.status.state is TaskState.COMPLETED
    assert artifact_text(task, "task-1") == "The sum is 5."
    assert artifact_text(task, "result") == "Report on sales: The sum is 5."
    assert [a.artifact_id for a in task.artifacts] == ["task-1", "result"]
    assert [a.name for a in task.artifacts] == ["Add", "result"]
    texts = statuses(events)
    expected_order = [
        "Reporting crew started",
        "Task 1/2 started: Add (Analyst)",
        "Analyst is using the tool adder",
        "The tool adder answered",
        "Task 1/2 completed",
        "Task 2/2 started: Report (Writer)",
        "Task 2/2 completed",
    ]
    positions = [texts.index(t) for t in expected_order]
    assert positions == sorted(positions), texts
    assert adder.runs == [(2, 3)]
    kinds = [
        e.metadata["crewai"]["event"]
        for e in events
        if isinstance(e, TaskStatusUpdateEvent) and e.metadata
    ]
    assert {"task_started", "tool_started", "tool_finished", "task_completed"} <= set(kinds)


async def test_every_kickoff_is_a_task_announced_before_the_crew_runs() -> None:
    crew, _ = report_crew()
    agent = CrewAgent(crew)
    assert agent.starts_task_at_once  # a stream's first event does not wait for the crew
    async with served(agent) as client:
        events = await stream_all(client, "sales")
        reply = await client.send("sales")
    assert isinstance(events[0], Task)
    assert events[0].status.state is TaskState.SUBMITTED
    assert reply.task is not None  # a blocking send too: a task, never a bare Message
    assert reply.task.status.state is TaskState.COMPLETED


async def test_only_the_final_output_without_per_task_artifacts() -> None:
    crew, _ = report_crew()
    async with served(CrewAgent(crew, per_task_artifacts=False)) as client:
        result = await client.send("margins")
    assert result.task is not None
    assert [a.artifact_id for a in result.task.artifacts] == ["result"]
    assert result.text == "Report on margins: The sum is 5."


async def test_streamed_tokens_assemble_every_output() -> None:
    crew, _ = report_crew(stream=True)
    async with served(crew) as client:
        events = await stream_all(client, "costs")
        task = await client.get_task(events[0])  # type: ignore[arg-type]
    chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    by_id: dict[str, list[TaskArtifactUpdateEvent]] = {}
    for chunk in chunks:
        by_id.setdefault(chunk.artifact.artifact_id, []).append(chunk)
    assert set(by_id) == {"task-1", "result"}
    for pieces in by_id.values():
        assert len(pieces) >= 2
        assert not pieces[0].append
        assert all(p.append for p in pieces[1:-1])
        assert pieces[-1].last_chunk
        assert not pieces[-1].append  # the end: all of it
        assert not any(p.last_chunk for p in pieces[:-1])
    assert artifact_text(task, "result") == "Report on costs: The sum is 5."
    assert artifact_text(task, "task-1") == "The sum is 5."


async def test_named_inputs_from_a_data_part() -> None:
    llm = ScriptedLLM(model="greeter", script=[lambda m, t: last_user_text(m).split("|")[1]])
    agent = Agent(role="Greeter", goal="Greet {audience}", backstory="Kind.", llm=llm)
    task = CrewTask(
        description="Say |hello {audience} about {topic}| please",
        expected_output="A greeting",
        agent=agent,
    )
    crew = Crew(agents=[agent], tasks=[task])
    served_agent = CrewAgent(crew)
    assert served_agent.expected_inputs == ["audience", "topic"]
    async with served(served_agent) as client:
        data = Message(
            message_id=new_id(),
            role=Role.USER,
            parts=[Part(data={"audience": "builders", "topic": "A2A"})],
        )
        assert (await client.send(data)).text == "hello builders about A2A"
        mixed = Message(
            message_id=new_id(),
            role=Role.USER,
            parts=[Part(text="crews"), Part(data={"audience": "readers"})],
        )
        assert (await client.send(mixed)).text == "hello readers about crews"
        missing = await client.send("only text")
    assert missing.state is TaskState.FAILED
    assert "audience" in missing.text
    assert "topic" in missing.text
    assert len(llm.calls) == 2  # the crew never ran for the incomplete request


async def test_a_lone_agent_sees_the_conversation() -> None:
    llm = ScriptedLLM(
        model="chat", script=[lambda m, t: f"{len(m)} messages, last: {m[-1]['content']}"]
    )
    agent = Agent(role="Chatter", goal="Chat", backstory="Friendly.", llm=llm)
    async with served(agent) as client:
        assert client.card is not None
        assert client.card.name == "Chatter"
        result = await client.send("hi there")
    assert result.state is TaskState.COMPLETED
    assert result.text.startswith("2 messages, last: ")  # the system prompt, then the user's
    assert "hi there" in result.text


async def test_failure_is_safe_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    secret = "token-s3cr3t-value"
    crew = echo_crew(llm=ScriptedLLM(model="boom", script=[RuntimeError(secret)]))
    async with served(crew) as client:
        result = await client.send("hello")
        stored = await client.get_task(result)
    assert result.state is TaskState.FAILED
    assert secret not in stored.model_dump_json()
    assert any(secret in r.getMessage() or secret in str(r.exc_info) for r in caplog.records)


async def test_human_feedback_round_then_accept() -> None:
    replies = iter(["Draft one", "Draft two, shorter"])
    llm = ScriptedLLM(model="drafts", script=[lambda m, t: next(replies)])
    agent = Agent(role="Drafter", goal="Draft", backstory="Iterates.", llm=llm, max_retry_limit=0)
    task = CrewTask(
        description="Draft a note about {input}",
        expected_output="A note",
        agent=agent,
        human_input=True,
    )
    crew = Crew(agents=[agent], tasks=[task], stream=True)
    async with served(CrewAgent(crew, max_feedback_rounds=2)) as client:
        first = await client.send("tea")
        assert first.state is TaskState.INPUT_REQUIRED
        assert first.text.startswith("Draft one")
        assert '"ok"' in first.text
        second = await client.send("make it shorter", task=first)
        assert second.state is TaskState.INPUT_REQUIRED
        assert second.task_id == first.task_id
        assert second.text.startswith("Draft two, shorter")
        third = await client.send("ok", task=second)
    assert third.state is TaskState.COMPLETED
    assert third.text == "Draft two, shorter"  # the streamed draft was replaced
    feedback = [c for c in llm.calls if "make it shorter" in last_user_text(c["messages"])]
    assert len(feedback) == 1


async def test_canceling_a_paused_task_releases_its_crew() -> None:
    crew = echo_crew(human_input=True)
    agent = CrewAgent(crew, max_parallel=1)
    async with served(agent) as client:
        paused = await client.send("anything")
        assert paused.state is TaskState.INPUT_REQUIRED
        run = agent._paused[paused.task_id or ""]
        canceled = await client.cancel(paused)
        assert canceled.status.state is TaskState.CANCELED
        assert await asyncio.to_thread(run.finished.wait, 10)
        # Its slot is free again: the only slot serves the next request.
        again = await client.send("next", task=None)
        assert again.state is TaskState.INPUT_REQUIRED


async def test_max_paused_refuses_new_work_while_that_many_crews_wait() -> None:
    agent = CrewAgent(echo_crew(human_input=True), max_paused=2)
    async with served(agent) as client:
        first = await client.send("one")
        second = await client.send("two")
        assert [first.state, second.state] == [TaskState.INPUT_REQUIRED] * 2
        with pytest.raises(ServerBusyError) as refused:
            await client.send("three")
        assert refused.value.data == {
            "reason": "paused_crews_full",
            "retryable": True,
            "max_paused": 2,
        }
        assert len(agent._paused) == 2
        # Answers to the waiting tasks are still taken, and free a place.
        done = await client.send("ok", task=first)
        assert done.state is TaskState.COMPLETED
        third = await client.send("three")
        assert third.state is TaskState.INPUT_REQUIRED
        # So does a cancel.
        await client.cancel(second)
        fourth = await client.send("four")
        assert fourth.state is TaskState.INPUT_REQUIRED


def test_max_paused_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_paused"):
        CrewAgent(echo_crew(), max_paused=0)


async def test_cancel_stops_the_crew_at_its_next_step() -> None:
    crew, tool = ticking_crew("cancel-me")
    async with served(crew) as client:
        started = await client.send("go", blocking=False)
        for _ in range(500):
            if tool.count >= 3:
                break
            await asyncio.sleep(0.01)
        assert tool.count >= 3
        canceled = await client.cancel(started)
        assert canceled.status.state is TaskState.CANCELED
        at_cancel = tool.count
        await asyncio.sleep(0.3)
        assert tool.count <= at_cancel + 1  # at most the step already under way
        stored = await client.get_task(started)
    assert stored.status.state is TaskState.CANCELED


async def test_max_parallel_bounds_the_running_crews() -> None:
    running = 0
    peak = 0
    lock = threading.Lock()

    def step(messages: Any, tools: Any) -> str:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        deadline = time.monotonic() + 2
        while running < 2 and time.monotonic() < deadline:  # give a second crew time to start
            time.sleep(0.01)
        time.sleep(0.05)  # and a third one, were the bound broken
        with lock:
            running -= 1
        return "done"

    crew = echo_crew(llm=ScriptedLLM(model="busy", script=[step]))
    async with served(CrewAgent(crew, max_parallel=2)) as client:
        results = await asyncio.gather(*(client.send(f"job {i}") for i in range(5)))
    assert [r.text for r in results] == ["done"] * 5
    assert peak == 2


async def test_events_are_filtered_to_each_request() -> None:
    """Two crews served at once and a third run outside any server: no event crosses over."""

    def crew_of(role: str) -> Crew:
        tool = AdderTool(name=f"{role.lower()}_adder")
        llm = ScriptedLLM(
            model=role,
            script=[tool_call(tool.name, a=1, b=1), "done"],
            delay=0.02,
        )
        agent = Agent(role=role, goal="Add", backstory="Adds.", llm=llm, tools=[tool])
        task = CrewTask(description="Add one and one. {input}", expected_output="2", agent=agent)
        return Crew(agents=[agent], tasks=[task], name=role)

    outsider = crew_of("Outsider")
    stop = threading.Event()

    def outside() -> None:
        while not stop.is_set():
            outsider.copy().kickoff(inputs={"input": "x"})

    thread = threading.Thread(target=outside)
    thread.start()
    try:
        async with served(crew_of("Alpha")) as alpha, served(crew_of("Beta")) as beta:
            batches = await asyncio.gather(
                *(stream_all(alpha, f"a{i}") for i in range(3)),
                *(stream_all(beta, f"b{i}") for i in range(3)),
            )
    finally:
        stop.set()
        thread.join(timeout=20)
    for index, events in enumerate(batches):
        own, other = ("Alpha", "Beta") if index < 3 else ("Beta", "Alpha")
        texts = statuses(events)
        assert any(f"{own} is using the tool {own.lower()}_adder" in t for t in texts), texts
        joined = "\n".join(texts)
        assert other not in joined
        assert "Outsider" not in joined
        assert "outsider" not in joined
        assert sum("started: " in t for t in texts) == 1, texts


async def test_a_hierarchical_crew_reports_its_manager_and_workers() -> None:
    """The manager joins at kickoff (not in the copy's agents): its events still come through."""
    worker = Agent(
        role="Researcher",
        goal="Find facts",
        backstory="Curious.",
        llm=ScriptedLLM(model="worker", script=["Owls can turn their heads 270 degrees."]),
    )
    manager_llm = ScriptedLLM(
        model="manager",
        script=[
            tool_call(
                "delegate_work_to_coworker",
                task="Find a fact about owls",
                context="For a quiz",
                coworker="Researcher",
            ),
            lambda m, t: f"Quiz fact: {tool_result_text(m)}",
        ],
    )
    task = CrewTask(description="Get a fact about {input}.", expected_output="A fact")
    crew = Crew(
        agents=[worker], tasks=[task], process=Process.hierarchical, manager_llm=manager_llm
    )
    async with served(crew) as client:
        events = await stream_all(client, "owls")
        task_result = await client.get_task(events[0])  # type: ignore[arg-type]
    assert task_result.status.state is TaskState.COMPLETED
    assert artifact_text(task_result, "result") == (
        "Quiz fact: Owls can turn their heads 270 degrees."
    )
    texts = statuses(events)
    assert any("using the tool delegate_work_to_coworker" in t for t in texts), texts
    assert any(t.startswith("Researcher is working") for t in texts), texts
