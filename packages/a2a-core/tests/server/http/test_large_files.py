"""Large answer files go by URL: served from the app's bounded, expiring store, fetched in limits.

Real sockets on 127.0.0.1: our client over both bindings and the official SDK
client receive a URL part for a file above the inline limit, and fetch the
bytes back; small files stay inline; the owner rule, the size limit and the
origin rule refuse what they should.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

import httpx
import pytest
from a2a_core import running_server
from a2a_core.client import A2AClient
from a2a_core.files import FileRefusedError
from a2a_core.server import AgentExecutor, FileStore, RequestContext, TaskUpdater
from a2a_core.server.files import FILES_PATH
from a2a_core.server.manager import TaskRun
from a2a_core.types import Part, Task, TaskArtifactUpdateEvent, TaskState

BIG = os.urandom(200_000)
SMALL = b"tiny file"


async def two_files(context: RequestContext) -> list[Part]:
    """Answers a large PNG-typed file and a small text file."""
    return [
        Part(text=f"files for {context.text}"),
        Part(raw=BIG, filename="big.png", media_type="image/png"),
        Part(raw=SMALL, filename="small.txt", media_type="text/plain"),
    ]


def store() -> FileStore:
    return FileStore(inline_limit=64 * 1024, max_bytes=4 * 1024 * 1024, max_files=10)


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_a_large_file_goes_by_url_and_comes_back_within_limits(binding: str) -> None:
    async with (
        running_server(two_files, file_store=store()) as server,
        await A2AClient.connect(server.url, preferred_bindings=[binding]) as client,
    ):
        result = await client.send("report")
        assert result.state is TaskState.COMPLETED
        assert result.task is not None
        parts = result.task.artifacts[0].parts
        big, small = parts[1], parts[2]
        assert big.raw is None
        assert big.url is not None
        assert big.url.startswith(f"{server.url}{FILES_PATH}")
        assert (big.filename, big.media_type) == ("big.png", "image/png")
        assert small.raw == SMALL
        assert small.url is None
        # the stored task holds the link, not the bytes
        again = await client.get_task(result.task.id)
        assert again.artifacts[0].parts[1].url == big.url

        fetched = await client.download(big)
        assert fetched.raw == BIG
        assert (fetched.filename, fetched.media_type) == ("big.png", "image/png")
        with pytest.raises(FileRefusedError, match="bytes allowed"):
            await client.download(big, max_bytes=1000)
        assert await client.download(small) is small


async def test_the_token_is_unguessable_and_unknown_tokens_are_404() -> None:
    files = store()
    async with running_server(two_files, file_store=files) as server:
        async with await A2AClient.connect(server.url) as client:
            result = await client.send("x")
        assert result.task is not None
        url = result.task.artifacts[0].parts[1].url
        assert url is not None
        token = url.rsplit("/", 1)[1]
        assert len(token) >= 40
        async with httpx.AsyncClient() as http:
            ok = await http.get(url)
            assert ok.status_code == 200
            assert ok.content == BIG
            assert ok.headers["content-type"] == "image/png"
            assert ok.headers["x-content-type-options"] == "nosniff"
            assert "attachment" in ok.headers["content-disposition"]
            for wrong in (token[:-1] + ("A" if token[-1] != "A" else "B"), "", "a/b"):
                missing = await http.get(f"{server.url}{FILES_PATH}{wrong}")
                assert missing.status_code == 404
            assert (await http.post(url)).status_code == 405
        assert await files.drop_task(result.task.id) == 1
        async with httpx.AsyncClient() as http:
            assert (await http.get(url)).status_code == 404


async def test_only_the_owner_of_the_task_can_fetch_its_files() -> None:
    tokens = {"alice-token": "alice", "bob-token": "bob"}
    async with running_server(two_files, file_store=store(), bearer_tokens=tokens) as server:
        alice_headers = {"Authorization": "Bearer alice-token"}
        async with await A2AClient.connect(server.url, headers=alice_headers) as alice:
            result = await alice.send("mine")
            assert result.task is not None
            part = result.task.artifacts[0].parts[1]
            assert part.url is not None
            assert (await alice.download(part)).raw == BIG  # the client's own headers go along
        async with httpx.AsyncClient() as http:
            assert (await http.get(part.url)).status_code == 404
            bob = await http.get(part.url, headers={"Authorization": "Bearer bob-token"})
            assert bob.status_code == 404
            ok = await http.get(part.url, headers=alice_headers)
            assert ok.status_code == 200
            assert ok.content == BIG


async def test_a_url_on_another_origin_is_refused_unless_allowed_and_vetted() -> None:
    async with (
        running_server(two_files, file_store=store()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        elsewhere = Part(url="http://127.0.0.2:9/secret.png", media_type="image/png")
        with pytest.raises(FileRefusedError, match="own origin"):
            await client.download(elsewhere)
        # allowed by origin, but the SSRF policy refuses a loopback address
        with pytest.raises(FileRefusedError, match="refused"):
            await client.download(elsewhere, allowed_origins=["http://127.0.0.2:9"])
        with pytest.raises(FileRefusedError, match="http"):
            await client.download(Part(url="file:///etc/passwd"))


async def test_the_official_sdk_client_gets_the_url_and_fetches_the_file() -> None:
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types import Message, Role, SendMessageRequest
    from a2a.types import Part as SdkPart

    async with running_server(two_files, file_store=store()) as server:
        client = await ClientFactory(ClientConfig(streaming=False)).create_from_url(server.url)
        try:
            request = SendMessageRequest(
                message=Message(
                    role=Role.ROLE_USER, message_id=str(uuid.uuid4()), parts=[SdkPart(text="sdk")]
                )
            )
            last: Any = None
            async for response in client.send_message(request):
                last = response
        finally:
            await client.close()
        parts = last.task.artifacts[0].parts
        assert parts[1].url.startswith(server.url)
        assert not parts[1].raw
        assert parts[2].raw == SMALL
        async with httpx.AsyncClient() as http:
            fetched = await http.get(parts[1].url)
        assert fetched.content == BIG


class TextAroundAFile(AgentExecutor):
    """Streams text chunks, one large file as an artifact of its own, then more text."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        for i in range(20):
            await updater.add_artifact(f"t{i} ", artifact_id="text", append=i > 0)
        await updater.add_artifact(
            [Part(raw=BIG, filename="big.png", media_type="image/png")], artifact_id="file"
        )
        for i in range(20, 40):
            await updater.add_artifact(f"t{i} ", artifact_id="text", append=True)
        await updater.complete()


