"""The transport-neutral A2A service: one method per operation.

The ASGI app, the in-process client transport and tests all call this
object. Requests arrive as internal (1.0) models with a ``ServerCallContext``
saying who calls and in which protocol version; results are internal models.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, cast

from pydantic import BaseModel

from ..card import with_default_skill
from ..contracts.task_store import TaskQuery, TaskStore
from ..errors import (
    A2AError,
    AuthenticationRequiredError,
    ConfigurationError,
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
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from ..wire.operations import Operation
from . import following
from .authorization import OperationScopes
from .context import ServerCallContext
from .events import EventBus
from .executor import as_executor
from .files import FileStore
from .idempotency import SendLedger
from .manager import ManagerConfig, TaskManager, TaskObserver
from .push_api import PushNotifier
from .sending import Sender, output_modes
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
        self._sender = Sender(
            self.manager,
            self.sends,
            push,
            output_modes(self.card) if strict_output_modes else None,
        )

    @property
    def strict_output_modes(self) -> bool:
        """Refuse sends whose ``acceptedOutputModes`` this agent cannot meet (-32005).

        Off by default: the spec asks agents to tailor output to the accepted modes
        (SHOULD), and clients such as CrewAI's accept only ``application/json`` by
        default, so a text agent answers anyway, in its own best mode; the agent reads
        the accepted modes from ``RequestContext.accepted_output_modes``.
        """
        return self._sender.output_modes is not None

    @strict_output_modes.setter
    def strict_output_modes(self, strict: bool) -> None:
        self._sender.output_modes = output_modes(self.card) if strict else None

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
        return await self._sender.send(request, call)

    async def stream_message(
        self, request: SendMessageRequest, call: ServerCallContext
    ) -> ServerStream:
        """Streaming send: one Message, or the Task then its events until it settles."""
        if not self.streaming:
            raise UnsupportedOperationError("Streaming is not supported by this agent")
        return await self._sender.stream(request, call)

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
        return await following.subscribe(self.manager, request, call)

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
