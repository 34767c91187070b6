"""OpenTelemetry for A2A: one trace across agents, metrics, and trace ids in the logs.

Off until ``enable()`` is called (``a2a serve --otel`` calls it). It needs the
``otel`` extra (``pip install 'a2a-adapters-core[otel]'``, the OpenTelemetry
API only); exporting needs an SDK configured by the application (see
docs/observability.md). While it is off, nothing from OpenTelemetry is
imported and every hook in the client and server is one ``is None`` test.

Once enabled:

- the client starts a CLIENT span per call and sends W3C ``traceparent`` /
  ``tracestate`` (and ``baggage`` when asked) on every request and stream,
  over HTTP and as gRPC metadata;
- the server continues the caller's trace: a SERVER span per A2A operation,
  the agent's run as its own span (events for status changes and
  artifacts), push deliveries carrying the task's trace context;
- the ``a2a_core`` meter records requests, durations, tasks, active
  tasks and streams, push deliveries and store latency;
- the access log carries ``trace_id`` / ``span_id``.

Message contents are never recorded unless ``record_content=True``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._otel import Telemetry

__all__ = [
    "TelemetryUnavailableError",
    "disable",
    "enable",
    "enabled",
    "get_tracer",
    "trace_ids",
]

active: Telemetry | None = None
"""The loaded implementation while enabled (internal: hooks test it against None)."""


class TelemetryUnavailableError(RuntimeError):
    """``enable()`` was called but the OpenTelemetry API is not installed."""


def enable(
    *,
    tracer_provider: Any = None,
    meter_provider: Any = None,
    baggage: bool = False,
    record_content: bool = False,
) -> None:
    """Turn tracing, metrics and log correlation on for this process.

    - ``tracer_provider`` / ``meter_provider``: default the global ones
      (``opentelemetry.trace.set_tracer_provider``), looked up on each use, so
      the SDK may be configured before or after this call.
    - ``baggage``: also send and accept W3C ``baggage``.
    - ``record_content``: add message and artifact text to span events
      (off by default: contents may be personal data).

    Call it before building clients and apps; calling it again replaces the settings.
    """
    global active
    try:
        from ._otel import Telemetry
    except ImportError as exc:  # pragma: no cover - exercised in a venv without the extra
        raise TelemetryUnavailableError(
            "OpenTelemetry is not installed: pip install 'a2a-adapters-core[otel]'"
        ) from exc
    active = Telemetry(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        baggage=baggage,
        record_content=record_content,
    )


def disable() -> None:
    """Turn it off again: later calls and requests are neither traced nor measured."""
    global active
    active = None


def enabled() -> bool:
    """Whether ``enable()`` is in force."""
    return active is not None


def trace_ids() -> tuple[str, str] | None:
    """The current span's (trace id, span id) in hex, or None (off, or no span)."""
    hooks = active
    return hooks.trace_ids() if hooks is not None else None


def get_tracer(name: str) -> Any:
    """An OpenTelemetry tracer from the provider ``enable()`` was given (None while off).

    The framework adapters (``a2a_langchain``, ``a2a_crewai``) make their spans
    with it, so they land where the A2A spans do.
    """
    hooks = active
    return hooks.get_tracer(name) if hooks is not None else None
