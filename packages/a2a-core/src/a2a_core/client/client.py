"""A2AClient: every A2A operation against one agent, over any transport.

    async with await A2AClient.connect("https://agent.example.com") as client:
        reply = await client.send("What is the weather in Paris?")
        if reply.needs_input:
            reply = await client.send("Tomorrow", task=reply)
        print(reply.text)

``connect`` discovers the card, picks the interface (1.0 before 0.3,
JSON-RPC or HTTP+JSON) and builds the transport; ``for_endpoint`` skips
discovery; ``in_process`` calls a local service without HTTP. Results are
the internal models (Task, Message, ...) and errors the typed A2AError
subclasses the agent raised.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Self, cast

import httpx
from pydantic import BaseModel

from .. import telemetry as _telemetry
from ..bindings import binding
from ..errors import InvalidAgentResponseError
from ..types import (
    AgentCard,
    AgentInterface,
    AuthenticationInfo,
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
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamEvent,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    new_id,
)
from ..wire._json import DEFAULT_LIMITS, DecodeLimits
from ..wire.operations import Operation
from ._cardlocation import DEFAULT_CARD_LIMITS, CardLimits
from .discovery import CardCache, CardResolver
from .interfaces import DEFAULT_VERSIONS, NoCompatibleInterfaceError, select_interface
from .oauth import ClientCredentials
from .results import SendResult, TaskTracker, settles
from .tls import ClientCert, TLSFiles, VerifySetting, client_ssl_context, tls_files
from .transports._http import HttpSettings, new_http_client
from .transports.base import (
    CallOptions,
    ClientTransport,
    EventIterator,
    StreamPosition,
    TransportConfig,
    TransportFactory,
)

if TYPE_CHECKING:
    from ..identity import Credential, Principal
    from ..signing import CardVerifier
    from .catalog import CatalogEntry
    from .transports.inprocess import LocalService

__all__ = ["A2AClient", "Content", "EventStream", "TaskRef"]

Content = str | Message | Part | Sequence[Part]
"""What can be sent: text, a message, a part or parts."""

TaskRef = SendResult | Task | Message | str
"""A task to act on: a result, a task, a message of the task, or its id."""


def _task_id(ref: TaskRef) -> str:
    if isinstance(ref, str):
        return ref
    if isinstance(ref, SendResult):
        found = ref.task_id
    elif isinstance(ref, Task):
        found = ref.id
    else:
        found = ref.task_id
    if not found:
        raise ValueError("This reference carries no task id (a message reply has no task)")
    return found


def _context_id(ref: TaskRef) -> str | None:
    if isinstance(ref, str):
        return None
    if isinstance(ref, SendResult):
        return ref.context_id
    return ref.context_id or None


def _state(ref: TaskRef) -> TaskState | None:
    if isinstance(ref, SendResult):
        return ref.state
    if isinstance(ref, Task):
        return ref.status.state
    return None


def _to_message(content: Content) -> Message:
    if isinstance(content, Message):
        return content
    if isinstance(content, str):
        # One validation pass for the message and its part (not one per model).
        fields = {"message_id": new_id(), "role": Role.USER, "parts": [{"text": content}]}
        return Message.model_validate(fields)
    if isinstance(content, Part):
        return Message(message_id=new_id(), role=Role.USER, parts=[content])
    return Message(message_id=new_id(), role=Role.USER, parts=list(content))


class EventStream:
    """The events of a streaming send or subscribe, as an async iterator.

    It keeps the task up to date as events arrive (``task``, ``text``), ends
    after the event that settles the task (terminal, input-required, or a
    message reply), and releases the connection when it ends, on ``aclose``
    or when used as ``async with``. ``result()`` drains it. ``last_event_id``
    is where it got to: after a dropped stream, ``A2AClient.resubscribe``
    continues from there (through any instance of the agent).
    """

    def __init__(
        self,
        opener: Callable[[], Awaitable[EventIterator]],
        position: StreamPosition | None = None,
    ) -> None:
        self._opener = opener
        self._events: EventIterator | None = None
        self._done = False
        self._tracker = TaskTracker()
        self._position = position or StreamPosition()

    async def __aenter__(self) -> Self:
        await self._open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __aiter__(self) -> Self:
        return self

    async def _open(self) -> EventIterator:
        if self._events is None:
            self._events = await self._opener()
        return self._events

    async def __anext__(self) -> StreamEvent:
        if self._done:
            raise StopAsyncIteration
        try:
            events = await self._open()
            event = await events.__anext__()
        except BaseException:
            await self.aclose()
            raise
        self._tracker.apply(event)
        if settles(event):
            await self.aclose()
        return event

    async def aclose(self) -> None:
        """Stop reading and release the connection (idempotent)."""
        self._done = True
        events, self._events = self._events, None
        if events is not None:
            await events.aclose()

    @property
    def task(self) -> Task | None:
        """The task as the events so far describe it."""
        return self._tracker.task

    @property
    def last_event_id(self) -> str | None:
        """The server's id of the last event read (None: none yet, or the server sends none)."""
        return self._position.last_event_id

    @property
    def done(self) -> bool:
        """Whether the stream ended (settled, closed, or broken)."""
        return self._done

    def continue_from(self, earlier: EventStream) -> None:
        """Start from what ``earlier`` knew (its task), so ``task`` and ``text`` carry on."""
        if earlier.task is not None and self._tracker.task is None:
            self._tracker.apply(earlier.task)

    @property
    def message(self) -> Message | None:
        """The agent's direct reply, if it answered with a message."""
        return self._tracker.message

    @property
    def text(self) -> str:
        """The text received so far: the answer's artifacts, or the reply message."""
        current = self._tracker.result()
        return current.text if current is not None else ""

    async def result(self) -> SendResult:
        """Read to the end; the message reply or the final task."""
        async for _ in self:
            pass
        current = self._tracker.result()
        if current is None:
            raise InvalidAgentResponseError("The agent's stream ended without any event")
        return current


