"""Received files given to CrewAI natively (``kickoff(input_files=...)``, ``a2a-crewai[files]``).

Over real sockets with scripted models that format their messages as
CrewAI's own providers do (``BaseLLM._format_messages``): a multimodal model
gets the image as an image content block (the bytes intact) and the PDF
offered through CrewAI's ``read_file`` tool, for a crew and for a single
agent; a text-only model never gets native files (CrewAI would fail the run
on them), only the listing in its task text and ``read_input_file``.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from a2a_core.client import A2AClient
from a2a_core.types import Message, Part, Role, TaskState, new_id
from a2a_crewai import running_server
from a2a_crewai.testing import ScriptedLLM
from crewai import Agent, Crew, Task
from pydantic import Field

pytest.importorskip("crewai_files")

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


class ProviderLikeLLM(ScriptedLLM):
    """A scripted OpenAI-like model that formats its messages as CrewAI's providers do."""

    multimodal: bool = True
    formatted: list[Any] = Field(default_factory=list)
    """The messages of every call, as the provider would send them (shared by copies)."""

    def supports_multimodal(self) -> bool:
        return self.multimodal

    def call(self, messages: Any, *args: Any, **kwargs: Any) -> Any:  # pyright: ignore[reportIncompatibleMethodOverride]
        self.formatted.append(self._format_messages(messages))
        return super().call(messages, *args, **kwargs)


def model(multimodal: bool) -> ProviderLikeLLM:
    return ProviderLikeLLM(
        model="gpt-4o", provider="openai", script=["seen"], multimodal=multimodal
    )


def looker(llm: ProviderLikeLLM) -> Agent:
    return Agent(
        role="Looker", goal="Look", backstory="Sharp.", llm=llm, max_iter=2, max_retry_limit=0
    )


def crew_of(llm: ProviderLikeLLM) -> Crew:
    agent = looker(llm)
    task = Task(description="Look at: {input}", expected_output="What you saw", agent=agent)
    return Crew(agents=[agent], tasks=[task], name="Looking crew")


def with_files() -> Message:
    return Message(
        message_id=new_id(),
        role=Role.USER,
        parts=[
            Part(text="these"),
            Part(raw=PNG, filename="chart.png", media_type="image/png"),
            Part(raw=PDF, filename="report.pdf", media_type="application/pdf"),
        ],
    )


def last_user_content(llm: ProviderLikeLLM) -> Any:
    assert llm.formatted, "the model was never called"
    return [m for m in llm.formatted[-1] if m["role"] == "user"][-1]["content"]


@pytest.mark.parametrize("served", ["crew", "agent"])
async def test_a_multimodal_model_gets_the_image_as_a_content_block(served: str) -> None:
    llm = model(multimodal=True)
    target = crew_of(llm) if served == "crew" else looker(llm)
    async with running_server(target) as server, await A2AClient.connect(server.url) as client:
        result = await client.send(with_files())
    assert result.state is TaskState.COMPLETED, result
    content = last_user_content(llm)
    assert isinstance(content, list)
    images = [b for b in content if b.get("type") == "image_url"]
    assert len(images) == 1
    url = images[0]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == PNG
    text = "".join(b.get("text", "") for b in content if b.get("type") == "text")
    assert "chart.png (image/png, 72 bytes)" in text  # our listing is still there
    if served == "crew":
        # the PDF is not a type OpenAI chat takes inline: CrewAI offers it to its read_file tool
        assert '"report.pdf" (report.pdf, application/pdf)' in text


@pytest.mark.parametrize("served", ["crew", "agent"])
async def test_a_text_only_model_is_never_given_native_files(served: str) -> None:
    llm = model(multimodal=False)
    target = crew_of(llm) if served == "crew" else looker(llm)
    async with running_server(target) as server, await A2AClient.connect(server.url) as client:
        result = await client.send(with_files())
    assert result.state is TaskState.COMPLETED, result  # CrewAI fails a text-only run given files
    content = last_user_content(llm)
    assert isinstance(content, str)
    assert "chart.png (image/png, 72 bytes), saved at " in content
    assert "report.pdf (application/pdf, 45 bytes), saved at " in content
    tools = llm.calls[-1]["tools"] or []
    assert "read_input_file" in [t["function"]["name"] for t in tools]
