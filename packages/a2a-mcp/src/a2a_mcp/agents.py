"""The A2A agents a bridge serves: where each is, how to authenticate, its live client and card.

An agent that cannot be reached when the bridge starts is still listed (one
tool named after its address); each call tries to connect again and fails
with one clear line until the agent answers. ``AgentLink.reload`` reads the
card again and says whether what the tools are made of changed.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx
from a2a_core import A2AClient, A2AError, AgentCard
from a2a_core.client import A2AConnectionError, sanitize_text

__all__ = ["AgentLink", "AgentTarget", "describe_failure"]


@dataclass(frozen=True, slots=True)
class AgentTarget:
    """An A2A agent to serve as MCP tools, and how to call it.

    ``headers`` go with every request (an API key); ``auth`` is an
    ``httpx.Auth`` such as ``a2a_core.client.ClientCredentials`` (OAuth 2.0
    client credentials); ``passthrough`` forwards the MCP caller's own
    ``Authorization: Bearer`` token (Streamable HTTP only) instead.
    ``prefix`` replaces the card's name at the start of the tool names.
    """

    url: str
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    auth: httpx.Auth | None = None
    passthrough: bool = False
    prefix: str | None = None


def describe_failure(exc: BaseException, url: str) -> str:
    """One clean line saying why a call to the agent at ``url`` failed."""
    if isinstance(exc, A2AConnectionError):
        line = f"cannot reach the A2A agent at {url}: {exc.message}"
    elif isinstance(exc, A2AError):
        line = f"the A2A agent at {url} answered with an error: {exc.message}"
    elif isinstance(exc, httpx.HTTPError):
        line = f"cannot reach the A2A agent at {url}: {type(exc).__name__}: {exc}"
    else:
        line = f"calling the A2A agent at {url} failed: {type(exc).__name__}: {exc}"
    return sanitize_text(line, 500, single_line=True)


def _shape(card: AgentCard) -> str:
    """What the tools are made of: a change here changes the tool list."""
    skills = [(s.id, s.name, s.description, s.examples, s.input_modes, s.tags) for s in card.skills]
    return json.dumps(
        [card.name, card.description, card.default_input_modes, skills], sort_keys=True
    )


class AgentLink:
    """One agent's live state: its client and card, or why it cannot be reached."""

    def __init__(self, target: AgentTarget, *, timeout: float | None = 60.0) -> None:
        self.target = target
        self.timeout = timeout
        self.client: A2AClient | None = None
        self.card: AgentCard | None = None
        self.error: str | None = None
        self._retired: list[A2AClient] = []

    @property
    def url(self) -> str:
        return self.target.url

    @property
    def fallback_name(self) -> str:
        """The tool-name stem when no card is known: the prefix, else the address's host."""
        if self.target.prefix:
            return self.target.prefix
        parts = urlsplit(self.url)
        return f"{parts.hostname or 'agent'}_{parts.port}" if parts.port else (parts.hostname or "")

    async def _connect(self) -> A2AClient:
        return await A2AClient.connect(
            self.url,
            headers=dict(self.target.headers) or None,
            auth=self.target.auth,
            timeout=self.timeout,
        )

    async def ready(self) -> A2AClient:
        """The connected client (connecting now when the agent was not reachable before)."""
        if self.client is not None:
            return self.client
        self.client = await self._connect()
        self.card = self.client.card
        self.error = None
        return self.client

    async def reload(self) -> bool:
        """Read the card again; whether the tools it makes changed (reachability included)."""
        before = _shape(self.card) if self.card is not None else None
        try:
            fresh = await self._connect()
        except Exception as exc:
            self.error = describe_failure(exc, self.url)
            return False  # keep the tools we have: a blip must not empty the host's list
        after = _shape(fresh.card) if fresh.card is not None else None
        if after == before and self.client is not None:
            await fresh.aclose()
            return False
        if self.client is not None:
            self._retired.append(self.client)  # calls in flight may still use it
        self.client, self.card, self.error = fresh, fresh.card, None
        return True

    async def aclose(self) -> None:
        clients = [c for c in (self.client, *self._retired) if c is not None]
        self.client, self._retired = None, []
        for client in clients:
            with contextlib.suppress(Exception):  # closing a broken connection
                await client.aclose()
