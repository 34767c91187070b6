"""Idempotent SendMessage: a retried send (same messageId, same principal) gets the same task.

A retry is the same message again: a messageId reused with other content
(parts, task, context, metadata) is a new send, not a retry.

Clients retry when a response is lost (a timeout, a dropped connection, an
instance that died mid-answer). Without this, each retry would start another
run of the agent. The first send of a ``(principal, messageId)`` records the
task id it created (once the task is written) in the store (``SentMessages``: memory, SQLite,
Redis and PostgreSQL keep such records, bounded in count and expiring after
``send_retention_seconds``); a retry on any instance sharing the store finds
the record and answers with that task instead of running the agent again.

A send that ends without a task (the agent replied with a direct message, or
the send was refused) drops its record, so a retry of it runs again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..contracts.task_store import StoredTask, TaskStore
from ..errors import ServerBusyError
from ..stores.cluster import SentMessages, send_key
from ..types import Message, new_id

__all__ = ["SendClaim", "SendLedger", "started_task"]


@dataclass(frozen=True, slots=True)
class SendClaim:
    """This send's record: the task id it uses, or the one an earlier send already used."""

    key: str
    task_id: str
    earlier: bool
    """True: a send with this messageId already started ``task_id``; answer with it."""


class SendLedger:
    """Records which task each (principal, messageId) started, in the store's ``SentMessages``."""

    def __init__(self, records: SentMessages, retention: float) -> None:
        self.records = records
        self.retention = retention

    @classmethod
    def for_store(cls, store: TaskStore, retention: float) -> SendLedger | None:
        """A ledger when the store remembers sends and retention is on, else None."""
        if retention <= 0 or not isinstance(store, SentMessages):
            return None
        return cls(store, retention)

    async def claim(
        self, message: Message, owner: str | None, task_id: str | None = None
    ) -> SendClaim | None:
        """Record this send (of ``task_id``: default the message's task, or a new id), or
        find the earlier one; None when the message has no id."""
        if not message.message_id:
            return None
        key = send_key(owner, message.message_id, message.model_dump_json(by_alias=True))
        task_id = task_id or message.task_id or new_id()
        earlier = await self.records.remember_send(key, task_id, time.time(), self.retention)
        if earlier is not None:
            return SendClaim(key, earlier, True)
        return SendClaim(key, task_id, False)

    async def forget(self, claim: SendClaim) -> None:
        """Drop the record of a send that left no task (a retry of it runs again)."""
        await self.records.forget_send(claim.key, claim.task_id)


async def started_task(store: TaskStore, task_id: str, owner: str | None) -> StoredTask:
    """The task an earlier send started.

    A new task's send is recorded once its task is written, so a retry finds it at once.
    Not found: the first send was answered with a bare message and is dropping its
    record (a retryable ServerBusyError: the retry then runs again).
    """
    stored = await store.get(task_id, owner)
    if stored is None:
        raise ServerBusyError(
            "A send with this messageId is still starting its task; retry",
            data={"reason": "send_in_progress", "retryable": True, "taskId": task_id},
        )
    return stored
