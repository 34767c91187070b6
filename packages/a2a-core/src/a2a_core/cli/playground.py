"""``a2a playground URL``: the browser playground for any A2A agent, ours or not.

Serves the playground page on 127.0.0.1 with a proxy to the agent
(``cli.proxy``), so the browser's same-origin rules do not get in the way,
prints the address and opens it in the browser (``--no-browser``: print
only). Runs until Ctrl-C.
"""

from __future__ import annotations

import argparse
import socket
from typing import TYPE_CHECKING, Any

from .common import ExitCode, UsageError, check_url, parse_header

if TYPE_CHECKING:
    import asyncio

    from ..hookspecs import CommandParsers

__all__ = ["add_parser", "run"]

EXAMPLES = """\
examples:
  a2a playground http://localhost:8000                   # opens the browser
  a2a playground https://agent.example.com --no-browser --port 8765
  a2a playground https://agent.example.com -H "X-Tenant: acme"

The page calls the agent through this local server, which forwards only to
the agent URL's origin. Tokens typed into the page stay in that browser tab.
"""


def add_parser(commands: CommandParsers) -> None:
    parser = commands.add_parser(
        "playground",
        help="try an A2A agent in the browser (a local page and a proxy to the agent)",
        description=(
            "Serve the playground page on 127.0.0.1 for the agent at URL, proxying its "
            "calls to that agent only, and open it in the browser."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("url", metavar="URL", help="the agent's http(s):// URL")
    parser.add_argument("--port", type=int, default=0, help="local port (default: a free one)")
    parser.add_argument(
        "--no-browser", action="store_true", help="print the address, do not open a browser"
    )
    parser.add_argument(
        "--header",
        "-H",
        action="append",
        default=[],
        metavar="NAME:VALUE",
        help="an HTTP header the proxy adds to every call to the agent (repeatable)",
    )
    parser.set_defaults(run=run)


async def run(args: argparse.Namespace) -> int:
    import uvicorn

    from .proxy import PlaygroundProxy
    from .render import Console

    url = check_url(args.url)
    if not 0 <= args.port <= 65535:
        raise UsageError(f"ports go from 0 to 65535, not {args.port}")
    headers = dict(parse_header(h) for h in args.header)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", args.port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}") from None
    port: int = sock.getsockname()[1]
    hosts = (f"127.0.0.1:{port}", f"localhost:{port}")
    app = PlaygroundProxy(url, allowed_hosts=hosts, headers=headers)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    server = uvicorn.Server(config)
    page = f"http://127.0.0.1:{port}/playground/"
    console = Console()
    console.line(f"Playground for {url} at {page}")
    console.line(console.dim(f"Calls go through this server to {app.origin} only."))
    console.line("Press Ctrl-C to stop.")
    if not args.no_browser:
        _open_when_up(server, page)
    try:
        await server.serve(sockets=[sock])
    finally:
        await app.aclose()
        sock.close()
    return ExitCode.OK


def _open_when_up(server: Any, page: str) -> None:
    """Open ``page`` in the browser once the server listens (off the event loop)."""
    # Imported here: every ``a2a`` command imports this module for its parser.
    import asyncio
    import webbrowser

    async def wait_and_open() -> None:
        while not server.started:
            if server.should_exit:
                return
            await asyncio.sleep(0.05)
        await asyncio.to_thread(webbrowser.open, page)

    loop = asyncio.get_running_loop()
    task = loop.create_task(wait_and_open())
    _pending.add(task)
    task.add_done_callback(_pending.discard)


_pending: set[asyncio.Task[None]] = set()
