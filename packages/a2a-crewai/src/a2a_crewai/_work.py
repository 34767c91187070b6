"""The worker thread of a run: kick off the crew copy, report how it ended.

The thread runs in a fresh ``contextvars`` context in which the run is
current, CrewAI's human input goes to the A2A client, and execution-scoped
CrewAI hooks stop the crew at its next step once the task is canceled
(before each task, model call and tool call, and after each tool call). A
model or tool call already under way finishes first: CrewAI calls them
synchronously and cannot interrupt them.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable
from typing import Any

from a2a_core import telemetry

from ._events import output_parts, structured
from ._runs import Canceled, CrewRun, Failed, Finished, current_run

__all__ = ["start_worker"]

logger = logging.getLogger("a2a_crewai")

_FLUSH_SECONDS = 10.0


def _abort_if_canceled(_context: Any) -> None:
    """A CrewAI hook: stop the current run's crew when its task was canceled."""
    run = current_run()
    if run is not None:
        run.check()


def _result_of(output: Any) -> Any:
    """The final output, also when the crew streams (``CrewStreamingOutput``)."""
    if hasattr(output, "raw"):
        return output
    for _chunk in output:  # drive a streaming kickoff to its end
        pass
    return output.result


def _work(run: CrewRun, kickoff: Callable[[], Any], trace: Any = None) -> None:
    from crewai.core.providers.human_input import set_provider
    from crewai.events import crewai_event_bus
    from crewai.hooks.dispatch import InterceptionPoint, register_scoped, scoped_hooks

    from ._human import A2AHumanInput

    if trace is not None:  # the A2A run's span: the crew's spans go below it
        from opentelemetry import context

        context.attach(trace)
    run.bind()
    set_provider(A2AHumanInput())
    with scoped_hooks():
        for point in (
            InterceptionPoint.PRE_STEP,
            InterceptionPoint.PRE_MODEL_CALL,
            InterceptionPoint.PRE_TOOL_CALL,
            InterceptionPoint.POST_TOOL_CALL,
        ):
            register_scoped(point, _abort_if_canceled)
        try:
            output = _result_of(kickoff())
            raw = str(getattr(output, "raw", "") or "")
            crewai_event_bus.flush(timeout=_FLUSH_SECONDS)
            parts = output_parts(raw, structured(output))
            written = run.output_files.get(run.task_count) if run.task_count else None
            if written is not None:
                parts.append(written)
            run.push(Finished(parts, raw))
        except BaseException as exc:
            crewai_event_bus.flush(timeout=_FLUSH_SECONDS)
            if run.cancelled:
                run.push(Canceled())
            else:
                error = exc if isinstance(exc, Exception) else RuntimeError(repr(exc))
                run.push(Failed(error))


def start_worker(run: CrewRun, kickoff: Callable[[], Any], on_exit: Callable[[], None]) -> None:
    """Start the run's thread; ``on_exit`` is called in the thread when it ends.

    The thread starts from an empty context; only the trace context is carried in
    (while telemetry is on).
    """
    hooks = telemetry.active
    trace = hooks.current() if hooks is not None else None

    def main() -> None:
        try:
            contextvars.Context().run(_work, run, kickoff, trace)
        except BaseException as exc:  # never lose a thread silently
            logger.exception("a2a_crewai worker for task %s crashed", run.task_id)
            run.push(Failed(RuntimeError(f"the crew's worker thread crashed: {exc!r}")))
        finally:
            run.finished.set()
            on_exit()

    threading.Thread(target=main, name=f"a2a-crew-{run.task_id[:8]}", daemon=True).start()
