"""The ``a2a`` entry point: the parser, and the mapping from failures to exit statuses.

Usage and configuration mistakes exit 2, A2A errors the agent answered with
exit 3, unreachable agents exit 4, no access token from the token endpoint
exits 6, a failed task exits 1 and Ctrl-C exits 130 (``a2a serve`` stops
cleanly on Ctrl-C and exits 0). Each failure is one line on stderr,
``a2a: error: ...``; ``--debug`` (or ``A2A_DEBUG=1``) adds
the traceback behind it. When the reader of stdout goes away (``| head``),
the command stops quietly with 141, as a Unix tool killed by SIGPIPE would.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import __version__
from . import card, playground, plugins, send, serve, tasks
from .common import ExitCode, UsageError, session_of
from .httpx_cli import skip_httpx_cli

if TYPE_CHECKING:
    from ..hookspecs import CommandParsers

__all__ = ["DEBUG_ENV", "build_parser", "main"]

DEBUG_ENV = "A2A_DEBUG"
"""Set to 1/true/yes/on for ``--debug`` on every command (tracebacks behind errors)."""

_TRUE = frozenset({"1", "true", "yes", "on"})

BUILTIN_COMMANDS = frozenset(
    {"serve", "card", "send", "get", "list", "cancel", "subscribe", "plugins", "playground"}
)
"""The commands of the core itself; any other name is looked for among plugin commands."""

DESCRIPTION = """\
Serve an agent over the Agent2Agent (A2A) protocol, and talk to any A2A agent
(1.0 or 0.3) from the command line."""

EPILOG = """\
a first session:
  a2a serve a2a_core:EchoAgent                            # in one terminal (the built-in echo)
  a2a card http://localhost:8000                          # in another
  a2a send http://localhost:8000 "hello"
  a2a send http://localhost:8000 "hello" --stream
  a2a playground http://localhost:8000                    # try it in the browser

exit status:
  0    success (the agent answered, or waits for input)
  1    the task failed, was rejected or was canceled
  2    usage or configuration error (bad option, bad TARGET)
  3    the agent answered with an A2A error (e.g. task not found)
  4    the agent could not be reached, or did not answer in time
  5    the agent card is unsigned or its signature does not verify
       (a2a card --verify; --trusted-key / --jwks on any client command)
  6    no access token for --client-id (the token endpoint is down,
       failed TLS, refused the credentials or answered no token)
  130  interrupted (Ctrl-C)
  141  the reader of the output went away (e.g. '| head'); nothing more is printed

Run 'a2a COMMAND --help' for a command's options and examples."""


def build_parser(*, plugin_commands: bool = False) -> argparse.ArgumentParser:
    """The ``a2a`` argument parser, with one sub-command per operation.

    ``plugin_commands``: also the commands installed packages add (``a2a_cli_commands``).
    """
    parser = argparse.ArgumentParser(
        prog="a2a",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"a2a (a2a-adapters-core) {__version__}"
    )
    _debug_option(parser, default=_env_true(DEBUG_ENV))
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", dest="command")
    commands.required = True
    serve.add_parser(commands)
    card.add_parser(commands)
    send.add_parser(commands)
    tasks.add_parsers(commands)
    plugins.add_parser(commands)
    playground.add_parser(commands)
    if plugin_commands:
        _plugin_commands(commands)
    for command in commands.choices.values():
        # Also after the command (``a2a serve x:y --debug``); unset there, the top level's wins.
        _debug_option(command, default=argparse.SUPPRESS)
    return parser


def _plugin_commands(commands: CommandParsers) -> None:
    """Let each plugin add its commands; a name already taken is an error naming the plugin."""
    from ..plugins import PluginError, call_hook_impl, get_plugin_manager, hook_impls

    for impl in hook_impls(get_plugin_manager(), "a2a_cli_commands"):
        try:
            call_hook_impl(impl, "a2a_cli_commands", {"commands": commands})
        except PluginError as exc:
            if isinstance(exc.__cause__, argparse.ArgumentError):  # "conflicting subparser"
                raise PluginError(
                    f"a2a plugin {impl.plugin_name!r} adds a command that exists: "
                    f"{exc.__cause__.message}",
                    plugin=impl.plugin_name,
                    hook="a2a_cli_commands",
                ) from exc.__cause__
            raise


