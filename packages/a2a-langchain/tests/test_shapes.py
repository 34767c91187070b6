"""The shapes LangChain users write, served over a real socket as they would expect.

Each is written as LangChain's own docs write it (lambdas, generators, graphs
over ``TypedDict`` states, dict literals, message histories), served with
``a2a_langchain.running_server`` on 127.0.0.1 and called with our client; the
lambda, the generator stream and the message history with the official
``a2a-sdk`` client too.
"""

from __future__ import annotations

import typing
import uuid
from collections.abc import Iterator
from typing import Any, cast

import typing_extensions
from a2a_core.client import A2AClient, text_of
from a2a_core.types import TaskArtifactUpdateEvent, TaskState
from a2a_langchain import LangChainAgent, running_server
from langchain_core.messages import AIMessage
from langchain_core.runnables import (
    RunnableGenerator,
    RunnableLambda,
    RunnablePassthrough,
)
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from lc_fakes import ScriptedModel


async def sdk_stream(url: str, text: str) -> tuple[list[str], str, int]:
    """Stream ``text`` with the official SDK client: the artifact chunks' texts, the
    final state's name and the number of events."""
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types import Message, Part, Role, SendMessageRequest

    client = await ClientFactory(ClientConfig(streaming=True)).create_from_url(url)
    pieces: list[str] = []
    state = 0
    count = 0
    try:
        request = SendMessageRequest(
            message=Message(
                role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[Part(text=text)]
            )
        )
        async for response in client.send_message(request):
            count += 1
            kind = response.WhichOneof("payload")
            if kind == "artifact_update":
                update = response.artifact_update
                texts = [p.text for p in update.artifact.parts]
                if update.last_chunk and not update.append and "".join(texts) == "".join(pieces):
                    continue  # the closing update repeats the whole artifact (whole answers)
                pieces.extend(texts)
            elif kind == "status_update":
                state = response.status_update.status.state
            elif kind == "task":
                state = response.task.status.state
    finally:
        await client.close()
    from a2a.types import TaskState as SdkState

    return pieces, SdkState.Name(state), count


async def stream_chunks(client: A2AClient, text: str) -> tuple[list[str], str, TaskState]:
    async with client.stream(text) as events:
        seen = [e async for e in events]
    pieces: list[str] = []
    for event in seen:
        if isinstance(event, TaskArtifactUpdateEvent):
            texts = [p.text or "" for p in event.artifact.parts]
            if event.last_chunk and not event.append and "".join(texts) == "".join(pieces):
                continue  # the closing update repeats the whole artifact (whole answers)
            pieces.extend(texts)
    assert events.task is not None
    return pieces, text_of(events.task), events.task.status.state


# -- RunnableLambda ------------------------------------------------------------------------


async def test_a_lambda_is_served_and_answers() -> None:
    shout = RunnableLambda[str, str](lambda text: text.upper() + "!")
    async with running_server(shout) as server:
        async with await A2AClient.connect(server.url) as client:
            assert client.card is not None
            assert client.card.name == "LangChain agent"
            assert (await client.send("hello")).text == "HELLO!"
        pieces, state, _ = await sdk_stream(server.url, "from the sdk")
    assert "".join(pieces) == "FROM THE SDK!"
    assert state == "TASK_STATE_COMPLETED"


async def test_a_lambda_serves_bound_and_as_an_agent() -> None:
    for runnable in (
        RunnableLambda[str, str](lambda text: text[::-1]).with_retry(),
        RunnableLambda[str, str](lambda text: text[::-1]).with_config(tags=["reverse"]),
        LangChainAgent(RunnableLambda[str, str](lambda text: text[::-1]), name="Reverser"),
    ):
        async with running_server(runnable) as server, await A2AClient.connect(server.url) as c:
            assert (await c.send("abc")).text == "cba"


# -- sync generators ----------------------------------------------------------------------


def split_into_words(text: str) -> Iterator[str]:
    """Says the message back, one word at a time."""
    for word in text.split():
        yield word + " "


def have_a_nice_day(chunks: Iterator[Any]) -> Iterator[str]:
    for _ in chunks:
        pass
    yield from ["Have", " a", " nice", " day"]


async def test_a_lambda_over_a_sync_generator_streams() -> None:
    async with running_server(RunnableLambda(split_into_words)) as server:
        async with await A2AClient.connect(server.url) as client:
            assert client.card is not None
            assert client.card.name == "split_into_words"
            assert (await client.send("one two three")).text == "one two three "
            pieces, text, state = await stream_chunks(client, "four five six")
        sdk_pieces, sdk_state, _ = await sdk_stream(server.url, "seven eight nine")
    assert state is TaskState.COMPLETED
    assert pieces == ["four ", "five ", "six "]
    assert text == "four five six "
    assert sdk_pieces == ["seven ", "eight ", "nine "]
    assert sdk_state == "TASK_STATE_COMPLETED"


