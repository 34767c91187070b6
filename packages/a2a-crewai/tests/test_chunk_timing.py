"""A served crew's streamed words reach every reader when the model makes them (real sockets).

A one-task crew with ``stream=True`` over a slow scripted model (a word every
0.3 s, the first after a 2 s think), served on two instances sharing a Redis
or PostgreSQL store: the streaming client on A, a subscriber on A and one on B
each get every word within 150 ms of the model producing it (before, each word
waited for the next). The stored task holds the whole answer; every stream
ends with one update carrying all of it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from a2a_core.testing.timing import SHARED_STORES, Produced, chunk_arrivals, shared_store
from a2a_core.types import TaskState
from a2a_crewai import CrewAgent
from a2a_crewai.testing import ScriptedLLM
from crewai import Agent, Crew
from crewai import Task as CrewTask
from pydantic import PrivateAttr

pytestmark = pytest.mark.timeout(60)

BOUND = 0.150
"""How late a word may reach a reader (seconds after the model made it): half the
0.3 s a word waited for the next before, with room for a loaded two-core box."""
WORDS = ["Flights ", "to ", "Rome: ", "three."]
ANSWER = "".join(WORDS)


class SlowStreamingLLM(ScriptedLLM):
    """Waits for ``gate``, thinks 2 s, then streams ``WORDS`` one every 0.3 s, noting each."""

    _produced: Produced = PrivateAttr(default_factory=Produced)
    _gate: threading.Event = PrivateAttr(default_factory=threading.Event)

    def _answer(self, step: Any, snapshot: Any, tools: Any, from_task: Any, from_agent: Any) -> Any:
        self._gate.wait(30)
        time.sleep(2.0)
        for n, word in enumerate(WORDS):
            if n:
                time.sleep(0.3)
            self._produced.mark(word)
            self._emit_stream_chunk_event(word, from_task=from_task, from_agent=from_agent)
        return ANSWER


@pytest.mark.parametrize("kind", SHARED_STORES)
async def test_words_reach_every_reader_when_the_model_makes_them(kind: str) -> None:
    llm = SlowStreamingLLM(model="slow", script=[ANSWER], stream=True)
    agent = Agent(role="Travel agent", goal="Find flights", backstory="Quick.", llm=llm)
    task = CrewTask(description="Find flights: {input}", expected_output="A list", agent=agent)
    crew = Crew(agents=[agent], tasks=[task], stream=True)
    with shared_store(kind) as url:
        arrivals = await chunk_arrivals(
            CrewAgent(crew),
            url,
            "Rome",
            llm._gate.set,  # pyright: ignore[reportPrivateUsage]
        )
    produced: Produced = llm._produced  # pyright: ignore[reportPrivateUsage]
    assert [text for text, _ in produced.chunks] == WORDS  # the copy the run used shares it
    for reader, delays in arrivals.delays(produced).items():
        late = [round(d * 1000, 1) for d in delays if not 0 <= d <= BOUND]
        assert not late, f"{reader}: words arrived {late} ms after the model made them"
        end, _ = arrivals.updates[reader][-1]
        assert (end.append, end.last_chunk) == (False, True), reader
        assert end.artifact.parts[0].text == ANSWER, reader
    assert arrivals.stored.status.state is TaskState.COMPLETED
    assert [[p.text for p in a.parts] for a in arrivals.stored.artifacts] == [[ANSWER]]