def _wants_plugins(argv: Sequence[str]) -> bool:
    """Whether ``argv`` needs plugin commands: not a built-in command (or the overall help)."""
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    return command is None or command not in BUILTIN_COMMANDS


def _debug_option(parser: argparse.ArgumentParser, *, default: object) -> None:
    parser.add_argument(
        "--debug",
        action="store_true",
        default=default,
        help=f"show the traceback behind an error (default: ${DEBUG_ENV})",
    )


def _env_true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``a2a`` with ``argv`` (default: the process's arguments); the exit status."""
    skip_httpx_cli()  # a faster cold start; the command owns its process (see httpx_cli)
    arguments = sys.argv[1:] if argv is None else list(argv)
    try:
        parser = build_parser(plugin_commands=_wants_plugins(arguments))
    except Exception as exc:  # a plugin that fails to load or to add its command
        from ..plugins import PluginError

        if not isinstance(exc, PluginError):
            raise
        _error(str(exc))
        return ExitCode.USAGE
    args = parser.parse_args(arguments)
    return _run(args)


def _error(message: str) -> None:
    from .render import safe_text

    print(f"a2a: error: {safe_text(message, single_line=True)}", file=sys.stderr, flush=True)


def _run(args: argparse.Namespace) -> int:
    session = session_of(args)
    try:
        import asyncio

        return int(asyncio.run(args.run(args)))
    except BrokenPipeError:
        return _pipe_closed()
    except KeyboardInterrupt:
        if args.command in ("serve", "playground"):
            return ExitCode.OK
        print("\na2a: interrupted", file=sys.stderr)
        if session.task_id and getattr(args, "url", None):
            url, task = shlex.quote(args.url), shlex.quote(session.task_id)
            print(f"The task may still be running: a2a get {url} {task}", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except UsageError as exc:
        if exc.cause is None:
            _error(str(exc))
        elif args.debug:
            import traceback

            traceback.print_exception(exc.cause, file=sys.stderr)
            _error(str(exc))
        else:
            _error(f"{exc} (--debug or {DEBUG_ENV}=1 shows the traceback)")
        return ExitCode.USAGE
    except Exception as exc:
        code = _failure(exc, getattr(args, "url", None))
        if code == ExitCode.CONNECTION and session.task_id and getattr(args, "url", None):
            url, task = shlex.quote(args.url), shlex.quote(session.task_id)
            print(f"Follow the task again with: a2a subscribe {url} {task}", file=sys.stderr)
        return code


def _pipe_closed() -> int:
    """stdout's reader left: stop printing, and keep the interpreter's last flush quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # pragma: no cover - stdout without a file descriptor
        pass
    return ExitCode.PIPE_CLOSED


def _failure(exc: Exception, url: str | None = None) -> int:
    """The exit status of a failed command (imports the client only when one failed)."""
    import httpx

    from ..client import A2AConnectionError, TokenError
    from ..errors import A2AError, AuthenticationRequiredError
    from .explain import card_not_found, connection_failure

    if type(exc).__name__ == "CardSignatureError":  # a2a_core.signing needs the [jwt] extra
        _error(f"the agent card is not trusted: {exc}")
        return ExitCode.UNTRUSTED
    if isinstance(exc, TokenError):
        _error(f"no access token: {exc.message}")
        return ExitCode.NO_TOKEN
    unreachable = isinstance(exc, A2AConnectionError | httpx.HTTPError)
    if unreachable and (plain := connection_failure(exc)) is not None:
        _error(plain)
        return ExitCode.CONNECTION
    if (plain := card_not_found(exc, url)) is not None:
        _error(plain)
        return ExitCode.PROTOCOL
    if isinstance(exc, A2AConnectionError):
        _error(f"cannot reach the agent: {exc.message}")
        return ExitCode.CONNECTION
    if isinstance(exc, httpx.HTTPError):
        _error(f"cannot reach the agent: {type(exc).__name__}: {exc}")
        return ExitCode.CONNECTION
    if isinstance(exc, A2AError):
        hint = ""
        if isinstance(exc, AuthenticationRequiredError):
            hint = "; give credentials with --bearer TOKEN or --header NAME:VALUE"
        _error(
            f"the agent answered with an error: {exc.message} "
            f"({type(exc).__name__} {exc.code}){hint}"
        )
        return ExitCode.PROTOCOL
    raise exc
