"""The task channel: what instances serving one store share besides the tasks themselves.

Several service instances (processes, hosts, or services in one process)
that use one store must see each other's work: a stream or ``SubscribeToTask``
on any instance follows a task running on any other, a cancel on any instance
stops the agent wherever it runs, and push configs are found by the instance
that runs the task. The store provides that through a ``TaskChannel``:
``TaskStore.event_channel()`` returns one (a shared backend), or None, and
then the service uses an in-process ``MemoryTaskChannel`` attached to that
store object (so two services on one ``MemoryTaskStore`` object share it,
and one ``sqlite://`` process needs nothing more).

**Events.** The instance running a task applies each event (saves the task
at a new version) and then calls ``publish(task_id, event_id, event,
previous)`` with ``event_id`` = the task version that save produced: ids are
monotonic per task (not contiguous: some saves carry no event). ``previous``
is the id of the task's last event as the publisher knows it (the version its
run started from, then its own last event): when the backend retains nothing
older for the task, it records that nothing happened between ``previous``
and this event, so a follower can tell a complete replay from one with a
hole. When a run ends without a final or paused state (an executor that
leaves its task open), it calls ``publish_end(task_id, version)``.
``follow(task_id, after, current)`` yields ``(event_id, event)`` for every
event with an id above ``after``, first those retained (replay), then live,
in id order, each once; ``event`` is None for an end mark. ``current`` is the
task's version as the caller read it (when known): no event retained between
``after`` and it means they expired. The follower raises ``EventsLost`` (from
its first ``__anext__``) when it cannot prove that every event above
``after`` is still retained; the service then sends a fresh Task snapshot and
follows from its version. A follower also raises ``EventsLost`` later, after
the events before it, at an event whose ``previous`` is above the last one it
delivered: an event saved but never published (its instance died in
between), which a settling survivor's ``previous`` reveals. A follower
started at the version of a task read from the store (``after == current``)
therefore misses nothing and repeats nothing. The service ends a follow itself at a
terminal or interrupted status; followers never end on their own except at
``close()`` or ``aclose()`` of the channel.

Rules for implementations (the cluster suite, ``a2a_core.testing.cluster_suite``,
checks them over real servers):

- ``publish`` returns after the event is durable in the backend (another
  instance's ``follow`` started afterwards sees it); an event whose id is not
  above the last one published for the task is dropped (a late writer).
- Retention is bounded and configurable: per task the latest N events and a
  time since the task's last event; past it ``follow`` raises ``EventsLost``.
- ``request_cancel(task_id)`` reaches every attached instance's
  ``ChannelListener.cancel_requested`` promptly (the one running the task
  stops it; the others ignore it). It returns once the request is sent.
- ``attach(listener)`` is synchronous and cheap; a backend connects lazily,
  and ``start()`` (awaited by the manager before its first run) returns once
  the instance would receive cancel requests.
- ``shared`` is True when another instance may read what is published: the
  manager skips ``publish`` entirely when it is False (the in-process fast
  path of a single ``memory://`` or ``sqlite://`` service).
- Optional capabilities are protocols a channel implements, checked with
  ``isinstance``: ``SavesEvents`` (``save_and_publish`` saves the task through the
  store the channel belongs to and publishes the event in one step; the manager then
  uses it instead of ``save`` and ``publish`` for a run's events) and
  ``WritesBehind`` (a run may publish its artifact chunks at once and save them a few
  milliseconds later, ``ManagerConfig.store_coalesce_seconds``; ``since`` and
  ``save_after`` let whoever does not run the task write after them).
- ``push_configs()`` returns the store for push configs all instances share,
  or None to keep each notifier's own in-memory store (single instance).

Backends: ``MemoryTaskChannel`` (``a2a_core.server.memory_channel``); ``redis://``
uses Redis Streams (one stream per task: ``XADD`` with approximate ``MAXLEN``
trimming and an expiry refreshed on every event, ``XRANGE`` then ``XREAD BLOCK``
to follow) and a
pub/sub channel for cancel requests (``a2a_core.stores.redis_channel``). A
``postgresql://`` store uses an event table keyed by (task id, event id) and
``LISTEN/NOTIFY`` (one listening connection per instance) for wake-ups and
cancel requests (``a2a_core.stores.postgres_channel``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..types import StreamEvent

if TYPE_CHECKING:
    from ..types import Task
    from .push_configs import PushConfigStore
    from .task_store import StoredTask

__all__ = [
    "ChannelItem",
    "ChannelListener",
    "EventsLost",
    "ListenerSet",
    "SavesEvents",
    "TaskChannel",
    "WritesBehind",
]


class EventsLost(Exception):
    """Events after the requested id are no longer retained (or were never recorded)."""


ChannelItem = tuple[int, StreamEvent | None]
"""``(event_id, event)`` as a follower yields it; ``event`` None marks a run's unsettled end."""


