"""The behaviours every server the client talks to must show, as reusable coroutines.

Each takes a connected ``A2AClient`` of an agent following the script of
``servers.ScriptedAgent`` and asserts what the caller sees.
"""

from __future__ import annotations

import asyncio

import pytest
from a2a_core import (
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskState,
    TaskStatusUpdateEvent,
    new_id,
)
from a2a_core.client import A2AClient

STEP = 10.0  # seconds any single scenario may take


async def send_blocking(client: A2AClient) -> None:
    reply = await client.send("hello world")
    assert reply.state is TaskState.COMPLETED
    assert reply.text == "Echo: hello world"
    assert reply.task_id
    assert reply.context_id
    assert reply.done
    assert not reply.needs_input


async def message_reply(client: A2AClient) -> None:
    reply = await client.send("reply please")
    assert reply.message is not None
    assert reply.task is None
    assert reply.text == "Reply: reply please"
    assert reply.state is None
    assert reply.done


async def stream(client: A2AClient) -> None:
    events = client.stream("chunks")
    seen = [event async for event in events]
    assert isinstance(seen[0], Task)
    assert any(isinstance(e, TaskArtifactUpdateEvent) for e in seen)
    last = seen[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.status.state is TaskState.COMPLETED
    assert all(e.task_id == seen[0].id for e in seen[1:] if not isinstance(e, Task | Message))
    assert events.task is not None
    assert events.task.status.state is TaskState.COMPLETED
    assert events.text == "c0c1c2"  # appended chunks, aggregated


async def stream_message(client: A2AClient) -> None:
    result = await client.stream("reply streamed").result()
    assert result.message is not None
    assert result.text == "Reply: reply streamed"


async def get_task(client: A2AClient) -> None:
    reply = await client.send("hello get")
    task = await client.get_task(reply)
    assert task.id == reply.task_id
    assert task.status.state is TaskState.COMPLETED
    assert task.artifacts
    assert task.artifacts[0].parts[0].text == "Echo: hello get"
    with pytest.raises(TaskNotFoundError) as caught:
        await client.get_task("no-such-task")
    assert caught.value.code == -32001


async def list_tasks(client: A2AClient) -> None:
    context_id = new_id()
    ids = {(await client.send(f"hello {i}", context_id=context_id)).task_id or "" for i in range(3)}
    page = await client.list_tasks(context_id=context_id)
    assert {t.id for t in page.tasks} == ids
    assert page.next_page_token == ""
    listed = [t.id async for t in client.iter_tasks(context_id=context_id, page_size=2)]
    assert sorted(listed) == sorted(ids)
    assert len(listed) == 3  # no duplicates across pages


async def cancel(client: A2AClient) -> None:
    started = await client.send("slow", blocking=False)
    assert started.state is not None
    assert not started.state.is_terminal
    canceled = await client.cancel(started)
    assert canceled.id == started.task_id
    assert canceled.status.state is TaskState.CANCELED
    assert (await client.get_task(started)).status.state is TaskState.CANCELED
    with pytest.raises(TaskNotCancelableError) as caught:
        await client.cancel(started)
    assert caught.value.code == -32002


async def subscribe(client: A2AClient) -> None:
    started = await client.send("slow", blocking=False)
    follow = client.subscribe(started)
    async with follow:
        first = await follow.__anext__()
        assert isinstance(first, Task)
        assert first.id == started.task_id
        await client.cancel(started)
        rest = [event async for event in follow]
    assert isinstance(rest[-1], TaskStatusUpdateEvent | Task)
    assert rest[-1].status.state is TaskState.CANCELED
    assert follow.task is not None
    assert follow.task.status.state is TaskState.CANCELED


async def multi_turn(client: A2AClient) -> None:
    question = await client.send("ask")
    assert question.needs_input
    assert question.state is TaskState.INPUT_REQUIRED
    assert question.text == "What is your name?"
    answer = await client.send("Ada", task=question)
    assert answer.state is TaskState.COMPLETED
    assert answer.text == "Hello, Ada"
    assert answer.task_id == question.task_id
    assert answer.context_id == question.context_id


async def multi_turn_stream(client: A2AClient) -> None:
    asked = await client.stream("ask").result()
    assert asked.state is TaskState.INPUT_REQUIRED
    answered = await client.stream("Grace", reply_to=asked).result()
    assert answered.state is TaskState.COMPLETED
    assert answered.task_id == asked.task_id
    assert answered.text == "Hello, Grace"


ALL = {
    "send_blocking": send_blocking,
    "message_reply": message_reply,
    "stream": stream,
    "stream_message": stream_message,
    "get_task": get_task,
    "list_tasks": list_tasks,
    "cancel": cancel,
    "subscribe": subscribe,
    "multi_turn": multi_turn,
    "multi_turn_stream": multi_turn_stream,
}
V10_ONLY = {"list_tasks"}


async def run(name: str, client: A2AClient) -> None:
    async with asyncio.timeout(STEP):
        await ALL[name](client)
