"""The A2A server: service, task lifecycle, executors (and, in ``asgi``, the HTTP app)."""

from ..contracts.channel import ChannelListener, TaskChannel
from ..errors import ConfigurationError
from ..exports import publish as _publish
from .artifact_stream import ArtifactStream
from .cancellation import CancellationToken, CancelledByClient
from .context import Principal, ServerCallContext
from .events import EventBus, EventsLost, MemoryEventBus, Subscription
from .executor import AgentExecutor, RequestContext, as_executor
from .files import FileStore
from .leases import new_instance_id
from .manager import ManagerConfig, TaskManager
from .memory_channel import MemoryTaskChannel, channel_for
from .push_api import PushNotifier
from .service import A2AService
from .updater import TaskUpdater

__all__ = [
    "A2AService",
    "AgentExecutor",
    "ArtifactStream",
    "CancellationToken",
    "CancelledByClient",
    "ChannelListener",
    "ConfigurationError",
    "EventBus",
    "EventsLost",
    "FileStore",
    "ManagerConfig",
    "MemoryEventBus",
    "MemoryTaskChannel",
    "Principal",
    "PushNotifier",
    "RequestContext",
    "ServerCallContext",
    "Subscription",
    "TaskChannel",
    "TaskManager",
    "TaskUpdater",
    "as_executor",
    "channel_for",
    "new_instance_id",
]

_publish(__name__, [value for name, value in globals().items() if name in __all__])
