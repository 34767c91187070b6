"""Signed webhooks: push deliveries signed with HMAC-SHA256, and the receiver's check.

The format is the one of Standard Webhooks (standardwebhooks.com), so any
receiver that speaks it can check our deliveries. Every delivery carries:

- ``webhook-id``: the delivery's id (the same on each retry of it);
- ``webhook-timestamp``: when this attempt was signed (Unix seconds; each
  retry is signed anew, with a later timestamp);
- ``webhook-signature``: ``v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">``
  (several space-separated signatures while a secret is rotated).

The signature covers the id, the time and the exact body bytes; other
headers (``Authorization``, the notification token, trace headers) are not
covered. A receiver checks the signature with ``verify_webhook`` (stateless:
signature and freshness) or a ``WebhookVerifier`` (which also refuses a
delivery id it has already accepted within the window: a replay). Both raise
``WebhookVerificationError`` saying why. The crypto is the standard
library's ``hmac``; comparisons are constant-time.

A secret is ``whsec_`` and base64 (Standard Webhooks; ``new_webhook_secret()``
makes one), or raw bytes, or any other string of at least 16 characters (its
UTF-8 bytes).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Mapping, Sequence

__all__ = [
    "DEFAULT_TOLERANCE",
    "ID_HEADER",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "WebhookSigner",
    "WebhookVerificationError",
    "WebhookVerifier",
    "new_webhook_secret",
    "verify_webhook",
]

ID_HEADER = "webhook-id"
"""The delivery's id: the same on each retry of it (make processing idempotent by it)."""
TIMESTAMP_HEADER = "webhook-timestamp"
"""When the attempt was signed, in Unix seconds."""
SIGNATURE_HEADER = "webhook-signature"
"""``v1,<base64 HMAC-SHA256>`` of ``{id}.{timestamp}.{body}``, space-separated when several."""
DEFAULT_TOLERANCE = 300
"""Seconds a delivery's timestamp may be away from the receiver's clock (either way)."""

_PREFIX = "whsec_"
_MIN_KEY_BYTES = 16
_MAX_SIGNATURES = 16

Secret = str | bytes
Secrets = Secret | Sequence[Secret]


