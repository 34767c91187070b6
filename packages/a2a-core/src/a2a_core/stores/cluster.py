"""What a store shares between server instances beyond tasks: run leases and sent messages.

Both are optional capabilities a ``TaskStore`` may also implement; the task
manager uses them when present.

- ``TaskLeases``: the instance running a task holds a lease on it and renews
  it while alive. A lease that is not renewed expires; a surviving instance
  (or the same one after a restart) then settles the task, so no task stays
  WORKING forever. ``memory://`` needs none (its tasks die with the process).
- ``SentMessages``: which task a ``(principal, messageId)`` started, for a
  bounded retention window, so a retried ``SendMessage`` returns that task
  instead of starting a second run.

Lease times are the instances' wall clocks (``time.time()``): keep them in
sync (NTP) to well within the lease length.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from dataclasses import dataclass

__all__ = ["Lease", "SentMessages", "TaskLeases", "send_key"]

_SETTLING = "#settling-by:"
"""Joins the dead instance's name and its settler's in the holder name of a settling lease."""


@dataclass(frozen=True, slots=True)
class Lease:
    """An instance's claim on a running task, valid until ``expires_at`` (epoch seconds)."""

    task_id: str
    owner: str | None
    instance: str
    expires_at: float

    @property
    def settler(self) -> str | None:
        """The instance settling the task (it took this lease when it expired), else None."""
        _, mark, settler = self.instance.partition(_SETTLING)
        return settler if mark else None

    @property
    def ran_on(self) -> str:
        """The instance whose run the lease was for (of a settling lease: the one that died)."""
        return self.instance.partition(_SETTLING)[0]

    def settling_by(self, settler: str) -> str:
        """The holder name ``settler`` takes this expired lease under while it settles the task.

        Not the settler's own name: its renewals must not extend it, and any instance
        can tell a task being settled (wait for it) from one running (refuse).
        """
        return f"{self.ran_on}{_SETTLING}{settler}"


class TaskLeases(ABC):
    """A store capability: which instance runs which task, and until when it is trusted to."""

    settles_at_startup: bool = False
    """Single-instance stores (``sqlite://``): every lease left by another instance id is a
    previous life's, so it is settled at startup without waiting for it to expire."""

    @abstractmethod
    async def acquire_lease(
        self, task_id: str, owner: str | None, instance: str, until: float, now: float
    ) -> Lease | None:
        """Take the task's lease (or extend our own); None on success, else the live holder's."""

    @abstractmethod
    async def renew_leases(self, instance: str, task_ids: list[str], until: float) -> list[str]:
        """Extend this instance's leases; returns the ids it no longer holds (settled elsewhere)."""

    @abstractmethod
    async def release_lease(self, task_id: str, instance: str) -> None:
        """Drop this instance's lease on the task (its run ended); no-op when not held."""

    @abstractmethod
    async def expired_leases(self, now: float, limit: int) -> list[Lease]:
        """Up to ``limit`` leases that expired at ``now`` (oldest first)."""

    @abstractmethod
    async def take_expired_lease(self, lease: Lease, now: float, holder: str, until: float) -> bool:
        """Hand ``lease`` to ``holder`` until ``until`` if it is still that instance's and
        expired at ``now``.

        Atomic: of several sweepers, exactly one gets True and settles the task. The
        lease is handed over, not removed: until the settler has written the task's
        final status and released it, a new message finds the task held, not free.
        """

    @abstractmethod
    async def lease_of(self, task_id: str) -> Lease | None:
        """The task's current lease (expired or not), if any."""


class SentMessages(ABC):
    """A store capability: the task each (principal, messageId) started, for a while."""

    @abstractmethod
    async def remember_send(
        self, key: str, task_id: str, now: float, retention: float
    ) -> str | None:
        """Record ``key -> task_id`` unless a live record exists: then return its task id."""

    @abstractmethod
    async def forget_send(self, key: str, task_id: str) -> None:
        """Drop the record if it still names ``task_id`` (the send left no task behind)."""


def send_key(owner: str | None, message_id: str, content: str = "") -> str:
    """A fixed-size record key for a principal's message (owners and ids never collide).

    ``content`` (the message as sent) makes a reused messageId with other
    content a different send: only a true retry finds the first one's task.
    """
    digest = hashlib.sha256()
    for piece in ("-" if owner is None else "=" + owner, message_id, content):
        raw = piece.encode("utf-8", "surrogatepass")
        digest.update(len(raw).to_bytes(8, "big") + raw)
    return digest.hexdigest()
