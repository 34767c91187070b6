"""What one webhook POST carries, in the protocol version the config was made in.

1.0: the event as a StreamResponse (``{"statusUpdate": ...}`` or
``{"artifactUpdate": ...}``), ``Content-Type: application/a2a+json``.
0.3: the whole Task in its JSON-RPC shape (``kind: "task"``), which is what
0.3 receivers expect, ``Content-Type: application/json``.
Both carry ``A2A-Version``, ``Authorization: <scheme> <credentials>`` from
``authentication``, and the token in ``X-A2A-Notification-Token`` (dropped
from the 1.0 spec text, still read by receivers).
"""

from __future__ import annotations

import re

from ...errors import InvalidParamsError
from ...types import StreamEvent, Task, TaskPushNotificationConfig
from ...wire import V10Codec, dumps
from ...wire.v03 import V03JsonRpcCodec

__all__ = ["TOKEN_HEADER", "check_secrets", "render"]

TOKEN_HEADER = "X-A2A-Notification-Token"

_V10 = V10Codec()
_V03 = V03JsonRpcCodec()

_SCHEME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$")
"""An HTTP auth-scheme is a token (RFC 9110 section 11.1)."""
_HEADER_VALUE = re.compile(r"^[\x20-\x7e]*$")
"""Visible ASCII and spaces only: no CR/LF header injection, nothing a client could mangle."""
MAX_SECRET_LENGTH = 8192


def check_secrets(config: TaskPushNotificationConfig) -> None:
    """Refuse token / authentication values that cannot travel in an HTTP header."""
    if config.token is not None:
        _check_value("token", config.token)
    auth = config.authentication
    if auth is not None:
        if not _SCHEME.match(auth.scheme):
            raise InvalidParamsError(
                "authentication.scheme must be an HTTP authentication scheme such as Bearer"
            )
        if auth.credentials is not None:
            _check_value("authentication.credentials", auth.credentials)


def _check_value(name: str, value: str) -> None:
    if len(value) > MAX_SECRET_LENGTH:
        raise InvalidParamsError(f"{name} is longer than {MAX_SECRET_LENGTH} characters")
    if not _HEADER_VALUE.match(value) or value != value.strip():
        raise InvalidParamsError(
            f"{name} must be printable ASCII without leading or trailing spaces"
        )


def render(
    config: TaskPushNotificationConfig, version: str, task: Task, event: StreamEvent
) -> tuple[bytes, dict[str, str]]:
    """The body and headers of one delivery."""
    if version == "0.3":
        body = dumps(_V03.encode_event(task))
        headers = {"Content-Type": "application/json", "A2A-Version": "0.3"}
    else:
        body = dumps(_V10.encode_event(event))
        headers = {"Content-Type": "application/a2a+json", "A2A-Version": "1.0"}
    auth = config.authentication
    if auth is not None and auth.credentials:
        headers["Authorization"] = f"{auth.scheme} {auth.credentials}"
    if config.token:
        headers[TOKEN_HEADER] = config.token
    return body, headers
