"""Push notifications: webhook configs per task and their delivery (see ``notifier``)."""

from ...exports import publish as _publish
from .notifier import REDACTED, PushNotificationService, PushStats, RetryPolicy, redact
from .policy import ResolutionError, TargetRefusedError, UrlPolicy, address_class
from .store import MemoryPushConfigStore, PushConfigEntry, PushConfigStore
from .transport import VettedTransport

__all__ = [
    "REDACTED",
    "MemoryPushConfigStore",
    "PushConfigEntry",
    "PushConfigStore",
    "PushNotificationService",
    "PushStats",
    "ResolutionError",
    "RetryPolicy",
    "TargetRefusedError",
    "UrlPolicy",
    "VettedTransport",
    "address_class",
    "redact",
]

_publish(__name__, [value for name, value in globals().items() if name in __all__])
