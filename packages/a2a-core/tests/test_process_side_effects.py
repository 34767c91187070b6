"""A library leaves its process alone; only what owns the process may change it.

``import a2a_core.client``, ``create_app``, ``mount`` and ``running_server`` never touch the
garbage collector or ``sys.meta_path``. ``serve()`` and ``a2a serve`` own their process, so
they freeze the startup objects (``gc.freeze()``), and ``a2a`` skips httpx's command line.
Each case runs in a fresh interpreter: both are process-wide.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

_AGENT = textwrap.dedent(
    """
    import gc

    from a2a_core.server import RequestContext
    from a2a_core.types import Message


    async def agent(context: RequestContext) -> Message:
        '''Answers with the process's count of frozen objects.'''
        return Message.agent(str(gc.get_freeze_count()))
    """
)

_LIBRARY = textwrap.dedent(
    """
    import asyncio, gc, json, sys

    finders = list(sys.meta_path)
    frozen_at_start = gc.get_freeze_count()  # CPython 3.12+ starts with some frozen already
    import a2a_core.client
    from a2a_core.client import A2AClient
    client_left_meta_path = sys.meta_path == finders
    import httpx
    from a2a_core import configure_service, mount, running_server
    from a2a_core.server.asgi import create_app
    from starlette.applications import Starlette
    from agent import agent


    async def main():
        async with create_app(configure_service(agent)).lifespan():
            pass
        host = Starlette()
        mount(host, agent, path="/a2a")
        async with host.router.lifespan_context(host):
            pass
        async with running_server(agent, port=0) as server:
            async with await A2AClient.connect(server.url) as client:
                reply = await client.send("hi")
        return reply.text


    answer = asyncio.run(main())
    print(json.dumps({
        "frozen": gc.get_freeze_count() - frozen_at_start,
        "answer": answer,
        "frozen_at_start": frozen_at_start,
        "meta_path_unchanged": client_left_meta_path and sys.meta_path == finders,
        "httpx_main_loaded": "httpx._main" in sys.modules,
    }))
    """
)


def _run(code: str, cwd: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_library_entry_points_leave_gc_and_meta_path_alone(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(_AGENT)
    report = _run(_LIBRARY, tmp_path)
    # the agent saw no more frozen objects while served than the interpreter started with
    assert report["answer"] == str(report["frozen_at_start"])
    assert report["frozen"] == 0
    assert report["meta_path_unchanged"] is True
    assert report["httpx_main_loaded"] is True  # a plain ``import httpx``, untouched


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def _process(command: list[str], cwd: Path, port: int) -> Iterator[str]:
    """Start a server process; yield its URL once its card answers; stop it."""
    proc = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            try:
                if httpx.get(f"{url}/.well-known/agent-card.json", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _frozen_count_seen_by_agent(url: str) -> int:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "?"}]}},
    }
    answer = httpx.post(url, json=body, headers={"A2A-Version": "1.0"}, timeout=30).json()
    result = answer["result"]
    parts = (
        result["message"]["parts"]
        if "message" in result
        else result["task"]["artifacts"][0]["parts"]
    )
    return int(parts[0]["text"])


def test_serve_owns_its_process_and_freezes_the_startup_objects(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(_AGENT)
    port = _free_port()
    code = f"from a2a_core import serve\nfrom agent import agent\nserve(agent, port={port})\n"
    with _process([sys.executable, "-c", code], tmp_path, port) as url:
        assert _frozen_count_seen_by_agent(url) > 10_000  # modules, classes, validators


def test_a2a_serve_owns_its_process_and_freezes_the_startup_objects(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(_AGENT)
    port = _free_port()
    command = [sys.executable, "-m", "a2a_core.cli", "serve", "agent.py:agent"]
    with _process([*command, "--port", str(port)], tmp_path, port) as url:
        assert _frozen_count_seen_by_agent(url) > 10_000


_COMMAND_LINE = textwrap.dedent(
    """
    import json, sys
    from a2a_core.cli.main import main

    code = main(["card", "http://127.0.0.1:9"])  # nothing listens: fails after importing httpx
    skipped = "httpx._main" not in sys.modules and "click" not in sys.modules
    import httpx, httpx._main
    print(json.dumps({
        "code": code,
        "httpx_loaded": "httpx" in sys.modules,
        "skipped": skipped,
        "finders": [type(f).__name__ for f in sys.meta_path],
        "has_print_help": callable(getattr(httpx._main, "print_help", None)),
        "main_callable": callable(httpx.main),
    }))
    """
)


def test_the_a2a_command_skips_httpx_command_line_and_leaves_it_working(tmp_path: Path) -> None:
    report = _run(_COMMAND_LINE, tmp_path)
    assert report["code"] != 0
    assert report["httpx_loaded"] is True
    assert report["skipped"] is True
    assert "_Finder" not in report["finders"]
    assert report["has_print_help"] is True
    assert report["main_callable"] is True
