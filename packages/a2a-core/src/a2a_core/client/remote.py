"""Remote agents as local building blocks: a forwarding executor, and skill descriptors.

``RemoteAgentExecutor`` is an ``AgentExecutor`` whose work is done by a
remote A2A agent: the local server fronts it (a gateway). The incoming
message is forwarded (streaming when the remote card allows it) and the
remote events (status, artifacts, questions, completion, a direct reply)
are relayed through the local ``TaskUpdater``. A local cancel cancels the
remote task; continuing a local input-required task continues the remote
task it maps to. The local-to-remote id maps live in this object (bounded,
least recently used dropped), so a gateway keeps them per process.
With ``passthrough=True`` every remote call (send, poll, resubscribe,
cancel) carries the bearer token the local caller was authenticated with
instead of the executor's own auth, so the remote agent acts for the end
user; a request without one is refused (401) before a task exists.

``remote_skills`` turns a remote card's skills into ``RemoteSkill``
descriptors for the framework adapters. Their text is untrusted: cleaned,
bounded and labelled as coming from a remote card (see ``untrusted``).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

from ..errors import (
    AuthenticationRequiredError,
    PermissionDeniedError,
    UnsupportedOperationError,
)
from ..server.executor import AgentExecutor, RequestContext
from ..server.updater import TaskUpdater
from ..types import (
    AgentCard,
    Artifact,
    Message,
    Part,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    new_id,
)
from .bounded import BoundedMap
from .client import A2AClient
from .session import cancel_remote_task
from .untrusted import DEFAULT_TEXT_LIMITS, UNTRUSTED_LABEL, TextLimits, sanitize_text

__all__ = ["RemoteAgentExecutor", "RemoteSkill", "remote_skills"]


_MAX_RESUBSCRIBE = 2


@dataclass(frozen=True, slots=True)
class RemoteSkill:
    """A skill of a remote agent, described with cleaned, bounded text.

    Everything but ``source_url`` comes from the remote card and is
    untrusted: show it, hand it to a model as data, never execute it.
    """

    id: str
    name: str
    description: str
    source_url: str
    agent_name: str
    tags: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    input_modes: tuple[str, ...] = ()
    output_modes: tuple[str, ...] = ()
    untrusted: bool = field(default=True, init=False)

    def labelled_description(self) -> str:
        """The description with a note saying where it comes from (for tool descriptions)."""
        note = (
            f"[{UNTRUSTED_LABEL}: skill {self.name!r} of agent {self.agent_name!r} "
            f"at {self.source_url}]"
        )
        return f"{self.description}\n{note}" if self.description else note


def remote_skills(
    card: AgentCard, source_url: str, limits: TextLimits = DEFAULT_TEXT_LIMITS
) -> list[RemoteSkill]:
    """The card's skills as sanitized descriptors (at most ``limits.max_skills``)."""
    agent = sanitize_text(card.name, limits.name, single_line=True)
    skills: list[RemoteSkill] = []
    for skill in card.skills[: limits.max_skills]:
        skills.append(
            RemoteSkill(
                id=sanitize_text(skill.id, limits.name, single_line=True),
                name=sanitize_text(skill.name, limits.name, single_line=True),
                description=sanitize_text(skill.description, limits.description),
                source_url=source_url,
                agent_name=agent,
                tags=tuple(
                    sanitize_text(t, limits.tag, single_line=True)
                    for t in skill.tags[: limits.max_tags]
                ),
                examples=tuple(
                    sanitize_text(e, limits.example) for e in skill.examples[: limits.max_examples]
                ),
                input_modes=tuple(
                    sanitize_text(m, limits.tag, single_line=True) for m in skill.input_modes[:16]
                ),
                output_modes=tuple(
                    sanitize_text(m, limits.tag, single_line=True) for m in skill.output_modes[:16]
                ),
            )
        )
    return skills


def _new_parts(relayed: Artifact | None, artifact: Artifact) -> list[Part]:
    """The parts ``artifact`` adds after those already relayed, if it only adds parts.

    Empty when the artifact changed otherwise (text that grew, say): then the
    whole artifact replaces what was relayed.
    """
    if relayed is None:
        return []
    known = len(relayed.parts)
    if artifact.parts[:known] != relayed.parts or artifact.metadata != relayed.metadata:
        return []
    return artifact.parts[known:]


