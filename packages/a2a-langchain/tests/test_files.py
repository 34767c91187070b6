"""Files through a served LangChain runnable, over real sockets, with fake models.

In: an image, a PDF and a text file reach the model as LangChain standard
content blocks next to the text (recorded by the fake model); URL files as
URL blocks, or downloaded to base64 blocks when asked; oversize and
disallowed files fail the task with the reason before the model runs.
Out: an image a tool returns (as a content block or as the tool's artifact)
comes back as a file part of the answer. Our client and the official SDK's.
"""

from __future__ import annotations

import asyncio
import base64
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from a2a_core.client import A2AClient
from a2a_core.files import FilePolicy
from a2a_core.server.push import UrlPolicy
from a2a_core.types import Message, Part, Role, TaskState, new_id
from a2a_langchain import running_server
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.tools import tool
from lc_fakes import ScriptedModel, _StreamingFake, agent_graph

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(200))
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer\n%%EOF\n"


class RecordingModel(_StreamingFake):
    """Answers how many blocks the last human message had; records those blocks."""

    seen: list[list[dict[str, Any]]] = []

    def model_post_init(self, context: Any) -> None:
        self.seen = []

    def reply(self, messages: Sequence[BaseMessage]) -> AIMessage:
        human = next(m for m in reversed(messages) if isinstance(m, HumanMessage))
        blocks = [dict(b) for b in human.content_blocks]
        self.seen.append(blocks)
        kinds = ",".join(str(b["type"]) for b in blocks)
        return AIMessage(content=f"I got {kinds}")


def user(*parts: Part) -> Message:
    return Message(message_id=new_id(), role=Role.USER, parts=list(parts))


async def test_an_image_a_pdf_and_a_text_file_reach_the_model_as_content_blocks() -> None:
    model = RecordingModel()
    async with (
        running_server(model | StrOutputParser()) as server,
        await A2AClient.connect(server.url) as client,
    ):
        result = await client.send(
            user(
                Part(text="Describe these"),
                Part(raw=PNG, filename="chart.png", media_type="image/png"),
                Part(raw=PDF, filename="report.pdf", media_type="application/pdf"),
                Part(raw=b"line one\nline two", filename="notes.txt", media_type="text/plain"),
                Part(url="https://example.com/photo.jpg", media_type="image/jpeg"),
            )
        )
    assert result.state is TaskState.COMPLETED
    assert result.text == "I got text,image,file,text-plain,image"
    text, image, pdf, notes, linked = model.seen[-1]
    assert text == {"type": "text", "text": "Describe these"}
    assert image["mime_type"] == "image/png"
    assert base64.b64decode(image["base64"]) == PNG
    assert pdf["mime_type"] == "application/pdf"
    assert base64.b64decode(pdf["base64"]) == PDF
    assert pdf["extras"] == {"filename": "report.pdf"}
    assert notes["text"] == "line one\nline two"
    assert notes["mime_type"] == "text/plain"
    assert linked["type"] == "image"
    assert linked["url"] == "https://example.com/photo.jpg"
    assert linked["mime_type"] == "image/jpeg"


async def test_oversize_and_disallowed_files_fail_the_task_with_the_reason() -> None:
    model = RecordingModel()
    policy = FilePolicy(max_bytes=100, media_types=("image/*", "application/pdf"))
    async with (
        running_server(model | StrOutputParser(), file_policy=policy) as server,
        await A2AClient.connect(server.url) as client,
    ):
        big = await client.send(user(Part(text="look"), Part(raw=PNG, filename="chart.png")))
        exe = await client.send(
            user(Part(raw=b"MZ", filename="setup.exe", media_type="application/x-msdownload"))
        )
        fine = await client.send(user(Part(raw=PNG[:50], media_type="image/png")))
    assert big.state is TaskState.FAILED
    assert big.task is not None
    assert big.task.status.message is not None
    assert "'chart.png' is 208 bytes" in big.task.status.message.text
    assert "up to 100 bytes" in big.task.status.message.text
    assert exe.state is TaskState.FAILED
    assert exe.task is not None
    assert exe.task.status.message is not None
    assert "application/x-msdownload" in exe.task.status.message.text
    assert "does not accept" in exe.task.status.message.text
    assert fine.state is TaskState.COMPLETED
    assert len(model.seen) == 1  # the refused messages never reached the model


