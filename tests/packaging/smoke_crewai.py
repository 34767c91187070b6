"""Run inside a fresh environment that holds only the a2a-crewai wheel and its dependencies.

It serves a CrewAI crew (one agent with a scripted, offline model) with the
installed adapter, and calls it with the installed core's client over
127.0.0.1: a blocking send and a stream. CrewAI stays offline
(``offline_crewai``; the test also points HOME at a temporary folder). It
prints one JSON line for ``tests/packaging/test_install.py`` to check.
"""

from __future__ import annotations

import asyncio
import json

from a2a_crewai import offline_crewai

offline_crewai()  # before CrewAI is imported

import a2a_core  # noqa: E402
import a2a_crewai  # noqa: E402
from a2a_core import A2AClient  # noqa: E402
from a2a_crewai import running_server  # noqa: E402
from a2a_crewai.testing import ScriptedLLM  # noqa: E402
from crewai import Agent, Crew, Task  # noqa: E402


def crew() -> Crew:
    model = ScriptedLLM(model="scripted", script=["Hello from a crew"])
    agent = Agent(role="Greeter", goal="Greet people", backstory="Friendly.", llm=model)
    task = Task(description="Greet: {input}", expected_output="A greeting", agent=agent)
    return Crew(agents=[agent], tasks=[task])


async def main() -> None:
    async with (
        running_server(crew(), name="Wheel smoke", host="127.0.0.1", port=0) as server,
        await A2AClient.connect(server.url) as client,
    ):
        answer = await client.send_text("Ana")
        streamed = (await client.stream("Bo").result()).text
        card = client.card.name if client.card is not None else None
        # The HTTP protocol uvicorn served with: httptools (a dependency of the core), not h11.
        http = [cls.__name__ for cls in server.server.config.http_protocol_class.__mro__]
    print(
        json.dumps(
            {
                "url": server.url,
                "card": card,
                "answer": answer,
                "streamed": streamed,
                "http": http,
                "modules": [a2a_core.__file__, a2a_crewai.__file__],
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
