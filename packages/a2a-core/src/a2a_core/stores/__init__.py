"""Task stores: where tasks live (memory by default; chosen by URL)."""

from ..contracts.task_store import ConcurrentUpdateError, StoredTask, TaskPage, TaskQuery, TaskStore
from ..exports import publish as _publish
from .memory import MemoryTaskStore

__all__ = [
    "ConcurrentUpdateError",
    "MemoryTaskStore",
    "StoredTask",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
]

_publish(__name__, [value for name, value in globals().items() if name in __all__])