class A2AClient:
    """A client of one A2A agent."""

    def __init__(
        self,
        transport: ClientTransport,
        *,
        card: AgentCard | None = None,
        interface: AgentInterface | None = None,
        extensions: Sequence[str] = (),
        closers: Sequence[Callable[[], Awaitable[None]]] = (),
    ) -> None:
        self.transport = transport
        self.card = card
        self.interface = interface
        self.tenant = interface.tenant if interface is not None and interface.tenant else None
        self.extensions = tuple(extensions)
        self._closers = [transport.aclose, *closers]
        self._default_options = CallOptions(extensions=self.extensions) if extensions else None

    # -- construction ---------------------------------------------------------------
    @classmethod
    async def connect(
        cls,
        url: str | None = None,
        *,
        card: AgentCard | None = None,
        card_url: str | None = None,
        headers: Mapping[str, str] | None = None,
        auth: httpx.Auth | None = None,
        timeout: float | None = 60.0,  # noqa: ASYNC109 - the HTTP timeout of later calls
        stream_timeout: float | None = None,
        preferred_versions: Sequence[str] = DEFAULT_VERSIONS,
        preferred_bindings: Sequence[str] | None = None,
        extensions: Sequence[str] = (),
        http_client: httpx.AsyncClient | None = None,
        card_cache: CardCache | None = None,
        card_limits: CardLimits = DEFAULT_CARD_LIMITS,
        response_limits: DecodeLimits = DEFAULT_LIMITS,
        verify_card: CardVerifier | None = None,
        verify: VerifySetting = True,
        cert: ClientCert | None = None,
    ) -> A2AClient:
        """Discover the agent at ``url`` (or use ``card``) and connect to its best interface.

        ``verify`` (True: the system CAs; a CA bundle file; an ``ssl.SSLContext``) says
        which servers to trust, ``cert`` (a PEM file, or (certificate, key) files) is the
        client certificate for agents that require mutual TLS (``a2a_core.client.tls``).

        ``verify_card`` (``a2a_core.signing.CardVerifier``): require a card signature
        that verifies with a trusted key; ``CardSignatureError`` otherwise.

        ``headers`` / ``auth`` apply to every request, the card fetch included.
        A given ``http_client`` is used as is and left open on ``aclose``.
        """
        owns_http = http_client is None
        http = _http_client(http_client, headers, auth, verify, cert)
        try:
            base_url: str | None = None
            if card is None:
                resolver = CardResolver(
                    http,
                    cache=card_cache,
                    limits=card_limits,
                    headers=dict(headers or {}) if not owns_http else None,
                )
                card = await resolver.resolve(url, card_url=card_url)
                base_url = resolver.last_url
            if verify_card is not None:
                await verify_card.averify(card)
            if isinstance(auth, ClientCredentials):
                auth.use_card(card)  # the token endpoint its security scheme names
            interface = select_interface(
                card,
                preferred_versions=preferred_versions,
                preferred_bindings=preferred_bindings,
                base_url=base_url,
            )
            settings = HttpSettings(
                timeout=timeout,
                stream_timeout=stream_timeout,
                limits=response_limits,
                headers=dict(headers or {}) if not owns_http else {},
            )
            transport = _transport(interface, http, settings, headers, tls_files(verify, cert))
        except BaseException:
            if owns_http:
                await http.aclose()
            raise
        closers = [http.aclose] if owns_http else []
        return cls(
            transport, card=card, interface=interface, extensions=extensions, closers=closers
        )

    @staticmethod
    async def discover(
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: httpx.Auth | None = None,
        verify_catalog: CardVerifier | None = None,
        verify: VerifySetting = True,
        cert: ClientCert | None = None,
    ) -> list[CatalogEntry]:
        """The agents at a host: the A2A entries of its AI Catalog
        (``/.well-known/ai-catalog.json``, or ``url`` itself when it names a catalog).

        Connect to one with ``A2AClient.connect(card_url=entry.url)``.
        ``verify_catalog``: require a catalog signature that verifies with a trusted
        key (``CardSignatureError`` otherwise). ``CatalogNotFoundError`` when the host
        publishes none.
        """
        from .catalog import discover

        http = _http_client(None, headers, auth, verify, cert)
        async with http:
            catalog = await discover(url, http=http, verify_catalog=verify_catalog)
        return catalog.agents

    @classmethod
    def for_endpoint(
        cls,
        url: str,
        *,
        binding: str = "JSONRPC",
        version: str = "1.0",
        tenant: str | None = None,
        headers: Mapping[str, str] | None = None,
        auth: httpx.Auth | None = None,
        timeout: float | None = 60.0,
        stream_timeout: float | None = None,
        extensions: Sequence[str] = (),
        http_client: httpx.AsyncClient | None = None,
        response_limits: DecodeLimits = DEFAULT_LIMITS,
        card: AgentCard | None = None,
        verify: VerifySetting = True,
        cert: ClientCert | None = None,
    ) -> A2AClient:
        """A client of a known endpoint, without fetching the card (``verify`` / ``cert``:
        as for ``connect``)."""
        interface = AgentInterface(
            url=url, protocol_binding=binding, protocol_version=version, tenant=tenant
        )
        interface = select_interface(
            AgentCard(name=url, description="", version="", supported_interfaces=[interface]),
            preferred_versions=(version,),
            preferred_bindings=(binding,),
        )
        owns_http = http_client is None
        http = _http_client(http_client, headers, auth, verify, cert)
        settings = HttpSettings(
            timeout=timeout,
            stream_timeout=stream_timeout,
            limits=response_limits,
            headers=dict(headers or {}) if not owns_http else {},
        )
        transport = _transport(interface, http, settings, headers, tls_files(verify, cert))
        closers = [http.aclose] if owns_http else []
        return cls(
            transport, card=card, interface=interface, extensions=extensions, closers=closers
        )

    @classmethod
    def in_process(
        cls,
        service: LocalService,
        *,
        version: str = "1.0",
        principal: Principal | None = None,
        headers: Mapping[str, str] | None = None,
        extensions: Sequence[str] = (),
        tenant: str | None = None,
    ) -> A2AClient:
        """A client calling ``service`` (an ``A2AService``) directly, without HTTP."""
        from .transports.inprocess import InProcessTransport

        transport = InProcessTransport(
            service, version=version, principal=principal, headers=headers
        )
        card = getattr(service, "card", None)
        interface = AgentInterface(
            url="inprocess:", protocol_binding="INPROCESS", protocol_version=version, tenant=tenant
        )
        return cls(
            transport,
            card=card if isinstance(card, AgentCard) else None,
            interface=interface,
            extensions=extensions,
        )

    def with_credential(self, credential: Credential) -> A2AClient:
        """This client acting for a caller: every call carries ``credential`` (token passthrough).

        The view shares this client's connection and card; the client's own
        auth (``auth=``, a static ``Authorization`` header) is not applied to
        its calls, and a ``401`` is not retried with the client's own token.
        Closing the view closes nothing. Forward a token only to an agent it is
        meant for (its audience): see docs/security.md.
        """
        view = A2AClient(self.transport, card=self.card, interface=self.interface)
        view.extensions = self.extensions
        view._closers = []
        base = self._default_options or CallOptions(extensions=self.extensions)
        view._default_options = dataclasses.replace(base, credential=credential)
        return view

    @property
    def credential(self) -> Credential | None:
        """The caller's credential this client forwards (None: it uses its own auth)."""
        options = self._default_options
        return options.credential if options is not None else None

    # -- facts ----------------------------------------------------------------------
    @property
    def version(self) -> str:
        """The protocol version in use ("1.0" or "0.3")."""
        return self.transport.version

    @property
    def binding(self) -> str:
        """The binding in use ("JSONRPC", "HTTP+JSON", "INPROCESS")."""
        return self.transport.binding

    @property
    def can_cancel_in_flight(self) -> bool:
        """Whether cancelling an awaited call also stops it at the agent."""
        return self.transport.can_cancel_in_flight

    @property
    def concurrent_calls(self) -> bool:
        """Whether several calls may be awaited at once on this client's transport."""
        return self.transport.concurrent_calls

    @property
    def supports_streaming(self) -> bool:
        """Whether the agent's card declares streaming (True when no card is known)."""
        if self.card is None:
            return True
        return bool(self.card.capabilities.streaming)

    # -- low level ------------------------------------------------------------------
    async def call(
        self, op: Operation, request: BaseModel, options: CallOptions | None = None
    ) -> Any:
        """Run any unary operation with a ready request model."""
        return await self._call(op, request, options or self._default_options)

    def open_stream(
        self, op: Operation, request: BaseModel, options: CallOptions | None = None
    ) -> EventStream:
        """Run any streaming operation with a ready request model."""
        options = options or self._default_options
        position = StreamPosition()
        if options is None:
            options = CallOptions(position=position)
        else:
            options = dataclasses.replace(options, position=position)
        opened = options
        return EventStream(lambda: self._open_stream(op, request, opened), position)

    async def _call(self, op: Operation, request: BaseModel, options: CallOptions | None) -> Any:
        hooks = _telemetry.active
        if hooks is None:
            return await self.transport.call(op, request, options)
        return await hooks.client_call(
            self.transport, op, request, options or CallOptions(), self.transport.call
        )

    async def _open_stream(
        self, op: Operation, request: BaseModel, options: CallOptions | None
    ) -> EventIterator:
        hooks = _telemetry.active
        if hooks is None:
            return await self.transport.open_stream(op, request, options)
        return await hooks.client_stream(
            self.transport, op, request, options or CallOptions(), self.transport.open_stream
        )

    # -- sending --------------------------------------------------------------------
    def build_request(
        self,
        content: Content,
        *,
        task: TaskRef | None = None,
        reply_to: TaskRef | None = None,
        context_id: str | None = None,
        blocking: bool = True,
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] | None = None,
        push_config: TaskPushNotificationConfig | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> SendMessageRequest:
        """The SendMessageRequest ``send`` and ``stream`` use (exposed for custom calls).

        ``task`` continues that task (its taskId and contextId). ``reply_to``
        does the same while the task can continue, and for a finished task
        starts a new task in its context that references it.
        """
        message = _to_message(content)
        update: dict[str, Any] = {}
        ref = task if task is not None else reply_to
        if ref is not None:
            state = _state(ref)
            follow_up = task is None and state is not None and state.is_terminal
            ref_context = _context_id(ref)
            if follow_up:
                if self._can_reference:
                    update["reference_task_ids"] = [
                        *message.reference_task_ids,
                        _task_id(ref),
                    ]
            elif not message.task_id:
                update["task_id"] = _task_id(ref)
            if ref_context and not message.context_id:
                update["context_id"] = ref_context
        if context_id is not None:
            update["context_id"] = context_id
        if update:
            message = message.model_copy(update=update)
        configuration: SendMessageConfiguration | None = None
        if (
            not blocking
            or history_length is not None
            or accepted_output_modes
            or push_config is not None
        ):
            configuration = SendMessageConfiguration(
                accepted_output_modes=list(accepted_output_modes or []),
                task_push_notification_config=push_config,
                history_length=history_length,
                return_immediately=not blocking,
            )
        return SendMessageRequest(
            tenant=self.tenant,
            message=message,
            configuration=configuration,
            metadata=dict(metadata) if metadata else None,
        )

    @property
    def _can_reference(self) -> bool:
        # 0.3 HTTP+JSON messages have no referenceTaskIds.
        return not (self.version == "0.3" and self.binding == "HTTP+JSON")

    async def send(
        self,
        content: Content,
        *,
        task: TaskRef | None = None,
        reply_to: TaskRef | None = None,
        context_id: str | None = None,
        blocking: bool = True,
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] | None = None,
        push_config: TaskPushNotificationConfig | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> SendResult:
        """Send a message; the agent's task or message reply.

        ``blocking`` (the default) waits until the task finishes or needs
        input; ``blocking=False`` returns as soon as the task exists.
        """
        request = self.build_request(
            content,
            task=task,
            reply_to=reply_to,
            context_id=context_id,
            blocking=blocking,
            history_length=history_length,
            accepted_output_modes=accepted_output_modes,
            push_config=push_config,
            metadata=metadata,
        )
        result = await self._call(Operation.SEND_MESSAGE, request, self._default_options)
        return SendResult(cast(Task | Message, result))

    async def send_text(self, text: str, **kwargs: Any) -> str:
        """Send ``text`` and return the answer's text (for quick, single-turn use)."""
        return (await self.send(text, **kwargs)).text

    def stream(
        self,
        content: Content,
        *,
        task: TaskRef | None = None,
        reply_to: TaskRef | None = None,
        context_id: str | None = None,
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] | None = None,
        push_config: TaskPushNotificationConfig | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> EventStream:
        """Send a message and iterate over the events of its handling.

        async for event in client.stream("Summarize this"):
            ...
        """
        request = self.build_request(
            content,
            task=task,
            reply_to=reply_to,
            context_id=context_id,
            history_length=history_length,
            accepted_output_modes=accepted_output_modes,
            push_config=push_config,
            metadata=metadata,
        )
        return self.open_stream(Operation.SEND_STREAMING_MESSAGE, request, self._default_options)

    # -- files ----------------------------------------------------------------------
    async def download(
        self,
        part: Part,
        *,
        max_bytes: int | None = None,
        allowed_origins: Sequence[str] = (),
        url_policy: Any = None,
    ) -> Part:
        """A file part given by URL, with its bytes (a raw part is returned as is).

        Only the agent's own origin is fetched (with this client's connection and
        headers) unless ``allowed_origins`` lists others, which then pass the SSRF
        URL policy (``url_policy``, default public addresses only); redirects are not
        followed and the body stops at ``max_bytes`` (default 32 MiB). A refusal
        raises ``a2a_core.files.FileRefusedError`` saying why.
        """
        from .files import DEFAULT_MAX_DOWNLOAD_BYTES, fetch_part, origin_of

        transport: Any = self.transport
        http = getattr(transport, "_http", None)
        settings = getattr(transport, "settings", None)
        headers: Mapping[str, str] = getattr(settings, "headers", None) or {}
        own = origin_of(self.interface.url) if self.interface is not None else None
        return await fetch_part(
            part,
            own_origin=own,
            http=http if isinstance(http, httpx.AsyncClient) else None,
            headers=headers,
            max_bytes=max_bytes or DEFAULT_MAX_DOWNLOAD_BYTES,
            allowed_origins=allowed_origins,
            url_policy=url_policy,
        )

    # -- tasks ----------------------------------------------------------------------
    async def get_task(self, task: TaskRef, *, history_length: int | None = None) -> Task:
        """The task as the agent knows it now."""
        task_id = _task_id(task)
        request = GetTaskRequest(tenant=self.tenant, id=task_id, history_length=history_length)
        result = await self._call(Operation.GET_TASK, request, self._default_options)
        return _same_task(cast(Task, result), task_id)

    async def list_tasks(
        self,
        *,
        context_id: str | None = None,
        status: TaskState | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
        history_length: int | None = None,
        status_timestamp_after: datetime | None = None,
        include_artifacts: bool | None = None,
    ) -> ListTasksResponse:
        """One page of tasks, newest status first (1.0 only)."""
        request = ListTasksRequest(
            tenant=self.tenant,
            context_id=context_id,
            status=status,
            page_size=page_size,
            page_token=page_token,
            history_length=history_length,
            status_timestamp_after=status_timestamp_after,
            include_artifacts=include_artifacts,
        )
        result = await self._call(Operation.LIST_TASKS, request, self._default_options)
        return cast(ListTasksResponse, result)

    async def iter_tasks(
        self,
        *,
        context_id: str | None = None,
        status: TaskState | None = None,
        page_size: int | None = None,
        history_length: int | None = None,
        status_timestamp_after: datetime | None = None,
        include_artifacts: bool | None = None,
    ) -> AsyncIterator[Task]:
        """Every matching task, page after page."""
        token: str | None = None
        seen: set[str] = set()
        while True:
            page = await self.list_tasks(
                context_id=context_id,
                status=status,
                page_size=page_size,
                page_token=token,
                history_length=history_length,
                status_timestamp_after=status_timestamp_after,
                include_artifacts=include_artifacts,
            )
            for item in page.tasks:
                yield item
            token = page.next_page_token
            if not token:
                return
            if token in seen:
                raise InvalidAgentResponseError("The agent repeated a page token while listing")
            seen.add(token)

    async def cancel(self, task: TaskRef) -> Task:
        """Ask the agent to cancel the task; the task as it is afterwards."""
        task_id = _task_id(task)
        request = CancelTaskRequest(tenant=self.tenant, id=task_id)
        result = await self._call(Operation.CANCEL_TASK, request, self._default_options)
        return _same_task(cast(Task, result), task_id)

    def subscribe(self, task: TaskRef, *, last_event_id: str | None = None) -> EventStream:
        """Follow a task's events: the current task first, then its updates.

        With ``last_event_id`` (an event id the agent sent), the agent replays
        the events after it instead of the current task, then continues; when it
        no longer has them it sends the current task first.
        """
        request = SubscribeToTaskRequest(tenant=self.tenant, id=_task_id(task))
        options = self._default_options
        if last_event_id is not None:
            headers = {**((options.headers or {}) if options else {})}
            headers["Last-Event-ID"] = last_event_id
            options = dataclasses.replace(options or CallOptions(), headers=headers)
        return self.open_stream(Operation.SUBSCRIBE_TO_TASK, request, options)

    def resubscribe(self, stream: EventStream) -> EventStream:
        """Continue a dropped stream (a send's or a subscribe's) where it stopped.

        Subscribes to its task with its ``last_event_id`` (when the agent sent
        ids), so only the events it missed are replayed; the new stream starts
        from its task, so ``task`` and ``text`` carry on. Call it on a client of
        any instance of the agent.
        """
        task = stream.task
        if task is None:
            raise ValueError("The stream has no task to resubscribe to (no event was read)")
        resumed = self.subscribe(task.id, last_event_id=stream.last_event_id)
        resumed.continue_from(stream)
        return resumed

    # -- push notification configs ------------------------------------------------------
    async def create_push_config(
        self,
        task: TaskRef,
        url_or_config: str | TaskPushNotificationConfig,
        *,
        token: str | None = None,
        authentication: AuthenticationInfo | None = None,
        config_id: str | None = None,
    ) -> TaskPushNotificationConfig:
        """Have the agent POST the task's updates to a webhook."""
        task_id = _task_id(task)
        if isinstance(url_or_config, TaskPushNotificationConfig):
            config = url_or_config.model_copy(update={"task_id": task_id, "tenant": self.tenant})
        else:
            config = TaskPushNotificationConfig(
                tenant=self.tenant,
                id=config_id,
                task_id=task_id,
                url=url_or_config,
                token=token,
                authentication=authentication,
            )
        result = await self._call(Operation.CREATE_PUSH_CONFIG, config, self._default_options)
        return cast(TaskPushNotificationConfig, result)

    async def get_push_config(self, task: TaskRef, config_id: str) -> TaskPushNotificationConfig:
        """One webhook configuration of a task (its secrets redacted by the agent)."""
        request = GetTaskPushNotificationConfigRequest(
            tenant=self.tenant, task_id=_task_id(task), id=config_id
        )
        result = await self._call(Operation.GET_PUSH_CONFIG, request, self._default_options)
        return cast(TaskPushNotificationConfig, result)

    async def list_push_configs(
        self,
        task: TaskRef,
        *,
        page_size: int | None = None,
        page_token: str | None = None,
    ) -> ListTaskPushNotificationConfigsResponse:
        """A task's webhook configurations, a page at a time."""
        request = ListTaskPushNotificationConfigsRequest(
            tenant=self.tenant, task_id=_task_id(task), page_size=page_size, page_token=page_token
        )
        result = await self._call(Operation.LIST_PUSH_CONFIGS, request, self._default_options)
        return cast(ListTaskPushNotificationConfigsResponse, result)

    async def delete_push_config(self, task: TaskRef, config_id: str) -> None:
        """Remove a webhook configuration, so the agent stops calling it."""
        request = DeleteTaskPushNotificationConfigRequest(
            tenant=self.tenant, task_id=_task_id(task), id=config_id
        )
        await self._call(Operation.DELETE_PUSH_CONFIG, request, self._default_options)

    # -- cards ----------------------------------------------------------------------
    async def get_extended_card(self) -> AgentCard:
        """The authenticated extended card; it replaces ``card`` for this client."""
        request = GetExtendedAgentCardRequest(tenant=self.tenant)
        result = await self._call(Operation.GET_EXTENDED_CARD, request, self._default_options)
        card = cast(AgentCard, result)
        self.card = card
        return card

    # -- lifecycle ------------------------------------------------------------------
    async def aclose(self) -> None:
        """Close the transport and any HTTP client this client created."""
        closers, self._closers = self._closers, []
        for close in closers:
            await close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _same_task(task: Task, task_id: str) -> Task:
    if task.id != task_id:
        raise InvalidAgentResponseError(
            f"Asked about task {task_id!r}, the agent answered about {task.id[:64]!r}"
        )
    return task


