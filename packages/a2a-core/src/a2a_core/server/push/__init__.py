"""Push notifications: webhook configs per task and their delivery (see ``notifier``).

The URL policy and the vetted transport live in ``a2a_core.net`` (client file
downloads use them too); they are exported here as well.
"""

from ...exports import publish as _publish
from ...net import ResolutionError, TargetRefusedError, UrlPolicy, VettedTransport, address_class
from .notifier import REDACTED, PushNotificationService, PushStats, RetryPolicy, redact
from .store import MemoryPushConfigStore, PushConfigEntry, PushConfigStore

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
