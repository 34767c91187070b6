"""The A2A HTTP layer: a plain ASGI app serving the HTTP bindings of ``a2a_core.bindings``
(JSON-RPC and HTTP+JSON built in) and SSE; ``ServedBinding`` is a binding's server side."""

from ...exports import publish as _publish
from .app import A2AApp, create_app
from .card_route import CARD_PATHS, CardDocument
from .edge import Authenticate
from .origin import TrustedProxies, interfaces_for
from .routes import Route, RouteContext, RouteHandler, ServedBinding, published_interfaces
from .sse import SseConfig

__all__ = [
    "CARD_PATHS",
    "A2AApp",
    "Authenticate",
    "CardDocument",
    "Route",
    "RouteContext",
    "RouteHandler",
    "ServedBinding",
    "SseConfig",
    "TrustedProxies",
    "create_app",
    "interfaces_for",
    "published_interfaces",
]

_publish(__name__, [value for name, value in globals().items() if name in __all__])