def _http_client(
    given: httpx.AsyncClient | None,
    headers: Mapping[str, str] | None,
    auth: httpx.Auth | None,
    verify: VerifySetting = True,
    cert: ClientCert | None = None,
) -> httpx.AsyncClient:
    if given is None:
        tls = client_ssl_context(verify, cert)
        return new_http_client(headers=dict(headers or {}), auth=auth, verify=tls)
    if auth is not None:
        raise ValueError("Configure auth on the http_client you pass (auth= is for our own client)")
    if verify is not True or cert is not None:
        raise ValueError(
            "Configure TLS on the http_client you pass (verify= and cert= are for our own client)"
        )
    return given


def _transport(
    interface: AgentInterface,
    http: httpx.AsyncClient,
    settings: HttpSettings,
    headers: Mapping[str, str] | None,
    tls: TLSFiles | None = None,
) -> ClientTransport:
    """The registered binding's transport for ``interface`` (see ``a2a_core.bindings``)."""
    entry = binding(interface.protocol_binding)
    if entry is None:
        raise NoCompatibleInterfaceError(
            f"No binding {interface.protocol_binding[:40]!r} is registered in a2a_core.bindings"
        )
    factory = cast(TransportFactory, entry.transport_factory())
    return factory(interface, TransportConfig(http, settings, dict(headers or {}), tls))
