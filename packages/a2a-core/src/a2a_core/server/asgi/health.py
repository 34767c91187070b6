"""``/healthz`` and ``/readyz``: probes for orchestrators (Kubernetes liveness and readiness).

Both answer without authentication (a probe has no credentials) and say nothing
about tasks or callers:

- ``/healthz``: 200 while the process serves requests at all (liveness).
- ``/readyz``: 200 when the task store answers a read within ``READY_TIMEOUT``
  seconds and the server is not draining (shutting down); else 503 with the
  reason, so a load balancer stops sending new work here.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ...wire import dumps
from .access import label
from .http import Scope, Send, send_bytes

__all__ = ["HEALTH_PATH", "PROBE_PATHS", "READY_PATH", "READY_TIMEOUT", "respond"]

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
PROBE_PATHS = frozenset({HEALTH_PATH, READY_PATH})
READY_TIMEOUT = 2.0
"""Seconds the store may take to answer the readiness read."""

_PROBE_TASK_ID = "a2a-readiness-probe"
_JSON = b"application/json"
_NO_STORE = [(b"cache-control", b"no-store")]


async def respond(service: Any, scope: Scope, send: Send, path: str) -> None:
    """Answer one probe request (GET or HEAD) for ``service``."""
    label(scope, "health")
    if scope["method"] not in ("GET", "HEAD"):
        body = dumps({"error": {"code": 405, "message": "Probes are read-only"}})
        await send_bytes(send, 405, body, _JSON, [(b"allow", b"GET, HEAD")])
        return
    if path == HEALTH_PATH:
        status, document = 200, {"status": "ok"}
    else:
        status, document = await _readiness(service)
    body = b"" if scope["method"] == "HEAD" else dumps(document)
    await send_bytes(send, status, body, _JSON, _NO_STORE)


async def _readiness(service: Any) -> tuple[int, dict[str, Any]]:
    if service.manager.closing:
        return 503, {"status": "unavailable", "reason": "draining"}
    try:
        async with asyncio.timeout(READY_TIMEOUT):
            await service.store.get(_PROBE_TASK_ID, None)
    except TimeoutError:
        return 503, {"status": "unavailable", "reason": "store did not answer in time"}
    except Exception as exc:
        return 503, {"status": "unavailable", "reason": f"store unreachable ({type(exc).__name__})"}
    return 200, {"status": "ok"}
