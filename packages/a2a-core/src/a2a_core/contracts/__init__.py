"""The contracts a backend implements: task store, channel, file backend, push-config store.

They sit below both ``a2a_core.server`` (which uses them) and ``a2a_core.stores``
(which implements them), and import neither: a new store is written against this
package alone. ``a2a_core.testing`` holds the suites that check an implementation.
"""

from ..exports import publish as _publish
from .channel import ChannelItem, ChannelListener, EventsLost, ListenerSet, TaskChannel
from .files import FileBackend, FileLimits, StoredFile
from .push_configs import PushConfigEntry, PushConfigStore
from .task_store import ConcurrentUpdateError, StoredTask, TaskPage, TaskQuery, TaskStore

__all__ = [
    "ChannelItem",
    "ChannelListener",
    "ConcurrentUpdateError",
    "EventsLost",
    "FileBackend",
    "FileLimits",
    "ListenerSet",
    "PushConfigEntry",
    "PushConfigStore",
    "StoredFile",
    "StoredTask",
    "TaskChannel",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
]

_publish(__name__, [value for name, value in globals().items() if name in __all__])
