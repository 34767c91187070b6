"""``a2a mcp URL [URL ...]``: serve A2A agents to an MCP host (stdio, or ``--http HOST:PORT``).

Registered by this package's plugin (``a2a_cli_commands``), so the command
exists only while a2a-adapters-mcp is installed. Over stdio nothing but MCP
is written to stdout; problems go to stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

__all__ = ["add_parser", "run"]

CLIENT_ID_ENV = "A2A_MCP_CLIENT_ID"
CLIENT_SECRET_ENV = "A2A_MCP_CLIENT_SECRET"

EXAMPLES = """\
examples:
  a2a mcp http://localhost:8000                         # stdio: for an MCP host's config
  a2a mcp http://localhost:8000 http://localhost:8001 --per-agent
  a2a mcp http://localhost:8000 --http 127.0.0.1:8765   # Streamable HTTP at /mcp
  a2a mcp https://agent.example.com --header "X-API-Key:$KEY"
  a2a mcp https://agent.example.com --client-id app --client-secret "$SECRET"
  a2a mcp https://agent.example.com --http 0.0.0.0:8765 --passthrough
"""


def add_parser(commands: Any) -> None:
    parser: argparse.ArgumentParser = commands.add_parser(
        "mcp",
        help="serve A2A agents to MCP hosts: one tool per skill (a2a-adapters-mcp)",
        description=(
            "Serve the A2A agents at URL... as an MCP server: one tool per skill, streamed "
            "updates as progress, questions as elicitation. stdio unless --http."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("urls", nargs="+", metavar="URL", help="an A2A agent's base URL")
    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        type=_address,
        help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio",
    )
    parser.add_argument("--path", default="/mcp", help="with --http: the endpoint path")
    parser.add_argument(
        "--per-agent", action="store_true", help="one tool per agent instead of one per skill"
    )
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        type=_header,
        metavar="NAME:VALUE",
        help="send this header to every agent (repeatable)",
    )
    parser.add_argument(
        "--client-id",
        default=os.environ.get(CLIENT_ID_ENV),
        help=f"OAuth 2.0 client credentials for the agents (default: ${CLIENT_ID_ENV})",
    )
    parser.add_argument(
        "--client-secret",
        default=os.environ.get(CLIENT_SECRET_ENV),
        help=f"its secret (default: ${CLIENT_SECRET_ENV})",
    )
    parser.add_argument("--token-url", help="the token endpoint (default: from the agent's card)")
    parser.add_argument(
        "--scope", action="append", default=[], help="a scope to request (repeatable)"
    )
    parser.add_argument(
        "--passthrough",
        action="store_true",
        help="with --http: forward the MCP caller's Authorization: Bearer token to the agents",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="a call longer than this is canceled (default: %(default)g)",
    )
    parser.add_argument(
        "--refresh",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="read the cards again this often; changed skills update the tools (0: never)",
    )
    parser.add_argument("--name", default="a2a", help="the MCP server's name")
    parser.set_defaults(run=run)


def _address(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, not {value!r}")
    return host or "127.0.0.1", int(port)


def _header(value: str) -> tuple[str, str]:
    name, sep, text = value.partition(":")
    if not sep or not name.strip() or any(c in value for c in "\r\n"):
        raise argparse.ArgumentTypeError(f"expected NAME:VALUE, not {value!r}")
    return name.strip(), text.strip()


def _bridge(args: argparse.Namespace) -> Any:
    from a2a_core.client import ClientCredentials

    from .agents import AgentTarget
    from .bridge import AgentBridge

    for url in args.urls:
        if not url.startswith(("http://", "https://")):
            raise SystemExit(f"a2a mcp: error: not an http(s) URL: {url!r}")
    if bool(args.client_id) != bool(args.client_secret):
        raise SystemExit("a2a mcp: error: give --client-id and --client-secret together")
    if args.passthrough and args.http is None:
        raise SystemExit("a2a mcp: error: --passthrough needs --http (stdio carries no token)")
    auth = None
    if args.client_id:
        auth = ClientCredentials(
            args.client_id, args.client_secret, token_url=args.token_url, scopes=args.scope
        )
    headers = dict(args.header)
    targets = [
        AgentTarget(url, headers=headers, auth=auth, passthrough=args.passthrough)
        for url in args.urls
    ]
    return AgentBridge(
        targets,
        name=args.name,
        per_agent=args.per_agent,
        call_timeout=args.timeout,
        refresh_seconds=args.refresh or None,
    )


async def run(args: argparse.Namespace) -> int:
    bridge = _bridge(args)
    if args.http is None:
        await bridge.run_stdio()
    else:
        host, port = args.http
        print(f"a2a mcp: serving at http://{host}:{port}{args.path}", file=sys.stderr, flush=True)
        await bridge.run_http(host, port, args.path)
    return 0
