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
import hashlib
import logging
import random
import time
import uuid
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import TYPE_CHECKING, Any

import httpx

from ... import telemetry as _telemetry
from ...contracts.push_configs import PushConfigEntry, PushConfigStore
from ...errors import InvalidParamsError
from ...net.url_policy import ResolutionError, TargetRefusedError, UrlPolicy
from ...net.vetted_transport import VettedTransport
from ...types import (
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
)
from ...webhooks import WebhookSigner
from .payload import check_secrets, render
from .store import MemoryPushConfigStore

if TYPE_CHECKING:
    from ...contracts.channel import TaskChannel
    from ...contracts.task_store import StoredTask

__all__ = ["REDACTED", "PushNotificationService", "PushStats", "RetryPolicy", "redact"]

logger = logging.getLogger("a2a_core.server.push")

REDACTED = "***"
"""What a secret looks like when a config is read back."""

MAX_CONFIG_ID_LENGTH = 256


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Bounded retries with exponential backoff and jitter.

    Retried: connection errors, timeouts, HTTP 429 and 5xx. Not retried: other
    statuses (4xx, and 3xx since redirects are never followed) and URLs the
    policy refuses.
    """

    max_retries: int = 3
    """Retries after the first attempt (delays 0.5 s, 1 s, 2 s by default)."""
    backoff: float = 0.5
    """Delay before the first retry; doubles for each later one."""
    max_backoff: float = 30.0
    """Cap on any delay, including one asked for by ``Retry-After``."""
    jitter: float = 0.2
    """Each delay is scaled by a random factor in [1 - jitter, 1 + jitter]."""

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.backoff < 0 or self.max_backoff < 0:
            raise ValueError("max_retries, backoff and max_backoff must be >= 0")
        if not 0 <= self.jitter < 1:
            raise ValueError("jitter must be in [0, 1)")

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        base = self.backoff * (2 ** (retry - 1))
        if retry_after is not None:
            base = max(base, retry_after)
        base = min(base, self.max_backoff)
        return base * random.uniform(1 - self.jitter, 1 + self.jitter)


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


@dataclass(slots=True)
class _Counters:
    delivered: int = 0
    failed: int = 0
    dropped: int = 0
    retried: int = 0


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


@dataclass(frozen=True, slots=True)
class _Delivery:
    task_id: str
    config_id: str
    task: Task
    event: StreamEvent
    final: bool
    trace: Any = None
    event_id: int | None = None
    ref: str | None = None
    redelivered_at: int | None = None


@dataclass(slots=True)
class _Progress:
    """What the lanes of one task have finished: the base of its delivered-up-to mark."""

    open: dict[int, int] = field(default_factory=dict[int, int])
    """Event id -> its fan-out and deliveries not finished yet."""
    done: int = -1
    """The highest event id finished."""
    written: int = -1
    """The mark last written to the store."""
    final: bool = False
    """The task's final update was finished on a lane (nothing more to protect)."""

    def mark(self) -> int:
        """Every event id up to this one is finished (ids are increasing per task)."""
        return min(self.open) - 1 if self.open else self.done


def delivery_id(task_id: str, ref: str, config_id: str) -> str:
    """The ``webhook-id`` of one event's delivery to one config: the same on every instance.

    A survivor that delivers again what a dead instance may have sent already
    uses the id that instance used, so a receiver can drop the second copy.
    """
    digest = hashlib.blake2b(
        f"{task_id}\n{ref}\n{config_id}".encode("utf-8", "surrogatepass"), digest_size=16
    )
    return f"msg_{digest.hexdigest()}"


@dataclass(slots=True)
class _Lane:
    queue: deque[_Delivery] = field(default_factory=deque[_Delivery])
    runner: asyncio.Task[None] | None = None


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


def _supersedes(version: str, newer: _Delivery, waiting: _Delivery) -> bool:
    """Whether ``newer`` makes ``waiting`` (queued, not yet sent) redundant."""
    if version == "0.3":
        return True  # 0.3 bodies are full Task snapshots
    new, old = newer.event, waiting.event
    return (
        isinstance(new, TaskArtifactUpdateEvent)
        and isinstance(old, TaskArtifactUpdateEvent)
        and not new.append
        and not old.append
        and new.artifact.artifact_id == old.artifact.artifact_id
    )


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


