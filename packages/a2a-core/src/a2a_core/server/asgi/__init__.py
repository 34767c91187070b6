"""The A2A HTTP layer: a plain ASGI app with the JSON-RPC and HTTP+JSON bindings and SSE."""

from ..._api import publish as _publish
from .app import A2AApp, create_app
from .card_route import CARD_PATHS, CardDocument
from .edge import Authenticate
from .origin import TrustedProxies, interfaces_for
from .sse import SseConfig

__all__ = [
    "CARD_PATHS",
    "A2AApp",
    "Authenticate",
    "CardDocument",
    "SseConfig",
    "TrustedProxies",
    "create_app",
    "interfaces_for",
]

_publish(__name__, [value for name, value in globals().items() if name in __all__])
