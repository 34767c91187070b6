"""A crew paused for human input on instance A, answered through instance B.

A paused crew is a thread blocked in A's process; CrewAI keeps no
checkpoint of it, so B cannot resume it. Two servers on real sockets share
one ``sqlite://`` task store: the answer through B fails the task at once
with a message naming A, B never starts the crew (its model is never
called), and A's crew stops waiting at its ``input_timeout``. On one
instance, an answer after the crew stopped waiting fails the same way
instead of starting the crew over.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from a2a_core.client import A2AClient
from a2a_core.errors import UnsupportedOperationError
from a2a_core.types import TaskState
from a2a_crewai import CrewAgent, running_server
from a2a_crewai._paused import PAUSED_ON, lost_pause_text
from a2a_crewai.testing import ScriptedLLM
from crewai_fakes import asking_step, echo_crew

pytestmark = pytest.mark.timeout(90)


def asking_crew() -> tuple[ScriptedLLM, object]:
    llm = ScriptedLLM(model="asking-fake", script=[asking_step()])
    return llm, echo_crew(human_input=True, llm=llm)


async def test_an_answer_through_another_instance_fails_clearly(tmp_path: Path) -> None:
    store_url = f"sqlite:///{tmp_path / 'tasks.db'}"
    llm_a, crew_a = asking_crew()
    llm_b, crew_b = asking_crew()
    agent_a = CrewAgent(crew_a, input_timeout=3)
    agent_b = CrewAgent(crew_b)
    async with (
        running_server(agent_a, store_url=store_url) as server_a,
        running_server(agent_b, store_url=store_url) as server_b,
        await A2AClient.connect(server_a.url) as a,
        await A2AClient.connect(server_b.url) as b,
    ):
        paused = await a.send("tea")
        assert paused.state is TaskState.INPUT_REQUIRED
        assert paused.text.startswith("What should I echo?")
        question = paused.task.status.message if paused.task else None
        assert question is not None
        assert question.metadata is not None
        assert question.metadata["crewai"][PAUSED_ON] == agent_a.instance
        run = agent_a._paused[paused.task_id or ""]
        calls_on_a = len(llm_a.calls)

        answered = await b.send("coffee", task=paused)
        assert answered.task_id == paused.task_id
        assert answered.state is TaskState.FAILED
        assert answered.text == lost_pause_text(agent_a.instance, agent_b.instance, 3600)
        assert agent_a.instance in answered.text
        assert llm_b.calls == []  # B never started the crew over
        assert len(llm_a.calls) == calls_on_a

        # Settled everywhere: A refuses the answer too, and its crew stops waiting.
        seen_on_a = await a.get_task(paused)
        assert seen_on_a.status.state is TaskState.FAILED
        with pytest.raises(UnsupportedOperationError):
            await a.send("coffee", task=paused)
        assert await asyncio.to_thread(run.finished.wait, 30)
        assert len(llm_a.calls) == calls_on_a


async def test_an_answer_after_the_crew_stopped_waiting_fails_instead_of_restarting() -> None:
    llm, crew = asking_crew()
    agent = CrewAgent(crew, input_timeout=0.5)
    async with running_server(agent) as server, await A2AClient.connect(server.url) as client:
        paused = await client.send("tea")
        assert paused.state is TaskState.INPUT_REQUIRED
        run = agent._paused[paused.task_id or ""]
        assert await asyncio.to_thread(run.finished.wait, 30)
        late = await client.send("coffee", task=paused)
    assert late.state is TaskState.FAILED
    assert late.text == lost_pause_text(agent.instance, agent.instance, 0.5)
    assert len(llm.calls) == 1  # asked once; never started over