def _origin(policy: UrlPolicy, url: str) -> str:
    try:
        return policy.parse(url).safe_origin
    except (TargetRefusedError, ValueError):
        return "-"


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None  # HTTP-date form: fall back to our own backoff
    return seconds if seconds >= 0 else None


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
        self.max_queue = max_queue
        self.max_backlog = max_backlog
        self.max_pending = max_pending
        self.drain_timeout = drain_timeout
        self._transport = transport
        self._signer = WebhookSigner(signing_secret) if signing_secret is not None else None
        self._concurrency_limit = max_concurrency
        self._counters = _Counters()
        self._intake: deque[_Event] = deque()
        self._lanes: dict[tuple[str, str], _Lane] = {}
        self._pending = 0
        self._client: httpx.AsyncClient | None = None
        self._worker: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._room: asyncio.Event | None = None
        self._concurrency: asyncio.Semaphore | None = None
        self._closing = False
        self._closed = False
        self._last_drop_log = 0.0
        self.mark_interval = mark_interval
        self._progress: dict[str, _Progress] = {}
        self._dirty: set[str] = set()
        self._marker: asyncio.Task[None] | None = None
        self._mark_wake: asyncio.Event | None = None

    # -- observability ------------------------------------------------------------
    @property
    def stats(self) -> PushStats:
        """A snapshot of the counters."""
        c = self._counters
        return PushStats(c.delivered, c.failed, c.dropped, c.retried, self._pending)

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
            if self._marker is None and self.store.keeps_marks:  # a store shared after start
                self._marker = loop.create_task(self._write_marks(), name="a2a-push-marks")
            return
        if self._closing:
            raise RuntimeError("the push notification service is closed")
        if self._loop is not loop:
            self._loop = loop
            self._wake = asyncio.Event()
            self._room = asyncio.Event()
            self._concurrency = asyncio.Semaphore(self._concurrency_limit)
            self._client = None
            self._mark_wake = asyncio.Event()
            self._marker = None
        self._worker = loop.create_task(self._run(), name="a2a-push-worker")
        if self.store.keeps_marks and (self._marker is None or self._marker.done()):
            self._marker = loop.create_task(self._write_marks(), name="a2a-push-marks")

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
            runners = {lane.runner for lane in self._lanes.values() if lane.runner is not None}
            remaining = deadline - loop.time()
            if not runners or remaining <= 0:
                break
            await asyncio.wait(runners, timeout=remaining)
        leftovers = [
            t for t in (self._worker, self._marker, *runners) if t is not None and not t.done()
        ]
        for task in leftovers:
            task.cancel()
        if leftovers:
            await asyncio.gather(*leftovers, return_exceptions=True)
        unsent = len(self._intake) + sum(len(lane.queue) for lane in self._lanes.values())
        if unsent:
            self._counters.dropped += unsent
            logger.warning("push service closed with %d undelivered notifications", unsent)
        self._intake.clear()
        self._lanes.clear()
        self._progress.clear()
        self._dirty.clear()
        self._pending = 0
        self._closed = True
        if self._client is not None:
            await self._client.aclose()
            self._client = None
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
            event_id = item.event_id
            tracked = event_id is not None and self.store.keeps_marks
            if tracked and (entries or item.task.id in self._progress):
                progress = self._progress.get(item.task.id)
                if progress is None:
                    progress = self._progress[item.task.id] = _Progress()
                assert event_id is not None
                progress.open[event_id] = progress.open.get(event_id, 0) + 1  # the fan-out
            for entry in entries:
                await self._wait_for_room()
                self._enqueue(entry, item)
            if tracked:
                assert event_id is not None
                self._finish(item.task.id, event_id, False)

    async def _wait_for_room(self) -> None:
        assert self._room is not None
        while self._pending >= self.max_pending:
            self._room.clear()
            await self._room.wait()

    def _enqueue(self, entry: PushConfigEntry, item: _Event) -> None:
        key = (entry.task_id, entry.config_id)
        lane = self._lanes.get(key)
        if lane is None:
            lane = self._lanes[key] = _Lane()
        delivery = _Delivery(
            key[0],
            key[1],
            item.task,
            whole_artifact(item),
            item.final,
            item.trace,
            item.event_id,
            item.ref,
            item.redelivered_at,
        )
        self._opened(delivery)
        if lane.queue and _supersedes(entry.version, delivery, lane.queue[-1]):
            # The newest whole state replaces one still waiting (never one in flight).
            superseded = lane.queue[-1]
            lane.queue[-1] = replace(delivery, final=delivery.final or superseded.final)
            self._finished(replace(superseded, final=False))  # its end travels on in the newer
        else:
            if len(lane.queue) >= self.max_backlog:
                self._finished(lane.queue.popleft())
                self._pending -= 1
                self._drop(
                    f"push backlog of task {key[0]} config {key[1]} is full "
                    f"({self.max_backlog}); dropped its oldest update"
                )
            lane.queue.append(delivery)
            self._pending += 1
        if lane.runner is None:
            assert self._loop is not None
            lane.runner = self._loop.create_task(self._drain(key, lane), name="a2a-push-lane")

    async def _drain(self, key: tuple[str, str], lane: _Lane) -> None:
        try:
            while lane.queue:
                delivery = lane.queue.popleft()
                try:
                    await self._deliver(delivery)
                except asyncio.CancelledError:
                    self._counters.dropped += 1
                    raise
                except Exception:
                    self._counters.failed += 1
                    logger.exception("push: delivery for task %s config %s crashed", key[0], key[1])
                finally:
                    self._pending -= 1
                    if self._room is not None:
                        self._room.set()
                self._finished(delivery)  # not when cancelled: a survivor sends it again
        finally:
            lane.runner = None
            if self._lanes.get(key) is lane and not lane.queue:
                del self._lanes[key]

    # -- the delivered-up-to mark --------------------------------------------------------
    def _opened(self, delivery: _Delivery) -> None:
        if delivery.event_id is None:
            return
        progress = self._progress.get(delivery.task_id)
        if progress is not None:
            open_ = progress.open
            open_[delivery.event_id] = open_.get(delivery.event_id, 0) + 1

    def _finished(self, delivery: _Delivery) -> None:
        """A delivery is done with: delivered, given up on, dropped or superseded."""
        if delivery.event_id is not None:
            self._finish(delivery.task_id, delivery.event_id, delivery.final)

    def _finish(self, task_id: str, event_id: int, final: bool) -> None:
        progress = self._progress.get(task_id)
        if progress is None:
            return
        left = progress.open.get(event_id, 0) - 1
        if left > 0:
            progress.open[event_id] = left
        else:
            progress.open.pop(event_id, None)
            progress.done = max(progress.done, event_id)
        if final:
            progress.final = True
        if not progress.open and (progress.final or progress.written == progress.done):
            del self._progress[task_id]  # a finished task is never settled: no mark needed
            self._dirty.discard(task_id)
        elif progress.mark() > progress.written:
            self._dirty.add(task_id)
            if self._mark_wake is not None:
                self._mark_wake.set()

    async def _write_marks(self) -> None:
        """Write the marks that moved: at once, then at most once per ``mark_interval``."""
        assert self._mark_wake is not None
        wake = self._mark_wake
        while True:
            while not self._dirty:
                wake.clear()
                await wake.wait()
            marks: dict[str, int] = {}
            for task_id in self._dirty:
                progress = self._progress.get(task_id)
                if progress is not None and progress.mark() > progress.written:
                    marks[task_id] = progress.mark()
            self._dirty.clear()
            if marks:
                try:
                    await self.store.write_marks(marks)
                except Exception:
                    logger.warning("push: could not write delivery marks", exc_info=True)
                    self._dirty.update(marks)  # tried again next period
                else:
                    for task_id, mark in marks.items():
                        progress = self._progress.get(task_id)
                        if progress is None:
                            continue
                        progress.written = max(progress.written, mark)
                        if not progress.open and progress.written >= progress.done:
                            del self._progress[task_id]
            await asyncio.sleep(self.mark_interval)

    # -- delivery -----------------------------------------------------------------------
    async def _deliver(self, delivery: _Delivery) -> None:
        entry = await self.store.get(delivery.task_id, delivery.config_id)
        if entry is None:
            return  # deleted meanwhile: nothing to do
        hooks = _telemetry.active
        if hooks is None:
            delivered = await self._post(entry, delivery)
        else:
            span, headers = hooks.push_start(
                delivery.trace, _origin(self.policy, entry.config.url), delivery.task_id
            )
            delivered = False
            try:
                delivered = await self._post(entry, delivery, headers)
            finally:
                hooks.push_end(span, delivered)
        if delivered:
            self._counters.delivered += 1
        else:
            self._counters.failed += 1
        if delivery.final:
            await self.store.delete(delivery.task_id, delivery.config_id)

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                transport=self._transport or VettedTransport(self.policy),
                follow_redirects=False,
                timeout=httpx.Timeout(self.timeout),
                trust_env=False,
                headers={"User-Agent": "a2a-adapters-core push notifier"},
            )
        return self._client

    async def _post(
        self, entry: PushConfigEntry, delivery: _Delivery, trace: dict[str, str] | None = None
    ) -> bool:
        """One delivery with retries; True when the webhook accepted it.

        ``trace``: W3C trace headers to send (telemetry on), so the receiver can
        continue the task's trace.
        """
        config = entry.config
        where = f"task {delivery.task_id} config {delivery.config_id}"
        try:
            origin = self.policy.parse(config.url).safe_origin
            body, headers = render(config, entry.version, delivery.task, delivery.event)
            if trace:
                headers = {**headers, **trace}
        except (TargetRefusedError, ValueError) as exc:
            logger.warning("push for %s not sent: %s", where, exc)
            return False
        assert self._concurrency is not None
        reason = ""
        retry_after: float | None = None
        message_id = (
            f"msg_{uuid.uuid4().hex}"
            if delivery.ref is None
            else delivery_id(delivery.task_id, delivery.ref, delivery.config_id)
        )
        # A redelivery comes after the second it was queued in: the dead instance's attempt,
        # under the same id, was signed no later than that.
        signed_at = delivery.redelivered_at or 0
        for attempt in range(self.retry.max_retries + 1):
            if attempt:
                self._counters.retried += 1
                await asyncio.sleep(self.retry.delay(attempt, retry_after))
            retry_after = None
            sent = headers
            if self._signer is not None:
                # each attempt is signed anew, strictly later, so it is no replay of the last
                signed_at = max(int(time.time()), signed_at + 1)
                signature = self._signer.sign(body, message_id=message_id, timestamp=signed_at)
                sent = {**headers, **signature}
            try:
                target = await self.policy.check_dispatch(config.url)
                async with (
                    self._concurrency,
                    asyncio.timeout(self.timeout),
                    self._http().stream("POST", target.url, content=body, headers=sent) as response,
                ):
                    status = response.status_code
                    retry_after = _retry_after(response.headers.get("retry-after"))
            except TargetRefusedError as exc:
                logger.warning("push to %s for %s refused: %s", origin, where, exc)
                return False
            except (ResolutionError, TimeoutError, httpx.TimeoutException) as exc:
                reason = f"{type(exc).__name__} {exc}".strip()
                continue
            except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
                reason = f"{type(exc).__name__}: {exc}"
                continue
            except httpx.HTTPError as exc:
                logger.warning("push to %s for %s failed: %s", origin, where, type(exc).__name__)
                return False
            if 200 <= status < 300:
                return True
            if status == 429 or status >= 500:
                reason = f"HTTP {status}"
                continue
            logger.warning(
                "push to %s for %s rejected with HTTP %d (not retried)", origin, where, status
            )
            return False
        logger.warning(
            "push to %s for %s failed after %d attempts: %s",
            origin,
            where,
            self.retry.max_retries + 1,
            reason,
        )
        return False