class _Relay:
    """Relays one execution's remote events to the local updater."""

    def __init__(
        self, executor: RemoteAgentExecutor, context: RequestContext, updater: TaskUpdater
    ) -> None:
        self.executor = executor
        self.context = context
        self.updater = updater
        self.remote_task_id: str | None = None
        self.artifacts: dict[str, Artifact] = {}
        """Each artifact as relayed so far (snapshots relay only what is new)."""
        self.open: set[str] = set()
        """Artifacts relayed without ``lastChunk`` yet (closed when the remote task settles)."""
        self.settled = False

    @property
    def may_reply(self) -> bool:
        if self.context.is_continuation:
            return False
        config = self.context.configuration
        return not (
            config is not None
            and (config.return_immediately or config.task_push_notification_config is not None)
        )

    def _learn(self, task_id: str, context_id: str) -> None:
        if self.remote_task_id is None and task_id:
            self.remote_task_id = task_id
            self.executor.remember(self.context, task_id, context_id or None)

    async def event(self, event: StreamEvent) -> None:
        if isinstance(event, Message):
            await self._message(event)
        elif isinstance(event, Task):
            await self._snapshot(event)
        elif isinstance(event, TaskStatusUpdateEvent):
            self._learn(event.task_id, event.context_id)
            await self._status(event.status, event.metadata)
        else:
            await self._artifact(event)

    async def _snapshot(self, task: Task) -> None:
        """A whole task (a send's answer, a poll, a resubscribe): relay what is new in it."""
        self._learn(task.id, task.context_id)
        for artifact in task.artifacts:
            relayed = self.artifacts.get(artifact.artifact_id)
            if relayed == artifact:
                continue
            self.artifacts[artifact.artifact_id] = artifact
            new_parts = _new_parts(relayed, artifact)
            await self.updater.add_artifact(
                new_parts or artifact.parts,
                artifact_id=artifact.artifact_id,
                name=artifact.name,
                description=artifact.description,
                append=bool(new_parts),
                metadata=artifact.metadata,
            )
            self._track(artifact.artifact_id, last=not new_parts)
        await self._status(task.status, None)

    def _track(self, artifact_id: str, *, last: bool) -> None:
        if last:
            self.open.discard(artifact_id)
        else:
            self.open.add(artifact_id)

    async def close_open(self) -> None:
        """Mark the end of every artifact the remote agent left open (an agent that never
        sets ``lastChunk``): the local clients then know each artifact is whole."""
        for artifact_id in sorted(self.open):
            artifact = self.artifacts[artifact_id]
            if self.updater.whole_answers:
                await self.updater.add_artifact(
                    artifact.parts,
                    artifact_id=artifact_id,
                    name=artifact.name,
                    description=artifact.description,
                    last_chunk=True,
                    metadata=artifact.metadata,
                )
            else:
                await self.updater.add_artifact(
                    [Part(text="")], artifact_id=artifact_id, append=True, last_chunk=True
                )
        self.open.clear()

    async def _message(self, message: Message) -> None:
        local = self.updater.new_agent_message(list(message.parts), metadata=message.metadata)
        if self.may_reply and self.updater.state is TaskState.SUBMITTED:
            await self.updater.reply(local)
        else:
            await self.updater.complete(local)
        self.settled = True

    async def _artifact(self, event: TaskArtifactUpdateEvent) -> None:
        self._learn(event.task_id, event.context_id)
        artifact = event.artifact
        relayed = self.artifacts.get(artifact.artifact_id)
        self.artifacts[artifact.artifact_id] = (
            relayed.extended(artifact) if event.append and relayed is not None else artifact
        )
        await self.updater.add_artifact(
            artifact.parts,
            artifact_id=artifact.artifact_id,
            name=artifact.name,
            description=artifact.description,
            append=event.append,
            last_chunk=event.last_chunk,
            metadata=event.metadata or artifact.metadata,
        )
        self._track(artifact.artifact_id, last=event.last_chunk)

    async def _status(self, status: TaskStatus, metadata: dict[str, Any] | None) -> None:
        state = status.state
        if state in (TaskState.UNSPECIFIED, TaskState.SUBMITTED):
            return
        remote_message = status.message
        message = (
            self.updater.new_agent_message(
                list(remote_message.parts), metadata=remote_message.metadata
            )
            if remote_message is not None
            else None
        )
        if message is None and state is self.updater.state and not metadata:
            return
        if state.is_terminal or state.is_interrupted:
            self.settled = True
            await self.close_open()
        await self.updater.update_status(state, message, metadata=metadata)


