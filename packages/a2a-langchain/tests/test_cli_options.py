"""``a2a serve chain.py:chain -o NAME=VALUE`` reaches ``LangChainAgent``, checked by name.

The server is the real ``a2a serve`` command in a subprocess on 127.0.0.1,
called by our client over the socket.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from a2a_core.cli import main
from a2a_core.client import A2AClient
from a2a_core.types import TaskArtifactUpdateEvent

pytestmark = pytest.mark.timeout(120)

HERE = Path(__file__).parent
TARGET = f"{HERE / 'lc_cli_agent.py'}:chain"
_SERVING = re.compile(r"^Serving .* at (http://\S+)$")


@pytest.fixture
def serve_chain(request: pytest.FixtureRequest) -> Iterator[str]:
    """``a2a serve lc_cli_agent.py:chain --port 0 ARGS`` (ARGS from the test's parameter)."""
    args: list[str] = request.param
    env = {**os.environ, "A2A_PLUGINS": "langchain", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "a2a_core.cli", "serve", TARGET, "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        url = None
        for line in proc.stdout:  # the startup lines come within the test's timeout
            found = _SERVING.match(line.strip())
            if found:
                url = found.group(1)
                break
        assert url is not None, proc.stderr.read() if proc.stderr else ""
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


async def artifact_chunks(url: str, text: str) -> list[TaskArtifactUpdateEvent]:
    client = await A2AClient.connect(url)
    try:
        async with client.stream(text) as events:
            return [e async for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    finally:
        await client.aclose()


@pytest.mark.parametrize("serve_chain", [[]], indirect=True)
async def test_by_default_the_answer_streams_token_by_token(serve_chain: str) -> None:
    *chunks, end = await artifact_chunks(serve_chain, "one two three")
    assert len(chunks) > 1
    assert "".join(c.artifact.parts[0].text or "" for c in chunks) == "echo: one two three"
    assert (end.append, end.last_chunk) == (False, True)  # the end: the whole answer again
    assert end.artifact.parts[0].text == "echo: one two three"


@pytest.mark.parametrize(
    "serve_chain", [["-o", "stream=false", "-o", "tool_updates=names"]], indirect=True
)
async def test_o_stream_false_reaches_the_adapter(serve_chain: str) -> None:
    [only] = await artifact_chunks(serve_chain, "one two three")
    assert only.artifact.parts[0].text == "echo: one two three"


def test_an_unknown_option_lists_the_valid_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["serve", TARGET, "--port", "0", "-o", "strem=false"])
    err = capsys.readouterr().err
    assert code == 2
    assert (
        "unknown option strem (did you mean 'stream'?) for the langchain adapter (LangChainAgent)"
        in err
    )
    valid = err.split("valid options: ", 1)[1].split()
    assert {"stream,", "input_key,", "answer_model,", "conversation,"} <= set(valid)


def test_a_bad_value_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["serve", TARGET, "--port", "0", "-o", "tool_updates=loud"])
    err = capsys.readouterr().err
    assert code == 2
    assert "tool_updates must be full, names or off" in err
