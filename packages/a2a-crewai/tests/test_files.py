"""Files through a served crew, over real sockets, with scripted models.

In: a text file and an image reach the crew: saved for the run, listed in
the task text, readable by the ``read_input_file`` tool; oversize and
disallowed files fail the task with the reason. Out: the file a task writes
(``output_file``) and its structured output come back as file and data
parts. Our client and the official SDK client.
"""

from __future__ import annotations

import asyncio
import re
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from a2a_core.client import A2AClient
from a2a_core.files import FilePolicy
from a2a_core.types import Message, Part, Role, TaskState, new_id
from a2a_crewai import running_server
from crewai import Agent, Crew, Task
from crewai_fakes import ScriptedLLM, last_user_text, tool_call, tool_result_text
from pydantic import BaseModel

NOTES = b"Quarterly sales rose 12 percent.\nCosts fell 3 percent.\n"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


class Summary(BaseModel):
    headline: str
    files_seen: int


def summary_crew(seen: list[str]) -> Crew:
    """Reads notes.txt with the tool, then answers a JSON summary; writes reports/summary.json."""

    def read_notes(messages: Any, tools: Any) -> Any:
        seen.append(last_user_text(messages))
        return tool_call("read_input_file", filename="notes.txt")

    def summarize(messages: Any, tools: Any) -> str:
        notes = tool_result_text(messages)
        first = notes.splitlines()[0] if notes else "nothing"
        listed = len(re.findall(r"^- ", seen[-1], re.MULTILINE))
        return Summary(headline=first, files_seen=listed).model_dump_json()

    agent = Agent(
        role="Summarizer",
        goal="Summarize attached files",
        backstory="Reads carefully.",
        llm=ScriptedLLM(model="summarizer", script=[read_notes, summarize]),
        max_iter=3,
        max_retry_limit=0,
    )
    task = Task(
        description="Summarize: {input}",
        expected_output="A JSON summary",
        agent=agent,
        output_pydantic=Summary,
        output_file="reports/summary.json",
    )
    return Crew(agents=[agent], tasks=[task], name="Summary crew")


async def removed(path: Path) -> bool:
    """Whether ``path`` is gone (the worker's cleanup may still be on its way: up to 5 s)."""
    for _ in range(50):
        if not await asyncio.to_thread(path.exists):
            return True
        await asyncio.sleep(0.1)
    return False


def user(*parts: Part) -> Message:
    return Message(message_id=new_id(), role=Role.USER, parts=list(parts))


async def test_a_crew_reads_a_received_file_and_answers_with_its_output_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    seen: list[str] = []
    async with (
        running_server(summary_crew(seen)) as server,
        await A2AClient.connect(server.url) as client,
    ):
        result = await client.send(
            user(
                Part(text="the quarter"),
                Part(raw=NOTES, filename="notes.txt", media_type="text/plain"),
                Part(raw=PNG, filename="chart.png", media_type="image/png"),
            )
        )
    assert result.state is TaskState.COMPLETED, result
    task_text = seen[-1]
    assert "Summarize: the quarter" in task_text
    assert "notes.txt (text/plain, 55 bytes), saved at " in task_text
    assert "chart.png (image/png, 72 bytes)" in task_text
    saved = Path(re.search(r"notes\.txt .*saved at (\S+)", task_text).group(1))  # type: ignore[union-attr]
    assert await removed(saved)  # the run's folder is removed when it ends
    assert result.task is not None
    parts = result.task.artifacts[-1].parts
    data = next(p.data for p in parts if p.data is not None)
    assert data == {"headline": "Quarterly sales rose 12 percent.", "files_seen": 2}
    written = next(p for p in parts if p.raw is not None)
    assert written.filename == "summary.json"
    assert written.media_type == "application/json"
    assert Summary.model_validate_json(written.raw or b"").files_seen == 2
    # written in the run's own folder (removed with it), not in the working directory
    assert not (tmp_path / "reports").exists()


async def test_refused_files_fail_the_crew_task_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    seen: list[str] = []
    policy = FilePolicy(max_bytes=40, media_types=("text/*",))
    async with (
        running_server(summary_crew(seen), file_policy=policy) as server,
        await A2AClient.connect(server.url) as client,
    ):
        big = await client.send(user(Part(text="x"), Part(raw=NOTES, filename="notes.txt")))
        image = await client.send(user(Part(text="x"), Part(raw=PNG[:8], media_type="image/png")))
    for result, reason in ((big, "up to 40 bytes"), (image, "image/png")):
        assert result.state is TaskState.FAILED
        assert result.task is not None
        assert result.task.status.message is not None
        assert reason in result.task.status.message.text
    assert seen == []  # the crew never ran


