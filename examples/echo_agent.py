"""An echo agent served over A2A 1.0 and 0.3: JSON-RPC, HTTP+JSON and SSE streaming.

Run it::

    python examples/echo_agent.py --host 127.0.0.1 --port 8000

then ask it something (A2A 1.0 over HTTP+JSON)::

    curl -s localhost:8000/message:send -H 'Content-Type: application/json' \\
      -d '{"message": {"role": "ROLE_USER", "messageId": "1", "parts": [{"text": "hello"}]}}'

The agent card is at http://localhost:8000/.well-known/agent-card.json.
"""

from __future__ import annotations

import argparse

from a2a_core import AgentCardBuilder, serve
from a2a_core.server import RequestContext


async def echo(context: RequestContext) -> str:
    """Replies with what it was told."""
    return f"You said: {context.text}"


def build_card() -> AgentCardBuilder:
    """The card; ``serve`` fills in the interfaces from the host and port it listens on."""
    return (
        AgentCardBuilder("Echo", description="Replies with what you tell it", version="1.0.0")
        .skill("echo", "Echo", "Repeats your message back to you", tags=["demo", "echo"])
        .streaming()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve an A2A echo agent.")
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on")
    args = parser.parse_args()
    serve(echo, card=build_card(), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
