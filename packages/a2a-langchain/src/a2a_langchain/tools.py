"""Remote A2A agents as LangChain tools.

``remote_agent_tool(url)`` (or ``await aremote_agent_tool(url)`` from async
code) reads the agent's card and builds a tool: its name comes from the
agent's name, its description from the card's description and skills, all
of which is untrusted text, so it is cleaned, bounded and labelled as
coming from a remote card. The model passes ``message`` (text),
optionally ``data`` (a JSON object) and ``files`` (local paths, read only
under the tool's ``file_roots``). The tool returns the answer's text (and,
when the agent answered files, those as content blocks after it: URL files
are downloaded within the session's limits), and the raw A2A reply (ids,
state, parts) as the ``ToolMessage.artifact``.

When the remote agent asks for input, the tool either returns the question
(``on_input_required="return"``, the default: the model answers with another
call, which continues the same remote task of this thread), or pauses the
LangGraph graph with ``interrupt()`` (``"interrupt"``: the human's resume
value continues the remote task; the replies of the call are replayed when
LangGraph re-runs the tool, so the first message is never sent twice).

A remote failure (a failed, rejected or canceled remote task, an agent that
cannot be reached or answers with an error) raises ``RemoteAgentError``, a
``ToolException``, so the tool's ``handle_tool_error`` applies: by default
(``True``) the model gets the failure as text in an error ``ToolMessage``.

Token passthrough (opt-in): a tool built with ``passthrough=True`` calls the
remote agent with the caller's token instead of its own ``auth``: the
``Credential`` in ``config["configurable"]["a2a_credential"]``, else the one
the A2A request a served LangChain agent answers was authenticated with. A
call without one is refused (an error ``ToolMessage``), never sent with the
tool's own credentials.

``A2AToolkit.from_urls([...])`` builds one tool per agent. Everything remote
(card text, conversations, answers, cancel, sync calls) is done by
``a2a_core.client.RemoteAgentSession``; this module is its LangChain face.
"""

from __future__ import annotations

import asyncio
import re
import warnings
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Annotated, Any, Literal, cast

