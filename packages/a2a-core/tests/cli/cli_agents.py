"""Agents the CLI tests serve with ``a2a serve`` (as ``cli_agents.py:...`` and ``cli_agents:...``).

``ScriptedAgent`` acts on the first word of the message:

- ``hello ...``: an ``echo`` artifact "Echo: hello ...", then completed;
- ``reply ...``: a direct message reply;
- ``ask``: input-required ("What is your name?"); the answer completes it ("Hello, <answer>");
- ``fail``: failed, with the status message "Something went wrong";
- ``chunks``: three text chunks c0 c1 c2 of one artifact ``out``, then completed;
- ``wait``: works for a second, then completes with "Waited";
- ``slow``: works until canceled;
- ``count N SECONDS``: N numbered chunks "0;" "1;" ... of one artifact ``count``, one every
  SECONDS, then completed (a long stream for the chaos tests);
- ``parts``: describes the parts it received (kinds, media types, file names, data);
- ``rich``: answers with a data part and a file part.
"""

from __future__ import annotations

import asyncio
import json

from a2a_core.server import AgentExecutor, RequestContext, TaskUpdater
from a2a_core.types import Part
from a2a_test_plugin.plugin import FakeFrameworkAgent


class ScriptedAgent(AgentExecutor):
    """A scripted agent for the CLI tests."""

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        text = context.text
        word = text.split(" ", 1)[0] if text else ""
        if context.is_continuation:
            await updater.add_artifact(f"Hello, {text}", name="greeting")
            await updater.complete()
        elif word == "reply":
            await updater.reply(f"Reply: {text}")
        elif word == "ask":
            await updater.require_input("What is your name?")
        elif word == "fail":
            await updater.start_work()
            await updater.fail("Something went wrong")
        elif word == "chunks":
            await updater.start_work()
            for i in range(3):
                await updater.add_artifact(
                    f"c{i}", artifact_id="out", append=i > 0, last_chunk=i == 2
                )
            await updater.complete()
        elif word == "wait":
            await updater.start_work("Waiting a second")
            await asyncio.sleep(1.0)
            await updater.add_artifact("Waited", name="waited")
            await updater.complete()
        elif word == "slow":
            await updater.start_work()
            await asyncio.sleep(60)
        elif word == "count":
            _, total, pause = text.split()
            await updater.start_work()
            for i in range(int(total)):
                await asyncio.sleep(float(pause))
                await updater.add_artifact(
                    f"{i};", artifact_id="count", append=i > 0, last_chunk=i == int(total) - 1
                )
            await updater.complete()
        elif word == "parts":
            described = [
                {"kind": p.kind, "mediaType": p.media_type, "filename": p.filename, "data": p.data}
                for p in context.message.parts
            ]
            await updater.add_artifact(json.dumps(described, sort_keys=True), name="parts")
            await updater.complete()
        elif word == "bigfile":  # above the default inline limit: answered by URL
            big = bytes(range(256)) * 6000
            await updater.add_artifact(
                [Part(raw=big, filename="big.bin", media_type="application/octet-stream")],
                name="big",
            )
            await updater.complete()
        elif word == "rich":
            await updater.add_artifact(
                [
                    Part(data={"answer": 42}),
                    Part(raw=b"x" * 2048, filename="report.bin", media_type="application/pdf"),
                ],
                name="rich",
            )
            await updater.complete()
        else:
            await updater.add_artifact(f"Echo: {text}", name="echo")
            await updater.complete()


framework_agent = FakeFrameworkAgent("framework says")
"""Served through the test plugin's adapter (a 'foreign framework' object)."""

not_an_agent = 42
"""Nothing can serve an int: ``a2a serve`` must refuse it (exit 2)."""