class ChannelListener(Protocol):
    """An instance attached to a channel (the manager's ``Cancels``): it hears cancel requests."""

    async def cancel_requested(self, task_id: str) -> None:
        """Another instance asked to cancel ``task_id``: stop it if it runs here."""
        ...


class TaskChannel(ABC):
    """Events, cancel requests and push configs shared by the instances of one store."""

    @property
    @abstractmethod
    def shared(self) -> bool:
        """Whether another instance may read what is published (else publishing is skipped)."""

    @abstractmethod
    async def publish(
        self, task_id: str, event_id: int, event: StreamEvent, previous: int | None = None
    ) -> bool | None:
        """Make an applied event (id: the task version it produced) visible to followers.

        ``previous``: the id of the task's event before it as the publisher knows it
        (None: unknown, so a follower from before this event must assume a hole).
        Returns False when the event was dropped (not above the last id: a late writer,
        e.g. a run whose task another instance settled), None when the backend cannot tell.
        """

    @abstractmethod
    async def publish_end(self, task_id: str, event_id: int) -> None:
        """The run ended at version ``event_id`` with the task neither final nor paused."""

    @abstractmethod
    def follow(
        self, task_id: str, after: int, current: int | None = None
    ) -> AsyncIterator[ChannelItem]:
        """Retained events with ids above ``after``, then live ones (``aclose`` to stop).

        ``current``: the task's version as the caller read it. Raises ``EventsLost``
        from the first ``__anext__`` when events above ``after`` may be gone, or
        later at a hole (an event saved but never published).
        """

    @abstractmethod
    async def request_cancel(self, task_id: str) -> None:
        """Ask every attached instance to stop ``task_id`` if it runs there."""

    @abstractmethod
    def attach(self, listener: ChannelListener) -> None:
        """Deliver cancel requests to ``listener`` from now on (connects lazily)."""

    @abstractmethod
    def detach(self, listener: ChannelListener) -> None:
        """Stop delivering to ``listener``."""

    async def start(self) -> None:  # noqa: B027 - optional hook
        """Connect what ``attach`` deferred; after it, cancel requests arrive."""

    def push_configs(self) -> PushConfigStore | None:
        """The push config store every instance shares (None: each keeps its own)."""
        return None

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections (after the instances detached)."""


@runtime_checkable
class SavesEvents(Protocol):
    """A channel that saves a task and publishes its event in one atomic write.

    A backend that can (one Redis script) saves a round trip per event, and never
    leaves a task saved without its event. Checked with ``isinstance`` on the channel.
    """

    async def save_and_publish(
        self,
        task: Task,
        owner: str | None,
        expected_version: int,
        event: StreamEvent,
        previous: int | None,
        *,
        version: int | None = None,
    ) -> StoredTask:
        """``TaskStore.save`` and ``publish`` (id: the version saved) as one atomic write.

        ``version``: save at this version (``TaskStore.save_at``), not the next one.
        """
        ...


@runtime_checkable
class WritesBehind(Protocol):
    """A shared channel on which a run may publish artifact chunks before saving them.

    Then the channel holds events past the stored task's version: what followers
    already saw, which a crash may keep out of the store. Whoever writes a task no
    run holds (a settling survivor, a cancel nobody answered) first applies them
    (``since``) and writes after them (``save_after``). Checked with ``isinstance``
    on the channel.
    """

    async def since(self, task_id: str, after: int) -> tuple[list[ChannelItem] | None, int]:
        """The retained events above ``after`` (None: some are gone) and the last id (-1: none).

        Read at one instant, without waiting.
        """
        ...

    async def save_after(
        self,
        task: Task,
        owner: str | None,
        expected_version: int,
        head: int,
        event: StreamEvent,
    ) -> StoredTask:
        """Save ``task`` at ``max(expected_version, head) + 1`` and publish ``event`` there.

        Atomic, and only while the task is at ``expected_version`` and the channel's last
        event id is ``head`` (as ``since`` read it); else ``ConcurrentUpdateError``.
        """
        ...


class ListenerSet:
    """``attach``/``detach`` for a channel that keeps its listeners in ``self._listeners``.

    Every channel delivers cancel requests to the instances attached to it the same
    way; a channel lists this before ``TaskChannel`` and sets ``self._listeners = []``.
    """

    _listeners: list[ChannelListener]

    def attach(self, listener: ChannelListener) -> None:
        """Deliver cancel requests to ``listener`` from now on (once, however often attached)."""
        if listener not in self._listeners:
            self._listeners.append(listener)

    def detach(self, listener: ChannelListener) -> None:
        """Stop delivering to ``listener``."""
        if listener in self._listeners:
            self._listeners.remove(listener)
