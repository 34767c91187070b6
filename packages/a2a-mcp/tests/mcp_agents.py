"""The A2A agents the bridge tests serve: echo, a streaming chain, one that asks, one that
works until canceled, one that trades files. Each is served on 127.0.0.1 by the core."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

from a2a_core import (
    AgentCapabilities,
    AgentCard,
    AgentExecutor,
    AgentSkill,
    EchoAgent,
    Part,
    RequestContext,
    TaskUpdater,
    running_server,
)

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)
LARGE = bytes(range(256)) * 3000  # 768 000 bytes: over the bridge's inline limit


def card(name: str, *skills: AgentSkill, modes: tuple[str, ...] = ("text/plain",)) -> AgentCard:
    return AgentCard(
        name=name,
        description=f"The {name} test agent",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=list(modes),
        default_output_modes=["text/plain"],
        skills=list(skills),
    )


def skill(skill_id: str, name: str, description: str, **fields: Any) -> AgentSkill:
    return AgentSkill(id=skill_id, name=name, description=description, tags=["test"], **fields)


class AskingAgent(AgentExecutor):
    """Asks which city, then answers with the weather there."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        if not context.is_continuation:
            await updater.require_input("Which city?")
            return
        await updater.add_artifact(f"Sunny in {context.text}", name="weather")
        await updater.complete()


class SlowAgent(AgentExecutor):
    """Says it started, then works until canceled; ``canceled`` records the tasks it stopped."""

    def __init__(self) -> None:
        self.started: asyncio.Event = asyncio.Event()
        self.canceled: list[str] = []
        self.stopped: asyncio.Event = asyncio.Event()

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work("working on it")
        self.started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.canceled.append(context.task_id)
            self.stopped.set()
            raise
        await updater.complete("too late")


class FilesAgent(AgentExecutor):
    """Says what files it got (a data part), and answers with an image and a large file."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        got = [
            {
                "name": p.filename,
                "mime": p.media_type,
                "size": len(p.raw) if p.raw is not None else None,
                "url": p.url,
            }
            for p in context.message.parts
            if p.raw is not None or p.url is not None
        ]
        await updater.add_artifact([Part(data={"received": got})], name="receipt")
        await updater.add_artifact(
            [
                Part(raw=PNG, filename="dot.png", media_type="image/png"),
                Part(raw=b"a,b\n1,2\n", filename="table.csv", media_type="text/csv"),
                Part(raw=LARGE, filename="big.bin", media_type="application/octet-stream"),
            ],
            name="files",
        )
        await updater.complete()


def echo_card() -> AgentCard:
    return card("Echo", skill("echo", "Echo", "Repeats what it is told"))


def chain() -> Any:
    """A LangChain chain as its docs write one, with a fake model that streams word by word."""
    from langchain_core.language_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate

    answers = iter([AIMessage(content="Paris is the capital of France, on the Seine.")] * 10)
    prompt = ChatPromptTemplate.from_messages([("human", "{input}")])
    return prompt | GenericFakeChatModel(messages=answers) | StrOutputParser()


def chain_card() -> AgentCard:
    return card("Geographer", skill("capitals", "Capitals", "Knows the capitals of countries"))


def asking_card() -> AgentCard:
    return card("Weather", skill("forecast", "Forecast", "Tells the weather in a city"))


def slow_card() -> AgentCard:
    return card("Slow", skill("slow", "Slow work", "Works for a long time"))


def files_card() -> AgentCard:
    return card(
        "Files",
        skill("trade", "Trade files", "Receives files, sends files back"),
        modes=("text/plain", "application/octet-stream"),
    )


@contextlib.asynccontextmanager
async def served(agent: Any, agent_card: AgentCard) -> AsyncIterator[str]:
    async with running_server(agent, card=agent_card) as server:
        yield server.url


def dead_url() -> str:
    """The URL of a port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def echo_agent() -> EchoAgent:
    return EchoAgent()


class WhoAgent(AgentExecutor):
    """Answers with the id of the authenticated caller."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        who = context.principal.id if context.principal is not None else "nobody"
        await updater.add_artifact(f"hello {who}", name="who")
        await updater.complete()


def who_card() -> AgentCard:
    return card("Who", skill("whoami", "Who am I", "Says who is calling"))


class DataAgent(AgentExecutor):
    """Answers with the data it was sent, and the skill the message asked for."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        data = [p.data for p in context.message.parts if p.data is not None]
        meta = context.message.metadata or {}
        await updater.add_artifact(
            [Part(data={"got": data, "skill": meta.get("skillId"), "text": context.text})]
        )
        await updater.complete()


def data_card() -> AgentCard:
    return card(
        "Trips",
        skill(
            "plan",
            "Plan a trip",
            "Plans a trip",
            examples=['{"city": "Paris", "days": 3, "budget": 120.5}', "a weekend in Rome"],
        ),
        skill("rate", "Rate", "Rates a trip", input_modes=["application/json"]),
    )


class RefusingAgent(AgentExecutor):
    """Rejects anything about Mars; fails anything else."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        if "mars" in context.text.lower():
            await updater.reject("I do not plan trips to Mars")
            return
        await updater.fail("the booking system is down")


def refusing_card() -> AgentCard:
    return card("Booker", skill("book", "Book", "Books trips"))