async def test_the_official_sdk_client_sends_a_file_and_gets_the_output_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types import Message as SdkMessage
    from a2a.types import Part as SdkPart
    from a2a.types import Role as SdkRole
    from a2a.types import SendMessageRequest

    monkeypatch.chdir(tmp_path)
    seen: list[str] = []
    async with running_server(summary_crew(seen)) as server:
        client = await ClientFactory(ClientConfig(streaming=True)).create_from_url(server.url)
        try:
            request = SendMessageRequest(
                message=SdkMessage(
                    role=SdkRole.ROLE_USER,
                    message_id=str(uuid.uuid4()),
                    parts=[
                        SdkPart(text="sdk quarter"),
                        SdkPart(raw=NOTES, media_type="text/plain", filename="notes.txt"),
                    ],
                )
            )
            artifacts: list[Any] = []
            async for response in client.send_message(request):
                if response.WhichOneof("payload") == "artifact_update":
                    artifacts.append(response.artifact_update.artifact)
        finally:
            await client.close()
    files = [p for a in artifacts for p in a.parts if p.raw]
    assert [f.filename for f in files] == ["summary.json"]
    assert Summary.model_validate_json(files[0].raw).headline.startswith("Quarterly")


async def test_the_remote_agent_tool_sends_a_file_and_saves_the_answered_one(
    tmp_path: Path,
) -> None:
    from a2a_core import running_server as core_server
    from a2a_core.server import FileStore, RequestContext
    from a2a_crewai import remote_agent_tool

    received: list[Part] = []

    async def painter(context: RequestContext) -> list[Part]:
        received.extend(p for p in context.message.parts if p.raw is not None)
        return [Part(text="Painted."), Part(raw=PNG, filename="art.png", media_type="image/png")]

    (tmp_path / "brief.txt").write_bytes(NOTES)
    # a small inline limit: the image goes by URL and the tool downloads it
    async with core_server(painter, file_store=FileStore(inline_limit=16)) as server:
        tool = await asyncio.to_thread(remote_agent_tool, server.url)
        tool.file_roots = (str(tmp_path / "nowhere"),)
        refused = await asyncio.to_thread(
            tool.run, message="paint", files=[str(tmp_path / "brief.txt")]
        )
        tool.file_roots = (str(tmp_path),)
        tool.save_dir = str(tmp_path / "got")
        answer = await asyncio.to_thread(
            tool.run, message="paint", files=[str(tmp_path / "brief.txt")]
        )
        await tool.aclose()
    assert "not in a folder files may be sent from" in refused
    assert [(p.filename, p.raw) for p in received] == [("brief.txt", NOTES)]
    assert answer.startswith("Painted.")
    saved = Path(re.search(r"art\.png \(image/png, 72 bytes\) saved at (\S+)", answer).group(1))  # type: ignore[union-attr]
    assert saved.parent == tmp_path / "got"
    assert await asyncio.to_thread(saved.read_bytes) == PNG


def report_writer(barrier: threading.Barrier) -> Crew:
    """One task writing ``report.md`` with the topic in it; both runs meet before answering."""

    def write(messages: Any, tools: Any) -> str:
        topic = last_user_text(messages).split("Report on: ", 1)[1].split("\n", 1)[0]
        barrier.wait(timeout=20)  # both runs are in flight at once
        return f"# Report on {topic}"

    agent = Agent(
        role="Writer",
        goal="Write reports",
        backstory="Terse.",
        llm=ScriptedLLM(model="writer", script=[write]),
        max_iter=2,
        max_retry_limit=0,
    )
    task = Task(
        description="Report on: {input}",
        expected_output="A report",
        agent=agent,
        output_file="report.md",
    )
    return Crew(agents=[agent], tasks=[task], name="Report crew")


@pytest.mark.parametrize("keep", [False, True], ids=["private", "output_dir"])
async def test_concurrent_runs_of_a_crew_never_share_an_output_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep: bool
) -> None:
    monkeypatch.chdir(tmp_path)
    kept = tmp_path / "outputs"
    options: dict[str, Any] = {"output_dir": str(kept)} if keep else {}
    async with (
        running_server(report_writer(threading.Barrier(2)), max_parallel=2, **options) as server,
        await A2AClient.connect(server.url) as client,
    ):
        apples, pears = await asyncio.gather(client.send("apples"), client.send("pears"))
    for result, topic in ((apples, "apples"), (pears, "pears")):
        assert result.state is TaskState.COMPLETED, result
        assert result.task is not None
        written = next(p for p in result.task.artifacts[-1].parts if p.raw is not None)
        assert written.filename == "report.md"
        assert written.raw == f"# Report on {topic}".encode()
        if keep:
            path = kept / result.task.id / "report.md"
            assert path.read_bytes() == written.raw
    assert not (tmp_path / "report.md").exists()
    if keep:
        assert sorted(p.name for p in kept.iterdir()) == sorted(
            r.task.id for r in (apples, pears) if r.task is not None
        )
    else:
        assert not kept.exists()