async def _stream_text_around_a_file() -> tuple[str, list[Part], Task]:
    """The streamed text, the file chunk's parts as streamed, and the task as stored."""
    async with (
        running_server(TextAroundAFile(), file_store=store()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        text, file_parts, task_id = "", [], ""
        async for event in client.stream("go"):
            if isinstance(event, TaskArtifactUpdateEvent):
                task_id = event.task_id
                if event.artifact.artifact_id == "file":
                    file_parts = list(event.artifact.parts)
                else:
                    text += "".join(part.text or "" for part in event.artifact.parts)
        return text, file_parts, await client.get_task(task_id)


async def test_a_streamed_answer_sends_its_large_file_by_url_between_text_chunks() -> None:
    text, file_parts, stored = await _stream_text_around_a_file()
    assert text == "".join(f"t{i} " for i in range(40))
    assert len(file_parts) == 1
    assert file_parts[0].raw is None
    assert file_parts[0].url is not None
    assert stored.status.state is TaskState.COMPLETED
    by_id = {artifact.artifact_id: artifact for artifact in stored.artifacts}
    assert "".join(part.text or "" for part in by_id["text"].parts) == text
    assert by_id["file"].parts[0].url == file_parts[0].url  # the link, not the bytes


async def test_with_a_file_store_text_chunks_still_skip_the_one_by_one_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A file store is on in every app ``serve()`` builds. Only an event with a large file
    takes the path that applies events one by one (``TaskRun._apply``, which offloads it);
    text chunks are held and applied together, as without a file store."""
    applied: list[str] = []
    original = TaskRun._apply  # pyright: ignore[reportPrivateUsage]

    async def counted(self: TaskRun, event: Any) -> None:
        applied.append(type(event).__name__)
        await original(self, event)

    monkeypatch.setattr(TaskRun, "_apply", counted)
    text, file_parts, _ = await _stream_text_around_a_file()
    assert text
    assert file_parts[0].url is not None
    # The first chunk (it creates the task), the file chunk and the final status: none of
    # the 39 text chunks after the first.
    assert applied == [
        "TaskArtifactUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskStatusUpdateEvent",
    ], applied
