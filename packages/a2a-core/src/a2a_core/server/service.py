"""The transport-neutral A2A service: one method per operation.

The ASGI app, the in-process client transport and tests all call this
object. Requests arrive as internal (1.0) models with a ``ServerCallContext``
saying who calls and in which protocol version; results are internal models.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, cast

from pydantic import BaseModel

from ..card import with_default_skill
from ..contracts.task_store import StoredTask, TaskQuery, TaskStore
from ..errors import (
    A2AError,
    AuthenticationRequiredError,
    ConfigurationError,
    ContentTypeNotSupportedError,
    ExtendedAgentCardNotConfiguredError,
    InternalError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from ..identity import Authenticator, Principal
from ..stores.compact import CompactMemoryTaskStore
from ..types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Role,
    SendMessageRequest,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
)
from ..wire.operations import Operation
from .authorization import OperationScopes
from .context import ServerCallContext
from .events import NO_ID, EventBus, EventsLost, Subscription
from .executor import as_executor
from .files import FileStore
from .idempotency import SendClaim, SendLedger, started_task
from .manager import ManagerConfig, TaskManager, TaskObserver, TaskRun
from .push_api import PushNotifier
from .stream import ServerStream
from .task_state import snapshot

__all__ = ["A2AService", "CardProvider", "ConfigurationError"]

logger = logging.getLogger("a2a_core.server")

CardProvider = AgentCard | Callable[[Principal | None], AgentCard]


class A2AService:
    """Every A2A operation over one agent, one task store and one event bus."""

    def __init__(
        self,
        agent: Any,
        card: AgentCard,
        *,
        store: TaskStore | None = None,
        bus: EventBus | None = None,
        config: ManagerConfig | None = None,
        push: PushNotifier | None = None,
        extended_card: CardProvider | None = None,
        streaming: bool = True,
        strict_output_modes: bool = False,
        observers: Sequence[TaskObserver] = (),
        authenticate: Authenticator | None = None,
        lifespan: Callable[[Any], AbstractAsyncContextManager[Any]] | None = None,
        files: FileStore | None = None,
        operation_scopes: OperationScopes | Mapping[str, str | Sequence[str]] | None = None,
        task_scope: str | None = None,
    ) -> None:
        self.task_scope = task_scope
        """The name this agent's tasks are kept under when several agents share one store
        (``server.host``): a task of one is not found through another. None: unscoped."""
        self.authenticate = authenticate
        """How the edges authenticate callers by default (``create_app`` uses it)."""
        self.operation_scopes = (
            operation_scopes
            if operation_scopes is None or isinstance(operation_scopes, OperationScopes)
            else OperationScopes(operation_scopes)
        )
        """Which scopes each operation needs (checked before it runs); None: no scope checks."""
        self.lifespan = lifespan
        """What an app serving this service enters at startup by default (plugin lifespans)."""
        self.streaming = streaming
        self.strict_output_modes = strict_output_modes
        """Refuse sends whose ``acceptedOutputModes`` this agent cannot meet (-32005).

        Off by default: the spec asks agents to tailor output to the accepted modes
        (SHOULD), and clients such as CrewAI's accept only ``application/json`` by
        default, so a text agent answers anyway, in its own best mode; the agent reads
        the accepted modes from ``RequestContext.accepted_output_modes``.
        """
        self.push = push
        self.extended_card = extended_card
        self.card = self._truthful_card(card)
        all_observers = list(observers)
        push_intake = getattr(push, "on_saved_event", None)
        if push is not None and push_intake is None:
            all_observers.append(push.on_event)
        self.manager = TaskManager(
            as_executor(agent),
            store if store is not None else CompactMemoryTaskStore(),
            bus,
            config,
            all_observers,
            files,
        )
        self._output_modes = _output_modes(self.card)
        if push_intake is not None:
            # told each event's id: it makes webhook ids and the delivered-up-to mark
            self.manager.observing.push_intake = push_intake
            recover = getattr(push, "recover", None)
            leases = self.manager.leases
            if recover is not None and leases is not None:  # only orphans need it
                channel = self.manager.channel
                leases.push_recovery = lambda stored: recover(channel, stored)
        if push is not None:
            shared = self.manager.channel.push_configs()
            share = getattr(push, "share_store", None)
            if shared is not None and share is not None:
                share(shared)  # configs live with the tasks: every instance sees them
        self.sends = SendLedger.for_store(
            self.manager.backend, self.manager.config.send_retention_seconds
        )
        """Idempotent sends: the task each (principal, messageId) started (None: off)."""

    @property
    def files(self) -> FileStore | None:
        """Where large outgoing files are kept to be served by URL (None: always inline)."""
        return self.manager.files

    @property
    def store(self) -> TaskStore:
        """The task store the service keeps its tasks in."""
        return self.manager.store

    def _truthful_card(self, card: AgentCard) -> AgentCard:
        """Capabilities follow the configuration; a card that over-claims is refused."""
        caps = card.capabilities
        offered = {
            "streaming": self.streaming,
            "pushNotifications": self.push is not None,
            "extendedAgentCard": self.extended_card is not None,
        }
        claimed = {
            "streaming": caps.streaming,
            "pushNotifications": caps.push_notifications,
            "extendedAgentCard": caps.extended_agent_card,
        }
        false_claims = [name for name, value in claimed.items() if value and not offered[name]]
        if false_claims:
            raise ConfigurationError(
                "The agent card claims capabilities this server does not provide: "
                + ", ".join(false_claims)
                + " (configure them, or remove the claim)"
            )
        new_caps = caps.model_copy(
            update={
                "streaming": offered["streaming"],
                "push_notifications": offered["pushNotifications"],
                "extended_agent_card": offered["extendedAgentCard"] or None,
            }
        )
        # A card always lists a skill: plain functions and executors get one for the agent.
        return with_default_skill(card.model_copy(update={"capabilities": new_caps}))

    # -- dispatch -------------------------------------------------------------------
    async def handle(self, op: Operation, request: BaseModel, call: ServerCallContext) -> Any:
        """Run a non-streaming operation. Failures are always ``A2AError``s."""
        handler = _HANDLERS.get(op)
        if handler is None:
            raise UnsupportedOperationError(f"{op.value} is a streaming operation")
        if self.task_scope is not None:
            call.scope = self.task_scope
        if self.operation_scopes is not None:
            self.operation_scopes.check(op, call.principal)
        try:
            return await handler(self, request, call)
        except A2AError:
            raise
        except Exception as exc:
            logger.exception("%s failed", op.value)
            raise InternalError() from exc

    async def open_stream(
        self, op: Operation, request: BaseModel, call: ServerCallContext
    ) -> ServerStream:
        """Start a streaming operation: errors are raised here, before the first event."""
        if self.task_scope is not None:
            call.scope = self.task_scope
        if self.operation_scopes is not None:
            self.operation_scopes.check(op, call.principal)
        try:
            if op is Operation.SEND_STREAMING_MESSAGE:
                return await self.stream_message(cast(SendMessageRequest, request), call)
            if op is Operation.SUBSCRIBE_TO_TASK:
                return await self.subscribe(cast(SubscribeToTaskRequest, request), call)
        except A2AError:
            raise
        except Exception as exc:
            logger.exception("%s failed", op.value)
            raise InternalError() from exc
        raise UnsupportedOperationError(f"{op.value} is not a streaming operation")

    # -- send -------------------------------------------------------------------------
    async def send_message(
        self, request: SendMessageRequest, call: ServerCallContext
    ) -> Task | Message:
        """Blocking (default) or non-blocking (``returnImmediately``) send."""
        config = request.configuration
        immediate = config is not None and config.return_immediately
        history_length = config.history_length if config is not None else None
        allow_reply = not immediate and not self.manager.executor.starts_task_at_once
        begun = await self._begin(request, call, allow_reply=allow_reply)
        if isinstance(begun, SendClaim):
            return await self._repeated_send(begun, call, immediate, history_length)
        run, claim = begun
        if not immediate:
            await run.settled.wait()
            if run.reply is not None:
                await self._forget(claim)
                return run.reply
            if run.stored == 0 and run.error is not None:
                await self._forget(claim)
                raise run.error  # the task could never be stored
        return snapshot(run.task, history_length)

    async def _claim(
        self, request: SendMessageRequest, call: ServerCallContext, task_id: str | None = None
    ) -> SendClaim | None:
        """Record this send's messageId (idempotent sends), or find the send that had it."""
        if self.sends is None or request.message.role is Role.UNSPECIFIED:
            return None
        try:
            return await self.sends.claim(request.message, call.owner, task_id)
        except Exception as exc:
            logger.exception("could not record the send")
            raise InternalError("Could not record the send") from exc

    async def _forget(self, claim: SendClaim | None) -> None:
        if claim is not None and self.sends is not None:
            try:
                await self.sends.forget(claim)
            except Exception:
                logger.warning("could not drop a send record", exc_info=True)

    async def _repeated_send(
        self, claim: SendClaim, call: ServerCallContext, immediate: bool, history: int | None
    ) -> Task:
        """A retry of a send already made: its task, once settled when the retry blocks.

        As the first send would have answered: a blocking retry waits for the task
        to end or pause, whether its run is here or on another instance.
        """
        run = self.manager.active_run(claim.task_id)
        if run is not None and run.owner == call.owner:
            if not immediate:
                await run.settled.wait()
            if run.reply is None and run.version:
                return snapshot(run.task, history)
        stored = await started_task(self.store, claim.task_id, call.owner)
        if not immediate:
            stored = await self._settled(stored, call)
        return snapshot(stored.task, history)

    async def _settled(self, stored: StoredTask, call: ServerCallContext) -> StoredTask:
        """The task once it is final or paused, or its run ended, followed through the channel.

        For a blocking retry of a task running on another instance: the channel
        carries that instance's events (or the final status a survivor writes
        when it died). Without a shared channel no run elsewhere can change it.
        """
        channel = self.manager.channel
        task_id = stored.task.id
        while channel.shared and not _is_settled(stored.task):
            follower = channel.follow(task_id, stored.version, stored.version)
            try:
                ended = await _until_settled(follower)
            finally:
                await _aclose(follower)
            fresh = await self.store.get(task_id, call.owner)
            if fresh is None:
                raise TaskNotFoundError.for_task(task_id)
            stored = fresh
            if ended:
                break
        return stored

    async def stream_message(
        self, request: SendMessageRequest, call: ServerCallContext
    ) -> ServerStream:
        """Streaming send: one Message, or the Task then its events until it settles."""
        if not self.streaming:
            raise UnsupportedOperationError("Streaming is not supported by this agent")
        # An agent that always makes a task has it stored and announced before it runs.
        at_once = self.manager.executor.starts_task_at_once
        begun = await self._begin(request, call, allow_reply=not at_once)
        if isinstance(begun, SendClaim):
            # A retry: follow the task the first send started, as SubscribeToTask would.
            stored = await started_task(self.store, begun.task_id, call.owner)
            if stored.task.status.state.is_terminal:
                return _Stream(_single(stored.version, snapshot(stored.task)), None)
            return await self.subscribe(SubscribeToTaskRequest(id=begun.task_id), call)
        run, claim = begun
        # The run is scheduled but cannot have emitted yet: subscribing now misses nothing.
        subscription = self.manager.subscribe(run.task_id, current=run.version)
        return _Stream(self._run_stream(run, run.version, subscription, claim), subscription)

    async def _begin(
        self,
        request: SendMessageRequest,
        call: ServerCallContext,
        *,
        allow_reply: bool,
    ) -> tuple[TaskRun, SendClaim | None] | SendClaim:
        """Prepare and launch a run, and its send's record (idempotent sends); on any
        failure nothing is left behind. A retried send: the earlier send's record.

        A new task's send is recorded once its task is written, so whoever finds the
        record finds the task; a continuation's task exists already, so its send is
        recorded first.
        """
        claim: SendClaim | None = None
        if request.message.task_id:
            claim = await self._claim(request, call)
            if claim is not None and claim.earlier:
                return claim
        try:
            return await self._launch(request, call, allow_reply, claim)
        except BaseException:
            await self._forget(claim)
            raise

    async def _launch(
        self,
        request: SendMessageRequest,
        call: ServerCallContext,
        allow_reply: bool,
        claim: SendClaim | None,
    ) -> tuple[TaskRun, SendClaim | None] | SendClaim:
        if request.message.role is Role.UNSPECIFIED:
            raise InvalidParamsError("message.role must be ROLE_USER or ROLE_AGENT")
        config = request.configuration
        inline_push = None
        if config is not None:
            if self.strict_output_modes:
                self._negotiate_output(config.accepted_output_modes)
            inline_push = config.task_push_notification_config
            if inline_push is not None and self.push is None:
                raise PushNotificationNotSupportedError()
        try:
            run = await self.manager.prepare(
                request.message,
                call,
                config,
                request.metadata,
                allow_reply=allow_reply and inline_push is None,
                recorded=self.sends is not None,
            )
        except A2AError:
            raise
        except Exception as exc:
            logger.exception("could not prepare a task")
            raise InternalError("Could not create the task") from exc
        recorded: SendClaim | None = None  # this new task's record, dropped if it fails
        if claim is None and not request.message.task_id:
            try:
                claim = recorded = await self._claim(request, call, run.task_id)
            except BaseException:
                await self.manager.abandon(run)
                raise
            if claim is not None and claim.earlier:
                await self.manager.abandon(run)  # a retry that raced the first send
                return claim
        try:
            if inline_push is not None and self.push is not None:
                await self.push.set_config(
                    inline_push.model_copy(update={"task_id": run.task_id}), call.version
                )
            self.manager.start(run)
        except BaseException as exc:
            await self.manager.abandon(run)
            await self._forget(recorded)
            if isinstance(exc, Exception) and not isinstance(exc, A2AError):
                logger.exception("task %s: could not start the agent", run.task_id)
                raise InternalError("Could not start the agent") from exc
            raise
        return run, claim

    async def _run_stream(
        self,
        run: TaskRun,
        initial_version: int,
        subscription: Subscription,
        claim: SendClaim | None = None,
    ) -> AsyncGenerator[_Item]:
        """The first events of a streamed send; then ``_FOLLOW``: the rest are the
        subscription's, up to the event that settles the task."""
        try:
            if run.allow_reply:
                # The first event decides: a direct Message reply, or a task.
                first = await anext(aiter(subscription), None)
                if isinstance(first, Message):
                    await self._forget(claim)
                    yield NO_ID, first, subscription.encoded
                    return
                if first is None:  # the run ended without publishing anything
                    if run.stored == 0 and run.error is not None:
                        await self._forget(claim)
                        raise run.error
                    yield run.version, snapshot(run.task), None
                    return
                yield initial_version, snapshot(run.initial), None
                yield _id(subscription), first, subscription.encoded
                if _settles(first):
                    return
            else:
                yield initial_version, snapshot(run.initial), None
            yield _FOLLOW, None, None  # the stream reads the subscription itself from here
        finally:
            subscription.close()

    def _negotiate_output(self, accepted: list[str]) -> None:
        if not accepted or not self._output_modes:
            return
        for want in accepted:
            for have in self._output_modes:
                if _media_match(want, have):
                    return
        raise ContentTypeNotSupportedError(
            "None of the accepted output modes "
            f"({', '.join(accepted[:10])}) is produced by this agent "
            f"({', '.join(sorted(self._output_modes)[:10])})"
        )

    # -- tasks ------------------------------------------------------------------------
    async def get_task(self, request: GetTaskRequest, call: ServerCallContext) -> Task:
        """The caller's task with at most ``history_length`` messages, or TaskNotFoundError."""
        stored = await self.store.get(request.id, call.owner)
        if stored is None:
            raise TaskNotFoundError.for_task(request.id)
        return snapshot(stored.task, request.history_length)

    async def list_tasks(
        self, request: ListTasksRequest, call: ServerCallContext
    ) -> ListTasksResponse:
        """A page of the caller's tasks, newest first, filtered as the request asks."""
        if request.status is TaskState.UNSPECIFIED:
            raise InvalidParamsError("status filter TASK_STATE_UNSPECIFIED is not a state")
        query = TaskQuery(
            context_id=request.context_id,
            state=request.status,
            status_after=request.status_timestamp_after,
            page_size=request.page_size or 50,
            page_token=request.page_token,
        )
        page = await self.store.list(query, call.owner)
        include_artifacts = bool(request.include_artifacts)
        tasks = [snapshot(t, request.history_length, include_artifacts) for t in page.tasks]
        return ListTasksResponse(
            tasks=tasks,
            next_page_token=page.next_page_token,
            page_size=len(tasks),
            total_size=page.total_size,
        )

    async def cancel_task(self, request: CancelTaskRequest, call: ServerCallContext) -> Task:
        """Cancel the caller's task and return it as it ended."""
        task = await self.manager.cancel(request.id, call)
        return snapshot(task)

    async def subscribe(
        self, request: SubscribeToTaskRequest, call: ServerCallContext
    ) -> ServerStream:
        """The current Task, then its events while an agent works on it (on any instance).

        With a ``Last-Event-ID`` header (an event id this server sent), the
        events after it are replayed instead of the snapshot, then live ones
        follow; when they are past retention, the current Task comes first.
        """
        if not self.streaming:
            raise UnsupportedOperationError("Streaming is not supported by this agent")
        last = _last_event_id(call)
        stored = await self.store.get(request.id, call.owner)
        if stored is None:
            raise TaskNotFoundError.for_task(request.id)
        manager = self.manager
        run = manager.active_run(request.id)
        current, version = (
            (run.task, run.version) if run is not None else (stored.task, stored.version)
        )
        terminal = current.status.state.is_terminal
        if terminal and last is None:
            if call.version == "0.3":
                return _Stream(_single(version, snapshot(current)), None)
            raise UnsupportedOperationError(
                f"Task {request.id} is {current.status.state.value}; there is nothing to follow"
            )
        if terminal and last is not None and last >= version:
            return _Stream(_nothing(), None)  # the client has every event already
        channel = manager.channel
        if channel.shared and (run is None or last is not None):
            # Followed through the backend: the task runs elsewhere, or the events
            # to replay are the channel's (it holds every instance's).
            start = last if last is not None else version
            first = None if last is not None else (version, snapshot(current), None)
            events = self._follow_channel(request.id, call, start, version, first, terminal)
            return _Stream(events, None)
        # Running here, or idle but open (paused for input, or left working): follow it
        # until it is final or pauses again; a later message may continue it (the
        # 1.0 kit's STREAM-SUB-002). Subscribe and snapshot with no await between.
        if last is not None:
            try:
                subscription = manager.subscribe(request.id, after=last)
            except EventsLost:
                pass
            else:
                replay = self._follow(None, subscription, replay_only=terminal)
                return _Stream(replay, subscription)
        subscription = manager.subscribe(request.id, current=version)
        task = snapshot(current)
        if terminal:
            subscription.close()
            return _Stream(_single(version, task), None)
        return _Stream(self._follow((version, task, None), subscription), subscription)

    async def _follow(
        self,
        first: _Item | None,
        subscription: Subscription,
        replay_only: bool = False,
    ) -> AsyncGenerator[_Item]:
        try:
            if first is not None:
                yield first
            if replay_only and not subscription.pending:
                return
            async for event in subscription:
                yield _id(subscription), event, subscription.encoded
                if _settles(event) or (replay_only and not subscription.pending):
                    return
        finally:
            subscription.close()

    async def _follow_channel(
        self,
        task_id: str,
        call: ServerCallContext,
        after: int,
        current: int,
        first: _Item | None,
        terminal: bool,
    ) -> AsyncGenerator[_Item]:
        """Events of a task from the store's channel; past retention, a snapshot first."""
        channel = self.manager.channel
        follower = channel.follow(task_id, after, current)
        try:
            if first is not None:
                yield first
            while True:
                try:
                    if terminal:  # replaying a finished task: never wait for more
                        event_id, event = await asyncio.wait_for(
                            anext(follower), _REPLAY_STALL_SECONDS
                        )
                    else:
                        event_id, event = await anext(follower)
                except EventsLost:
                    await _aclose(follower)
                    stored = await self.store.get(task_id, call.owner)
                    if stored is None:
                        raise TaskNotFoundError.for_task(task_id) from None
                    yield stored.version, snapshot(stored.task), None
                    state = stored.task.status.state
                    if state.is_terminal or state.is_interrupted:
                        return
                    terminal = False
                    follower = channel.follow(task_id, stored.version, stored.version)
                    continue
                except (StopAsyncIteration, TimeoutError):
                    return
                if event is None:  # the run ended without settling the task
                    return
                yield event_id, event, None
                if _settles(event):
                    return
        finally:
            await _aclose(follower)

    # -- push configs -----------------------------------------------------------------
    def _require_push(self) -> PushNotifier:
        if self.push is None:
            raise PushNotificationNotSupportedError()
        return self.push

    async def _require_task(self, task_id: str, call: ServerCallContext) -> None:
        if await self.store.get(task_id, call.owner) is None:
            raise TaskNotFoundError.for_task(task_id)

    async def create_push_config(
        self, request: TaskPushNotificationConfig, call: ServerCallContext
    ) -> TaskPushNotificationConfig:
        """Register a webhook for the caller's task (needs push notifications enabled)."""
        push = self._require_push()
        if not request.task_id:
            raise InvalidParamsError("taskId is required")
        await self._require_task(request.task_id, call)
        return await push.set_config(request, call.version)

    async def get_push_config(
        self, request: GetTaskPushNotificationConfigRequest, call: ServerCallContext
    ) -> TaskPushNotificationConfig:
        """One webhook configuration of the caller's task, its secrets redacted."""
        push = self._require_push()
        await self._require_task(request.task_id, call)
        config_id = request.id
        if config_id:
            found = await push.get_config(request.task_id, config_id)
            if found is not None:
                return found
        if not config_id or call.version == "0.3":
            # 0.3 allowed omitting the id, and 0.3 servers answered a get with the
            # task's (first) config whatever id was named; 0.3 clients rely on it.
            configs = await push.list_configs(request.task_id)
            if configs:
                return configs[0]
        raise TaskNotFoundError(
            f"Push notification config {config_id or '(any)'} of task {request.task_id} not found"
        )

    async def list_push_configs(
        self, request: ListTaskPushNotificationConfigsRequest, call: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        """The webhook configurations of the caller's task, secrets redacted."""
        push = self._require_push()
        await self._require_task(request.task_id, call)
        return ListTaskPushNotificationConfigsResponse(
            configs=await push.list_configs(request.task_id)
        )

    async def delete_push_config(
        self, request: DeleteTaskPushNotificationConfigRequest, call: ServerCallContext
    ) -> None:
        """Remove a webhook configuration of the caller's task."""
        push = self._require_push()
        await self._require_task(request.task_id, call)
        # Idempotent: deleting a config that is already gone succeeds (PUSH-DEL-002).
        await push.delete_config(request.task_id, request.id)

    # -- cards ------------------------------------------------------------------------
    async def get_extended_card(
        self, request: GetExtendedAgentCardRequest, call: ServerCallContext
    ) -> AgentCard:
        """The extended card for an authenticated caller, when one is configured."""
        if not self.card.capabilities.extended_agent_card:
            raise UnsupportedOperationError("This agent has no extended agent card")
        if self.extended_card is None:
            raise ExtendedAgentCardNotConfiguredError()
        if call.principal is None:
            raise AuthenticationRequiredError(
                "The extended agent card needs an authenticated caller"
            )
        card = self.extended_card
        return card(call.principal) if callable(card) else card

    # -- lifecycle --------------------------------------------------------------------
    async def aclose(self) -> None:
        """Cancel running agents, wait for them, stop push delivery, close the store."""
        await self.manager.aclose()
        if self.push is not None:
            await self.push.aclose()


def _is_settled(task: Task) -> bool:
    state = task.status.state
    return state.is_terminal or state.is_interrupted


async def _until_settled(follower: AsyncIterator[tuple[int, StreamEvent | None]]) -> bool:
    """Read a channel follower until the task settles or its run ends (True), or events
    were lost (False: read the task again and follow from there)."""
    try:
        async for _, event in follower:
            if event is None or _settles(event):
                return True
    except EventsLost:
        return False
    return True


def _settles(event: StreamEvent) -> bool:
    if isinstance(event, TaskStatusUpdateEvent):
        state = event.status.state
        return state.is_terminal or state.is_interrupted
    return isinstance(event, Message)


_FOLLOW = NO_ID - 1
"""The id ``_run_stream`` yields (with no event) when the rest is the subscription's."""

_REPLAY_STALL_SECONDS = 1.0
"""How long a replay of a finished task waits for its next retained event before it ends."""


def _id(subscription: Subscription) -> int:
    event_id = subscription.event_id
    return NO_ID if event_id is None else event_id


def _last_event_id(call: ServerCallContext) -> int | None:
    """The ``Last-Event-ID`` a resubscribing client sent (None: none), checked."""
    raw = call.headers.get("last-event-id")
    if raw is None or not raw.strip():
        return None
    raw = raw.strip()
    if not raw.isascii() or not raw.isdigit() or len(raw) > 18:
        raise InvalidParamsError(
            "Last-Event-ID must be the id of an event this server sent (a non-negative integer)"
        )
    return int(raw)


async def _aclose(events: AsyncIterator[object]) -> None:
    aclose = getattr(events, "aclose", None)
    if aclose is not None:
        await aclose()


_Item = tuple[int, StreamEvent | None, bytes | None]
"""``(event id, event, its JSON as the bus encoded it)`` as a ``_Stream``'s source yields it."""


class _Stream:
    """The service's ``ServerStream``: events from a generator, then from a subscription.

    It releases its subscription even if never iterated (``aclose()`` on an async
    generator that never started skips its ``finally``). ``event_id`` is the id of the
    event last returned (the SSE ``id``; None for a direct message reply, which no task
    version holds). When ``events`` yields ``_FOLLOW``, the stream continues straight
    from the subscription (no generator between the bus and the response) until an
    event settles the task.
    """

    __slots__ = ("_events", "_following", "_settled", "_subscription", "encoded", "event_id")

    def __init__(self, events: AsyncGenerator[_Item], subscription: Subscription | None) -> None:
        self._events = events
        self._subscription = subscription
        self._following = False
        self._settled = False
        self.event_id: int | None = None
        self.encoded: bytes | None = None

    def __aiter__(self) -> _Stream:
        return self

    async def __anext__(self) -> StreamEvent:
        if not self._following:
            event_id, event, self.encoded = await anext(self._events)
            if event is not None:
                self.event_id = None if event_id == NO_ID else event_id
                return event
            self._following = True
        subscription = self._subscription
        if subscription is None:  # settled (or, for a source that never follows, over)
            raise StopAsyncIteration
        try:
            event = await anext(subscription)
        except BaseException:
            self._stop()
            raise
        return self._followed(subscription, event)

    def _followed(self, subscription: Subscription, event: StreamEvent) -> StreamEvent:
        """Note an event read from the subscription; let it go after the settling one."""
        event_id = subscription.event_id
        self.event_id = None if event_id is None or event_id == NO_ID else event_id
        self.encoded = subscription.encoded
        if _settles(event):
            self._settled = True
            self._stop()
        return event

    def _stop(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None

    def ends(self) -> bool:
        """Whether the event last returned is the stream's last (it settled the task)."""
        return self._settled

    def next_ready(self) -> StreamEvent | None:
        """The next event if it can be read without waiting (no coroutine: a stream reads
        a burst of an agent's events this way), else None: read on with ``__anext__``."""
        subscription = self._subscription
        if not self._following or subscription is None:
            return None
        event = subscription.take_ready()
        return None if event is None else self._followed(subscription, event)

    async def aclose(self) -> None:
        self._stop()
        await self._events.aclose()


async def _single(event_id: int, task: Task) -> AsyncGenerator[_Item]:
    yield event_id, task, None


async def _nothing() -> AsyncGenerator[_Item]:
    return
    yield  # pragma: no cover


def _output_modes(card: AgentCard) -> set[str]:
    modes = set(card.default_output_modes)
    for skill in card.skills:
        modes.update(skill.output_modes)
    return modes


def _media_match(want: str, have: str) -> bool:
    want = want.split(";", 1)[0].strip().lower()
    have = have.split(";", 1)[0].strip().lower()
    if want in ("*/*", "*") or have in ("*/*", "*") or want == have:
        return True
    w_type, _, w_sub = want.partition("/")
    h_type, _, h_sub = have.partition("/")
    return (w_sub == "*" and w_type == h_type) or (h_sub == "*" and w_type == h_type)


_HANDLERS: dict[Operation, Callable[[A2AService, Any, ServerCallContext], Any]] = {
    Operation.SEND_MESSAGE: A2AService.send_message,
    Operation.GET_TASK: A2AService.get_task,
    Operation.LIST_TASKS: A2AService.list_tasks,
    Operation.CANCEL_TASK: A2AService.cancel_task,
    Operation.CREATE_PUSH_CONFIG: A2AService.create_push_config,
    Operation.GET_PUSH_CONFIG: A2AService.get_push_config,
    Operation.LIST_PUSH_CONFIGS: A2AService.list_push_configs,
    Operation.DELETE_PUSH_CONFIG: A2AService.delete_push_config,
    Operation.GET_EXTENDED_CARD: A2AService.get_extended_card,
}