async def test_a_runnable_generator_over_a_sync_transform_streams() -> None:
    chain = RunnableLambda(lambda text: text) | RunnableGenerator(have_a_nice_day)
    for runnable in (RunnableGenerator(have_a_nice_day), chain):
        async with running_server(runnable) as server:
            async with await A2AClient.connect(server.url) as client:
                assert (await client.send("hi")).text == "Have a nice day"
                pieces, _, state = await stream_chunks(client, "hi")
            sdk_pieces, sdk_state, _ = await sdk_stream(server.url, "hi")
        assert state is TaskState.COMPLETED
        assert pieces == ["Have", " a", " nice", " day"]
        assert sdk_pieces == ["Have", " a", " nice", " day"]
        assert sdk_state == "TASK_STATE_COMPLETED"


async def test_a_sync_generator_inside_a_dict_literal_runs() -> None:
    chain = {
        "words": RunnableLambda(split_into_words),
        "original": RunnablePassthrough(),
    } | RunnableLambda[dict[str, Any], str](lambda d: f"{d['words']}/ {d['original']}")
    async with running_server(chain) as server, await A2AClient.connect(server.url) as client:
        assert (await client.send("a b c")).text == "a b c / a b c"


# -- LangGraph graphs ----------------------------------------------------------------------


def qa_graph(state: type, **schemas: Any) -> Any:
    def answer(values: Any) -> dict[str, str]:
        return {"answer": f"You asked: {values['question']}"}

    builder = StateGraph(state, **schemas)
    builder.add_node("answer", cast(Any, answer))
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile()


class QAState(typing_extensions.TypedDict):
    question: str
    answer: str


class QAInput(typing_extensions.TypedDict):
    question: str


class QAOutput(typing_extensions.TypedDict):
    answer: str


# Written with ``typing.TypedDict``, as LangGraph's docs do (pydantic refuses it before 3.12).
class PlainQAState(typing.TypedDict):
    question: str
    answer: str


async def test_a_typed_dict_graph_takes_its_input_keys_only() -> None:
    graphs = [
        qa_graph(PlainQAState),
        qa_graph(QAState),
        qa_graph(QAState, input_schema=QAInput, output_schema=QAOutput),
    ]
    for graph in graphs:
        async with running_server(graph) as server, await A2AClient.connect(server.url) as c:
            reply = await c.send("why is the sky blue?")
        assert reply.state is TaskState.COMPLETED, reply.text
        task = reply.task
        assert task is not None
        data = [p.data for a in task.artifacts for p in a.parts if p.data is not None]
        assert cast(dict[str, Any], data[0])["answer"] == "You asked: why is the sky blue?"


async def test_graph_with_config_run_name_names_the_card() -> None:
    graph = qa_graph(QAState).with_config(run_name="Answerer")
    async with running_server(graph) as server, await A2AClient.connect(server.url) as client:
        assert client.card is not None
        assert client.card.name == "Answerer"


# -- dict literals ------------------------------------------------------------------------


async def test_a_dict_literal_with_a_passthrough_takes_the_message() -> None:
    chain = {"question": RunnablePassthrough(), "length": RunnableLambda(len)} | RunnableLambda[
        dict[str, Any], str
    ](lambda d: f"{d['question']} has {d['length']} letters")
    async with running_server(chain) as server, await A2AClient.connect(server.url) as client:
        assert client.card is not None
        assert "root" not in client.card.skills[0].description
        reply = await client.send("hello")
    assert reply.text == "hello has 5 letters"


# -- outputs -------------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def render_chart(text: str) -> bytes:
    """Draws a chart of the request (a PNG)."""
    return PNG


async def test_outputs_none_bytes_and_tool_calls_are_meaningful() -> None:
    model = ScriptedModel(
        script=[
            AIMessage(
                content="",
                tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "c1"}],
            )
        ]
        * 2
    )

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"Sunny in {city}"

    cases: list[tuple[Any, bool]] = [
        (RunnableLambda(print), True),
        (RunnableLambda(render_chart), True),
        (model.bind_tools([get_weather]), True),
        (RunnableLambda(print), False),
        (RunnableLambda(render_chart), False),
        (model.bind_tools([get_weather]), False),
    ]
    replies: list[Any] = []
    for runnable, stream in cases:
        async with (
            running_server(runnable, stream=stream) as server,
            await A2AClient.connect(server.url) as client,
        ):
            reply = await client.send("weather in Paris?")
        assert reply.state is TaskState.COMPLETED
        assert reply.task is not None
        replies.append(reply)
    for offset in (0, 3):
        nothing, chart, calls = replies[offset : offset + 3]
        assert nothing.task.artifacts == []
        assert nothing.text == "The agent finished without an answer."
        [file_part] = [p for a in chart.task.artifacts for p in a.parts]
        assert file_part.raw == PNG
        assert file_part.media_type == "image/png"
        assert file_part.filename == "result.png"
        parts = [p for a in calls.task.artifacts for p in a.parts]
        assert parts[0].text == "The agent asks to call: get_weather"
        assert parts[1].data == {
            "tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}, "id": "c1"}]
        }
