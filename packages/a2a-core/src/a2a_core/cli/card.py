"""``a2a card URL``: fetch an agent's card and show it."""

from __future__ import annotations

import argparse
import sys

from .cardtrust import card_verifier
from .common import ExitCode, connection_parser, fetch_card

__all__ = ["add_parser", "run"]

EXAMPLES = """\
examples:
  a2a card http://localhost:8000
  a2a card https://agent.example.com --json | jq .skills
  a2a card https://agent.example.com/.well-known/agent-card.json --bearer "$TOKEN"
  a2a card https://agent.example.com --verify --trusted-key card-key.jwk
  a2a card https://agent.example.com --verify --jwks https://agent.example.com/jwks.json
"""


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]
    parser = commands.add_parser(
        "card",
        parents=[connection_parser(choose_interface=False)],
        help="show an agent's card: who it is, where and how it listens, its skills",
        description=(
            "Fetch the agent card (from /.well-known/agent-card.json at the URL's origin, "
            "or the legacy /.well-known/agent.json) and show it. The card is checked and "
            "its text cleaned: it comes from the agent."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("url", metavar="URL", help="the agent's URL, or its card's URL")
    trust = parser.add_argument_group("signature")
    trust.add_argument(
        "--verify",
        action="store_true",
        help=(
            "check the card's signature (JWS over its RFC 8785 form) against --trusted-key "
            "or --jwks (connection options); exit 5 when it is unsigned or none verifies"
        ),
    )
    parser.set_defaults(run=run)


async def run(args: argparse.Namespace) -> int:
    from ..wire import V10Codec
    from .render import Console, Renderer, json_line, safe_text

    wanted = args.verify or args.trusted_key or args.jwks  # trusted keys imply --verify
    verifier = card_verifier(args) if wanted else None
    card = await fetch_card(args)
    console = Console()
    if args.json:
        console.line(json_line(V10Codec().encode_card(card)))
    else:
        Renderer(console, args.url).card(card)
    if verifier is None:
        return ExitCode.OK
    from ..signing import CardSignatureError

    try:
        kid = await verifier.averify(card)
    except CardSignatureError as exc:
        print(
            f"a2a: error: signature NOT valid: {safe_text(str(exc), single_line=True)}",
            file=sys.stderr,
        )
        return ExitCode.UNTRUSTED
    line = f"Signature: valid (key {safe_text(kid, single_line=True)})"
    print(line, file=sys.stderr if args.json else sys.stdout)
    return ExitCode.OK
