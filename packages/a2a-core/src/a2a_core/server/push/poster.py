"""The webhook poster: one delivery as an HTTP POST, signed, retried with backoff.

Each attempt is checked against the URL policy at dispatch time and sent
through the vetted transport (it connects only to addresses the policy
allows), never following redirects. Retried: connection errors, timeouts,
HTTP 429 and 5xx, after the delay ``RetryPolicy`` gives (at least what a
``Retry-After`` in seconds asks for, up to its cap).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid
from dataclasses import dataclass

import httpx

from ... import telemetry as _telemetry
from ...contracts.push_configs import PushConfigEntry
from ...net.url_policy import ResolutionError, TargetRefusedError, UrlPolicy
from ...net.vetted_transport import VettedTransport
from ...webhooks import WebhookSigner
from .delivery import Delivery, delivery_id
from .payload import render

__all__ = ["RetryPolicy", "WebhookPoster"]

logger = logging.getLogger("a2a_core.server.push")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Bounded retries with exponential backoff and jitter.

    Retried: connection errors, timeouts, HTTP 429 and 5xx. Not retried: other
    statuses (4xx, and 3xx since redirects are never followed) and URLs the
    policy refuses.
    """

    max_retries: int = 3
    """Retries after the first attempt (delays 0.5 s, 1 s, 2 s by default)."""
    backoff: float = 0.5
    """Delay before the first retry; doubles for each later one."""
    max_backoff: float = 30.0
    """Cap on any delay, including one asked for by ``Retry-After``."""
    jitter: float = 0.2
    """Each delay is scaled by a random factor in [1 - jitter, 1 + jitter]."""

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.backoff < 0 or self.max_backoff < 0:
            raise ValueError("max_retries, backoff and max_backoff must be >= 0")
        if not 0 <= self.jitter < 1:
            raise ValueError("jitter must be in [0, 1)")

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        base = self.backoff * (2 ** (retry - 1))
        if retry_after is not None:
            base = max(base, retry_after)
        base = min(base, self.max_backoff)
        return base * random.uniform(1 - self.jitter, 1 + self.jitter)


def _origin(policy: UrlPolicy, url: str) -> str:
    try:
        return policy.parse(url).safe_origin
    except (TargetRefusedError, ValueError):
        return "-"


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None  # HTTP-date form: fall back to our own backoff
    return seconds if seconds >= 0 else None


class WebhookPoster:
    """Posts deliveries to webhooks, at most ``max_concurrency`` requests in flight."""

    def __init__(
        self,
        policy: UrlPolicy,
        *,
        timeout: float,
        retry: RetryPolicy,
        max_concurrency: int,
        transport: httpx.AsyncBaseTransport | None,
        signer: WebhookSigner | None,
    ) -> None:
        """``transport``: an httpx transport (tests); default ``VettedTransport(policy)``."""
        self.policy = policy
        self.timeout = timeout
        self.retry = retry
        self.transport = transport
        self._signer = signer
        self._concurrency_limit = max_concurrency
        self._concurrency: asyncio.Semaphore | None = None
        self._client: httpx.AsyncClient | None = None
        self.retried = 0
        """Retry attempts made."""

    def bind(self) -> None:
        """Start over on a new event loop (the client and the limit belonged to the old one)."""
        self._concurrency = asyncio.Semaphore(self._concurrency_limit)
        self._client = None

    async def aclose(self) -> None:
        """Close the HTTP client (a later delivery opens a new one)."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def send(self, entry: PushConfigEntry, delivery: Delivery) -> bool:
        """Post ``delivery`` to the config's webhook; True when it accepted it (a 2xx)."""
        hooks = _telemetry.active
        if hooks is None:
            return await self._post(entry, delivery)
        span, headers = hooks.push_start(
            delivery.trace, _origin(self.policy, entry.config.url), delivery.task_id
        )
        delivered = False
        try:
            delivered = await self._post(entry, delivery, headers)
        finally:
            hooks.push_end(span, delivered)
        return delivered

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                transport=self.transport or VettedTransport(self.policy),
                follow_redirects=False,
                timeout=httpx.Timeout(self.timeout),
                trust_env=False,
                headers={"User-Agent": "a2a-adapters-core push notifier"},
            )
        return self._client

    async def _post(
        self, entry: PushConfigEntry, delivery: Delivery, trace: dict[str, str] | None = None
    ) -> bool:
        """One delivery with retries; True when the webhook accepted it.

        ``trace``: W3C trace headers to send (telemetry on), so the receiver can
        continue the task's trace.
        """
        config = entry.config
        where = f"task {delivery.task_id} config {delivery.config_id}"
        try:
            origin = self.policy.parse(config.url).safe_origin
            body, headers = render(config, entry.version, delivery.task, delivery.event)
            if trace:
                headers = {**headers, **trace}
        except (TargetRefusedError, ValueError) as exc:
            logger.warning("push for %s not sent: %s", where, exc)
            return False
        assert self._concurrency is not None
        reason = ""
        retry_after: float | None = None
        message_id = (
            f"msg_{uuid.uuid4().hex}"
            if delivery.ref is None
            else delivery_id(delivery.task_id, delivery.ref, delivery.config_id)
        )
        # A redelivery comes after the second it was queued in: the dead instance's attempt,
        # under the same id, was signed no later than that.
        signed_at = delivery.redelivered_at or 0
        for attempt in range(self.retry.max_retries + 1):
            if attempt:
                self.retried += 1
                await asyncio.sleep(self.retry.delay(attempt, retry_after))
            retry_after = None
            sent = headers
            if self._signer is not None:
                # each attempt is signed anew, strictly later, so it is no replay of the last
                signed_at = max(int(time.time()), signed_at + 1)
                signature = self._signer.sign(body, message_id=message_id, timestamp=signed_at)
                sent = {**headers, **signature}
            try:
                target = await self.policy.check_dispatch(config.url)
                async with (
                    self._concurrency,
                    asyncio.timeout(self.timeout),
                    self._http().stream("POST", target.url, content=body, headers=sent) as response,
                ):
                    status = response.status_code
                    retry_after = _retry_after(response.headers.get("retry-after"))
            except TargetRefusedError as exc:
                logger.warning("push to %s for %s refused: %s", origin, where, exc)
                return False
            except (ResolutionError, TimeoutError, httpx.TimeoutException) as exc:
                reason = f"{type(exc).__name__} {exc}".strip()
                continue
            except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
                reason = f"{type(exc).__name__}: {exc}"
                continue
            except httpx.HTTPError as exc:
                logger.warning("push to %s for %s failed: %s", origin, where, type(exc).__name__)
                return False
            if 200 <= status < 300:
                return True
            if status == 429 or status >= 500:
                reason = f"HTTP {status}"
                continue
            logger.warning(
                "push to %s for %s rejected with HTTP %d (not retried)", origin, where, status
            )
            return False
        logger.warning(
            "push to %s for %s failed after %d attempts: %s",
            origin,
            where,
            self.retry.max_retries + 1,
            reason,
        )
        return False
