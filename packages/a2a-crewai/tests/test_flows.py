"""CrewAI Flows, written as CrewAI's docs write them, served over real sockets.

Each flow is a ``Flow`` subclass with ``@start`` / ``@listen`` steps (models
are scripted, so everything runs offline); the tests call it with our client,
the official a2a-sdk client and the ``a2a`` CLI.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a_core.client import A2AClient, SyncA2AClient
from a2a_core.compose.serve import running_server as core_running_server
from a2a_core.types import Part, TaskState, TaskStatusUpdateEvent
from a2a_crewai import CrewAgent, running_server
from crewai import Agent, Crew, Task
from crewai.flow import human_feedback
from crewai.flow.flow import Flow, listen, start
from crewai_fakes import ScriptedLLM, echo_step, last_user_text
from crewai_servers import free_port, subprocess_env
from pydantic import BaseModel

pytestmark = pytest.mark.timeout(90)

# -- the flows ----------------------------------------------------------------------------

city_llm = ScriptedLLM(model="cities", script=[lambda m, t: f"Lisbon, {last_user_text(m)}"])


class ExampleFlow(Flow):
    """Finds a city and a fun fact about it."""

    @start()
    def generate_city(self) -> str:
        country = self.state.get("input", "anywhere")
        city = city_llm.call([{"role": "user", "content": country}])
        self.state["city"] = city
        return city

    @listen(generate_city)
    def generate_fun_fact(self, random_city: str) -> str:
        return f"Fun fact about {random_city}: it has {self.state.get('hills', 7)} hills."


class PoemState(BaseModel):
    sentence_count: int = 1
    topic: str = ""


class PoemFlow(Flow[PoemState]):
    """Writes a poem about a topic with a one-agent crew."""

    @start()
    def generate_sentence_count(self) -> None:
        self.state.sentence_count = max(self.state.sentence_count, 1)

    @listen(generate_sentence_count)
    def generate_poem(self) -> str:
        poet = Agent(
            role="Poet",
            goal="Write short poems",
            backstory="Writes to order.",
            llm=ScriptedLLM(model="poet", script=[echo_step("poem: ")]),
            max_retry_limit=0,
        )
        task = Task(
            description="Write a poem of {sentence_count} lines about <<{topic}>>",
            expected_output="A poem",
            agent=poet,
        )
        crew = Crew(agents=[poet], tasks=[task])
        result = crew.kickoff(
            inputs={"sentence_count": self.state.sentence_count, "topic": self.state.topic}
        )
        return f"{result.raw} ({self.state.sentence_count} lines)"  # pyright: ignore[reportAttributeAccessIssue]


class Article(BaseModel):
    title: str
    words: int


class ArticleFlow(Flow):
    @start()
    def write(self) -> Article:
        return Article(title=f"On {self.state['input']}", words=3)


def review_flow() -> Flow[Any]:
    """CrewAI's ``@human_feedback`` example: a draft, reviewed, routed on the outcome."""
    judge = ScriptedLLM(
        model="judge",
        script=[lambda m, t: '{"outcome": "approved"}' if "great" in str(m) else "rejected"],
    )

    class ReviewFlow(Flow):
        @start()
        @human_feedback(
            message="Please review this content:",
            emit=["approved", "rejected"],
            llm=judge,
        )
        def generate_content(self) -> str:
            return f"Draft about {self.state['input']}"

        @listen("approved")
        def publish(self) -> str:
            result = self.last_human_feedback  # CrewAI 1.15: the latest review
            assert result is not None
            return f"Published: {result.output} (feedback: {result.feedback})"

        @listen("rejected")
        def discard(self) -> str:
            return "Discarded"

    return ReviewFlow()


class AskingFlow(Flow):
    @start()
    def gather_info(self) -> str:
        topic = self.ask("What topic should we research?")
        return f"Researching {topic}"


class InnerFlow(Flow):
    @start()
    def question(self) -> str:
        return f"inner got {self.ask('Which colour?')}"


class OuterFlow(Flow):
    @start()
    def delegate(self) -> str:
        return f"outer: {InnerFlow().kickoff()}"


step_started = threading.Event()
steps_run: list[str] = []


class SlowFlow(Flow):
    @start()
    def first(self) -> str:
        step_started.set()
        time.sleep(1.0)
        return "first"

    @listen(first)
    def second(self, _: str) -> str:
        steps_run.append("second")
        return "second"


# -- tests ----------------------------------------------------------------------------------


