"""The synchronous client: with or without a running loop in the caller, from many threads."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from a2a_core import (
    Task,
    TaskNotFoundError,
    TaskState,
    TaskStatusUpdateEvent,
    new_id,
)
from a2a_core.client import SyncA2AClient
from servers import free_port, our_app, running, scripted_service


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port = free_port()
    with running(our_app(scripted_service(), port), port) as base:
        yield base


@pytest.fixture
def client(url: str) -> Iterator[SyncA2AClient]:
    with SyncA2AClient.connect(url, timeout=10) as sync_client:
        yield sync_client


def test_operations_without_an_event_loop(client: SyncA2AClient) -> None:
    assert client.version == "1.0"
    assert client.binding == "JSONRPC"
    assert client.card is not None
    assert client.supports_streaming
    assert client.send_text("hello") == "Echo: hello"
    question = client.send("ask")
    assert question.needs_input
    answer = client.send("Ada", task=question)
    assert answer.text == "Hello, Ada"
    assert client.get_task(answer).status.state is TaskState.COMPLETED
    with pytest.raises(TaskNotFoundError):
        client.get_task("missing")


def test_streams_iterate_synchronously(client: SyncA2AClient) -> None:
    with client.stream("chunks") as events:
        seen = list(events)
    assert isinstance(seen[0], Task)
    assert isinstance(seen[-1], TaskStatusUpdateEvent)
    assert events.text == "c0c1c2"
    assert events.task is not None
    assert client.stream("reply now").result().text == "Reply: reply now"


def test_listing_cancel_and_subscribe(client: SyncA2AClient) -> None:
    context_id = new_id()
    ids = {client.send(f"hello {i}", context_id=context_id).task_id for i in range(3)}
    assert {t.id for t in client.list_tasks(context_id=context_id).tasks} == ids
    assert {t.id for t in client.iter_tasks(context_id=context_id, page_size=1)} == ids
    slow = client.send("slow", blocking=False)
    follow = client.subscribe(slow)
    first = next(follow)
    assert isinstance(first, Task)
    assert client.cancel(slow).status.state is TaskState.CANCELED
    rest = list(follow)
    assert rest[-1].status.state is TaskState.CANCELED  # type: ignore[union-attr]


async def test_inside_a_running_event_loop(url: str) -> None:
    """A sync tool called from async code: no 'event loop is already running' error."""

    def sync_tool() -> str:
        with SyncA2AClient.connect(url, timeout=10) as inner:
            return inner.send_text("from a loop")

    assert asyncio.get_running_loop().is_running()
    assert sync_tool() == "Echo: from a loop"


def test_from_many_threads_at_once(client: SyncA2AClient) -> None:
    with ThreadPoolExecutor(max_workers=6) as pool:
        texts = list(pool.map(lambda i: client.send_text(f"t{i}"), range(12)))
    assert texts == [f"Echo: t{i}" for i in range(12)]


def test_a_call_from_its_own_loop_thread_is_refused(client: SyncA2AClient) -> None:
    outcome: list[BaseException] = []
    done = threading.Event()

    def on_loop() -> None:
        try:
            client.get_task("x")
        except BaseException as exc:
            outcome.append(exc)
        done.set()

    client._runner.loop.call_soon_threadsafe(on_loop)  # pyright: ignore[reportPrivateUsage]
    assert done.wait(5)
    assert isinstance(outcome[0], RuntimeError)
    assert "own event loop" in str(outcome[0])


def test_close_stops_the_loop_thread_and_later_calls_fail(url: str) -> None:
    sync_client = SyncA2AClient.connect(url, timeout=10)
    thread = sync_client._runner.thread  # pyright: ignore[reportPrivateUsage]
    assert thread.is_alive()
    sync_client.close()
    sync_client.close()  # idempotent
    thread.join(5)
    assert not thread.is_alive()
    with pytest.raises(RuntimeError, match="closed"):
        sync_client.send_text("late")


def test_connect_failure_leaves_no_thread_behind() -> None:
    before = {t.name for t in threading.enumerate()}
    with pytest.raises(Exception, match="Could not"):
        SyncA2AClient.connect(f"http://127.0.0.1:{free_port()}/")
    assert not ({t.name for t in threading.enumerate()} - before)


def test_in_process_sync_client() -> None:
    service: Any = scripted_service()
    with SyncA2AClient.in_process(service) as sync_client:
        assert sync_client.binding == "INPROCESS"
        assert sync_client.send_text("local") == "Echo: local"
        assert [type(e).__name__ for e in sync_client.stream("reply s")] == ["Message"]
        sync_client.client.transport  # noqa: B018 - reachable for advanced use
        sync_client._runner.run(service.aclose())  # pyright: ignore[reportPrivateUsage]


def test_for_endpoint(url: str) -> None:
    with SyncA2AClient.for_endpoint(
        url + "/rest", binding="HTTP+JSON", version="0.3"
    ) as sync_client:
        assert (sync_client.version, sync_client.binding) == ("0.3", "HTTP+JSON")
        assert sync_client.send_text("rest") == "Echo: rest"
