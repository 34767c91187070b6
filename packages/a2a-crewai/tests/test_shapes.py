"""Crews as CrewAI's docs write them, served over a real socket and read with our client.

The research crew is the one of CrewAI's quickstart (a researcher and a
reporting analyst over ``{topic}``), written in code instead of YAML and
driven by scripted models.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from a2a_core.client import A2AClient
from a2a_core.types import TaskState
from a2a_crewai import running_server
from crewai import Agent, Crew, Process, Task
from crewai_fakes import ScriptedLLM, last_user_text

pytestmark = pytest.mark.timeout(60)


def research_crew() -> Crew:
    """CrewAI's quickstart crew: research ``{topic}``, then write the report."""

    def bullets(messages: Any, tools: Any) -> str:
        found = re.search(r"research about (.+?)\. ", last_user_text(messages))
        return f"- {found.group(1) if found else '?'} is moving fast"

    def report(messages: Any, tools: Any) -> str:
        found = re.search(r"- (.+?) is moving fast", last_user_text(messages))
        return f"# Report\n{found.group(1) if found else '?'}: moving fast."

    researcher = Agent(
        role="{topic} Senior Data Researcher",
        goal="Uncover cutting-edge developments in {topic}",
        backstory="You're a seasoned researcher with a knack for uncovering the latest "
        "developments in {topic}.",
        llm=ScriptedLLM(model="researcher", script=[bullets]),
        max_retry_limit=0,
    )
    reporting_analyst = Agent(
        role="{topic} Reporting Analyst",
        goal="Create detailed reports based on {topic} data analysis and research findings",
        backstory="You're a meticulous analyst with a keen eye for detail.",
        llm=ScriptedLLM(model="analyst", script=[report]),
        max_retry_limit=0,
    )
    research_task = Task(
        description="Conduct a thorough research about {topic}. Make sure you find any "
        "interesting and relevant information.",
        expected_output="A list with 10 bullet points of the most relevant information "
        "about {topic}",
        agent=researcher,
    )
    reporting_task = Task(
        description="Review the context you got and expand each topic into a full section "
        "for a report.",
        expected_output="A fully fledged report with the main topics.",
        agent=reporting_analyst,
    )
    return Crew(
        agents=[researcher, reporting_analyst],
        tasks=[research_task, reporting_task],
        process=Process.sequential,
    )


async def test_a_crews_skill_reads_as_prose() -> None:
    async with (
        running_server(research_crew()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        card = client.card
    assert card is not None
    skill = card.skills[0]
    for text in (card.description, skill.description):
        assert "{" not in text, text
        assert "}" not in text, text
        assert ".." not in text, text
    assert "Topic Senior Data Researcher" in skill.description
    assert "Conduct a thorough research about the topic" in skill.description
    assert skill.description.endswith("Input: topic (the text of the message)")
    assert "one of them" not in skill.description


async def test_a_crews_reply_text_is_its_final_result() -> None:
    async with (
        running_server(research_crew()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        reply = await client.send("AI agents")
        async with client.stream("AI agents") as stream:
            async for _ in stream:
                pass
            final = await stream.result()
    for result in (reply, final):
        assert result.state is TaskState.COMPLETED
        assert result.text == "# Report\nAI agents: moving fast."
        by_id = {a.artifact_id: a for a in result.artifacts}
        assert by_id["task-1"].parts[0].text == "- AI agents is moving fast"
        assert set(by_id) == {"task-1", "result"}


def test_a2a_list_shows_a_crews_final_result(capsys: pytest.CaptureFixture[str]) -> None:
    """``a2a list`` names each task by its answer: a crew's final result, not a step's."""
    from a2a_core.cli import main
    from a2a_core.testing.threads import served_in_thread

    with served_in_thread(research_crew()) as url:
        assert main(["send", url, "AI agents", "-q"]) == 0
        capsys.readouterr()
        assert main(["list", url]) == 0
        rows = capsys.readouterr().out.splitlines()[1:]
    assert len(rows) == 1
    assert rows[0].endswith("# Report AI agents: moving fast.")
    assert "is moving fast" not in rows[0]  # the research step's own output