class WebhookVerificationError(ValueError):
    """A delivery failed the check: ``reason`` says which (never the secret)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"webhook refused: {reason}")
        self.reason = reason


def new_webhook_secret() -> str:
    """A fresh random secret (32 bytes) in the ``whsec_`` form."""
    return _PREFIX + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def _key(secret: Secret) -> bytes:
    if isinstance(secret, bytes):
        key = secret
    elif secret.startswith(_PREFIX):
        try:
            key = base64.b64decode(secret[len(_PREFIX) :], validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("a whsec_ secret must be base64 after the prefix") from None
    else:
        key = secret.encode("utf-8")
    if len(key) < _MIN_KEY_BYTES:
        raise ValueError(f"a webhook secret must be at least {_MIN_KEY_BYTES} bytes")
    return key


def _keys(secret: Secrets) -> list[bytes]:
    if isinstance(secret, str | bytes):
        return [_key(secret)]
    keys = [_key(s) for s in secret]
    if not keys:
        raise ValueError("give at least one webhook secret")
    return keys


def _signature(key: bytes, message_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


class WebhookSigner:
    """Signs webhook bodies (the push sender uses it; ``push_signing_secret`` configures it).

    With several secrets (rotation: the new one first), each delivery carries one
    signature per secret, so receivers holding either accept it.
    """

    def __init__(self, secret: Secrets) -> None:
        self._keys = _keys(secret)

    def sign(
        self, body: bytes, *, message_id: str | None = None, timestamp: int | None = None
    ) -> dict[str, str]:
        """The three headers for ``body`` (a new id unless given; the time now unless given)."""
        message_id = message_id or f"msg_{uuid.uuid4().hex}"
        if not message_id or any(c in message_id for c in " \r\n"):
            raise ValueError("a webhook id has no spaces or line breaks")
        when = int(time.time()) if timestamp is None else timestamp
        signatures = " ".join(_signature(k, message_id, when, body) for k in self._keys)
        return {ID_HEADER: message_id, TIMESTAMP_HEADER: str(when), SIGNATURE_HEADER: signatures}

    def __repr__(self) -> str:  # never the secret
        return f"WebhookSigner({len(self._keys)} secret(s))"


def _header(headers: Mapping[str, str], name: str) -> str:
    value = headers.get(name)
    if value is None:
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    if value is None or not value.strip():
        raise WebhookVerificationError(f"no {name} header")
    return value.strip()


def verify_webhook(
    secret: Secrets,
    headers: Mapping[str, str],
    body: bytes,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    now: float | None = None,
) -> str:
    """Check a delivery's signature and freshness; its ``webhook-id`` when it passes.

    ``secret``: one, or several (while rotating). ``body``: the exact bytes
    received (before any JSON parsing). Raises ``WebhookVerificationError``
    for a missing header, a timestamp more than ``tolerance`` seconds away, or
    no signature that matches. It keeps no state: to refuse replays within
    the window as well, use a ``WebhookVerifier``.
    """
    keys = _keys(secret)
    message_id = _header(headers, ID_HEADER)
    stamp = _header(headers, TIMESTAMP_HEADER)
    offered = _header(headers, SIGNATURE_HEADER).split()
    if not stamp.isdigit() or len(stamp) > 12:
        raise WebhookVerificationError("the timestamp is not a Unix time in seconds")
    timestamp = int(stamp)
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise WebhookVerificationError(
            f"the timestamp is more than {tolerance:g} s away (stale, or from the future)"
        )
    expected = [_signature(k, message_id, timestamp, body) for k in keys]
    for candidate in offered[:_MAX_SIGNATURES]:
        if any(hmac.compare_digest(candidate, e) for e in expected):
            return message_id
    raise WebhookVerificationError("no signature matches (a wrong secret, or a changed body)")


class WebhookVerifier:
    """``verify_webhook`` that also refuses a replay: a signed message it accepted already.

    A message is its id and timestamp: a captured delivery sent again is
    refused, while a retry of the sender (signed anew, with a later
    timestamp, the same id) passes, so make your processing idempotent by the
    id. Accepted messages are remembered for the tolerance window (an older
    one fails the timestamp check anyway), at most ``max_remembered`` (oldest
    forgotten first). Thread-safe. One verifier per receiving process: behind
    several processes, keep the ids in a shared store of your own.
    """

    def __init__(
        self,
        secret: Secrets,
        *,
        tolerance: float = DEFAULT_TOLERANCE,
        max_remembered: int = 100_000,
    ) -> None:
        if tolerance <= 0 or max_remembered <= 0:
            raise ValueError("tolerance and max_remembered must be > 0")
        self._secret: Secrets = secret
        _keys(secret)  # refuse a bad secret now, not at the first delivery
        self.tolerance = tolerance
        self.max_remembered = max_remembered
        self._seen: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def verify(self, headers: Mapping[str, str], body: bytes, *, now: float | None = None) -> str:
        """Check signature, freshness and novelty; the delivery's id when it passes."""
        current = time.time() if now is None else now
        message_id = verify_webhook(
            self._secret, headers, body, tolerance=self.tolerance, now=current
        )
        key = f"{message_id} {_header(headers, TIMESTAMP_HEADER)}"
        with self._lock:
            horizon = current - 2 * self.tolerance
            while self._seen and next(iter(self._seen.values())) < horizon:
                self._seen.popitem(last=False)
            if key in self._seen:
                raise WebhookVerificationError(
                    f"delivery {message_id[:64]!r} was already received (a replay)"
                )
            self._seen[key] = current
            while len(self._seen) > self.max_remembered:
                self._seen.popitem(last=False)
        return message_id

    def __repr__(self) -> str:  # never the secret
        return f"WebhookVerifier(tolerance={self.tolerance:g}, remembered={len(self._seen)})"
