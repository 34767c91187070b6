"""The send path: ``SendMessage`` and ``SendStreamingMessage``.

A send is claimed by its messageId when sends are idempotent (a retry finds the task
the first send started), prepared and started as a run by the manager, then answered:
a blocking send waits for the run to settle, a streamed one reads its events.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator

from ..errors import (
    A2AError,
    ContentTypeNotSupportedError,
    InternalError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
)
from ..types import (
    AgentCard,
    Message,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
)
from . import following
from .context import ServerCallContext
from .events import NO_ID, Subscription
from .idempotency import SendClaim, SendLedger, started_task
from .manager import TaskManager, TaskRun
from .push_api import PushNotifier
from .stream import ServerStream
from .task_state import snapshot
from .task_stream import FOLLOW, StreamItem, TaskStream, event_id_of, settles, single

__all__ = ["Sender", "output_modes"]

logger = logging.getLogger("a2a_core.server")


class Sender:
    """Claims, starts and answers sends for one service."""

    __slots__ = ("_manager", "_push", "_sends", "output_modes")

    def __init__(
        self,
        manager: TaskManager,
        sends: SendLedger | None,
        push: PushNotifier | None,
        output_modes: set[str] | None,
    ) -> None:
        """``output_modes``: what the agent produces, to refuse sends accepting none of
        it (None: no such check)."""
        self._manager = manager
        self._sends = sends
        self._push = push
        self.output_modes = output_modes
        """What the agent produces, checked against each send's accepted modes (None: no check)."""

    async def send(self, request: SendMessageRequest, call: ServerCallContext) -> Task | Message:
        """Blocking (default) or non-blocking (``returnImmediately``) send."""
        config = request.configuration
        immediate = config is not None and config.return_immediately
        history_length = config.history_length if config is not None else None
        allow_reply = not immediate and not self._manager.executor.starts_task_at_once
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

    async def stream(self, request: SendMessageRequest, call: ServerCallContext) -> ServerStream:
        """Streaming send: one Message, or the Task then its events until it settles."""
        manager = self._manager
        # An agent that always makes a task has it stored and announced before it runs.
        at_once = manager.executor.starts_task_at_once
        begun = await self._begin(request, call, allow_reply=not at_once)
        if isinstance(begun, SendClaim):
            # A retry: follow the task the first send started, as SubscribeToTask would.
            stored = await started_task(manager.store, begun.task_id, call.owner)
            if stored.task.status.state.is_terminal:
                return TaskStream(single(stored.version, snapshot(stored.task)), None)
            return await following.subscribe(
                manager, SubscribeToTaskRequest(id=begun.task_id), call
            )
        run, claim = begun
        # The run is scheduled but cannot have emitted yet: subscribing now misses nothing.
        subscription = manager.subscribe(run.task_id, current=run.version)
        return TaskStream(self._run_stream(run, run.version, subscription, claim), subscription)

    async def _claim(
        self, request: SendMessageRequest, call: ServerCallContext, task_id: str | None = None
    ) -> SendClaim | None:
        """Record this send's messageId (idempotent sends), or find the send that had it."""
        if self._sends is None or request.message.role is Role.UNSPECIFIED:
            return None
        try:
            return await self._sends.claim(request.message, call.owner, task_id)
        except Exception as exc:
            logger.exception("could not record the send")
            raise InternalError("Could not record the send") from exc

    async def _forget(self, claim: SendClaim | None) -> None:
        if claim is not None and self._sends is not None:
            try:
                await self._sends.forget(claim)
            except Exception:
                logger.warning("could not drop a send record", exc_info=True)

    async def _repeated_send(
        self, claim: SendClaim, call: ServerCallContext, immediate: bool, history: int | None
    ) -> Task:
        """A retry of a send already made: its task, once settled when the retry blocks.

        As the first send would have answered: a blocking retry waits for the task
        to end or pause, whether its run is here or on another instance.
        """
        manager = self._manager
        run = manager.active_run(claim.task_id)
        if run is not None and run.owner == call.owner:
            if not immediate:
                await run.settled.wait()
            if run.reply is None and run.version:
                return snapshot(run.task, history)
        stored = await started_task(manager.store, claim.task_id, call.owner)
        if not immediate:
            stored = await following.settled(manager, stored, call)
        return snapshot(stored.task, history)

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
        manager = self._manager
        push = self._push
        config = request.configuration
        inline_push = None
        if config is not None:
            if self.output_modes is not None:
                self._negotiate_output(config.accepted_output_modes, self.output_modes)
            inline_push = config.task_push_notification_config
            if inline_push is not None and push is None:
                raise PushNotificationNotSupportedError()
        try:
            run = await manager.prepare(
                request.message,
                call,
                config,
                request.metadata,
                allow_reply=allow_reply and inline_push is None,
                recorded=self._sends is not None,
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
                await manager.abandon(run)
                raise
            if claim is not None and claim.earlier:
                await manager.abandon(run)  # a retry that raced the first send
                return claim
        try:
            if inline_push is not None and push is not None:
                await push.set_config(
                    inline_push.model_copy(update={"task_id": run.task_id}), call.version
                )
            manager.start(run)
        except BaseException as exc:
            await manager.abandon(run)
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
    ) -> AsyncGenerator[StreamItem]:
        """The first events of a streamed send; then ``FOLLOW``: the rest are the
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
                yield event_id_of(subscription), first, subscription.encoded
                if settles(first):
                    return
            else:
                yield initial_version, snapshot(run.initial), None
            yield FOLLOW, None, None  # the stream reads the subscription itself from here
        finally:
            subscription.close()

    @staticmethod
    def _negotiate_output(accepted: list[str], produced: set[str]) -> None:
        if not accepted or not produced:
            return
        for want in accepted:
            for have in produced:
                if _media_match(want, have):
                    return
        raise ContentTypeNotSupportedError(
            "None of the accepted output modes "
            f"({', '.join(accepted[:10])}) is produced by this agent "
            f"({', '.join(sorted(produced)[:10])})"
        )


def output_modes(card: AgentCard) -> set[str]:
    """Every output mode ``card`` names, by default or for a skill."""
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
