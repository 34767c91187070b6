"""Client transports: HTTP JSON-RPC, HTTP+JSON (REST) and in-process."""

from ..._api import publish as _publish
from .base import CallOptions, ClientTransport, EventIterator

__all__ = ["CallOptions", "ClientTransport", "EventIterator"]

_publish(__name__, [value for name, value in globals().items() if name in __all__])
