"""Server-Sent Events: pump a stream of events to the client, and let go cleanly.

One response per stream (a ``ServerStream``): ``text/event-stream`` headers,
then one ``id: <event id>\\ndata: <json>\\n\\n`` frame per event (the id, when
the stream has one, is what a client sends back as ``Last-Event-ID`` to resume;
the JSON is the bytes the event bus encoded, when the caller's codec writes them);
frames of events that are already waiting when one is sent share its write,
and the frame of the stream's last event ends the response in the same write.
The pump runs in the request's own task; one small watcher task waits for
``http.disconnect`` and, when the client leaves, cancels the pump so the
event iterator is closed (its subscription released) at once rather than at
the next event. The watcher starts once the stream has lasted ``_WATCH_AFTER``:
most streams are over sooner and never pay for a task of their own. One timer
per app and event loop (``KeepAlive``, no task) visits the app's open streams:
it sends a comment line on a stream that has been silent for ``ping_interval``
seconds, so proxies keep idle streams open, and drops a client that has not
accepted a frame for ``send_timeout`` seconds, so a stalled reader cannot pin a
stream. One timer for all, not one per stream: 10,000 idle streams would
otherwise re-arm 10,000 timers every few seconds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...errors import A2AError, InternalError
from ...types import StreamEvent
from ..stream import ServerStream, close_stream
from .http import Receive, Send

__all__ = ["SSE_HEADERS", "KeepAlive", "SseConfig", "send_sse_error", "stream_sse"]

logger = logging.getLogger("a2a_core.server.asgi")

SSE_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]
_PING = b": ping\n\n"
_BATCH_BYTES = 65536
"""Events already waiting when one is sent go out in the same write, up to this size."""
_MAX_PERIOD = 1.0
"""Seconds between the keep-alive timer's visits, at most (walking 10,000 streams takes
about a millisecond)."""
_WATCH_AFTER = 0.02
"""Seconds a stream lasts before a task watches for the client leaving (a client that
left sooner is noticed then): a task, its steps and its cancellation cost about as much
as a short stream's own events."""


@dataclass(frozen=True, slots=True)
class SseConfig:
    """Keep-alive and stall bounds of event streams (None disables one)."""

    ping_interval: float | None = 15.0
    send_timeout: float | None = 30.0

    def __post_init__(self) -> None:
        for name in ("ping_interval", "send_timeout"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be > 0 or None")


class _Pump:
    """Shared state of one stream between the pump, the watcher and the timer."""

    __slots__ = (
        "active",
        "dropped",
        "last_sent",
        "loop",
        "ping_task",
        "send",
        "send_started",
        "task",
        "watch_timer",
        "watcher",
    )

    def __init__(
        self, send: Send, loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]
    ) -> None:
        self.send = send
        self.loop = loop
        self.task = task
        self.active = True
        self.dropped = False
        self.last_sent = loop.time()
        self.send_started: float | None = None
        self.ping_task: asyncio.Task[None] | None = None
        self.watcher: asyncio.Task[None] | None = None
        self.watch_timer: asyncio.TimerHandle | None = None

    def drop(self) -> None:
        """Stop the pump (client gone or stalled)."""
        if self.active and not self.dropped:
            self.dropped = True
            self.task.cancel()

    async def frame(self, data: bytes, last: bool = False) -> None:
        self.send_started = self.loop.time()
        await self.send({"type": "http.response.body", "body": data, "more_body": not last})
        self.last_sent = self.loop.time()
        self.send_started = None


def _start_watcher(receive: Receive, pump: _Pump) -> None:
    pump.watch_timer = None
    if pump.active:
        pump.watcher = pump.loop.create_task(_watch(receive, pump))


async def _watch(receive: Receive, pump: _Pump) -> None:
    """Wait for the client to leave; then stop the pump."""
    try:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
    except (OSError, RuntimeError):
        pass  # a server that has torn the connection down: same as a disconnect
    pump.drop()


