"""``a2a card URL``: fetch an agent's card and show it; or list the agents of a catalog.

A URL naming an AI Catalog (``.../ai-catalog.json``), or a host that publishes
no card but a catalog (a service of several agents), lists the catalog's
agents instead; ``--verify`` then checks the catalog's signature.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from .cardtrust import card_verifier
from .common import ExitCode, connection_parser, fetch_card, fetch_catalog

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from ..client.catalog import AgentCatalog
    from ..hookspecs import CommandParsers
    from ..signing import CardVerifier
    from .render import Console

__all__ = ["add_parser", "run"]

EXAMPLES = """\
examples:
  a2a card http://localhost:8000
  a2a card https://agent.example.com --json | jq .skills
  a2a card https://agent.example.com/.well-known/agent-card.json --bearer "$TOKEN"
  a2a card https://agent.example.com --verify --trusted-key card-key.jwk
  a2a card https://agent.example.com --verify --jwks https://agent.example.com/jwks.json
  a2a card https://agents.example.com            # a host of several agents: its catalog
  a2a card https://agents.example.com/.well-known/ai-catalog.json --verify --trusted-key k.jwk
"""


def add_parser(commands: CommandParsers) -> None:
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
    from ..client.discovery import CardNotFoundError
    from ..wire import V10Codec
    from .render import Console, Renderer, json_line

    wanted = args.verify or args.trusted_key or args.jwks  # trusted keys imply --verify
    verifier = card_verifier(args) if wanted else None
    url: str = args.url
    if urlsplit(url).path.endswith("ai-catalog.json"):
        return await _catalog(args, verifier) or ExitCode.OK
    try:
        card = await fetch_card(args)
    except CardNotFoundError:
        found = await _catalog(args, verifier, quiet=True)
        if found is None:
            raise
        return found
    console = Console()
    if args.json:
        console.line(json_line(V10Codec().encode_card(card)))
    else:
        Renderer(console, args.url).card(card)
    if verifier is None:
        return ExitCode.OK
    return await _verdict(verifier.averify(card), args, "key")


async def _catalog(
    args: argparse.Namespace, verifier: CardVerifier | None, *, quiet: bool = False
) -> int | None:
    """List the agents of the catalog at (or of) ``args.url``; None when ``quiet`` and
    there is none."""
    from ..client.catalog import CatalogNotFoundError
    from .render import Console, json_line

    try:
        catalog = await fetch_catalog(args)
    except CatalogNotFoundError:
        if quiet:
            return None
        raise
    console = Console()
    if args.json:
        console.line(json_line(dict(catalog.document)))
    else:
        _render_catalog(console, catalog)
    if verifier is None:
        return ExitCode.OK
    return await _verdict(catalog.averify(verifier), args, "catalog, key")


async def _verdict(verify: Awaitable[str], args: argparse.Namespace, signed: str) -> int:
    """Await a signature check and say its verdict in one line; the exit status."""
    from ..signing import CardSignatureError
    from .render import safe_text

    try:
        kid = await verify
    except CardSignatureError as exc:
        print(
            f"a2a: error: signature NOT valid: {safe_text(str(exc), single_line=True)}",
            file=sys.stderr,
        )
        return ExitCode.UNTRUSTED
    line = f"Signature: valid ({signed} {safe_text(kid, single_line=True)})"
    print(line, file=sys.stderr if args.json else sys.stdout)
    return ExitCode.OK


def _render_catalog(console: Console, catalog: AgentCatalog) -> None:
    from .render import safe_text

    agents = catalog.agents
    plural = "" if len(agents) == 1 else "s"
    console.line(console.bold(f"{len(agents)} agent{plural}") + f" in {catalog.url}")
    for entry in agents:
        console.line(f"  {console.bold(safe_text(entry.name, single_line=True))}  {entry.url}")
        if entry.description:
            console.line(f"    {safe_text(entry.description, single_line=True)}")
        facts = [f"version {entry.version}"] if entry.version else []
        if entry.tags:
            facts.append("tags: " + ", ".join(entry.tags))
        if facts:
            console.line("    " + console.dim(safe_text("; ".join(facts), single_line=True)))
    others = len(catalog.entries) - len(agents)
    if others:
        console.line(console.dim(f"  (and {others} entries of other kinds)"))
    console.line(console.dim("  a2a card URL shows an agent's card; a2a send URL TEXT talks to it"))
