"""The transport contract: one A2A operation in, the internal result (or typed error) out.

A transport owns one binding of one protocol version at one endpoint. It
takes internal request models, speaks the wire, validates what comes back
and returns internal models; every failure is an ``A2AError`` subclass.
Streaming operations are opened with ``open_stream``, which raises errors
before returning, like ``A2AService.open_stream`` does, so callers handle
errors at one place whatever the transport.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel

from ...types import StreamEvent
from ...wire.operations import Operation

if TYPE_CHECKING:
    import httpx

    from ...identity import Credential
    from ...types import AgentInterface
    from ._http import HttpSettings

__all__ = [
    "CallOptions",
    "ClientTransport",
    "EventIterator",
    "StreamPosition",
    "TLSFiles",
    "TransportConfig",
    "TransportFactory",
]

EventIterator = AsyncGenerator[StreamEvent, None]
"""An open stream of events; ``aclose()`` ends it and releases the connection."""


class StreamPosition:
    """Where a stream got to: the id of the last event read (the server's SSE ``id``).

    Sent back as ``Last-Event-ID`` to resume after a dropped stream
    (``A2AClient.resubscribe``). None when the server sent no ids.
    """

    __slots__ = ("last_event_id",)

    def __init__(self, last_event_id: str | None = None) -> None:
        self.last_event_id = last_event_id


@dataclass(frozen=True, slots=True)
class CallOptions:
    """Per-call additions: extra headers, a timeout, extensions to activate."""

    headers: Mapping[str, str] | None = None
    timeout: float | None = None
    """Seconds for this call (streams: to open and between events)."""
    extensions: tuple[str, ...] = ()
    """Extension URIs to activate (``A2A-Extensions`` header; 0.3: ``X-A2A-Extensions``)."""
    position: StreamPosition | None = None
    """Streams: updated with the id of each event as it is read."""
    credential: Credential | None = None
    """A caller's credential forwarded instead of the client's own (token passthrough):
    sent as ``Authorization``, and the client's own auth (``auth=``, static
    ``Authorization`` headers) is not applied to this call."""


@runtime_checkable
class ClientTransport(Protocol):
    """One endpoint, one binding, one protocol version."""

    @property
    def version(self) -> str:
        """The protocol version spoken: "1.0" or "0.3"."""
        ...

    @property
    def binding(self) -> str:
        """ "JSONRPC", "HTTP+JSON" or "INPROCESS"."""
        ...

    @property
    def can_cancel_in_flight(self) -> bool:
        """Whether cancelling the awaiting asyncio task stops the call at the peer too."""
        ...

    @property
    def concurrent_calls(self) -> bool:
        """Whether several calls may be awaited at once on this transport."""
        ...

    async def call(
        self, op: Operation, request: BaseModel, options: CallOptions | None = None
    ) -> Any:
        """Run a unary operation; the internal result (see ``wire.RESULT_TYPES``)."""
        ...

    async def open_stream(
        self, op: Operation, request: BaseModel, options: CallOptions | None = None
    ) -> EventIterator:
        """Start a streaming operation; errors are raised here, before the first event."""
        ...

    async def aclose(self) -> None:
        """Release connections (a transport given a shared HTTP client leaves it open)."""
        ...


@dataclass(frozen=True, slots=True)
class TLSFiles:
    """The PEM bytes of ``verify`` / ``cert`` given as files, for transports that cannot take
    an ``ssl.SSLContext`` (gRPC): trusted roots, client certificate chain, its key."""

    roots: bytes | None = None
    cert: bytes | None = None
    key: bytes | None = None

    def __repr__(self) -> str:  # never the key
        return f"TLSFiles(roots={self.roots is not None}, cert={self.cert is not None})"


@dataclass(frozen=True, slots=True)
class TransportConfig:
    """What a client transport factory is given besides the interface."""

    http: httpx.AsyncClient
    """The HTTP client of the connection (HTTP bindings send through it)."""
    settings: HttpSettings
    """Timeouts and response bounds."""
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    """Headers for every call (also set on ``http`` when we created it); others send them
    as their own metadata."""
    tls: TLSFiles | None = None
    """The CA bundle and client certificate given as files (``verify=`` / ``cert=``), for
    transports that open their own TLS connections (gRPC); HTTP ones use ``http``."""


TransportFactory = Callable[["AgentInterface", TransportConfig], "ClientTransport"]
"""``factory(interface, config) -> ClientTransport`` for one interface of the binding."""
