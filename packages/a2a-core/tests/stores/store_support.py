"""Helpers for the store tests: where Redis is, and whether it answers."""

from __future__ import annotations

import socket
import uuid

REDIS_HOST = "127.0.0.1"
REDIS_PORT = 6379
REDIS_URL = f"redis://{REDIS_HOST}:{REDIS_PORT}/0"
RUN_PREFIX = f"a2a-test-{uuid.uuid4().hex[:12]}"

_unreachable: str | None = None
_probed = False


def redis_unreachable() -> str | None:
    """Why Redis cannot be used here (None when it answers PING); probed once per run."""
    global _unreachable, _probed
    if not _probed:
        _probed = True
        try:
            with socket.create_connection((REDIS_HOST, REDIS_PORT), timeout=1.0) as sock:
                sock.settimeout(1.0)
                sock.sendall(b"PING\r\n")
                reply = sock.recv(64)
            if not reply.startswith(b"+PONG"):
                _unreachable = f"{REDIS_HOST}:{REDIS_PORT} answered {reply!r} to PING"
        except OSError as exc:
            _unreachable = f"no Redis on {REDIS_HOST}:{REDIS_PORT} ({exc})"
    return _unreachable


def delete_keys(prefix: str) -> None:
    import redis

    client = redis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=0, socket_timeout=5)
    try:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=500))
        if keys:
            client.delete(*keys)
    finally:
        client.close()
