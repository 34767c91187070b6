"""The task manager's bounds and policies (``ManagerConfig``), read once when it starts."""

from __future__ import annotations

from dataclasses import dataclass

from .leases import LeaseSettings

__all__ = ["ManagerConfig"]


@dataclass(frozen=True, slots=True)
class ManagerConfig:
    """Bounds and policies of the task manager."""

    max_background_tasks: int = 512
    """Agents running at once; past it, sends fail with a retryable ServerBusyError."""
    max_history: int = 1000
    """Messages kept per task (oldest dropped first)."""
    cancel_grace_seconds: float = 5.0
    """How long an agent's own ``cancel`` may take before the run is interrupted."""
    shutdown_grace_seconds: float = 10.0
    """How long shutdown waits for agents to stop cooperatively."""
    expose_agent_errors: bool = False
    """Put an agent exception's text in the failed status (off: never leak internals)."""
    remote_cancel_timeout: float = 2.0
    """How long a cancel waits for the instance running the task before writing CANCELED itself."""
    lease_seconds: float = 30.0
    """How long a run's lease lasts unrenewed: a task whose instance died is settled (FAILED)
    this long after its last renewal (stores that keep leases: sqlite, redis, postgresql)."""
    lease_renew_seconds: float = 10.0
    """How often an instance renews the leases of the tasks it runs."""
    orphan_sweep_seconds: float = 10.0
    """How often an instance looks for expired leases to settle."""
    send_retention_seconds: float = 0.0
    """Idempotent sends: for this long, a retried SendMessage (the same message, messageId
    included, from the same principal) returns the task the first one started instead of
    running the agent again, on every instance sharing the store. 0 (the default): off;
    e.g. 3600 turns it on for an hour."""
    instance_id: str | None = None
    """This instance's name in leases and messages (default: host-pid-random)."""
    store_coalesce_seconds: float = 0.005
    """Streamed artifact chunks are saved together at most this often per task, not one
    save per chunk, on stores that number saves (``SavesAtVersion``: memory, sqlite, redis,
    postgresql). Streams and subscribers still get every event at once (on a shared store
    each chunk is published to the channel at once); any status change, and the end of the
    run, saves at once. A crash loses at most the chunks of the last interval on sqlite
    (the task then reads as it was before them); on redis and postgresql the survivor that
    settles the task applies them from the channel first. 0: save every event."""

    whole_answers: bool = True
    """Peers that read only part of a stream still get the whole answer: a streamed
    artifact ends with an update carrying all of it (``append: false``, ``lastChunk``),
    and a task that completes without a status message gets one repeating the text and
    data of its ``result`` artifact. False: a stream ends with an empty appended part
    and the completed status stays bare (see docs/server.md, "How a streamed answer
    ends")."""

    def __post_init__(self) -> None:
        if self.max_background_tasks <= 0:
            raise ValueError("max_background_tasks must be > 0")
        if self.remote_cancel_timeout <= 0:
            raise ValueError("remote_cancel_timeout must be > 0")
        if self.max_history <= 0:
            raise ValueError("max_history must be > 0")
        if self.send_retention_seconds < 0:
            raise ValueError("send_retention_seconds must be >= 0")
        if self.store_coalesce_seconds < 0:
            raise ValueError("store_coalesce_seconds must be >= 0")
        LeaseSettings(self.lease_seconds, self.lease_renew_seconds, self.orphan_sweep_seconds)
