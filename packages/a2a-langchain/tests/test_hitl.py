"""``create_agent`` with LangChain's human-in-the-loop middleware, served over a socket.

The pending tool call reaches the client as readable text (the middleware's
request stays beside it as data), and plain replies (approve, reject with a
reason, edit with new arguments, any other text) or the middleware's own data
shape resume it.
"""

from __future__ import annotations

from typing import Any

import pytest
from a2a_core.client import A2AClient
from a2a_core.types import Part, TaskState
from a2a_langchain import running_server
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from lc_fakes import ScriptedModel


def sql_agent(ran: list[str], **middleware: Any) -> tuple[Any, ScriptedModel]:
    """The docs' shape: an agent whose ``execute_sql`` needs a person's approval."""

    @tool
    def execute_sql(query: str) -> str:
        """Run a SQL query."""
        ran.append(query)
        return f"ran {query}"

    model = ScriptedModel(
        script=[
            AIMessage(
                content="",
                tool_calls=[
                    {"name": "execute_sql", "args": {"query": "DELETE FROM users"}, "id": "c1"}
                ],
            ),
            AIMessage("Done."),
        ]
    )
    agent = create_agent(
        model=model,
        tools=[execute_sql],
        middleware=[HumanInTheLoopMiddleware(**middleware)],
        checkpointer=InMemorySaver(),
    )
    return agent, model


async def ask_and_answer(agent: Any, *replies: Any) -> tuple[str, list[Any]]:
    """The question's text, then the result of each reply on the same task."""
    async with running_server(agent) as server, await A2AClient.connect(server.url) as client:
        paused = await client.send("clean up the users table")
        assert paused.state is TaskState.INPUT_REQUIRED
        results = []
        for reply in replies:
            results.append(await client.send(reply, task=paused.task))
    return paused.text, results


def tool_messages(model: ScriptedModel) -> list[ToolMessage]:
    return [m for m in model.calls[-1] if isinstance(m, ToolMessage)]


@pytest.mark.parametrize("mode", ["batched", "per_call"])
async def test_the_question_is_readable_and_approve_runs_the_tool(mode: str) -> None:
    ran: list[str] = []
    agent, _ = sql_agent(ran, interrupt_on={"execute_sql": True}, interrupt_mode=mode)
    question, [done] = await ask_and_answer(agent, "approve")
    assert question.startswith('The agent wants to run:\nexecute_sql(query="DELETE FROM users")')
    assert "Reply approve" in question
    assert done.state is TaskState.COMPLETED
    assert done.text == "Done."
    assert ran == ["DELETE FROM users"]


async def test_reject_with_a_reason_tells_the_model_and_runs_nothing() -> None:
    ran: list[str] = []
    agent, model = sql_agent(ran, interrupt_on={"execute_sql": True})
    _, [done] = await ask_and_answer(agent, "reject: not on the production database")
    assert done.state is TaskState.COMPLETED
    assert ran == []
    [rejected] = tool_messages(model)
    assert "not on the production database" in rejected.text


async def test_edit_with_new_arguments_as_text_or_data() -> None:
    for reply in ('edit {"query": "SELECT 1"}', Part(data={"query": "SELECT 1"})):
        ran: list[str] = []
        agent, _ = sql_agent(ran, interrupt_on={"execute_sql": True})
        _, [done] = await ask_and_answer(agent, reply)
        assert done.state is TaskState.COMPLETED
        assert ran == ["SELECT 1"]


async def test_the_middlewares_own_shape_and_free_text_answers() -> None:
    ran: list[str] = []
    agent, _ = sql_agent(ran, interrupt_on={"execute_sql": True})
    exact = Part(data={"decisions": [{"type": "approve"}]})
    _, [done] = await ask_and_answer(agent, exact)
    assert done.state is TaskState.COMPLETED
    assert ran == ["DELETE FROM users"]
    ran.clear()
    agent, model = sql_agent(ran, interrupt_on={"execute_sql": True})
    _, [done] = await ask_and_answer(agent, "The table is already empty.")
    assert done.state is TaskState.COMPLETED
    assert ran == []  # "respond": the text answers in the tool's place
    assert tool_messages(model)[0].text == "The table is already empty."


async def test_a_decision_that_is_not_allowed_asks_again() -> None:
    ran: list[str] = []
    only = {"execute_sql": {"allowed_decisions": ["approve", "reject"]}}
    agent, _ = sql_agent(ran, interrupt_on=only)
    question, [again, done] = await ask_and_answer(agent, 'edit {"query": "SELECT 1"}', "yes")
    assert question.endswith("Reply approve, or reject (optionally with a reason: reject: ...).")
    assert again.state is TaskState.INPUT_REQUIRED
    assert again.text.startswith("edit is not allowed for execute_sql: reply approve or reject.")
    assert done.state is TaskState.COMPLETED
    assert ran == ["DELETE FROM users"]
