"""A remote A2A agent as CrewAI code talks to it: a session keyed by the served request.

The remote-agent plumbing (card text, per-conversation remote state,
answers, cancel, the sync bridge) is ``a2a_core.client.RemoteAgentSession``.
CrewAI adds three things here:

- the conversation of a call is the served A2A task (``current_run``), or
  one shared conversation outside a served crew, so every call of one
  request talks in the same remote context and continues its own waiting
  remote task;
- a cancel of the served task cancels the remote call (and the remote task)
  at once, from sync tools (``ask``) and async ones (``aask``) alike, and
  stops the crew;
- the remote agent's working status messages become local progress;
- with ``passthrough=True`` (opt-in), each call forwards the token of the A2A
  request the served crew answers (``CrewRun.credential``, the end user's)
  instead of the agent's own credentials; a call outside a served crew, or
  from an anonymous request, is refused, never sent with other credentials.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Mapping, Sequence
from typing import Any

from a2a_core.client import A2AClient, RemoteAgentSession, RemoteReply, sanitize_text
from a2a_core.client.session import EventHook
from a2a_core.types import AgentCard, Part, StreamEvent, TaskState, TaskStatusUpdateEvent

from ._events import short
from ._runs import CrewRun, Progress, current_run
from .tracing import tool_span_context

__all__ = ["RemoteAgent"]

_MAX_TRACKED = 1024


class RemoteAgent:
    """One remote A2A agent: its session, and how a crew's calls map onto it."""

    def __init__(
        self,
        url: str,
        *,
        card: AgentCard | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 300.0,
        max_answer_chars: int = 20_000,
        client: A2AClient | None = None,
        **connect_options: Any,
    ) -> None:
        self.url = url
        self.timeout = timeout
        if headers:
            connect_options["headers"] = dict(headers)
        self.session = RemoteAgentSession(
            client if client is not None else url,
            card=card,
            timeout=timeout,
            max_answer_chars=max_answer_chars,
            max_conversations=_MAX_TRACKED,
            **connect_options,
        )

    def card(self) -> AgentCard:
        """The remote agent's card (fetched once; blocks)."""
        return self.session.fetch_card_sync()

    @property
    def name(self) -> str:
        """The card's name, cleaned and bounded (the URL before the card is known)."""
        card = self.session.card
        return (sanitize_text(card.name, 80, single_line=True) if card else "") or self.url

    def close(self) -> None:
        """Close the client of sync calls (idempotent; it reconnects on the next use)."""
        self.session.close()

    async def aclose(self) -> None:
        """Close the clients this agent connected."""
        await self.session.aclose()

    # -- asking -----------------------------------------------------------------------
    def ask(self, text: str | Sequence[Part], data: Mapping[str, Any] | None = None) -> RemoteReply:
        """Send ``text`` (continuing the task that waits for input, if any); the reply.

        Failures come back as a reply; only a cancel of the served task raises
        (CrewAI's ``HookAborted``), so that the crew stops.
        """
        run = current_run()
        try:
            with tool_span_context():
                return self.session.ask_sync(
                    text,
                    data=dict(data) if data else None,
                    conversation=run.task_id if run is not None else "",
                    on_event=self._reporter(run),
                    errors="reply",
                    cancel_hook=run.on_cancel if run is not None else None,
                    credential=run.credential if run is not None else None,
                )
        except concurrent.futures.CancelledError:
            if run is not None:
                run.check()
            raise

    async def aask(
        self, text: str | Sequence[Part], data: Mapping[str, Any] | None = None
    ) -> RemoteReply:
        """``ask`` for async code (the call runs on the caller's loop)."""
        run = current_run()
        remove = None
        if run is not None:
            loop = asyncio.get_running_loop()
            me = asyncio.current_task()
            if me is not None:

                def cancel() -> None:
                    loop.call_soon_threadsafe(me.cancel)

                remove = run.on_cancel(cancel)
        try:
            return await self.session.ask(
                text,
                data=dict(data) if data else None,
                conversation=run.task_id if run is not None else "",
                on_event=self._reporter(run),
                errors="reply",
                credential=run.credential if run is not None else None,
            )
        except asyncio.CancelledError:
            if run is not None:
                run.check()
            raise
        finally:
            if remove is not None:
                remove()

    def _reporter(self, run: CrewRun | None) -> EventHook | None:
        if run is None:
            return None

        def report(event: StreamEvent) -> None:
            if not isinstance(event, TaskStatusUpdateEvent) or event.status.message is None:
                return
            if event.status.state is not TaskState.WORKING:
                return
            text = sanitize_text(event.status.message.text, 200, single_line=True)
            if text:
                run.push(
                    Progress(
                        f"{short(self.name, 60)}: {text}",
                        {"crewai": {"event": "remote_progress", "remote_agent": self.url}},
                    )
                )

        return report
