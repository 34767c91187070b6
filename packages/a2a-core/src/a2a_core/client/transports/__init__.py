"""Client transports: HTTP JSON-RPC, HTTP+JSON (REST) and in-process."""

from ...exports import publish as _publish
from ._early import answer_early
from .base import (
    CallOptions,
    ClientTransport,
    EventIterator,
    StreamPosition,
    TransportConfig,
    TransportFactory,
)

__all__ = [
    "CallOptions",
    "ClientTransport",
    "EventIterator",
    "StreamPosition",
    "TransportConfig",
    "TransportFactory",
    "answer_early",
]

_publish(__name__, [value for name, value in globals().items() if name in __all__])
