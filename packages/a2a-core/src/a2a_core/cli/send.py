"""``a2a send URL TEXT``: send a message, wait for (or stream) the answer."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, cast

from .common import UsageError, connect, connection_parser, exit_code_for, session_of
from .follow import follow_unfinished, unfinished
from .parts import part_dicts

if TYPE_CHECKING:
    from ..client import A2AClient, EventStream
    from ..hookspecs import CommandParsers
    from ..types import Message, Task
    from .render import Console, Renderer

__all__ = ["add_parser", "build_message", "run"]

EXAMPLES = """\
examples:
  a2a send http://localhost:8000 "What is the weather in Paris?"
  a2a send http://localhost:8000 "Write a poem about the sea" --stream
  a2a send http://localhost:8000 "Ada" --task-id T --context-id C   # answer the agent's question
  a2a send http://localhost:8000 "Summarize this" --file report.pdf
  a2a send http://localhost:8000 "Plot these" --data '{"values": [1, 2, 3]}'
  a2a send http://localhost:8000 "Start the long job" --no-wait     # returns at once
  echo "hello" | a2a send http://localhost:8000 -                   # the text from stdin
  a2a send http://localhost:8000 "hi" --json | jq -r .task.status.state

exit status: 0 answered (or waiting for input), 1 the task failed, was rejected or
canceled, 2 usage error, 3 the agent answered with an A2A error, 4 connection error.
"""


def add_parser(commands: CommandParsers) -> None:
    parser = commands.add_parser(
        "send",
        parents=[connection_parser()],
        help="send a message to an agent and show its answer",
        description=(
            "Send TEXT (plus any --data and --file parts) and show the agent's answer: a "
            "direct reply, or the task with its state and artifacts. By default this waits "
            "until the task finishes or needs input; --stream shows it as it happens."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("url", metavar="URL", help="the agent's URL")
    parser.add_argument(
        "text", metavar="TEXT", nargs="?", help="the message text ('-' reads it from stdin)"
    )
    parser.add_argument(
        "--stream", action="store_true", help="show events (and streamed text) as they arrive"
    )
    parser.add_argument(
        "--task-id", metavar="ID", help="continue this task (e.g. answer a question)"
    )
    parser.add_argument("--context-id", metavar="ID", help="send within this conversation")
    parser.add_argument(
        "--data",
        action="append",
        default=[],
        metavar="JSON",
        help="add a data part holding this JSON value (repeatable)",
    )
    parser.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="PATH",
        help="add this file as a part, its media type guessed from its name (repeatable)",
    )
    parser.add_argument(
        "--save-dir",
        metavar="DIR",
        help="save the files of the answer into DIR (URL files downloaded) and print where",
    )
    parser.add_argument(
        "--no-wait",
        action="store_true",
        help="return as soon as the agent has created the task (returnImmediately)",
    )
    parser.add_argument(
        "--quiet", "-q", action="store_true", help="print only the answer's content"
    )
    parser.set_defaults(run=run)


def build_message(args: argparse.Namespace) -> Message:
    """The user message the options describe."""
    from ..types import Message, Part, Role, new_id

    parts = [Part.model_validate(part) for part in part_dicts(args)]
    return Message(message_id=new_id(), role=Role.USER, parts=parts)


async def run(args: argparse.Namespace) -> int:
    from .render import Console

    if args.stream and args.no_wait:
        raise UsageError("--no-wait and --stream do not go together (a stream follows the task)")
    message = build_message(args)
    console = Console()
    async with connect(args) as client:
        if args.stream and not client.supports_streaming:
            print("a2a: the agent does not stream; sending without --stream", file=sys.stderr)
            args.stream = False
        if args.stream:
            return await _stream(args, client, message, console)
        return await _send(args, client, message, console)


async def _send(
    args: argparse.Namespace, client: A2AClient, message: Message, console: Console
) -> int:
    from ..wire import Operation, V10Codec
    from .render import Renderer, json_line

    async with console.progress("waiting for the agent"):
        reply = await client.send(
            message,
            task=args.task_id,
            context_id=args.context_id,
            blocking=not args.no_wait,
        )
    session_of(args).task_id = reply.task_id
    result = reply.result
    if not args.no_wait and unfinished(result):
        result = await follow_unfinished(client, cast("Task", result), console)
    if args.save_dir:
        from .savefiles import save_answer_files

        await save_answer_files(client, result, args.save_dir)
    if args.json:
        console.line(json_line(V10Codec().encode_result(Operation.SEND_MESSAGE, result)))
    else:
        Renderer(console, args.url, quiet=args.quiet).result(result)
    return exit_code_for(result)


async def _stream(
    args: argparse.Namespace, client: A2AClient, message: Message, console: Console
) -> int:
    from .render import Renderer

    events = client.stream(message, task=args.task_id, context_id=args.context_id)
    renderer = Renderer(console, args.url, quiet=args.quiet)
    code = await follow(args, events, renderer)
    if args.save_dir:
        from .savefiles import save_answer_files

        await save_answer_files(client, events.task or events.message, args.save_dir)
    return code


async def follow(args: argparse.Namespace, events: EventStream, renderer: Renderer) -> int:
    """Print a stream's events (as JSON lines or readable text); the final task's exit code."""
    from ..errors import InvalidAgentResponseError
    from ..types import Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent
    from ..wire import V10Codec
    from .render import json_line

    console = renderer.console
    codec = V10Codec()
    session = session_of(args)
    async with console.progress("working"), events:
        async for event in events:
            if isinstance(event, Task):
                session.task_id = event.id
            elif isinstance(event, TaskStatusUpdateEvent | TaskArtifactUpdateEvent):
                session.task_id = event.task_id
            if args.json:
                console.line(json_line(codec.encode_event(event)))
            else:
                renderer.event(event)
    final: Task | Message | None = events.message if events.task is None else events.task
    if final is None:
        raise InvalidAgentResponseError("The agent's stream ended without any event")
    if not args.json:
        renderer.finish()
        if isinstance(final, Task) and not final.status.state.is_terminal:
            renderer.hints(final)
    return exit_code_for(final)
