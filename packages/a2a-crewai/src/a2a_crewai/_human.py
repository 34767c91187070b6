"""CrewAI's human input (``Task(human_input=True)``) as A2A input-required.

CrewAI asks for human feedback after an agent's answer, on the console by
default. Inside a served crew this provider asks the A2A client instead: the
task goes INPUT_REQUIRED with the draft answer and a question, the worker
thread waits, and the next message on the same task is the feedback. An
empty answer (or "ok", "approve"...) accepts the draft; anything else goes
back to the agent, which revises its answer. After ``max_feedback_rounds``
revisions the answer is final (a console user can go on forever; an A2A
client would have to send an explicit "ok" to end every task otherwise).
Outside a served crew the default console behaviour is kept.
"""

from __future__ import annotations

import asyncio
from typing import Any

from crewai.core.providers.human_input import SyncHumanInputProvider

from ._events import short
from ._runs import CrewRun, current_run

__all__ = ["ACCEPT_WORDS", "A2AHumanInput", "feedback_question"]

ACCEPT_WORDS = frozenset(
    {"", "ok", "okay", "yes", "y", "accept", "accepted", "approve", "approved", "lgtm", "done"}
)
"""Answers that accept the draft as it is (compared lowercased, without end punctuation)."""


def feedback_question(draft: str) -> str:
    """The input-required message: the draft answer, then what the client may reply."""
    return (
        f"{draft}\n\n"
        'Reply with feedback to improve this answer, or reply "ok" to accept it as it is.'
    )


def _accepts(answer: str) -> bool:
    return answer.strip().strip(".!").lower() in ACCEPT_WORDS


def _draft(answer: Any) -> str:
    output = getattr(answer, "output", "")
    if isinstance(output, str):
        return output
    dump = getattr(output, "model_dump_json", None)
    return str(dump()) if callable(dump) else str(output)


class A2AHumanInput(SyncHumanInputProvider):
    """Asks the A2A client for feedback when the current thread works for a served crew."""

    def handle_feedback(self, formatted_answer: Any, context: Any) -> Any:
        run = current_run()
        if run is None or context._is_training_mode():
            return super().handle_feedback(formatted_answer, context)
        answer = formatted_answer
        for _ in range(run.max_feedback_rounds):
            feedback = self._ask(run, answer, context)
            if _accepts(feedback):
                break
            context.messages.append(context._format_feedback_message(feedback))
            answer = context._invoke_loop()
        context.ask_for_human_input = False
        return answer

    async def handle_feedback_async(self, formatted_answer: Any, context: Any) -> Any:
        run = current_run()
        if run is None or context._is_training_mode():
            return await super().handle_feedback_async(formatted_answer, context)
        answer = formatted_answer
        for _ in range(run.max_feedback_rounds):
            feedback = await asyncio.to_thread(self._ask, run, answer, context)
            if _accepts(feedback):
                break
            context.messages.append(context._format_feedback_message(feedback))
            answer = await context._ainvoke_loop()
        context.ask_for_human_input = False
        return answer

    @staticmethod
    def _ask(run: CrewRun, answer: Any, context: Any) -> str:
        task = getattr(context, "task", None)
        index = run.task_ids.get(str(getattr(task, "id", "")))
        role = getattr(getattr(context, "agent", None), "role", None)
        metadata = {
            "crewai": {
                "event": "human_input",
                **({"task": index} if index is not None else {}),
                **({"agent": short(role, 60)} if role else {}),
            }
        }
        return run.ask(feedback_question(_draft(answer)), metadata)
