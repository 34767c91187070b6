"""A remote A2A agent as a CrewAI tool.

``remote_agent_tool(url)`` fetches the agent's card and builds an
``A2ATool``: its name comes from the card's name, its description from the
card's description and skills, cleaned, bounded and labelled as untrusted
text from a remote agent (a hostile card must not be able to instruct the
model). The tool is synchronous, as CrewAI requires, and safe to call from
any thread, including one whose event loop is running.

Calling it sends the model's ``message`` (and optional ``data`` and
``files``: local paths, read only from the files the served request
received or from the tool's ``file_roots``) and returns the remote answer
as text; files the agent answers (URL files downloaded within limits) are
saved into ``save_dir`` and their saved paths listed after the text.
When the remote agent needs more input, the tool returns its question
and keeps the remote task: the next call (in the same served request,
or anywhere outside a served crew) answers that question on the same
remote task. Failures come back as text the model can act on;
only a cancel of the local task stops the crew. ``A2ATool`` runs sync
(``run``) and async (``arun``); the remote side is
``a2a_core.client.RemoteAgentSession`` (``tool.remote.session``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from a2a_core import telemetry
from a2a_core.client import A2AClient, RemoteReply, describe_card
from a2a_core.files import FileRefusedError, parts_from_paths, save_part
from a2a_core.types import AgentCard, Part
from crewai.tools import BaseTool
from crewai.utilities.string_utils import sanitize_tool_name
from pydantic import BaseModel, Field, PrivateAttr

from ._remote import RemoteAgent
from ._runs import current_run
from .tracing import install_tracing

__all__ = ["A2ATool", "A2AToolInput", "catalog_tools", "remote_agent_tool"]

CONTINUE_HINT = "Call this tool again with the answer: it continues the same request."


class A2AToolInput(BaseModel):
    """What the model sends to the remote agent."""

    message: str = Field(description="What to ask or tell the agent, in plain language.")
    data: dict[str, Any] | None = Field(
        default=None,
        description="Optional structured data (a JSON object) to send along with the message.",
    )
    files: list[str] | None = Field(
        default=None,
        description=(
            "Optional paths of local files to send along (files this request received, "
            "or from folders the tool allows)."
        ),
    )


def _never_cache(_args: Any = None, _result: Any = None) -> bool:
    """Remote answers are not cached: the same question may get a new answer."""
    return False


def tool_name(card_name: str, fallback: str = "remote_agent") -> str:
    """A tool name models accept (lowercase ``[a-z0-9_]``, at most 64 characters)."""
    return sanitize_tool_name(card_name) or fallback


class A2ATool(BaseTool):
    """A CrewAI tool whose work is done by a remote A2A agent (build it with
    ``remote_agent_tool`` or ``A2ATool.from_remote``)."""

    name: str = "remote_agent"
    description: str = "Ask a remote A2A agent."
    args_schema: type[BaseModel] = A2AToolInput
    cache_function: Any = _never_cache
    url: str = ""
    file_roots: tuple[str, ...] = ()
    """Folders whose files the model may send (besides the files of the served request)."""
    save_dir: str | None = None
    """Where received files are saved (default: a private temporary folder)."""
    _remote: RemoteAgent | None = PrivateAttr(default=None)

    @classmethod
    def from_remote(
        cls, remote: RemoteAgent, *, name: str | None = None, description: str | None = None
    ) -> A2ATool:
        """A tool for ``remote`` (its card is fetched now when name or description is missing)."""
        if name is None or description is None:
            card = remote.card()
            name = name or tool_name(card.name)
            description = description or describe_card(card, remote.url)
        tool = cls(name=name, description=description, url=remote.url)
        tool._remote = remote
        return tool

    @property
    def remote(self) -> RemoteAgent:
        """The remote agent this tool talks to."""
        if self._remote is None:
            self._remote = RemoteAgent(self.url)
        return self._remote

    def _parts(self, message: str, files: list[str] | None) -> str | list[Part]:
        if not files:
            return message
        run = current_run()
        received = getattr(run, "files", None) if run is not None else None
        roots = [*self.file_roots]
        if received is not None and received.folder is not None:
            roots.append(str(received.folder))
        sent = parts_from_paths(files, roots)
        return [Part(text=message), *sent] if message else sent

    def _answer(self, reply: RemoteReply) -> str:
        text = reply.describe(CONTINUE_HINT)
        files = [p for p in reply.files if p.raw is not None]
        if not files:
            return text
        folder = self.save_dir or _private_folder()
        lines = [text, "", "Received files:"]
        for part in files:
            path = save_part(part, folder)
            lines.append(
                f"- {path.name} ({part.media_type}, {len(part.raw or b'')} bytes) saved at {path}"
            )
        return "\n".join(lines)

    def _run(
        self, message: str, data: dict[str, Any] | None = None, files: list[str] | None = None
    ) -> str:
        try:
            content = self._parts(message, files)
        except FileRefusedError as exc:
            return f"Cannot send the file: {exc}."
        return self._answer(self.remote.ask(content, data))

    async def _arun(
        self, message: str, data: dict[str, Any] | None = None, files: list[str] | None = None
    ) -> str:
        try:
            content = self._parts(message, files)
        except FileRefusedError as exc:
            return f"Cannot send the file: {exc}."
        return self._answer(await self.remote.aask(content, data))

    def close(self) -> None:
        """Close the connection to the remote agent (it reopens on the next use)."""
        if self._remote is not None:
            self._remote.close()

    async def aclose(self) -> None:
        """``close`` for async code (also closes the client of async calls)."""
        if self._remote is not None:
            await self._remote.aclose()


_FOLDER: list[str] = []


def _private_folder() -> str:
    """One private temporary folder per process for received files."""
    if not _FOLDER:
        _FOLDER.append(tempfile.mkdtemp(prefix="a2a-crewai-received-"))
    return _FOLDER[0]


DEFAULT_TIMEOUT = 300.0
"""Seconds one tool call may take by default, the remote work included."""
DEFAULT_MAX_ANSWER_CHARS = 20_000
"""Longest answer (characters) a tool gives the model by default; longer ones are cut."""


def _url_of(card: AgentCard | None, client: A2AClient | None) -> str | None:
    if client is not None and client.interface is not None:
        return client.interface.url
    if card is not None and card.supported_interfaces:
        return card.supported_interfaces[0].url
    return None


def remote_agent_tool(
    url: str | None = None,
    *,
    card: AgentCard | None = None,
    client: A2AClient | None = None,
    name: str | None = None,
    description: str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_answer_chars: int = DEFAULT_MAX_ANSWER_CHARS,
    passthrough: bool = False,
    file_roots: Sequence[str] = (),
    save_dir: str | None = None,
    **connect_options: Any,
) -> A2ATool:
    """A CrewAI tool for the A2A agent at ``url`` (its card is fetched now, unless given).

    The same names as ``a2a_langchain.remote_agent_tool``:

    - ``url``: where the agent is; ``card``: its card, when already in hand (not
      fetched again; its URL serves when ``url`` is left out); ``client``: a
      connected ``A2AClient`` to use (on the tool's private loop only: prefer ``url``);
    - ``name`` / ``description``: your own text instead of the card's (trusted, used as is);
    - ``headers``: sent with every request (e.g. ``{"Authorization": "Bearer ..."}``);
    - ``timeout``: seconds one call may take, the remote work included;
    - ``max_answer_chars``: longer answers are cut;
    - ``passthrough=True``: forward the token of the A2A request the served
      crew answers (the end user's) instead of the tool's own ``auth``; a call
      without one is refused (see docs/security.md);
    - ``file_roots``: folders whose files the model may send (besides the files
      the served request received);
    - ``save_dir``: where files the agent answers are saved (default: a private
      temporary folder);
    - other keywords go to ``A2AClient.connect`` (``card_url``, ``auth``,
      ``preferred_bindings``...).
    """
    where = url or _url_of(card, client)
    if where is None:
        raise TypeError("remote_agent_tool() needs the agent's url (or card= or client=)")
    if telemetry.enabled():
        install_tracing()  # the crew's tool span becomes the A2A call's parent
    remote = RemoteAgent(
        where,
        card=card,
        headers=headers,
        timeout=timeout,
        max_answer_chars=max_answer_chars,
        client=client,
        passthrough=passthrough,
        **connect_options,
    )
    tool = A2ATool.from_remote(remote, name=name, description=description)
    tool.file_roots = tuple(file_roots)
    tool.save_dir = save_dir
    return tool


def catalog_tools(url: str, **options: Any) -> list[A2ATool]:
    """One tool per agent of the AI Catalog at ``url`` (the catalog's URL, or a host that
    publishes one at ``/.well-known/ai-catalog.json``); ``options`` go to
    ``remote_agent_tool`` for each (their ``headers`` are sent for the catalog too)."""
    from a2a_core.client import discover_sync

    catalog = discover_sync(url, headers=options.get("headers"))
    tools: list[A2ATool] = []
    try:
        for agent in catalog.agents:
            if agent.url:
                tools.append(remote_agent_tool(agent.url, **options))
    except BaseException:
        for built in tools:
            built.close()
        raise
    return tools
