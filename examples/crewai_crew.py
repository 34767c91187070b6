"""A CrewAI crew served over A2A: two agents plan a day in a city.

Serve it (either way)::

    a2a serve examples/crewai_crew.py:crew          # found by the a2a-crewai plugin
    python examples/crewai_crew.py --port 8000       # the same, from Python

then ask it (the message text fills the crew's one input, ``{city}``)::

    a2a send http://localhost:8000 "Lisbon" --stream

Offline by default: the agents use scripted stand-in models. With
``OPENAI_API_KEY`` set they use a real model (``OPENAI_MODEL``, default
``gpt-4o-mini``).
"""

from __future__ import annotations

import argparse
import os
import re
from typing import Any

from a2a_crewai import offline_crewai

offline_crewai()  # before CrewAI is imported: no telemetry, no prompts, storage in a temp folder

from crewai import Agent, Crew, Task  # noqa: E402


def model(answer: str) -> Any:
    """A real model when OPENAI_API_KEY is set, else one that always gives ``answer``.

    ``answer`` may hold ``{city}``: the scripted model fills it from the task it is given.
    """
    if os.environ.get("OPENAI_API_KEY"):
        from crewai import LLM

        return LLM(model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"))
    from a2a_crewai.testing import ScriptedLLM, last_user_text

    def reply(messages: Any, tools: Any) -> str:
        found = re.search(r"a day in ([^.\n]+)\.", last_user_text(messages))
        return answer.format(city=found.group(1) if found else "the city")

    return ScriptedLLM(model="scripted", script=[reply])


scout = Agent(
    role="Local scout",
    goal="Find three things worth doing in {city}",
    backstory="Knows every neighbourhood and where the locals go.",
    llm=model("In {city}: a morning market, a riverside walk, a sunset viewpoint."),
)
planner = Agent(
    role="Day planner",
    goal="Turn ideas into a relaxed one-day plan",
    backstory="Plans days that never feel rushed.",
    llm=model("Plan for {city}: market at 9, walk by the river at 13, viewpoint at 19."),
)
crew = Crew(
    name="Trip planner",
    agents=[scout, planner],
    tasks=[
        Task(
            name="Ideas",
            description="List three things worth doing on a day in {city}.",
            expected_output="Three short ideas",
            agent=scout,
        ),
        Task(
            name="Plan",
            description="Turn the ideas into a relaxed plan for a day in {city}.",
            expected_output="A plan with times",
            agent=planner,
        ),
    ],
)


def main() -> None:
    from a2a_crewai import serve

    parser = argparse.ArgumentParser(description="Serve the trip-planner crew over A2A.")
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on")
    args = parser.parse_args()
    serve(crew, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
