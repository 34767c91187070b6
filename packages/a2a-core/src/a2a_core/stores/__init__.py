"""Task stores: where tasks live (memory by default; chosen by URL)."""

from ..exports import publish as _publish
from .base import ConcurrentUpdateError, StoredTask, TaskPage, TaskQuery, TaskStore
from .compact import CompactMemoryTaskStore
from .memory import MemoryTaskStore

__all__ = [
    "CompactMemoryTaskStore",
    "ConcurrentUpdateError",
    "MemoryTaskStore",
    "StoredTask",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
]

_publish(__name__, [value for name, value in globals().items() if name in __all__])