@asynccontextmanager
async def file_host(body: bytes, media_type: str) -> AsyncIterator[str]:
    """A one-route HTTP server on 127.0.0.1 answering ``body`` to any GET."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        head = f"HTTP/1.1 200 OK\r\nContent-Type: {media_type}\r\nContent-Length: {len(body)}\r\n"
        writer.write(head.encode() + b"Connection: close\r\n\r\n" + body)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        await server.wait_closed()


async def test_base64_mode_downloads_url_files_through_the_url_policy() -> None:
    model = RecordingModel()
    async with file_host(PNG, "image/png") as host:
        part = Part(url=f"{host}/chart.png", filename="chart.png")
        # the default SSRF policy refuses a loopback host
        async with (
            running_server(model | StrOutputParser(), file_blocks="base64") as server,
            await A2AClient.connect(server.url) as client,
        ):
            refused = await client.send(user(part))
        assert refused.state is TaskState.FAILED
        assert refused.task is not None
        assert refused.task.status.message is not None
        assert "could not be fetched" in refused.task.status.message.text
        assert "loopback" in refused.task.status.message.text
        opened = UrlPolicy(allow_private_targets=True)
        async with (
            running_server(
                model | StrOutputParser(), file_blocks="base64", url_policy=opened
            ) as server,
            await A2AClient.connect(server.url) as client,
        ):
            fetched = await client.send(user(part))
            small = FilePolicy(max_bytes=10)
        assert fetched.state is TaskState.COMPLETED
        (image,) = model.seen[-1]
        assert image["type"] == "image"
        assert base64.b64decode(image["base64"]) == PNG
        assert image["mime_type"] == "image/png"
        async with (
            running_server(
                model | StrOutputParser(),
                file_blocks="base64",
                url_policy=opened,
                file_policy=small,
            ) as server,
            await A2AClient.connect(server.url) as client,
        ):
            too_big = await client.send(user(part))
        assert too_big.state is TaskState.FAILED


@tool(response_format="content_and_artifact")
def draw_chart(title: str) -> tuple[str, Part]:
    """Draw a chart; the image is the tool's artifact."""
    return f"Drew {title}", Part(raw=PNG, filename=f"{title}.png", media_type="image/png")


@tool
def snapshot(title: str) -> list[dict[str, Any]]:
    """Take a snapshot; the image is in the tool's content."""
    encoded = base64.b64encode(PDF).decode()
    return [
        {"type": "text", "text": f"snapshot {title}"},
        {"type": "file", "base64": encoded, "mime_type": "application/pdf"},
    ]


def call(name: str, title: str) -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": name, "args": {"title": title}, "id": f"c-{name}"}]
    )


async def test_files_a_tool_returns_come_back_as_file_parts() -> None:
    turn = [call("draw_chart", "sales"), call("snapshot", "q3"), AIMessage(content="Done.")]
    model = ScriptedModel(script=turn + turn)
    graph = agent_graph(model, [draw_chart, snapshot])
    async with (
        running_server(graph) as server,
        await A2AClient.connect(server.url) as client,
    ):
        result = await client.send("chart the sales")
        async with client.stream("chart the sales again") as events:
            streamed = await events.result()
    assert result.state is TaskState.COMPLETED
    for answer in (result, streamed):
        assert answer.task is not None
        parts = answer.task.artifacts[-1].parts
        assert parts[0].text == "Done."
        files = [p for p in parts if p.raw is not None]
        assert [(f.media_type, f.filename) for f in files] == [
            ("image/png", "sales.png"),
            ("application/pdf", None),
        ]
        assert files[0].raw == PNG
        assert files[1].raw == PDF


