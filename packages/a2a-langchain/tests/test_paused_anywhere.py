"""A task paused by ``interrupt()`` on instance A, answered through instance B.

Two servers (real sockets on 127.0.0.1, our client) share one task store.
With one durable checkpointer (``AsyncSqliteSaver`` on one file, or
``AsyncPostgresSaver`` in a per-test schema) B resumes the graph where A
paused it: the node before the interrupt ran once, on A; the rest ran on B
and saw the conversation A started. With an in-memory checkpointer per
instance (two processes) B has no state for the paused graph: the task
fails at once with a message saying so, and nothing is rerun.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from a2a_core.cli import main
from a2a_core.client import A2AClient
from a2a_core.compose.serve import running_server as core_running_server
from a2a_core.types import TaskState
from a2a_langchain import LangChainAgent, open_checkpointer, running_server
from a2a_langchain._checkpoint import with_checkpointer
from a2a_langchain.agent import LOST_PAUSE_TEXT, MOVED_ON_TEXT
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableBinding, RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt

pytestmark = pytest.mark.timeout(60)

POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"
WEATHER = f"{Path(__file__).parent / 'lc_cli_weather.py'}:weather"
_SERVING = re.compile(r"^Serving .* at (http://\S+)$")


def weather_graph(label: str, runs: Counter[str]) -> Any:
    """prepare -> ask (interrupts for a city) -> answer; ``runs`` counts node entries."""

    async def prepare(state: MessagesState) -> dict[str, Any]:
        runs[f"prepare@{label}"] += 1
        return {"messages": [AIMessage(content="Looking at the sky...")]}

    async def ask(state: MessagesState) -> dict[str, Any]:
        runs[f"ask@{label}"] += 1
        city = interrupt("Which city?")
        return {"messages": [AIMessage(content=f"city: {city}")]}

    async def answer(state: MessagesState) -> dict[str, Any]:
        runs[f"answer@{label}"] += 1
        first = state["messages"][0].text
        city = state["messages"][-1].text.removeprefix("city: ")
        return {"messages": [AIMessage(content=f"{label}: sunny in {city} (you asked {first!r})")]}

    builder = StateGraph(MessagesState)
    builder.add_node("prepare", prepare)
    builder.add_node("ask", ask)
    builder.add_node("answer", answer)
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "ask")
    builder.add_edge("ask", "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=InMemorySaver(), name="Weather")


def _postgres_unreachable() -> str | None:
    try:
        import psycopg

        with psycopg.connect(POSTGRES_URL, connect_timeout=2) as conn:
            conn.execute("SELECT 1")
    except Exception as exc:
        return f"no PostgreSQL at 127.0.0.1:5432 ({type(exc).__name__})"
    return None


@pytest.fixture
def postgres_schema() -> Iterator[str]:
    """A fresh schema for the task store and the checkpoints (dropped afterwards)."""
    reason = _postgres_unreachable()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI promises a local PostgreSQL: {reason}")
        pytest.skip(f"needs a local PostgreSQL: {reason}")
    schema = f"a2a_lc_{uuid.uuid4().hex[:16]}"
    try:
        yield schema
    finally:
        import psycopg
        from psycopg import sql

        with psycopg.connect(POSTGRES_URL, autocommit=True, connect_timeout=5) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@asynccontextmanager
async def two_instances(
    store_url: str, runs: Counter[str], checkpointer_url: str | None
) -> AsyncIterator[tuple[A2AClient, A2AClient]]:
    """Instances A and B on one store; each with its own saver on ``checkpointer_url``
    (as two processes would have), or its own in-memory one when None."""
    async with AsyncExitStack() as stack:
        clients: list[A2AClient] = []
        for label in ("A", "B"):
            options: dict[str, Any] = {}
            if checkpointer_url is not None:
                options["checkpointer"] = await stack.enter_async_context(
                    open_checkpointer(checkpointer_url)
                )
            # B is served through the core's plugin path (a2a_core's running_server).
            serving = running_server if label == "A" else core_running_server
            server = await stack.enter_async_context(
                serving(weather_graph(label, runs), store_url=store_url, **options)
            )
            client = await A2AClient.connect(server.url)
            stack.push_async_callback(client.aclose)
            clients.append(client)
        yield clients[0], clients[1]


async def _pause_on_a_answer_on_b(store_url: str, checkpointer_url: str) -> None:
    runs: Counter[str] = Counter()
    async with two_instances(store_url, runs, checkpointer_url) as (a, b):
        paused = await a.send("weather please")
        assert paused.state is TaskState.INPUT_REQUIRED
        assert paused.text == "Which city?"
        assert runs == {"prepare@A": 1, "ask@A": 1}
        seen_on_b = await b.get_task(paused)
        assert seen_on_b.status.state is TaskState.INPUT_REQUIRED
        done = await b.send("Rome", task=paused)
        assert done.task_id == paused.task_id
        assert done.state is TaskState.COMPLETED
        # B answered, from A's checkpoint: A's first message is in its state.
        assert done.text == "B: sunny in Rome (you asked 'weather please')"
        # Resumed, not restarted: prepare ran once (on A); only the interrupted node reran.
        assert runs == {"prepare@A": 1, "ask@A": 1, "ask@B": 1, "answer@B": 1}
        final = await a.get_task(paused)
        assert final.status.state is TaskState.COMPLETED


@asynccontextmanager
async def two_instances_by_url(
    store_url: str, runs: Counter[str], checkpointer_url: str
) -> AsyncIterator[tuple[A2AClient, A2AClient]]:
    """Instances A and B on one store, each given the checkpointer as a URL (what
    ``a2a serve -o checkpointer=URL`` does): opened at the first run, closed at the end."""
    agents: list[LangChainAgent] = []
    async with AsyncExitStack() as stack:
        clients: list[A2AClient] = []
        for label in ("A", "B"):
            agent = LangChainAgent(weather_graph(label, runs), checkpointer=checkpointer_url)
            assert agent.resumable
            agents.append(agent)
            server = await stack.enter_async_context(running_server(agent, store_url=store_url))
            client = await A2AClient.connect(server.url)
            stack.push_async_callback(client.aclose)
            clients.append(client)
        yield clients[0], clients[1]
        assert [a.checkpointer_url is not None and a.checkpointer_url.opened for a in agents] == [
            True,
            True,
        ]
    # Each server closed the saver it opened when it stopped.
    assert [a.checkpointer_url is not None and a.checkpointer_url.opened for a in agents] == [
        False,
        False,
    ]


async def test_a_checkpointer_url_resumes_a_pause_on_another_instance(tmp_path: Path) -> None:
    runs: Counter[str] = Counter()
    url = f"sqlite:///{tmp_path / 'checkpoints.db'}"
    async with two_instances_by_url(f"sqlite:///{tmp_path / 'tasks.db'}", runs, url) as (a, b):
        paused = await a.send("weather please")
        assert paused.state is TaskState.INPUT_REQUIRED
        done = await b.send("Rome", task=paused)
        assert done.state is TaskState.COMPLETED
        assert done.text == "B: sunny in Rome (you asked 'weather please')"
        assert runs == {"prepare@A": 1, "ask@A": 1, "ask@B": 1, "answer@B": 1}


async def test_a_postgres_checkpointer_url_resumes_a_pause_on_another_instance(
    postgres_schema: str,
) -> None:
    runs: Counter[str] = Counter()
    url = f"{POSTGRES_URL}?schema={postgres_schema}"
    async with two_instances_by_url(url, runs, url) as (a, b):
        paused = await a.send("weather please")
        assert paused.state is TaskState.INPUT_REQUIRED
        done = await b.send("Rome", task=paused)
        assert done.state is TaskState.COMPLETED
        assert runs == {"prepare@A": 1, "ask@A": 1, "ask@B": 1, "answer@B": 1}


def _serve(label: str, args: list[str]) -> tuple[subprocess.Popen[str], str]:
    """``a2a serve lc_cli_weather.py:weather --port 0 ARGS`` as instance ``label``."""
    env = {
        **os.environ,
        "A2A_PLUGINS": "langchain",
        "PYTHONUNBUFFERED": "1",
        "A2A_TEST_LABEL": label,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "a2a_core.cli", "serve", WEATHER, "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    for line in proc.stdout:  # the startup lines come within the test's timeout
        found = _SERVING.match(line.strip())
        if found:
            return proc, found.group(1)
    proc.wait(timeout=20)
    raise AssertionError(proc.stderr.read() if proc.stderr else f"exit {proc.returncode}")


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    proc.wait(timeout=20)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


async def test_a2a_serve_takes_a_checkpointer_url_and_resumes_on_the_other_process(
    tmp_path: Path,
) -> None:
    args = [
        "--store",
        f"sqlite:///{tmp_path / 'tasks.db'}",
        "-o",
        f"checkpointer=sqlite:///{tmp_path / 'checkpoints.db'}",
    ]
    procs: list[subprocess.Popen[str]] = []
    try:
        proc, url_a = _serve("A", args)
        procs.append(proc)
        proc, url_b = _serve("B", args)
        procs.append(proc)
        async with await A2AClient.connect(url_a) as to_a:
            paused = await to_a.send("weather please")
        assert paused.state is TaskState.INPUT_REQUIRED
        async with await A2AClient.connect(url_b) as to_b:
            done = await to_b.send("Rome", task=paused)
        assert done.state is TaskState.COMPLETED
        assert done.text == "B: sunny in Rome (you asked 'weather please')"
    finally:
        for proc in procs:
            _stop(proc)


def test_a2a_serve_refuses_a_checkpointer_url_it_cannot_open(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["serve", WEATHER, "--port", "0", "-o", "checkpointer=redis://localhost"])
    assert code == 2
    err = capsys.readouterr().err
    assert "no durable checkpointer for 'redis'" in err


async def test_sqlite_checkpointer_resumes_a_pause_on_another_instance(tmp_path: Path) -> None:
    await _pause_on_a_answer_on_b(
        f"sqlite:///{tmp_path / 'tasks.db'}", f"sqlite:///{tmp_path / 'checkpoints.db'}"
    )


async def test_postgres_checkpointer_resumes_a_pause_on_another_instance(
    postgres_schema: str,
) -> None:
    url = f"{POSTGRES_URL}?schema={postgres_schema}"
    await _pause_on_a_answer_on_b(url, url)


async def test_in_memory_checkpointer_answered_elsewhere_fails_clearly(tmp_path: Path) -> None:
    runs: Counter[str] = Counter()
    async with two_instances(f"sqlite:///{tmp_path / 'tasks.db'}", runs, None) as (a, b):
        paused = await a.send("weather please")
        assert paused.state is TaskState.INPUT_REQUIRED
        answered = await b.send("Rome", task=paused)
        assert answered.state is TaskState.FAILED
        assert answered.text == LOST_PAUSE_TEXT
        assert runs == {"prepare@A": 1, "ask@A": 1}  # nothing ran on B: no silent restart
        final = await a.get_task(paused)
        assert final.status.state is TaskState.FAILED
        # A new task through B works (B's graph itself is fine).
        fresh = await b.send("weather please")
        assert fresh.state is TaskState.INPUT_REQUIRED
        assert runs["prepare@B"] == 1


async def test_an_answer_after_the_thread_moved_on_fails_instead_of_restarting() -> None:
    runs: Counter[str] = Counter()
    async with (
        running_server(weather_graph("A", runs)) as server,
        await A2AClient.connect(server.url) as client,
    ):
        first = await client.send("weather please")
        assert first.state is TaskState.INPUT_REQUIRED
        # A second task of the same context runs the graph's thread again...
        second = await client.send("weather in Paris?", context_id=first.context_id)
        assert second.state is TaskState.INPUT_REQUIRED
        done = await client.send("Paris", task=second)
        assert done.state is TaskState.COMPLETED
        # ...so the first task's question is gone from the thread.
        late = await client.send("Rome", task=first)
    assert late.state is TaskState.FAILED
    assert late.text == MOVED_ON_TEXT
    assert runs == {"prepare@A": 2, "ask@A": 3, "answer@A": 1}


async def test_with_checkpointer_attaches_a_saver_under_bindings() -> None:
    graph = weather_graph("A", Counter())
    saver = InMemorySaver()
    configured = RunnableBinding(bound=graph, config={"recursion_limit": 7})
    bound = with_checkpointer(configured, saver)
    assert isinstance(bound, RunnableBinding)
    inner: Any = bound.bound
    assert inner.checkpointer is saver
    assert bound.config == {"recursion_limit": 7}
    assert graph.checkpointer is not saver  # the given graph is left as it was
    assert LangChainAgent(graph, checkpointer=saver).resumable
    with pytest.raises(TypeError, match="BaseCheckpointSaver"):
        LangChainAgent(graph, checkpointer=42)
    with pytest.raises(ValueError, match="no durable checkpointer for 'redis'"):
        LangChainAgent(graph, checkpointer="redis://localhost")
    with pytest.raises(ValueError, match="expected sqlite:///"):
        LangChainAgent(graph, checkpointer="sqlite://host/x.db")
    with pytest.raises(TypeError, match="compiled LangGraph graph"):
        LangChainAgent(RunnableLambda(lambda text: text), checkpointer="sqlite:///x.db")
    by_url = LangChainAgent(graph, checkpointer="postgresql://u:secret@db/app")
    assert by_url.resumable
    assert "secret" not in repr(by_url.checkpointer_url)
    assert by_url.checkpointer_url is not None
    assert not by_url.checkpointer_url.opened  # nothing opened before the first run
    with pytest.raises(TypeError, match="compiled LangGraph graph"):
        LangChainAgent(RunnableLambda(lambda text: text), checkpointer=saver)
    with pytest.raises(ValueError, match="no durable checkpointer"):
        async with open_checkpointer("redis://localhost"):
            pass
