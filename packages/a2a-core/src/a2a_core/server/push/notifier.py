"""Push notifications: config CRUD plus an off-path, ordered, retrying webhook sender.

The task manager calls ``on_event`` inline after every applied event, so it
only appends to a bounded queue and returns. A worker fans each event out to
the task's configs; every (task, config) pair has its own lane that sends one
delivery at a time, so a receiver sees a task's updates in order, and a slow
receiver delays only its own lane. Memory is bounded everywhere: the intake
queue and each lane drop their oldest entry when full (logged, counted), and
the worker waits while too many deliveries are outstanding.

What is delivered: every status update and every artifact update, in the body
shape of the version the config was created in (see ``payload``). An artifact
update always carries the whole artifact so far (a streamed chunk is sent as
the assembled artifact, ``append`` off), and a newer one replaces one of the
same artifact still waiting in the lane, so receivers get whole text. A config
receives the events that happen after it was created. After a task's terminal
update has been delivered (or given up on) to a config, the config is
forgotten: a finished task sends nothing more, and the spec keeps configs
only "until task completion or deletion".

With ``signing_secret`` every delivery is signed (HMAC-SHA256 over its id,
timestamp and body, the Standard Webhooks headers ``webhook-id``,
``webhook-timestamp``, ``webhook-signature``; see ``a2a_core.webhooks``),
each retry signed anew with a later timestamp, so receivers can refuse
forged, changed, stale and replayed deliveries. The ``webhook-id`` of an
event's delivery is derived from (task id, event id, config id): the same on
every retry and on every instance, so a receiver can drop a delivery it has
already processed.

Deliveries pending at a crash. On a store several instances share
(``redis://``, ``postgresql://``), the service keeps, per task, a
*delivered-up-to mark*: every event id up to it has been finished by every
lane of the task (delivered, given up on, dropped or superseded). It is
written off the event path, at most once per ``mark_interval`` per task (see
``PushConfigStore.write_marks``). When an instance dies, the survivor that
settles its task calls ``recover``: the events after the mark are read back
from the store's event channel and delivered again, in order, before the
final FAILED (``recovery``). Deliveries are therefore at least once: up to a
``mark_interval`` of events may reach a receiver twice, with the same
``webhook-id``.

Secrets never leave through the API: ``get_config``/``list_configs`` (and the
config ``set_config`` returns) show ``token`` and ``authentication.credentials``
as ``"***"``. Setting a config again with ``"***"`` in place of a secret keeps
the stored one, so a read-modify-write round trip does not clobber it.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

import httpx

from ... import telemetry as _telemetry
from ...contracts.push_configs import PushConfigEntry, PushConfigStore
from ...errors import InvalidParamsError
from ...net.url_policy import TargetRefusedError, UrlPolicy
from ...types import (
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
)
from ...webhooks import WebhookSigner
from .delivery import Counters, Delivery, delivery_id
from .lanes import Lanes
from .marks import DeliveryMarks
from .payload import check_secrets
from .poster import RetryPolicy, WebhookPoster
from .store import MemoryPushConfigStore

if TYPE_CHECKING:
    from ...contracts.channel import TaskChannel
    from ...contracts.task_store import StoredTask

__all__ = [
    "REDACTED",
    "PushNotificationService",
    "PushStats",
    "RetryPolicy",
    "delivery_id",
    "redact",
]

logger = logging.getLogger("a2a_core.server.push")

REDACTED = "***"
"""What a secret looks like when a config is read back."""

MAX_CONFIG_ID_LENGTH = 256


@dataclass(frozen=True, slots=True)
class PushStats:
    """Counters of the sender since it was created."""

    delivered: int = 0
    """Deliveries a webhook accepted with a 2xx."""
    failed: int = 0
    """Deliveries given up on (refused URL, non-retryable status, retries exhausted)."""
    dropped: int = 0
    """Events or deliveries discarded unsent (queue overflow, shutdown)."""
    retried: int = 0
    """Retry attempts made."""
    pending: int = 0
    """Deliveries waiting in lanes or in flight right now."""


@dataclass(frozen=True, slots=True)
class _Event:
    task: Task
    event: StreamEvent
    at_ns: int
    final: bool
    trace: Any = None
    """The trace context the event was made in (only while telemetry is on)."""
    event_id: int | None = None
    """The event's id (the task version it produced); None when the caller gave none."""
    ref: str | None = None
    """What the delivery id is derived from: the event id, or ``task@<version>`` for a
    Task snapshot sent in place of events past retention; None: a random id."""
    redelivered_at: int | None = None
    """For an event a dead instance may have sent already (``replay``): the Unix second it
    was queued again in. Its first attempt is signed after that second, so a receiver that
    refuses replays (same id, same timestamp) takes it as a retry."""


