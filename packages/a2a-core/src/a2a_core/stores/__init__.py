"""Task stores: where tasks live (memory by default; chosen by URL)."""

from .base import ConcurrentUpdateError, StoredTask, TaskPage, TaskQuery, TaskStore
from .memory import MemoryTaskStore

__all__ = [
    "ConcurrentUpdateError",
    "MemoryTaskStore",
    "StoredTask",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
]