from a2a_core.client import (
    A2AClient,
    BoundedMap,
    RemoteAgentSession,
    RemoteReply,
    describe_card,
    sanitize_text,
)
from a2a_core.client.session import TextHook, outgoing_parts
from a2a_core.files import FileRefusedError, parts_from_paths
from a2a_core.types import AgentCard, Part
from langchain_core.callbacks import (
    AsyncCallbackManagerForToolRun,
    CallbackManagerForToolRun,
    adispatch_custom_event,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, BaseToolkit, InjectedToolCallId, ToolException
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from ._convert import file_block
from ._remote import caller_credential, thread_key
from .tracing import run_span_context

__all__ = [
    "A2AToolkit",
    "RemoteAgentCallInput",
    "RemoteAgentError",
    "RemoteAgentInput",
    "RemoteAgentTool",
    "aremote_agent_tool",
    "remote_agent_tool",
]

InputRequired = Literal["return", "interrupt"]
_Steps = Generator[tuple[list[Part], bool], RemoteReply, RemoteReply]
"""One tool call's messages: yields (parts, new task), receives each reply."""


class RemoteAgentInput(BaseModel):
    """What the model sends to a remote agent."""

    message: str = Field(description="What to ask or tell the agent, in plain language.")
    data: dict[str, Any] | None = Field(
        default=None,
        description="Optional structured data (a JSON object) to send along with the message.",
    )
    files: list[str] | None = Field(
        default=None,
        description="Optional paths of local files to send along (only from allowed folders).",
    )


class RemoteAgentCallInput(RemoteAgentInput):
    """The input of a tool in ``interrupt`` mode: LangChain injects the tool call id."""

    tool_call_id: Annotated[str, InjectedToolCallId]


class RemoteAgentError(ToolException):
    """The remote agent did not answer: ``reply`` says why (state, ids, text)."""

    def __init__(self, reply: RemoteReply) -> None:
        super().__init__(reply.describe())
        self.reply = reply


def tool_name(card_name: str, fallback: str = "remote_agent") -> str:
    """A tool name models accept (``[A-Za-z0-9_-]``, at most 64 characters)."""
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", card_name).strip("_")[:64]
    return name or fallback


class RemoteAgentTool(BaseTool):
    """A LangChain tool that sends a message to a remote A2A agent and returns its answer."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "remote_agent"
    description: str = "Ask a remote A2A agent."
    args_schema: type[BaseModel] = RemoteAgentInput  # pyright: ignore[reportIncompatibleVariableOverride]
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    handle_tool_error: bool | str | Callable[[ToolException], Any] | None = True  # pyright: ignore[reportIncompatibleVariableOverride]
    """Remote failures are ``ToolException``s: by default the model sees them as text."""
    on_input_required: InputRequired = "return"
    """``return`` the question to the model, or ``interrupt`` the graph for a human."""
    text_events: bool = True
    """Dispatch the remote answer's text as ``a2a.remote_text`` custom events as it arrives."""
    remote: bool = True
    file_roots: tuple[str, ...] = ()
    """Folders whose files the model may send (``files``); none by default."""
    max_send_bytes: int = 32 * 1024 * 1024
    """The largest file sent."""

    _session: RemoteAgentSession = PrivateAttr()
    _calls: BoundedMap[tuple[str, str], list[RemoteReply]] = PrivateAttr(
        default_factory=lambda: BoundedMap[tuple[str, str], list[RemoteReply]](1000)
    )

    def __init__(self, session: RemoteAgentSession, **fields: Any) -> None:
        if fields.get("on_input_required") == "interrupt":
            fields.setdefault("args_schema", RemoteAgentCallInput)
        super().__init__(**fields)
        self._session = session

    @property
    def session(self) -> RemoteAgentSession:
        """The remote agent session this tool is a face of."""
        return self._session

    @property
    def connection(self) -> RemoteAgentSession:
        """The session (its older name)."""
        return self._session

    @property
    def agent_name(self) -> str:
        """The remote agent's name from its card (cleaned), else the tool's name."""
        return self._session.name if self._session.card is not None else self.name

    # -- calls -------------------------------------------------------------------------------
    def _outgoing(
        self, message: str, data: dict[str, Any] | None, files: list[str] | None
    ) -> list[Part]:
        parts = outgoing_parts(message, data)
        if files:
            try:
                sent = parts_from_paths(files, self.file_roots, self.max_send_bytes)
            except FileRefusedError as exc:
                raise ToolException(f"Cannot send the file: {exc}.") from None
            parts = [p for p in parts if p.text != ""] + sent
        return parts

    def _run(
        self,
        message: str,
        data: dict[str, Any] | None = None,
        files: list[str] | None = None,
        tool_call_id: str | None = None,
        *,
        config: RunnableConfig,
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        thread = thread_key(config)
        credential = self._credential(config)
        steps = self._steps(thread, tool_call_id, self._outgoing(message, data, files))
        run_id = run_manager.run_id if run_manager is not None else None
        try:
            parts, new_task = next(steps)
            while True:
                with run_span_context(run_id):
                    reply = self._session.ask_sync(
                        parts,
                        conversation=thread,
                        new_task=new_task,
                        errors="reply",
                        credential=credential,
                    )
                parts, new_task = steps.send(reply)
        except StopIteration as done:
            return self._result(cast(RemoteReply, done.value))

    async def _arun(
        self,
        message: str,
        data: dict[str, Any] | None = None,
        files: list[str] | None = None,
        tool_call_id: str | None = None,
        *,
        config: RunnableConfig,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        thread = thread_key(config)
        credential = self._credential(config)
        steps = self._steps(thread, tool_call_id, self._outgoing(message, data, files))
        on_text = self._text_events(config)
        run_id = run_manager.run_id if run_manager is not None else None
        try:
            parts, new_task = next(steps)
            while True:
                with run_span_context(run_id):
                    reply = await self._session.ask(
                        parts,
                        conversation=thread,
                        new_task=new_task,
                        on_text=on_text,
                        errors="reply",
                        credential=credential,
                    )
                parts, new_task = steps.send(reply)
        except StopIteration as done:
            return self._result(cast(RemoteReply, done.value))

    def _credential(self, config: RunnableConfig) -> Any:
        """The caller's credential, read only when the session forwards it (passthrough)."""
        if not self._session.passthrough:
            return None
        try:
            return caller_credential(config)
        except TypeError as exc:
            raise ToolException(str(exc)) from None

    def _steps(self, thread: str, call: str | None, parts: list[Part]) -> _Steps:
        """The messages of one call. In ``interrupt`` mode a question pauses the graph, and
        the replies LangGraph saw before a resume are replayed, never sent again."""
        if self.on_input_required == "return" or call is None:
            return (yield parts, False)
        history = self._calls.get((thread, call))
        if history is None:
            history = []
        self._calls.remember((thread, call), history)
        if not history:
            history.append((yield parts, True))
        reply = history[0]
        step = 0
        while reply.needs_input:
            answer = _interrupt(reply)
            step += 1
            if len(history) <= step:
                history.append((yield _answer_parts(answer), False))
            reply = history[step]
        return reply

    def _text_events(self, config: RunnableConfig) -> TextHook | None:
        if not self.text_events:
            return None
        name = self.name

        async def dispatch(delta: str) -> None:
            await adispatch_custom_event(
                "a2a.remote_text", {"tool": name, "text": delta}, config=config
            )

        return dispatch

    def _result(self, reply: RemoteReply) -> tuple[Any, dict[str, Any]]:
        """The model's content (text, then the received files as content blocks) and the
        raw reply as the artifact."""
        if reply.failed:
            raise RemoteAgentError(reply)
        hint = (
            f"To reply, call {self.name} again with your answer as the message; "
            "it continues the same request."
        )
        text = reply.describe(hint)
        files = [p for p in reply.files if p.raw is not None]
        if not files:
            return text, reply.to_json()
        blocks: list[Any] = [{"type": "text", "text": text}]
        blocks.extend(file_block(p) for p in files)
        return blocks, reply.to_json()

    async def aclose(self) -> None:
        """Close the connections this tool opened."""
        await self._session.aclose()

    def close(self) -> None:
        """Close the sync connection this tool opened (from sync code)."""
        self._session.close()


def _interrupt(reply: RemoteReply) -> Any:
    from langgraph.types import interrupt

    return interrupt(
        {
            "question": reply.text,
            "agent": reply.agent,
            "task_id": reply.task_id,
            "state": "input-required",
        }
    )


def _answer_parts(answer: Any) -> list[Part]:
    if isinstance(answer, str):
        return outgoing_parts(answer)
    if isinstance(answer, Mapping):
        mapping = cast(Mapping[str, Any], answer)
        text = mapping.get("message")
        if isinstance(text, str) and set(mapping) <= {"message", "data"}:
            return outgoing_parts(text, mapping.get("data"))
        return outgoing_parts("", dict(mapping))
    return outgoing_parts(str(answer))


def _build(
    session: RemoteAgentSession,
    card: AgentCard,
    *,
    name: str | None,
    description: str | None,
    on_input_required: InputRequired,
    **tool_fields: Any,
) -> RemoteAgentTool:
    if on_input_required not in ("return", "interrupt"):
        raise ValueError(
            f"on_input_required must be 'return' or 'interrupt', not {on_input_required!r}"
        )
    label = session.label
    return RemoteAgentTool(
        session,
        name=name or tool_name(sanitize_text(card.name, 64, single_line=True)),
        description=description or describe_card(card, label),
        on_input_required=on_input_required,
        metadata={"a2a_url": label, "a2a_remote": True},
        tags=["a2a", "remote"],
        **tool_fields,
    )


DEFAULT_TIMEOUT = 300.0
"""Seconds one tool call may take by default, the remote work included."""
DEFAULT_MAX_ANSWER_CHARS = 20_000
"""Longest answer (characters) a tool gives the model by default; longer ones are cut."""

Target = str | AgentCard | A2AClient


def _where(
    url: Any, card: AgentCard | None, client: A2AClient | None, target: Any, caller: str
) -> tuple[Target, AgentCard | None]:
    """What the session talks to, and the card in hand; the old spellings still work,
    with a ``DeprecationWarning`` (``target=``, a card or client given as the URL)."""
    if target is not None:
        warnings.warn(
            f"{caller}(target=...) is deprecated: pass the agent's URL as url (the first "
            "argument), a card in hand as card=, a connected client as client= "
            "(the names a2a_crewai.remote_agent_tool uses too)",
            DeprecationWarning,
            stacklevel=3,
        )
        if url is not None:
            raise TypeError(f"{caller}() got both url and target (the old name of url)")
        url = target
    if isinstance(url, AgentCard | A2AClient):
        kind = "card" if isinstance(url, AgentCard) else "client"
        warnings.warn(
            f"passing {'an AgentCard' if kind == 'card' else 'an A2AClient'} as the first "
            f"argument of {caller}() is deprecated: pass it as {kind}=",
            DeprecationWarning,
            stacklevel=3,
        )
        if isinstance(url, AgentCard):
            card = card or url
        else:
            client = client or url
        url = None
    if url is not None and client is not None:
        raise TypeError(f"{caller}() takes url or client, not both")
    where: Target | None = client or url or card
    if where is None:
        raise TypeError(f"{caller}() needs the agent's url (or card= or client=)")
    return where, card


def _session(
    where: Target,
    card: AgentCard | None,
    headers: Mapping[str, str] | None,
    connect: dict[str, Any],
) -> RemoteAgentSession:
    if headers:
        connect["headers"] = dict(headers)
    return RemoteAgentSession(where, card=card, **connect)


def remote_agent_tool(
    url: str | None = None,
    *,
    card: AgentCard | None = None,
    client: A2AClient | None = None,
    name: str | None = None,
    description: str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    max_answer_chars: int | None = DEFAULT_MAX_ANSWER_CHARS,
    passthrough: bool = False,
    file_roots: Sequence[str] = (),
    on_input_required: InputRequired = "return",
    target: str | AgentCard | None = None,
    **options: Any,
) -> RemoteAgentTool:
    """A tool for the agent at ``url``, from sync code (its card is fetched now, unless given).

    The same names as ``a2a_crewai.remote_agent_tool``:

    - ``url``: where the agent is; ``card``: its card, when already in hand (not
      fetched again; its URL serves when ``url`` is left out); ``client``: a
      connected ``A2AClient`` to use instead of ``url``;
    - ``name`` / ``description``: your own text instead of the card's (trusted, used as is);
    - ``headers``: sent with every request;
    - ``timeout``: seconds one call may take, the remote work included (None: no bound);
    - ``max_answer_chars``: longer answers are cut (None: never);
    - ``passthrough=True``: forward the caller's token instead of the tool's own ``auth``
      (see the module doc);
    - ``file_roots``: folders whose files the model may send;
    - ``on_input_required``: ``"return"`` the remote question to the model, or
      ``"interrupt"`` the graph;
    - other keywords: tool fields (``return_direct``, ``handle_tool_error``,
      ``text_events``...) or ``A2AClient.connect`` options (``auth``,
      ``preferred_bindings``, ``card_url``...).

    ``target=`` (the old name of ``url``) still works, with a ``DeprecationWarning``.
    From inside a running event loop use ``await aremote_agent_tool(...)`` (this one
    blocks to fetch the card).
    """
    where, card = _where(url, card, client, target, "remote_agent_tool")
    tool_fields, connect = _split_options(options)
    connect.update(timeout=timeout, max_answer_chars=max_answer_chars, passthrough=passthrough)
    session = _session(where, card, headers, connect)
    try:
        fetched = session.fetch_card_sync()
    except BaseException:
        session.close()
        raise
    return _build(
        session,
        fetched,
        name=name,
        description=description,
        on_input_required=on_input_required,
        file_roots=tuple(file_roots),
        **tool_fields,
    )


async def aremote_agent_tool(
    url: str | None = None,
    *,
    card: AgentCard | None = None,
    client: A2AClient | None = None,
    name: str | None = None,
    description: str | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,  # noqa: ASYNC109 - the tool's calls' bound
    max_answer_chars: int | None = DEFAULT_MAX_ANSWER_CHARS,
    passthrough: bool = False,
    file_roots: Sequence[str] = (),
    on_input_required: InputRequired = "return",
    target: str | AgentCard | A2AClient | None = None,
    **options: Any,
) -> RemoteAgentTool:
    """``remote_agent_tool`` for async code (the same options)."""
    where, card = _where(url, card, client, target, "aremote_agent_tool")
    tool_fields, connect = _split_options(options)
    connect.update(timeout=timeout, max_answer_chars=max_answer_chars, passthrough=passthrough)
    session = _session(where, card, headers, connect)
    fetched = await session.fetch_card()
    return _build(
        session,
        fetched,
        name=name,
        description=description,
        on_input_required=on_input_required,
        file_roots=tuple(file_roots),
        **tool_fields,
    )


_TOOL_FIELDS = frozenset(
    {
        "return_direct",
        "handle_tool_error",
        "handle_validation_error",
        "text_events",
        "verbose",
        "max_send_bytes",
    }
)


def _split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    tool = {k: v for k, v in options.items() if k in _TOOL_FIELDS}
    connect = {k: v for k, v in options.items() if k not in _TOOL_FIELDS}
    return tool, connect


class A2AToolkit(BaseToolkit):
    """Tools for several remote A2A agents (one per agent)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tools: list[RemoteAgentTool] = Field(default_factory=list[RemoteAgentTool])

    def __init__(self, tools: Sequence[RemoteAgentTool] = (), **fields: Any) -> None:
        super().__init__(**{"tools": list(tools), **fields})

    @model_validator(mode="after")
    def _unique_names(self) -> A2AToolkit:
        names = [t.name for t in self.tools]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(
                f"two remote agents give the same tool name ({', '.join(duplicates)}): "
                "build those tools with remote_agent_tool(url, name=...)"
            )
        return self

    @classmethod
    def from_urls(cls, urls: Sequence[str], **options: Any) -> A2AToolkit:
        """Fetch each agent's card (sync) and build its tool; ``options`` apply to every tool."""
        tools: list[RemoteAgentTool] = []
        try:
            for url in urls:
                tools.append(remote_agent_tool(url, **options))
            return cls(tools)
        except BaseException:
            for built in tools:
                built.close()
            raise

    @classmethod
    async def afrom_urls(cls, urls: Sequence[str], **options: Any) -> A2AToolkit:
        """``from_urls`` for async code (the cards are fetched concurrently)."""
        results = await asyncio.gather(
            *(aremote_agent_tool(url, **options) for url in urls), return_exceptions=True
        )
        tools = [r for r in results if isinstance(r, RemoteAgentTool)]
        failure = next((r for r in results if isinstance(r, BaseException)), None)
        try:
            if failure is not None:
                raise failure
            return cls(tools)
        except BaseException:
            for built in tools:
                await built.aclose()
            raise

    @classmethod
    def from_catalog(cls, url: str, **options: Any) -> A2AToolkit:
        """One tool per agent of the AI Catalog at ``url`` (the catalog's URL, or a host
        that publishes one at ``/.well-known/ai-catalog.json``); ``options`` as for
        ``from_urls`` (their ``headers`` are sent for the catalog too)."""
        from a2a_core.client import discover_sync

        catalog = discover_sync(url, headers=options.get("headers"))
        return cls.from_urls([a.url for a in catalog.agents if a.url], **options)

    @classmethod
    async def afrom_catalog(cls, url: str, **options: Any) -> A2AToolkit:
        """``from_catalog`` for async code."""
        from a2a_core.client import discover

        catalog = await discover(url, headers=options.get("headers"))
        return await cls.afrom_urls([a.url for a in catalog.agents if a.url], **options)

    def get_tools(self) -> list[BaseTool]:
        """The tools, for ``model.bind_tools`` / an agent."""
        return list(self.tools)

    async def aclose(self) -> None:
        """Close every tool's connections."""
        for built in self.tools:
            await built.aclose()

    def close(self) -> None:
        """Close every tool's connections, from sync code."""
        for built in self.tools:
            built.close()
