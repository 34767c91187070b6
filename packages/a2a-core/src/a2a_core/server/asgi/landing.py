"""What a browser (or ``curl``) sees at the agent's URL: a page saying what this is.

A GET on the JSON-RPC endpoint (``/`` by default), or on ``/`` when nothing
else answers there, is not an A2A call: A2A requests are POSTs. Instead of a
JSON-RPC error, a person gets a short page with the agent's name and
description, where its card is and how to talk to it: HTML when the
``Accept`` header names ``text/html``, plain text otherwise. A client that
asks for JSON only (``Accept: application/json``) keeps the JSON-RPC 405
error, as before. Every piece of card text is HTML-escaped; the page loads
nothing and runs nothing (its Content-Security-Policy forbids it).
"""

from __future__ import annotations

import html

from ...types import AgentCard
from .access import label
from .http import Scope, Send, header_map
from .origin import request_base
from .playground import PLAYGROUND_PATH

__all__ = ["PAGE_METHODS", "LandingPage"]

PAGE_METHODS = frozenset({"GET", "HEAD"})

_CARD_PATH = "/.well-known/agent-card.json"
_HEADERS = [
    (b"cache-control", b"no-cache"),
    (b"x-content-type-options", b"nosniff"),
    (b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'"),
    (b"vary", b"accept"),
]
_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:42rem;margin:3rem auto;padding:0 1rem;"
    "line-height:1.5;color:#222}code,pre{background:#f3f3f3;padding:.1rem .3rem;"
    "border-radius:3px}pre{padding:.6rem;overflow-x:auto}small{color:#666}"
)


class LandingPage:
    """The page for one app's card; rendered per request (pages are rare, cards fixed)."""

    __slots__ = ("card", "playground")

    def __init__(self, card: AgentCard, *, playground: bool = False) -> None:
        self.card = card
        self.playground = playground
        """Whether ``/playground/`` is served: the text then points a person there."""

    def wanted(self, accept: str | None) -> bool:
        """Whether to answer with the page rather than the JSON-RPC 405 (a JSON-only client)."""
        if accept is None:
            return True
        accept = accept.lower()
        if "text/html" in accept or "text/plain" in accept:
            return True
        return "json" not in accept or "*/*" in accept

    async def respond(self, scope: Scope, send: Send) -> None:
        label(scope, "page")
        headers = header_map(scope["headers"])
        accept = (headers.get("accept") or "").lower()
        base = request_base(scope, headers, None)  # the origin this request used
        if "text/html" in accept:
            body, kind = self.html(base).encode(), b"text/html; charset=utf-8"
        else:
            body, kind = self.text(base).encode(), b"text/plain; charset=utf-8"
        start = [
            (b"content-type", kind),
            (b"content-length", str(len(body)).encode()),
            *_HEADERS,
        ]
        await send({"type": "http.response.start", "status": 200, "headers": start})
        await send(
            {"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body}
        )

    def text(self, base: str) -> str:
        card = self.card
        lines = [
            f"{_one_line(card.name)} - an A2A (Agent2Agent) agent",
            "",
            _one_line(card.description),
            "",
            "This URL answers A2A requests (JSON-RPC POSTs), not web pages.",
            f"Agent card: {base}{_CARD_PATH}",
            "",
            "Talk to it from a shell:",
            f"  a2a card {base}",
            f'  a2a send {base} "hello"',
        ]
        if self.playground:
            lines += ["", f"Or try it in a browser: {base}{PLAYGROUND_PATH}/"]
        return "\n".join(lines) + "\n"

    def html(self, base: str) -> str:
        card = self.card
        name = html.escape(card.name)
        card_url = html.escape(base + _CARD_PATH)
        skills = "".join(
            f"<li><strong>{html.escape(s.name)}</strong>: {html.escape(s.description)}</li>"
            for s in card.skills
        )
        skills_block = f"<h2>Skills</h2><ul>{skills}</ul>" if skills else ""
        quoted = html.escape(base)
        return (
            "<!doctype html>"
            '<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{name} - A2A agent</title><style>{_STYLE}</style></head><body>"
            f"<h1>{name}</h1>"
            f"<p>{html.escape(card.description)}</p>"
            f"<p><small>Version {html.escape(card.version)}</small></p>"
            '<p>This is an <a href="https://a2a-protocol.org">A2A (Agent2Agent)</a> '
            "agent. This URL answers A2A requests (JSON-RPC POSTs), not web pages.</p>"
            f'<p>Agent card: <a href="{card_url}">{card_url}</a></p>'
            f"{skills_block}"
            "<h2>Talk to it</h2>"
            f'<pre>a2a card {quoted}\na2a send {quoted} "hello"</pre>'
            "</body></html>"
        )


def _one_line(text: str) -> str:
    return " ".join(text.split())
