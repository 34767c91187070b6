"""What ``serve()`` prints once it listens: the agent's URL and, as ``a2a serve`` says it,
the playground's; the printed addresses answer over a real socket."""

from __future__ import annotations

import asyncio
import contextlib
import re

import httpx
import pytest
from a2a_core import serve_async

pytestmark = pytest.mark.timeout(60)

BANNER = re.compile(r"A2A agent 'Banner' at (http://\S+) \(Ctrl\+C to stop\)")


async def banner_agent(context: object) -> str:
    """Banner."""
    return "ok"


async def _banner(capsys: pytest.CaptureFixture[str], *, playground: bool = True) -> list[str]:
    """Serve on a free port until the banner is out; its lines, the URLs checked live."""
    server = asyncio.create_task(
        serve_async(banner_agent, port=0, announce=True, name="Banner", playground=playground)
    )
    lines: list[str] = []
    try:
        for _ in range(200):
            await asyncio.sleep(0.05)
            lines += capsys.readouterr().err.splitlines()
            if lines and BANNER.fullmatch(lines[0]) and server.done() is False:
                await asyncio.sleep(0.05)  # the rest of the banner
                lines += capsys.readouterr().err.splitlines()
                break
        found = BANNER.fullmatch(lines[0])
        assert found is not None, lines
        base = found.group(1).replace("localhost", "127.0.0.1")
        async with httpx.AsyncClient() as client:
            for line in lines[1:]:
                url = line.split(": ", 1)[1].replace("localhost", "127.0.0.1")
                assert url.startswith(base)
                page = await client.get(url)
                assert page.status_code == 200, line
                assert "<title>A2A playground</title>" in page.text
    finally:
        server.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await server
    return [line.replace("localhost", "127.0.0.1") for line in lines]


async def test_serve_prints_the_playground_as_the_cli_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = await _banner(capsys)
    assert len(lines) == 2, lines
    found = BANNER.fullmatch(lines[0])
    assert found is not None
    assert lines[1] == f"Playground: {found.group(1)}/playground/"


async def test_no_playground_line_when_it_is_off(capsys: pytest.CaptureFixture[str]) -> None:
    lines = await _banner(capsys, playground=False)
    assert len(lines) == 1, lines