class KeepAlive:
    """The keep-alive and stall bounds of one app's event streams, kept by one timer.

    Each event loop serving the app has one timer while it has open streams; every
    ``period`` it visits them: a stream whose send has been pending for
    ``send_timeout`` is dropped, one silent for ``ping_interval`` gets a ping.
    """

    __slots__ = ("_loops", "config", "period")

    def __init__(self, config: SseConfig | None = None) -> None:
        self.config = config or SseConfig()
        ping, timeout = self.config.ping_interval, self.config.send_timeout
        periods = [p for p in (ping, timeout) if p is not None]
        # Half the stall bound, so a stalled reader goes within 1.5x of it; at most
        # _MAX_PERIOD, so the pings of streams that fell silent at different times go
        # out at different ticks, not all in one burst.
        self.period: float | None = (
            min(_MAX_PERIOD, min(periods) / 2 if timeout is not None else min(periods))
            if periods
            else None
        )
        self._loops: dict[asyncio.AbstractEventLoop, _LoopStreams] = {}

    def watch(self, pump: _Pump) -> None:
        """Keep ``pump``'s stream alive until ``forget``."""
        if self.period is None:
            return
        streams = self._loops.get(pump.loop)
        if streams is None:
            streams = self._loops[pump.loop] = _LoopStreams()
        streams.pumps.add(pump)
        if streams.timer is None:
            streams.timer = pump.loop.call_later(self.period, self._tick, pump.loop)

    def forget(self, pump: _Pump) -> None:
        streams = self._loops.get(pump.loop)
        if streams is None:
            return
        streams.pumps.discard(pump)
        if not streams.pumps:
            del self._loops[pump.loop]
            if streams.timer is not None:
                streams.timer.cancel()

    def _tick(self, loop: asyncio.AbstractEventLoop) -> None:
        streams = self._loops.get(loop)
        if streams is None:
            return
        streams.timer = None
        ping, timeout = self.config.ping_interval, self.config.send_timeout
        now = loop.time()
        for pump in list(streams.pumps):
            started = pump.send_started
            if started is not None:
                if timeout is not None and now - started >= timeout:
                    logger.debug("dropping an SSE client that stopped reading")
                    pump.drop()
            elif ping is not None and now - pump.last_sent >= ping:
                pump.last_sent = now
                pump.ping_task = loop.create_task(_ping(pump))
        if streams.pumps and self.period is not None:
            streams.timer = loop.call_later(self.period, self._tick, loop)


class _LoopStreams:
    """One loop's open streams of an app, and the timer that visits them."""

    __slots__ = ("pumps", "timer")

    def __init__(self) -> None:
        self.pumps: set[_Pump] = set()
        self.timer: asyncio.TimerHandle | None = None


async def _ping(pump: _Pump) -> None:
    try:
        if pump.active:
            await pump.send({"type": "http.response.body", "body": _PING, "more_body": True})
    except Exception:  # the pump notices a dead connection by itself
        logger.debug("SSE keep-alive failed", exc_info=True)
    finally:
        if pump.active:
            pump.ping_task = None  # a finished task is not kept until the next ping


async def stream_sse(
    receive: Receive,
    send: Send,
    events: ServerStream,
    frame: Callable[[StreamEvent, bytes | None], bytes],
    encode_error: Callable[[A2AError], bytes],
    headers: list[tuple[bytes, bytes]],
    keep_alive: KeepAlive,
) -> None:
    """Send ``events`` as SSE frames until the stream ends, fails or the client leaves.

    ``frame(event, encoded)`` gives an event's ``data:`` lines from the event and its
    JSON as the bus encoded it (``events.encoded``, None when it was not); this adds
    the ``id:`` line. An A2AError from the stream or the encoder becomes one error
    frame (``encode_error``), then the stream ends; an unexpected exception is
    logged and sent as a generic internal error. The stream is always closed
    (``aclose``) before this returns.
    """
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    if task is None:  # pragma: no cover - ASGI servers always run apps in a task
        raise RuntimeError("stream_sse must run inside an asyncio task")
    pump = _Pump(send, loop, task)
    finished = False
    try:
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        pump.watch_timer = loop.call_later(_WATCH_AFTER, _start_watcher, receive, pump)
        keep_alive.watch(pump)
        error: bytes | None = None
        frames: list[bytes] = []  # one list, emptied after each write: none kept per wait
        try:
            async for event in events:
                # This event, then those already waiting (read without a coroutine each):
                # one write for all of them, up to _BATCH_BYTES.
                size = 0
                while True:
                    try:
                        data = frame(event, events.encoded)
                    except A2AError as exc:
                        error = encode_error(exc)
                        break
                    event_id = events.event_id
                    if event_id is not None:
                        data = b"id: %d\n%s" % (event_id, data)
                    frames.append(data)
                    size += len(data)
                    if size >= _BATCH_BYTES:
                        break
                    waiting = events.next_ready()
                    if waiting is None:
                        break
                    event = waiting
                data = frames[0] if len(frames) == 1 else b"".join(frames)
                frames.clear()
                if error is not None:
                    if data:
                        await pump.frame(data)
                    break
                last = events.ends()
                # The stream's last event: its frame ends the response (one write).
                await pump.frame(data, last=last)
                if last:
                    finished = True
                    break
                data = b""  # not kept while the stream waits: a frame may be large
        except A2AError as exc:
            error = encode_error(exc)
        except Exception:
            logger.exception("event stream failed")
            error = encode_error(InternalError())
        if error is not None:
            await pump.frame(error)
    except asyncio.CancelledError:
        if not pump.dropped:
            raise
        # Our own cancellation (client gone or stalled): absorb it, unless
        # someone else also cancelled this task.
        if task.uncancel() > 0:
            raise
    finally:
        pump.active = False
        keep_alive.forget(pump)
        if pump.watch_timer is not None:
            pump.watch_timer.cancel()
        if pump.watcher is not None:
            pump.watcher.cancel()
        if pump.ping_task is not None and not pump.ping_task.done():
            pump.ping_task.cancel()
        await close_stream(events)
    if not pump.dropped and not finished:
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def send_sse_error(send: Send, frame: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    """A whole event stream holding one error frame (errors raised before the first event)."""
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": frame})
