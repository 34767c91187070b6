"""The A2A 1.0 data model as pydantic v2 models (the one canonical internal model)."""

from .._api import publish as _publish
from ._base import A2AModel, Base64Bytes, Struct, Timestamp, format_timestamp
from ._card import *  # noqa: F403
from ._card import __all__ as _card_all
from ._enums import INTERRUPTED_STATES, TERMINAL_STATES, Role, TaskState
from ._messages import *  # noqa: F403
from ._messages import __all__ as _messages_all
from ._push import AuthenticationInfo, TaskPushNotificationConfig
from ._requests import *  # noqa: F403
from ._requests import __all__ as _requests_all

__all__ = [  # pyright: ignore[reportUnsupportedDunderAll]
    "INTERRUPTED_STATES",
    "TERMINAL_STATES",
    "A2AModel",
    "AuthenticationInfo",
    "Base64Bytes",
    "Role",
    "Struct",
    "TaskPushNotificationConfig",
    "TaskState",
    "Timestamp",
    "format_timestamp",
    *_card_all,
    *_messages_all,
    *_requests_all,
]

_publish(__name__, [value for name, value in globals().items() if name in __all__])
