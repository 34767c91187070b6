"""Client-side failures that are not the agent's answer: the network, the clock.

Errors the agent sends keep their own classes (TaskNotFoundError, ...). These
two cover the cases where no answer arrived. They are InternalError
subclasses so a gateway relaying them reports an internal error, and a
caller catching ``A2AError`` sees every failure of a call.
"""

from __future__ import annotations

from ...errors import InternalError

__all__ = ["A2AConnectionError", "A2ATimeoutError"]


class A2AConnectionError(InternalError):
    """The agent could not be reached, or the connection broke mid-call."""

    default_message = "Could not reach the agent"


class A2ATimeoutError(A2AConnectionError, TimeoutError):
    """The agent did not answer in time."""

    default_message = "The agent did not answer in time"