async def test_a_flow_takes_the_message_and_answers_with_its_final_output() -> None:
    async with (
        running_server(ExampleFlow()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        card = client.card
        assert card is not None
        assert card.name == "ExampleFlow"
        assert card.description == "Finds a city and a fun fact about it."
        progress: list[str] = []
        async with client.stream("Portugal") as stream:
            async for event in stream:
                if isinstance(event, TaskStatusUpdateEvent) and event.status.message:
                    progress.append(event.status.message.text)
            result = await stream.result()
        assert result.state is TaskState.COMPLETED
        assert result.text == "Fun fact about Lisbon, Portugal: it has 7 hills."
        assert "Step generate_city started" in progress
        assert progress.index("Step generate_city finished") < progress.index(
            "Step generate_fun_fact started"
        )
        named = await client.send([Part(text="Spain"), Part(data={"hills": 3})])
        assert named.text == "Fun fact about Lisbon, Spain: it has 3 hills."


async def test_a_structured_state_is_filled_by_name_and_checked() -> None:
    async with (
        running_server(PoemFlow()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        card = client.card
        assert card is not None
        assert card.skills[0].description.endswith(
            "Inputs: sentence_count, topic (the message text fills topic; send sentence_count "
            'as a data part holding a JSON object, e.g. {"sentence_count": "..."})'
        )
        reply = await client.send([Part(text="the sea"), Part(data={"sentence_count": 3})])
        assert reply.state is TaskState.COMPLETED
        assert reply.text == "poem: the sea (3 lines)"
        wrong = await client.send([Part(text="x"), Part(data={"sentence_count": "many"})])
        assert wrong.state is TaskState.FAILED
        assert "sentence_count" in wrong.text
        assert "valid integer" in wrong.text
        unknown = await client.send([Part(data={"topic": "x", "colour": "red"})])
        assert unknown.state is TaskState.FAILED
        assert "no field colour" in unknown.text
        reserved = await client.send([Part(text="x"), Part(data={"id": "someone-elses"})])
        assert reserved.state is TaskState.FAILED
        assert "state id" in reserved.text


async def test_a_flow_returning_a_model_answers_with_data() -> None:
    async with (
        running_server(ArticleFlow()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        reply = await client.send("tides")
    assert reply.state is TaskState.COMPLETED
    (artifact,) = reply.artifacts
    assert [p.data for p in artifact.parts if p.data is not None] == [
        {"title": "On tides", "words": 3}
    ]
    assert reply.text == '{"title": "On tides", "words": 3}'


async def test_human_feedback_is_input_required_and_routes_the_flow() -> None:
    async with (
        running_server(review_flow()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        asked = await client.send("whales")
        assert asked.state is TaskState.INPUT_REQUIRED
        assert asked.text.startswith("Draft about whales\n\nPlease review this content:")
        assert "Reply with one of: approved, rejected" in asked.text
        done = await client.send("This is great", task=asked)
        assert done.state is TaskState.COMPLETED
        assert done.text == "Published: Draft about whales (feedback: This is great)"
        again = await client.send("sharks")
        rejected = await client.send("no, too short", task=again)
        assert rejected.text == "Discarded"


async def test_ask_is_input_required() -> None:
    async with (
        running_server(AskingFlow()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        asked = await client.send("start")
        assert asked.state is TaskState.INPUT_REQUIRED
        assert asked.text == "What topic should we research?"
        done = await client.send("deep sea vents", task=asked)
    assert done.state is TaskState.COMPLETED
    assert done.text == "Researching deep sea vents"


async def test_a_flow_kicked_off_inside_a_served_flow_asks_the_same_client() -> None:
    async with (
        running_server(OuterFlow()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        asked = await client.send("go")
        assert asked.text == "Which colour?"
        done = await client.send("teal", task=asked)
    assert done.text == "outer: inner got teal"


async def test_cancel_stops_a_flow_at_its_next_step_and_releases_a_waiting_one() -> None:
    steps_run.clear()
    step_started.clear()
    async with (
        running_server(SlowFlow()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        async with client.stream("go") as stream:
            async for event in stream:
                message = event.status.message if isinstance(event, TaskStatusUpdateEvent) else None
                if message is not None and message.text == "Step first started":
                    break
            task_id = stream.task.id if stream.task else ""
        assert await asyncio.to_thread(step_started.wait, 5)
        canceled = await client.cancel(task_id)
        assert canceled.status.state is TaskState.CANCELED
        await asyncio.sleep(1.5)  # the running step ends; the next one never starts
        assert steps_run == []
    async with (
        running_server(AskingFlow()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        asked = await client.send("start")
        assert asked.task_id is not None
        canceled = await client.cancel(asked.task_id)
        assert canceled.status.state is TaskState.CANCELED


async def test_the_core_serves_a_flow_and_a_flow_class_through_the_plugin() -> None:
    for target in (ExampleFlow(), ExampleFlow):
        async with (
            core_running_server(target) as server,
            await A2AClient.connect(server.url) as client,
        ):
            reply = await client.send("Chile")
            assert reply.text == "Fun fact about Lisbon, Chile: it has 7 hills."
    assert CrewAgent(ExampleFlow).name == "ExampleFlow"


class NeedsArguments(Flow):
    def __init__(self, city: str, **fields: Any) -> None:
        super().__init__(**fields)

    @start()
    def hello(self) -> str:
        return "hello"


def test_a_flow_that_cannot_be_built_again_is_refused_at_once() -> None:
    with pytest.raises(TypeError, match="give the constructor's own arguments defaults"):
        CrewAgent(NeedsArguments(city="Porto"))


async def test_official_sdk_client_streams_a_flow_and_answers_its_feedback_step() -> None:
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types import Message, Role, SendMessageRequest
    from a2a.types import Part as SdkPart
    from a2a.types import TaskState as SdkState

    def request(text: str, task_id: str = "", context_id: str = "") -> Any:
        return SendMessageRequest(
            message=Message(
                role=Role.ROLE_USER,
                message_id=f"m-{time.monotonic_ns()}",
                parts=[SdkPart(text=text)],
                task_id=task_id,
                context_id=context_id,
            )
        )

    async def run(client: Any, message: Any) -> tuple[list[Any], list[str], Any]:
        states: list[Any] = []
        texts: list[str] = []
        task: Any = None
        async for response in client.send_message(message):
            kind = response.WhichOneof("payload")
            if kind == "task":
                task = response.task
            elif kind == "status_update":
                states.append(response.status_update.status.state)
                texts += [p.text for p in response.status_update.status.message.parts]
            elif kind == "artifact_update":
                texts += [p.text for p in response.artifact_update.artifact.parts]
        return states, texts, task

    async with (
        running_server(ExampleFlow()) as example,
        running_server(review_flow()) as review,
        httpx.AsyncClient(timeout=30) as http,
    ):
        factory = ClientFactory(ClientConfig(streaming=True, httpx_client=http))
        client = await factory.create_from_url(example.url)
        states, texts, _ = await run(client, request("Peru"))
        assert states[-1] == SdkState.TASK_STATE_COMPLETED
        assert "Step generate_city started" in texts
        assert "Fun fact about Lisbon, Peru: it has 7 hills." in texts
        reviewer = await factory.create_from_url(review.url)
        states, texts, task = await run(reviewer, request("otters"))
        assert states[-1] == SdkState.TASK_STATE_INPUT_REQUIRED
        assert any(t.startswith("Draft about otters") for t in texts)
        states, texts, _ = await run(reviewer, request("great", task.id, task.context_id))
        assert states[-1] == SdkState.TASK_STATE_COMPLETED
        assert "Published: Draft about otters (feedback: great)" in texts
        await client.close()
        await reviewer.close()


def test_a2a_serve_finds_a_flow_in_a_module(tmp_path: Path) -> None:
    module = tmp_path / "flows_app.py"
    module.write_text(
        textwrap.dedent(
            """
            from crewai.flow.flow import Flow, listen, start


            class GreetingFlow(Flow):
                @start()
                def hello(self):
                    return "Hello, " + self.state["input"]

                @listen(hello)
                def shout(self, greeting):
                    return greeting.upper()


            flow = GreetingFlow()
            """
        )
    )
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "a2a_core.cli", "serve", f"{module}:flow", "--port", str(port)],
        cwd=tmp_path,
        env=subprocess_env(PYTHONUNBUFFERED="1"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        card = None
        while card is None and time.monotonic() < deadline and proc.poll() is None:
            try:
                card = httpx.get(url + "/.well-known/agent-card.json", timeout=1).json()
            except httpx.HTTPError:
                time.sleep(0.2)
        if card is None:
            pytest.fail(f"a2a serve did not serve the flow: {proc.communicate(timeout=10)[1]}")
        assert card["name"] == "GreetingFlow"
        with SyncA2AClient.connect(url) as client:
            assert client.send_text("ada") == "HELLO, ADA"
    finally:
        proc.terminate()
        proc.wait(timeout=20)