def _delivery(item: _Event, entry: PushConfigEntry) -> Delivery:
    """The delivery of ``item`` to the config of ``entry``."""
    return Delivery(
        entry.task_id,
        entry.config_id,
        item.task,
        whole_artifact(item),
        item.final,
        item.trace,
        item.event_id,
        item.ref,
        item.redelivered_at,
    )


def whole_artifact(item: _Event) -> StreamEvent:
    """An appended chunk as the whole artifact so far (``append`` off, ``lastChunk`` kept).

    A receiver gets complete text in every notification and never has to
    reassemble chunks, some of which it may have missed.
    """
    event = item.event
    if not isinstance(event, TaskArtifactUpdateEvent) or not event.append:
        return event
    artifact_id = event.artifact.artifact_id
    for artifact in item.task.artifacts:
        if artifact.artifact_id == artifact_id:
            return event.model_copy(update={"artifact": artifact, "append": False})
    return event


def redact(config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
    """The config as the API shows it: secrets replaced by ``REDACTED``."""
    update: dict[str, object] = {}
    if config.token:
        update["token"] = REDACTED
    auth = config.authentication
    if auth is not None and auth.credentials:
        update["authentication"] = auth.model_copy(update={"credentials": REDACTED})
    return config.model_copy(update=update) if update else config


def _restore_secrets(
    config: TaskPushNotificationConfig, previous: TaskPushNotificationConfig | None
) -> TaskPushNotificationConfig:
    """Put back secrets a client echoed as ``REDACTED`` after reading the config."""
    update: dict[str, object] = {}
    if config.token == REDACTED:
        if previous is None or not previous.token:
            raise InvalidParamsError(f"token {REDACTED!r} is the redaction marker, not a token")
        update["token"] = previous.token
    auth = config.authentication
    if auth is not None and auth.credentials == REDACTED:
        old = previous.authentication if previous is not None else None
        if old is None or not old.credentials:
            raise InvalidParamsError(
                f"credentials {REDACTED!r} is the redaction marker, not a credential"
            )
        update["authentication"] = auth.model_copy(update={"credentials": old.credentials})
    return config.model_copy(update=update) if update else config


def _wire_version(version: str) -> str:
    if version.startswith("0."):
        return "0.3"
    if version.startswith("1."):
        return "1.0"
    raise InvalidParamsError(f"Unknown protocol version {version!r} for a push config")


class PushNotificationService:
    """Stores webhook configs per task and delivers task updates to them (a PushNotifier)."""

    def __init__(
        self,
        *,
        store: PushConfigStore | None = None,
        allow_private_targets: bool = False,
        allowed_hosts: Iterable[str] = (),
        policy: UrlPolicy | None = None,
        timeout: float = 10.0,
        retry: RetryPolicy | None = None,
        max_queue: int = 1024,
        max_backlog: int = 64,
        max_pending: int = 4096,
        max_concurrency: int = 16,
        drain_timeout: float = 5.0,
        transport: httpx.AsyncBaseTransport | None = None,
        signing_secret: str | bytes | Sequence[str | bytes] | None = None,
        mark_interval: float = 1.0,
    ) -> None:
        """
        Args:
            store: where configs live (default: a bounded ``MemoryPushConfigStore``).
            allow_private_targets: accept loopback/private/link-local webhooks (tests,
                trusted networks). Unspecified and multicast addresses stay refused.
            allowed_hosts: host names or IPs trusted without address checks.
            policy: a ready ``UrlPolicy`` instead of the two flags above.
            timeout: seconds per attempt (connect, send, and wait for the status).
            retry: retries and backoff (default ``RetryPolicy()``).
            max_queue: events waiting for fan-out; past it the oldest is dropped.
            max_backlog: deliveries waiting per (task, config); past it the oldest is dropped.
            max_pending: deliveries outstanding in all lanes; past it fan-out waits.
            max_concurrency: HTTP requests in flight at once.
            drain_timeout: how long ``aclose`` lets queued deliveries finish.
            transport: an httpx transport (tests). Default: ``VettedTransport(policy)``,
                which connects only to addresses the policy allows.
            signing_secret: sign every delivery with it (``a2a_core.webhooks``; several
                while rotating, the new one first). None: unsigned.
            mark_interval: seconds between writes of a task's delivered-up-to mark (on
                stores that keep marks): what a survivor may deliver twice after a crash.
        """
        if policy is not None and (allow_private_targets or allowed_hosts):
            raise ValueError("pass either policy or allow_private_targets/allowed_hosts")
        for name, value in (
            ("timeout", timeout),
            ("max_queue", max_queue),
            ("max_backlog", max_backlog),
            ("max_pending", max_pending),
            ("max_concurrency", max_concurrency),
        ):
            if value <= 0:
                raise ValueError(f"{name} must be > 0")
        if drain_timeout < 0 or mark_interval < 0:
            raise ValueError("drain_timeout and mark_interval must be >= 0")
        self.policy = policy or UrlPolicy.build(
            allow_private_targets=allow_private_targets, allowed_hosts=allowed_hosts
        )
        self.store: PushConfigStore = store if store is not None else MemoryPushConfigStore()
        self._store_given = store is not None
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self._poster = WebhookPoster(
            self.policy,
            timeout=timeout,
            retry=self.retry,
            max_concurrency=max_concurrency,
            transport=transport,
            signer=WebhookSigner(signing_secret) if signing_secret is not None else None,
        )
        self.max_queue = max_queue
        self.max_backlog = max_backlog
        self.max_pending = max_pending
        self.drain_timeout = drain_timeout
        self._counters = Counters()
        self._intake: deque[_Event] = deque()
        self._worker: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._closing = False
        self._closed = False
        self._last_drop_log = 0.0
        self._marks = DeliveryMarks(lambda: self.store, mark_interval)
        self._lanes = Lanes(
            self._deliver,
            self._marks,
            self._counters,
            self._drop,
            max_backlog=max_backlog,
            max_pending=max_pending,
        )

    # -- observability ------------------------------------------------------------
    @property
    def stats(self) -> PushStats:
        """A snapshot of the counters."""
        c = self._counters
        return PushStats(
            c.delivered, c.failed, c.dropped, self._poster.retried, self._lanes.pending
        )

    @property
    def mark_interval(self) -> float:
        """Seconds between writes of a task's delivered-up-to mark."""
        return self._marks.interval

    @mark_interval.setter
    def mark_interval(self, seconds: float) -> None:
        self._marks.interval = seconds

    # -- config CRUD (the PushNotifier protocol) -------------------------------------
    def share_store(self, store: PushConfigStore) -> None:
        """Keep configs in the store the service's instances share (unless one was given).

        The service calls it with its task store's push config store, so a config
        created through any instance is found by the one that runs the task.
        """
        if not self._store_given:
            self.store = store

    async def set_config(
        self, config: TaskPushNotificationConfig, version: str
    ) -> TaskPushNotificationConfig:
        """Validate and store a config (replacing one with the same id); returns it redacted."""
        wire_version = _wire_version(version)
        task_id = config.task_id
        if not task_id:
            raise InvalidParamsError("taskId is required")
        config_id = config.id or str(uuid.uuid4())
        if len(config_id) > MAX_CONFIG_ID_LENGTH:
            raise InvalidParamsError(
                f"A push config id may have at most {MAX_CONFIG_ID_LENGTH} characters"
            )
        try:
            await self.policy.check_new(config.url)
        except TargetRefusedError as exc:
            raise InvalidParamsError(f"Push notification URL refused: {exc}") from None
        existing = await self.store.get(task_id, config_id)
        config = _restore_secrets(
            config.model_copy(update={"id": config_id}),
            existing.config if existing is not None else None,
        )
        check_secrets(config)
        created_ns = existing.created_ns if existing is not None else time.time_ns()
        await self.store.put(PushConfigEntry(config, wire_version, created_ns))
        return redact(config)

    async def get_config(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        """One webhook configuration of a task, secrets redacted; None when there is none."""
        entry = await self.store.get(task_id, config_id)
        return redact(entry.config) if entry is not None else None

    async def list_configs(self, task_id: str) -> list[TaskPushNotificationConfig]:
        """A task's webhook configurations, secrets redacted."""
        return [redact(entry.config) for entry in await self.store.list(task_id)]

    async def delete_config(self, task_id: str, config_id: str) -> bool:
        """Remove a webhook configuration; False when there was none."""
        return await self.store.delete(task_id, config_id)

    # -- intake (runs inline on the event path: never blocks) ---------------------
    def on_event(self, task: Task, event: StreamEvent, previous: TaskState | None) -> None:
        """Queue ``event`` for the task's webhooks; returns at once."""
        self.on_saved_event(task, event, previous, None)

    def on_saved_event(
        self, task: Task, event: StreamEvent, previous: TaskState | None, event_id: int | None
    ) -> None:
        """``on_event`` with the event's id (the task version it produced); returns at once.

        The id makes the delivery's ``webhook-id`` and the task's delivered-up-to mark.
        """
        if not isinstance(event, TaskStatusUpdateEvent | TaskArtifactUpdateEvent):
            return
        final = isinstance(event, TaskStatusUpdateEvent) and event.status.state.is_terminal
        hooks = _telemetry.active
        carried = hooks.current() if hooks is not None else None
        ref = None if event_id is None else str(event_id)
        self._take(_Event(task, event, time.time_ns(), final, carried, event_id, ref))

    def replay(
        self,
        task: Task,
        events: Sequence[tuple[int, StreamEvent, int]],
        snapshot_version: int | None = None,
    ) -> None:
        """Queue again events a dead instance may not have delivered: ``(id, event, at_ns)``.

        ``snapshot_version``: then the task itself follows them as one message (events
        past the channel's retention, or never published). See ``recovery``.
        """
        now = int(time.time())
        for event_id, event, at_ns in events:
            self._take(_Event(task, event, at_ns, False, None, event_id, str(event_id), now))
        if snapshot_version is not None:
            ref = f"task@{snapshot_version}"
            self._take(_Event(task, task, time.time_ns(), False, None, snapshot_version, ref, now))

    async def recover(self, channel: TaskChannel, stored: StoredTask) -> int:
        """Deliver what the task's dead owner had not (before it is settled); events queued.

        Never raises: a failure is logged and the task is settled as before.
        """
        from .recovery import redeliver_pending

        try:
            return await redeliver_pending(self.store, self.replay, channel, stored)
        except Exception:
            logger.exception("push: could not recover the deliveries of task %s", stored.task.id)
            return 0

    def _take(self, item: _Event) -> None:
        if self._closing:
            self._counters.dropped += 1
            return
        try:
            self._ensure_started()
        except RuntimeError:
            self._counters.dropped += 1
            logger.warning("push event for task %s dropped: no running event loop", item.task.id)
            return
        if len(self._intake) >= self.max_queue:
            lost = self._intake.popleft()
            self._drop(f"push queue full ({self.max_queue}); dropped an event of {lost.task.id}")
        self._intake.append(item)
        assert self._wake is not None
        self._wake.set()

    def _drop(self, message: str) -> None:
        self._counters.dropped += 1
        now = time.monotonic()
        if now - self._last_drop_log >= 1.0:  # overload must not flood the log
            self._last_drop_log = now
            logger.warning("%s (dropped so far: %d)", message, self._counters.dropped)

    # -- lifecycle ----------------------------------------------------------------
    async def start(self) -> None:
        """Start the sender now (otherwise it starts with the first event)."""
        self._ensure_started()

    def _ensure_started(self) -> None:
        loop = asyncio.get_running_loop()
        if self._worker is not None and not self._worker.done() and self._loop is loop:
            self._marks.ensure_writing(loop)  # the store may have been shared after start
            return
        if self._closing:
            raise RuntimeError("the push notification service is closed")
        if self._loop is not loop:
            self._loop = loop
            self._wake = asyncio.Event()
            self._lanes.bind(loop)
            self._poster.bind()
            self._marks.bind()
        self._worker = loop.create_task(self._run(), name="a2a-push-worker")
        self._marks.ensure_writing(loop)

    async def __aenter__(self) -> PushNotificationService:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop taking events, let queued deliveries finish for ``drain_timeout``, then stop."""
        if self._closed:
            return
        self._closing = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.drain_timeout
        if self._wake is not None:
            self._wake.set()
        if self._worker is not None and not self._worker.done():
            await asyncio.wait({self._worker}, timeout=max(0.0, deadline - loop.time()))
        while True:
            runners = self._lanes.runners()
            remaining = deadline - loop.time()
            if not runners or remaining <= 0:
                break
            await asyncio.wait(runners, timeout=remaining)
        leftovers = [
            t
            for t in (self._worker, self._marks.writer, *runners)
            if t is not None and not t.done()
        ]
        for task in leftovers:
            task.cancel()
        if leftovers:
            await asyncio.gather(*leftovers, return_exceptions=True)
        unsent = len(self._intake) + self._lanes.clear()
        if unsent:
            self._counters.dropped += unsent
            logger.warning("push service closed with %d undelivered notifications", unsent)
        self._intake.clear()
        self._marks.clear()
        self._closed = True
        await self._poster.aclose()
        await self.store.aclose()

    # -- fan-out ----------------------------------------------------------------------
    async def _run(self) -> None:
        assert self._wake is not None
        while True:
            while not self._intake:
                if self._closing:
                    return
                self._wake.clear()
                await self._wake.wait()
            item = self._intake.popleft()
            try:
                entries = await self.store.list(item.task.id)
            except Exception:
                logger.exception("push: could not read the configs of task %s", item.task.id)
                self._counters.dropped += 1
                continue
            entries = [e for e in entries if e.created_ns <= item.at_ns]  # not created after it
            tracked = self._marks.fan_out(item.task.id, item.event_id, bool(entries))
            for entry in entries:
                await self._lanes.wait_for_room()
                self._lanes.put(entry.version, _delivery(item, entry))
            if tracked:
                self._marks.finished(item.task.id, item.event_id, False)  # the fan-out

    async def _deliver(self, delivery: Delivery) -> None:
        entry = await self.store.get(delivery.task_id, delivery.config_id)
        if entry is None:
            return  # deleted meanwhile: nothing to do
        if await self._poster.send(entry, delivery):
            self._counters.delivered += 1
        else:
            self._counters.failed += 1
        if delivery.final:
            await self.store.delete(delivery.task_id, delivery.config_id)
