"""ArtifactStream: the one writer that streams an artifact, each chunk at once, and marks its end.

By default the closing update carries the whole artifact (``append: false``,
``lastChunk``); with ``whole_answers=False`` an empty appended part.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from a2a_core.server import ArtifactStream, ManagerConfig, RequestContext, TaskUpdater
from a2a_core.types import GetTaskRequest, Part, Task, TaskArtifactUpdateEvent
from server_core_support import CALL, ServiceFactory, send

Script = Callable[[ArtifactStream], Awaitable[None]]


async def run(
    make_service: ServiceFactory, script: Script, *, whole_answers: bool = True
) -> tuple[list[tuple], list[Part]]:
    """Stream one send of an agent running ``script``: (text, append, lastChunk) per
    artifact event, and the parts of the stored artifact."""

    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        await script(ArtifactStream(updater, "answer", name="Answer"))

    service = make_service(agent, config=ManagerConfig(whole_answers=whole_answers))
    stream = await service.stream_message(send(), CALL)
    events = [e async for e in stream]
    updates = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    seen = [
        ("".join(p.text or "" for p in u.artifact.parts), u.append, u.last_chunk) for u in updates
    ]
    assert isinstance(events[0], Task)
    stored = await service.get_task(GetTaskRequest(id=events[0].id), CALL)
    return seen, stored.artifacts[0].parts if stored.artifacts else []


async def test_chunks_go_out_as_written_and_the_end_carries_the_whole(
    make_service: ServiceFactory,
) -> None:
    async def script(stream: ArtifactStream) -> None:
        for chunk in ("a", "", "b", "c"):  # empty chunks are skipped
            await stream.write(chunk)
        assert stream.text == "abc"
        await stream.close()

    seen, stored = await run(make_service, script)
    assert seen == [
        ("a", False, False),
        ("b", True, False),
        ("c", True, False),
        ("abc", False, True),
    ]
    assert stored == [Part(text="abc")]


async def test_each_chunk_reaches_the_stream_before_the_next_is_written(
    make_service: ServiceFactory,
) -> None:
    """Nothing is held back: the agent waits until the client has its first chunk."""
    received = asyncio.Event()

    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        stream = ArtifactStream(updater, "answer")
        await stream.write("Searching...")
        await asyncio.wait_for(received.wait(), 5)  # held back, it would never arrive
        await stream.write(" found 3 flights")
        await stream.close()

    service = make_service(agent)
    texts: list[str] = []
    async for event in await service.stream_message(send(), CALL):
        if isinstance(event, TaskArtifactUpdateEvent):
            texts.append(event.artifact.parts[0].text or "")
            received.set()
    assert texts == ["Searching...", " found 3 flights", "Searching... found 3 flights"]


async def test_without_whole_answers_the_end_is_an_empty_appended_part(
    make_service: ServiceFactory,
) -> None:
    async def script(stream: ArtifactStream) -> None:
        for chunk in ("a", "b"):
            await stream.write(chunk)
        await stream.close()

    seen, stored = await run(make_service, script, whole_answers=False)
    assert seen == [("a", False, False), ("b", True, False), ("", True, True)]
    assert stored == [Part(text="ab")]


async def test_a_single_chunk_is_one_complete_artifact(make_service: ServiceFactory) -> None:
    async def script(stream: ArtifactStream) -> None:
        await stream.write("all of it")
        await stream.close("all of it")

    seen, _ = await run(make_service, script)
    assert seen == [("all of it", False, False), ("all of it", False, True)]


async def test_a_final_output_that_differs_replaces_what_streamed(
    make_service: ServiceFactory,
) -> None:
    async def script(stream: ArtifactStream) -> None:
        await stream.write("Let me ")
        await stream.write("check.")
        await stream.close([Part(text="It is "), Part(text="sunny.")])

    seen, stored = await run(make_service, script)
    assert seen == [
        ("Let me ", False, False),
        ("check.", True, False),
        ("It is sunny.", False, True),
    ]
    assert stored == [Part(text="It is "), Part(text="sunny.")]


async def test_a_final_output_that_says_the_same_closes_with_the_whole(
    make_service: ServiceFactory,
) -> None:
    async def script(stream: ArtifactStream) -> None:
        await stream.write("one ")
        await stream.write("two")
        await stream.close([Part(text="one two")])

    seen, stored = await run(make_service, script)
    assert seen == [("one ", False, False), ("two", True, False), ("one two", False, True)]
    assert stored == [Part(text="one two")]


async def test_flush_is_harmless_and_a_later_final_replaces_what_streamed(
    make_service: ServiceFactory,
) -> None:
    async def script(stream: ArtifactStream) -> None:
        await stream.write("draft")
        await stream.flush()  # e.g. before pausing for input
        await stream.close("final answer")

    seen, stored = await run(make_service, script)
    assert seen == [("draft", False, False), ("final answer", False, True)]  # flush sent nothing
    assert stored == [Part(text="final answer")]


@pytest.mark.parametrize("final", [None, [], ""])
async def test_nothing_written_and_no_final_sends_nothing(
    make_service: ServiceFactory, final: object
) -> None:
    async def script(stream: ArtifactStream) -> None:
        await stream.close(final)
        assert not stream.written

    seen, stored = await run(make_service, script)
    assert seen == []
    assert stored == []


async def test_data_chunks_stay_separate_parts(make_service: ServiceFactory) -> None:
    async def script(stream: ArtifactStream) -> None:
        await stream.write("total: ")
        await stream.write({"n": 3})
        await stream.close("total: ")  # a final that leaves out the data replaces it

    seen, stored = await run(make_service, script)
    assert seen[-1] == ("total: ", False, True)
    assert stored == [Part(text="total: ")]


async def test_metadata_goes_with_the_artifact_not_with_each_chunk(
    make_service: ServiceFactory,
) -> None:
    async def agent(context: RequestContext, updater: TaskUpdater) -> None:
        stream = ArtifactStream(updater, "step-1", metadata={"intermediate": True})
        for chunk in ("a", "b", "c"):
            await stream.write(chunk)
        await stream.close()
        await updater.complete()

    service = make_service(agent)
    events = [e async for e in await service.stream_message(send(), CALL)]
    sent = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    # the first chunk creates the artifact and the closing one replaces it: both carry it
    marked = {"intermediate": True}
    assert [u.artifact.metadata for u in sent] == [marked, None, None, marked]
    assert isinstance(events[0], Task)
    stored = await service.get_task(GetTaskRequest(id=events[0].id), CALL)
    assert stored.artifacts[0].metadata == {"intermediate": True}
    assert stored.artifacts[0].intermediate


async def test_data_chunks_close_with_every_part(make_service: ServiceFactory) -> None:
    async def script(stream: ArtifactStream) -> None:
        await stream.write("total: ")
        await stream.write("3")
        await stream.write({"n": 3})
        await stream.close()

    seen, stored = await run(make_service, script)
    assert seen[-1] == ("total: 3", False, True)
    assert stored == [Part(text="total: 3"), Part(data={"n": 3})]


async def test_a_closed_stream_still_says_it_was_written(make_service: ServiceFactory) -> None:
    # Adapters ask ``written`` after ``close`` to tell an answer from no answer at all.
    said: list[bool] = []

    async def script(stream: ArtifactStream) -> None:
        said.append(stream.written)
        await stream.write("hello")
        await stream.close()
        said.append(stream.written)

    await run(make_service, script)
    assert said == [False, True]
