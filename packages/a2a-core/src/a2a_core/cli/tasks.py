"""Task commands: ``a2a get``, ``a2a list``, ``a2a cancel`` and ``a2a subscribe``."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from .common import ExitCode, UsageError, connect, connection_parser, exit_code_for, session_of

if TYPE_CHECKING:
    from ..client import A2AClient
    from ..hookspecs import CommandParsers
    from ..types import Task, TaskState

__all__ = ["add_parsers", "parse_state"]

_STATES = (
    "submitted",
    "working",
    "input-required",
    "auth-required",
    "completed",
    "failed",
    "canceled",
    "rejected",
)


def add_parsers(commands: CommandParsers) -> None:
    connection = connection_parser()

    def command(name: str, *, task: bool = True, **kwargs: Any) -> argparse.ArgumentParser:
        """A command on one agent URL (and, with ``task``, one task id)."""
        parser = commands.add_parser(
            name,
            parents=[connection],
            formatter_class=argparse.RawDescriptionHelpFormatter,
            **kwargs,
        )
        parser.add_argument("url", metavar="URL", help="the agent's URL")
        if task:
            parser.add_argument("task_id", metavar="TASK_ID")
        return parser

    get = command(
        "get",
        help="show a task: its state, artifacts and (with --history) messages",
        description="Show a task as the agent knows it now.",
        epilog=(
            "examples:\n"
            "  a2a get http://localhost:8000 TASK_ID\n"
            "  a2a get http://localhost:8000 TASK_ID --history      # every message\n"
            "  a2a get http://localhost:8000 TASK_ID --history 10   # the last 10\n"
            "  a2a get http://localhost:8000 TASK_ID --json | jq .status\n\n"
            "exit status: 0, or 1 when the task failed, was rejected or canceled."
        ),
    )
    get.add_argument(
        "--history",
        nargs="?",
        const=ALL_MESSAGES,
        type=_count,
        metavar="N",
        help="also show the task's messages: all of them, or the last N",
    )
    get.add_argument(
        "--save-dir",
        metavar="DIR",
        help="save the task's files into DIR (URL files downloaded) and print where",
    )
    get.set_defaults(run=run_get)

    listing = command(
        "list",
        help="list tasks, newest first (A2A 1.0)",
        description="List the agent's tasks (yours, when the agent authenticates callers).",
        epilog=(
            "examples:\n"
            "  a2a list http://localhost:8000\n"
            "  a2a list http://localhost:8000 --status working --page-size 20\n"
            "  a2a list http://localhost:8000 --context-id C --all --json"
        ),
        task=False,
    )
    listing.add_argument("--context-id", metavar="ID", help="only tasks of this conversation")
    listing.add_argument(
        "--status",
        type=parse_state,
        metavar="STATE",
        help=f"only tasks in this state ({', '.join(_STATES)})",
    )
    listing.add_argument("--page-size", type=_page_size, metavar="N", help="tasks per page (1-100)")
    listing.add_argument(
        "--page-token", metavar="TOKEN", help="the page to show (from a previous list)"
    )
    listing.add_argument("--all", action="store_true", help="follow every page")
    listing.set_defaults(run=run_list)

    cancel = command(
        "cancel",
        help="cancel a task",
        description="Ask the agent to cancel a task, and show the task afterwards.",
        epilog="examples:\n  a2a cancel http://localhost:8000 TASK_ID",
    )
    cancel.set_defaults(run=run_cancel)

    subscribe = command(
        "subscribe",
        help="follow a running task's events until it finishes or needs input",
        description=(
            "Follow a task: its current state first, then its updates as they happen, "
            "until it finishes or needs input. A task that has already finished is shown."
        ),
        epilog=(
            "examples:\n"
            "  a2a send http://localhost:8000 'Start the long job' --no-wait\n"
            "  a2a subscribe http://localhost:8000 TASK_ID\n"
            "  a2a subscribe http://localhost:8000 TASK_ID --json\n\n"
            "exit status: as for send (1 when the task failed, was rejected or canceled)."
        ),
    )
    subscribe.add_argument(
        "--quiet", "-q", action="store_true", help="print only the task's content"
    )
    subscribe.set_defaults(run=run_subscribe)


def parse_state(value: str) -> TaskState:
    """``working``, ``input-required``, ``TASK_STATE_WORKING``... as a TaskState."""
    from ..types import TaskState

    key = value.strip().upper().replace("-", "_").removeprefix("TASK_STATE_")
    try:
        return TaskState("TASK_STATE_" + key)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"unknown task state {value!r} (one of {', '.join(_STATES)})"
        ) from None


ALL_MESSAGES = -1
"""``--history`` without a number: every message the agent keeps."""


def _count(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, not {value!r}")
    return number


def _page_size(value: str) -> int:
    number = _count(value)
    if not 1 <= number <= 100:
        raise argparse.ArgumentTypeError(f"the page size goes from 1 to 100, not {value!r}")
    return number


def _show(args: argparse.Namespace, task: Task, *, history: bool = False) -> None:
    from .render import Console, Renderer, json_line

    console = Console()
    if args.json:
        console.line(json_line(task))
    else:
        Renderer(console, args.url).task(task, history=history)


async def run_get(args: argparse.Namespace) -> int:
    async with connect(args) as client:
        history: int | None = args.history
        length = None if history == ALL_MESSAGES else history
        task = await client.get_task(args.task_id, history_length=length)
        if args.save_dir:
            from .savefiles import save_answer_files

            await save_answer_files(client, task, args.save_dir)
    _show(args, task, history=history is not None)
    return exit_code_for(task)


async def run_cancel(args: argparse.Namespace) -> int:
    from ..errors import TaskNotCancelableError

    async with connect(args) as client:
        try:
            task = await client.cancel(args.task_id)
        except TaskNotCancelableError:
            ended = await _ended_state(client, args.task_id)
            if ended is None:
                raise
            print(
                f"a2a: error: the task has already ended ({ended}): there is nothing to cancel",
                file=sys.stderr,
            )
            return ExitCode.PROTOCOL
    _show(args, task)
    return ExitCode.OK


async def _ended_state(client: A2AClient, task_id: str) -> str | None:
    """The state a task that refused a cancel ended in, as the CLI names it (``completed``)."""
    from ..errors import A2AError
    from .render import state_label

    try:
        task = await client.get_task(task_id, history_length=0)
    except A2AError:
        return None
    return state_label(task.status.state) if task.status.state.is_terminal else None


async def run_list(args: argparse.Namespace) -> int:
    from ..types import ListTasksResponse
    from .render import Console, Renderer, json_line

    if args.all and args.page_token:
        raise UsageError("--all starts from the first page: leave out --page-token")
    filters = {"context_id": args.context_id, "status": args.status, "page_size": args.page_size}
    async with connect(args) as client:
        if args.all:
            tasks = [
                t
                async for t in client.iter_tasks(include_artifacts=not args.json or None, **filters)
            ]
            page = ListTasksResponse(tasks=tasks, page_size=len(tasks), total_size=len(tasks))
        else:
            page = await client.list_tasks(
                page_token=args.page_token, include_artifacts=not args.json or None, **filters
            )
    console = Console()
    if args.json:
        console.line(json_line(page))
        return ExitCode.OK
    Renderer(console, args.url).task_table(page.tasks)
    if page.next_page_token:
        console.line(
            console.dim(
                f"More tasks: add --page-token {page.next_page_token} (or --all)"
                + (f"; {page.total_size} in all" if page.total_size else "")
            )
        )
    return ExitCode.OK


async def run_subscribe(args: argparse.Namespace) -> int:
    from ..errors import UnsupportedOperationError
    from .render import Console, Renderer
    from .send import follow

    session_of(args).task_id = args.task_id
    renderer = Renderer(Console(), args.url, quiet=args.quiet)
    async with connect(args) as client:
        try:
            return await follow(args, client.subscribe(args.task_id), renderer)
        except UnsupportedOperationError:
            # 1.0 refuses to subscribe to a finished task: show it instead.
            task = await client.get_task(args.task_id)
            if not task.status.state.is_terminal:
                raise
    print("a2a: the task has already finished", file=sys.stderr)
    _show(args, task)
    return exit_code_for(task)