class RemoteAgentExecutor(AgentExecutor):
    """An executor that forwards each request to a remote A2A agent.

    ``target`` is the remote agent's URL (discovered on first use with
    ``connect_options`` passed to ``A2AClient.connect``) or a ready client,
    which this executor then does not close. ``streaming`` forces or
    forbids streaming (default: what the remote card declares). Without
    streaming the remote task is started without blocking, so a local cancel
    can reach it, and polled (``poll_interval``: first and longest delay).
    ``passthrough`` forwards each caller's bearer token instead of the
    executor's own auth (off by default; the local server must authenticate
    its callers: see docs/security.md).
    """

    def __init__(
        self,
        target: str | A2AClient,
        *,
        streaming: bool | None = None,
        forward_metadata: bool = True,
        poll_interval: tuple[float, float] = (0.02, 2.0),
        max_tracked: int = 10_000,
        passthrough: bool = False,
        **connect_options: Any,
    ) -> None:
        self.passthrough = passthrough
        if isinstance(target, A2AClient):
            self._client: A2AClient | None = target
            self._owns_client = False
            self.url = target.interface.url if target.interface is not None else "(client)"
        else:
            self._client = None
            self._owns_client = True
            self.url = target
        self.streaming = streaming
        self.forward_metadata = forward_metadata
        self.poll_interval = poll_interval
        self._connect_options: dict[str, Any] = {"timeout": 600.0, **connect_options}
        self._connecting: asyncio.Lock | None = None
        self._remote_tasks: BoundedMap[str, tuple[str, str | None]] = BoundedMap(max_tracked)
        self._remote_contexts: BoundedMap[tuple[str | None, str], str] = BoundedMap(max_tracked)
        """(local owner, local context) -> remote context: a context id is the caller's to
        choose, so one caller's id never continues another caller's remote context."""
        self._cancel_sent: BoundedMap[str, bool] = BoundedMap(max_tracked)
        """Remote tasks a cancel was sent to (bounded like the id maps: a cancel of a task
        that already ended would otherwise stay forever)."""

    # -- the remote client ------------------------------------------------------------
    async def client(self) -> A2AClient:
        """The client of the remote agent (connected on first use)."""
        if self._client is not None:
            return self._client
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if self._client is None:
                self._client = await A2AClient.connect(self.url, **self._connect_options)
        return self._client

    async def skills(self) -> list[RemoteSkill]:
        """The remote agent's skills as sanitized descriptors."""
        client = await self.client()
        return remote_skills(client.card, self.url) if client.card is not None else []

    def remember(self, context: RequestContext, task_id: str, context_id: str | None) -> None:
        """Map a local task and context to the remote ones, so follow-ups and cancels reach them."""
        self._remote_tasks.remember(context.task_id, (task_id, context_id))
        if context_id:
            self._remote_contexts.remember((context.call.owner, context.context_id), context_id)

    # -- passthrough ------------------------------------------------------------------
    def admit(self, context: RequestContext) -> None:
        """With passthrough, refuse (401) a request without a caller credential to forward."""
        if self.passthrough and context.credential is None:
            raise AuthenticationRequiredError(
                "This agent acts for its caller: send a bearer token it accepts"
            )

    async def _acting(self, context: RequestContext) -> A2AClient:
        """The client for this request: acting for its caller with passthrough."""
        client = await self.client()
        if not self.passthrough:
            return client
        credential = context.credential
        if credential is None:
            raise AuthenticationRequiredError(
                "This agent acts for its caller: send a bearer token it accepts"
            )
        return client.with_credential(credential)

    def remote_task_id(self, local_task_id: str) -> str | None:
        """The remote task a local task is mapped to (None if unknown)."""
        found = self._remote_tasks.get(local_task_id)
        return found[0] if found is not None else None

    # -- execution --------------------------------------------------------------------
    def _outgoing(self, context: RequestContext) -> Message:
        source = context.message
        mapped = self._remote_tasks.get(context.task_id)
        task_id: str | None = None
        remote_context: str | None = self._remote_contexts.get(
            (context.call.owner, context.context_id)
        )
        if mapped is not None:
            if context.is_continuation:
                task_id = mapped[0]
            remote_context = mapped[1] or remote_context
        return Message(
            message_id=new_id(),
            role=Role.USER,
            parts=list(source.parts),
            metadata=source.metadata if self.forward_metadata else None,
            extensions=list(source.extensions),
            task_id=task_id,
            context_id=remote_context,
        )

    async def execute(self, context: RequestContext, updater: TaskUpdater) -> None:
        client = await self._acting(context)
        relay = _Relay(self, context, updater)
        message = self._outgoing(context)
        use_stream = self.streaming if self.streaming is not None else client.supports_streaming
        try:
            if use_stream:
                async with client.stream(message) as events:
                    async for event in events:
                        await relay.event(event)
                await self._catch_up(client, relay)
            else:
                await self._poll(client, relay, message)
            if not relay.settled and not updater.state.is_terminal:
                await updater.fail("The remote agent stopped answering before the task ended")
        except (AuthenticationRequiredError, PermissionDeniedError) as exc:
            if updater.state.is_terminal:
                raise
            whose = "the caller's forwarded credential" if self.passthrough else "our credentials"
            await updater.fail(f"The remote agent refused {whose} ({exc.reason})")
        except asyncio.CancelledError:
            remote_id = relay.remote_task_id
            if remote_id is not None and not relay.settled and remote_id not in self._cancel_sent:
                await asyncio.shield(self._cancel_remote(client, remote_id))
            raise
        finally:
            if updater.state.is_terminal:
                found = self._remote_tasks.pop(context.task_id)
                if found is not None:
                    self._cancel_sent.pop(found[0])

    async def _poll(self, client: A2AClient, relay: _Relay, message: Message) -> None:
        """No streaming: start the remote task without blocking (so it can be canceled), poll it."""
        reply = await client.send(message, blocking=False)
        await relay.event(reply.result)
        delay, longest = self.poll_interval
        while not relay.settled and relay.remote_task_id is not None:
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, longest)
            await relay.event(await client.get_task(relay.remote_task_id))

    async def _catch_up(self, client: A2AClient, relay: _Relay) -> None:
        """The stream ended before the task settled: follow it again, then ask for it."""
        attempts = 0
        while not relay.settled and relay.remote_task_id is not None:
            if attempts >= _MAX_RESUBSCRIBE:
                task = await client.get_task(relay.remote_task_id)
                await relay.event(task)
                if not relay.settled:
                    await relay.updater.fail("The remote agent's stream ended before the task did")
                return
            attempts += 1
            try:
                async with client.subscribe(relay.remote_task_id) as events:
                    async for event in events:
                        await relay.event(event)
            except UnsupportedOperationError:  # 1.0: already terminal, nothing to follow
                attempts = _MAX_RESUBSCRIBE

    async def cancel(self, context: RequestContext, updater: TaskUpdater) -> None:
        remote_id = self.remote_task_id(context.task_id)
        if remote_id is None or self._client is None:
            return
        client = self._client
        if self.passthrough:
            if context.credential is None:
                return
            client = client.with_credential(context.credential)
        await self._cancel_remote(client, remote_id)

    async def _cancel_remote(self, client: A2AClient, remote_id: str) -> None:
        self._cancel_sent.remember(remote_id, True)
        await cancel_remote_task(client, remote_id)

    async def aclose(self) -> None:
        """Close the client this executor connected (a given client is left open)."""
        if self._owns_client and self._client is not None:
            client, self._client = self._client, None
            with contextlib.suppress(Exception):
                await client.aclose()
