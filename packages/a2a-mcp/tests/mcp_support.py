"""MCP sessions with the official SDK's client against ``a2a mcp`` (a real subprocess).

``bridge_session("stdio", urls)`` spawns ``a2a mcp URL...`` and talks over its
stdin/stdout; ``bridge_session("http", urls)`` spawns ``a2a mcp URL... --http
127.0.0.1:PORT`` and talks Streamable HTTP. ``Seen`` keeps what the server
sent on the side: progress, log messages, list-changed notifications.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

TRANSPORTS = ("stdio", "http")


@dataclass
class Seen:
    logs: list[Any] = field(default_factory=list[Any])
    list_changed: anyio.Event = field(default_factory=anyio.Event)
    updated: anyio.Event = field(default_factory=anyio.Event)
    """Set by the first log message (an A2A update reached the host)."""

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params.data)
        self.updated.set()

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ServerNotification) and isinstance(
            message.root, types.ToolListChangedNotification
        ):
            self.list_changed.set()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def command(urls: Sequence[str], *extra: str) -> list[str]:
    return [sys.executable, "-m", "a2a_core.cli", "mcp", *urls, "--refresh", "0", *extra]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("A2A_PLUGINS", "A2A_DISABLE_PLUGIN_AUTOLOAD", "A2A_TEST_PLUGIN_FAIL"):
        env.pop(name, None)
    return env


async def _wait_listening(port: int, proc: subprocess.Popen[bytes], log: Any) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log.seek(0)
            raise AssertionError(f"a2a mcp --http exited: {log.read()}")
        with contextlib.suppress(OSError):
            stream = await anyio.connect_tcp("127.0.0.1", port)
            await stream.aclose()
            return
        await anyio.sleep(0.05)
    raise AssertionError("a2a mcp --http did not start listening")


@contextlib.contextmanager
def _noting_output(log: Any) -> Iterator[None]:
    """A failure inside a session carries what the bridge printed (it is a subprocess)."""
    try:
        yield
    except BaseException as exc:
        log.flush()
        log.seek(0)
        exc.add_note(f"a2a mcp printed:\n{log.read()[-4000:] or '(nothing)'}")
        raise


@contextlib.asynccontextmanager
async def bridge_session(
    transport: str,
    urls: Sequence[str],
    *extra: str,
    elicit: Any = None,
    seen: Seen | None = None,
    headers: dict[str, str] | None = None,
) -> AsyncIterator[ClientSession]:
    """An initialized MCP client session with ``a2a mcp URL...`` over ``transport``."""
    seen = seen or Seen()
    options: dict[str, Any] = {
        "elicitation_callback": elicit,
        "logging_callback": seen.on_log,
        "message_handler": seen.on_message,
    }
    with tempfile.TemporaryFile("w+") as log, _noting_output(log):
        if transport == "stdio":
            cmd = command(urls, *extra)
            params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=_env())
            async with (
                stdio_client(params, errlog=log) as (read, write),
                ClientSession(read, write, **options) as session,
            ):
                await session.initialize()
                yield session
            return
        port = free_port()
        proc = subprocess.Popen(  # noqa: ASYNC220 - started once, not waited on here
            command(urls, *extra, "--http", f"127.0.0.1:{port}"),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=_env(),
        )
        try:
            await _wait_listening(port, proc, log)
            async with (
                httpx.AsyncClient(headers=headers, timeout=60) as http,
                streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http) as (
                    read,
                    write,
                    _,
                ),
                ClientSession(read, write, **options) as session,
            ):
                await session.initialize()
                yield session
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - a stuck server
                proc.kill()
                proc.wait()


def text_of(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))