async def test_the_official_sdk_client_sends_files_to_a_served_chain() -> None:
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types import Message as SdkMessage
    from a2a.types import Part as SdkPart
    from a2a.types import Role as SdkRole
    from a2a.types import SendMessageRequest

    model = RecordingModel()
    async with running_server(model | StrOutputParser()) as server:
        client = await ClientFactory(ClientConfig(streaming=False)).create_from_url(server.url)
        try:
            request = SendMessageRequest(
                message=SdkMessage(
                    role=SdkRole.ROLE_USER,
                    message_id=str(uuid.uuid4()),
                    parts=[
                        SdkPart(text="from the sdk"),
                        SdkPart(raw=PNG, media_type="image/png", filename="a.png"),
                        SdkPart(raw=PDF, media_type="application/pdf", filename="b.pdf"),
                    ],
                )
            )
            last: Any = None
            async for response in client.send_message(request):
                last = response
        finally:
            await client.close()
    assert last.task.status.state == 3  # TASK_STATE_COMPLETED
    text, image, pdf = model.seen[-1]
    assert text["text"] == "from the sdk"
    assert base64.b64decode(image["base64"]) == PNG
    assert pdf["type"] == "file"
    assert base64.b64decode(pdf["base64"]) == PDF


def picture_agent(seen: list[list[dict[str, Any]]]) -> Any:
    """Records the blocks it got and answers a text and a PNG image block."""
    from langchain_core.runnables import RunnableLambda

    def answer(messages: list[BaseMessage]) -> AIMessage:
        human = next(m for m in reversed(messages) if isinstance(m, HumanMessage))
        seen.append([dict(b) for b in human.content_blocks])
        image = {
            "type": "image",
            "base64": base64.b64encode(PNG).decode(),
            "mime_type": "image/png",
        }
        return AIMessage(content=[{"type": "text", "text": "Here it is."}, image])

    return RunnableLambda(answer, name="Painter")


async def test_the_remote_agent_tool_sends_files_and_returns_received_ones_as_blocks(
    tmp_path: Path,
) -> None:
    from a2a_core.server import FileStore
    from a2a_langchain import aremote_agent_tool

    seen: list[list[dict[str, Any]]] = []
    (tmp_path / "brief.pdf").write_bytes(PDF)
    outside = tmp_path.parent / f"outside-{uuid.uuid4().hex}.pdf"
    # a small inline limit: the answer's image goes by URL and the tool downloads it
    painter = picture_agent(seen)
    async with running_server(
        painter, input_mode="messages", file_store=FileStore(inline_limit=16)
    ) as server:
        tool = await aremote_agent_tool(server.url, file_roots=(str(tmp_path),))
        try:
            message = await tool.ainvoke(
                {
                    "type": "tool_call",
                    "id": "call-1",
                    "name": tool.name,
                    "args": {"message": "paint", "files": [str(tmp_path / "brief.pdf")]},
                }
            )
            refused = await tool.ainvoke(
                {
                    "type": "tool_call",
                    "id": "call-2",
                    "name": tool.name,
                    "args": {"message": "paint", "files": [str(outside)]},
                }
            )
        finally:
            await tool.aclose()
    text, pdf = seen[0]
    assert text["text"] == "paint"
    assert base64.b64decode(pdf["base64"]) == PDF
    assert pdf["mime_type"] == "application/pdf"
    blocks = message.content
    assert blocks[0]["type"] == "text"
    assert "Here it is." in blocks[0]["text"]
    assert blocks[1]["type"] == "image"
    assert base64.b64decode(blocks[1]["base64"]) == PNG
    assert message.artifact["parts"][1]["raw"] == base64.b64encode(PNG).decode()
    assert refused.status == "error"
    assert "not in a folder files may be sent from" in refused.content
    assert len(seen) == 1
