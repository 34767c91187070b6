"""What the commands share: exit codes, usage errors, the connection options, the client.

Every client command takes the agent's URL and the same connection options
(``--header``, ``--bearer``, ``--cacert``/``--cert``/``--key``, ``--timeout``, ``--binding``,
``--protocol-version``, ``--json``); ``connection_parser`` is the argparse parent that declares them
once and ``connect`` turns them into an ``A2AClient``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..bindings import cli_bindings
from .usage import UsageError

if TYPE_CHECKING:
    from ..client import A2AClient
    from ..client.catalog import AgentCatalog
    from ..types import AgentCard, Message, Task
    from .parsing import ArgumentAdder

__all__ = [
    "BEARER_ENV",
    "BINDINGS",
    "ExitCode",
    "Session",
    "UsageError",
    "add_client_options",
    "check_url",
    "connect",
    "connection_parser",
    "exit_code_for",
    "fetch_card",
    "fetch_catalog",
    "parse_header",
    "session_of",
]

BEARER_ENV = "A2A_BEARER_TOKEN"
"""The default of ``--bearer`` (a token on the command line is visible to other local users)."""
CLIENT_ID_ENV = "A2A_CLIENT_ID"
"""The default of ``--client-id``."""
CLIENT_SECRET_ENV = "A2A_CLIENT_SECRET"
"""The default of ``--client-secret``."""

BINDINGS = cli_bindings()
"""``--binding`` spellings and the card's binding names they select (``a2a_core.bindings``)."""

_DEFAULT_TIMEOUT = 60.0
_PROTOCOL_VERSIONS = ("1.0", "0.3")
_FAILED_STATES = ("TASK_STATE_FAILED", "TASK_STATE_REJECTED", "TASK_STATE_CANCELED")


class ExitCode(IntEnum):
    """The ``a2a`` command's exit statuses (documented in docs/cli.md)."""

    OK = 0
    TASK_FAILED = 1
    """The task ended failed, rejected or canceled."""
    USAGE = 2
    """A mistake in the command line or the configuration (bad target, bad option)."""
    PROTOCOL = 3
    """The agent answered with an A2A error (task not found, unsupported, malformed answer)."""
    CONNECTION = 4
    """The agent could not be reached or did not answer in time."""
    UNTRUSTED = 5
    """The agent card is unsigned, or no signature verifies with a trusted key."""
    NO_TOKEN = 6
    """No access token for ``--client-id``: the token endpoint could not be reached (or not
    over trusted TLS), refused the credentials, or answered something that is not a token."""
    INTERRUPTED = 130
    """Ctrl-C (SIGINT) stopped a client command."""
    PIPE_CLOSED = 141
    """The reader of stdout went away (``a2a ... | head``): 128 + SIGPIPE, as the shell says."""


@dataclass(slots=True)
class Session:
    """What a running command has learnt, for the hint printed when it is interrupted."""

    task_id: str | None = None


def session_of(args: argparse.Namespace) -> Session:
    """The session ``main`` attached to ``args`` (a fresh one when called directly)."""
    found = getattr(args, "session", None)
    if not isinstance(found, Session):
        found = Session()
        args.session = found
    return found


def exit_code_for(result: Task | Message | None) -> ExitCode:
    """1 for a task that ended failed, rejected or canceled; 0 otherwise."""
    from ..types import Task

    if isinstance(result, Task) and result.status.state in _FAILED_STATES:
        return ExitCode.TASK_FAILED
    return ExitCode.OK


def parse_header(value: str) -> tuple[str, str]:
    """``"Name: value"`` (or ``Name:value``) as a (name, value) pair."""
    name, sep, content = value.partition(":")
    name = name.strip()
    if not sep or not name or any(ch.isspace() for ch in name):
        raise UsageError(f"--header expects NAME:VALUE, not {value!r}")
    return name, content.strip()


def check_url(url: str) -> str:
    """The agent URL, refused early (exit 2) when it is not an http(s) URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"the agent URL must start with http:// or https://, not {url!r}")
    return url


def connection_parser(*, choose_interface: bool = True) -> argparse.ArgumentParser:
    """The options every client command takes (an argparse parent parser).

    ``choose_interface`` adds ``--binding`` and ``--protocol-version`` (not for ``card``).
    """
    parser = argparse.ArgumentParser(add_help=False)
    group = parser.add_argument_group("connection")
    group.add_argument(
        "--header",
        "-H",
        action="append",
        default=[],
        metavar="NAME:VALUE",
        help="an HTTP header for every request, card fetch included (repeatable)",
    )
    group.add_argument(
        "--bearer",
        "--token",
        dest="bearer",
        metavar="TOKEN",
        default=os.environ.get(BEARER_ENV) or None,
        help=f"send 'Authorization: Bearer TOKEN' (default: ${BEARER_ENV})",
    )
    add_client_options(group, "", CLIENT_ID_ENV, CLIENT_SECRET_ENV)
    group.add_argument(
        "--trusted-key",
        action="append",
        default=[],
        metavar="[KID=]FILE",
        help=(
            "require the card to be signed by this key: a JWK or JWKS file, or KID=FILE with a "
            "PEM public key (repeatable); an unsigned or tampered card exits 5"
        ),
    )
    group.add_argument(
        "--jwks",
        metavar="URL",
        help="require the card to be signed by a key of this JWKS URL (pinned; exits 5 if not)",
    )
    group.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help=(
            "how long to wait for an answer; streams wait this long between events "
            f"(default: {_DEFAULT_TIMEOUT:g} s for single calls, no limit for streams; 0: no limit)"
        ),
    )
    if not choose_interface:
        parser.set_defaults(binding=None, protocol_version=None)
    else:
        _interface_options(group)
    parser.add_argument(
        "--json",
        action="store_true",
        help="print A2A 1.0 JSON (one object per line) instead of readable text",
    )
    return parser


def add_client_options(
    group: ArgumentAdder,
    prefix: str,
    id_env: str,
    secret_env: str,
) -> None:
    """``--[PREFIX]client-id`` ... ``--[PREFIX]key``: OAuth 2.0 client credentials and TLS
    files of a client (``remote-`` for the gateway's own client; see ``tls_settings``)."""
    group.add_argument(
        f"--{prefix}client-id",
        metavar="ID",
        default=os.environ.get(id_env) or None,
        help=(
            "get a token with the OAuth 2.0 client-credentials grant, from the token endpoint "
            f"the card names or --{prefix}token-url (default: ${id_env})"
        ),
    )
    group.add_argument(
        f"--{prefix}client-secret",
        metavar="SECRET",
        default=os.environ.get(secret_env) or None,
        help=f"with --{prefix}client-id (default: ${secret_env}, which keeps it out of ps)",
    )
    group.add_argument(
        f"--{prefix}token-url",
        metavar="URL",
        help=f"with --{prefix}client-id: the token endpoint (default: the card's)",
    )
    group.add_argument(
        f"--{prefix}scope",
        action="append",
        default=[],
        metavar="SCOPE",
        help=f"with --{prefix}client-id: a scope to ask for (repeatable)",
    )
    group.add_argument(
        f"--{prefix}cacert",
        metavar="FILE",
        help="trust agents whose certificates this CA bundle (PEM) issued (default: system CAs)",
    )
    group.add_argument(
        f"--{prefix}cert",
        metavar="FILE",
        help="a client certificate (PEM) for agents that require mutual TLS",
    )
    group.add_argument(
        f"--{prefix}key",
        metavar="FILE",
        help=f"with --{prefix}cert: its private key (default: in --{prefix}cert)",
    )


def _interface_options(group: ArgumentAdder) -> None:
    group.add_argument(
        "--binding",
        type=str.lower,
        choices=sorted(BINDINGS),
        help="the protocol binding to use (default: the card's preferred one)",
    )
    group.add_argument(
        "--protocol-version",
        dest="protocol_version",
        choices=_PROTOCOL_VERSIONS,
        help="the A2A protocol version to speak (default: 1.0 when the agent offers it)",
    )
    group.add_argument(
        "--version",
        dest="protocol_version",
        choices=_PROTOCOL_VERSIONS,
        action=_DeprecatedVersion,
        help=argparse.SUPPRESS,
    )


class _DeprecatedVersion(argparse.Action):
    """``--version`` on a client command: the old spelling of ``--protocol-version``.

    It still works, with a note on stderr; ``a2a --version`` is the program's version.
    """

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        print(
            "a2a: warning: --version on a command is deprecated, use --protocol-version "
            "(a2a --version prints the program's version)",
            file=sys.stderr,
        )
        setattr(namespace, self.dest, values)


def _timeouts(args: argparse.Namespace) -> tuple[float | None, float | None]:
    given: float | None = args.timeout
    if given is None:
        return _DEFAULT_TIMEOUT, None
    if given < 0:
        raise UsageError("--timeout must be 0 (no limit) or a number of seconds")
    limit = given if given > 0 else None
    return limit, limit


def _headers(args: argparse.Namespace) -> dict[str, str]:
    raw: Sequence[str] = args.header or ()
    headers = dict(parse_header(h) for h in raw)
    bearer: str | None = args.bearer
    if bearer:
        headers["Authorization"] = f"Bearer {bearer}"
    return headers


def tls_settings(
    args: argparse.Namespace, prefix: str = ""
) -> tuple[str | bool, str | tuple[str, str] | None]:
    """``--cacert`` / ``--cert`` / ``--key`` as ``verify=`` and ``cert=`` of the client.

    ``prefix``: the options' prefix (``remote-`` for the gateway's ``--remote-cacert`` ...).
    """
    attribute = prefix.replace("-", "_")
    cacert: str | None = getattr(args, f"{attribute}cacert", None)
    cert: str | None = getattr(args, f"{attribute}cert", None)
    key: str | None = getattr(args, f"{attribute}key", None)
    if key and not cert:
        raise UsageError(f"--{prefix}key goes with --{prefix}cert")
    for name, path in (("cacert", cacert), ("cert", cert), ("key", key)):
        if path is not None and not os.path.isfile(path):
            raise UsageError(f"--{prefix}{name}: no such file {path!r}")
    client_cert = (cert, key) if cert and key else cert
    return cacert or True, client_cert


def _ssl(args: argparse.Namespace) -> Any:
    from ..client.tls import client_ssl_context

    verify, cert = tls_settings(args)
    try:
        return client_ssl_context(verify, cert)
    except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
        raise UsageError(f"cannot use the TLS files: {exc}") from None


def client_credentials(args: argparse.Namespace) -> Any:
    """``--client-id`` / ``--client-secret`` as a ``ClientCredentials`` auth, or None."""
    client_id: str | None = getattr(args, "client_id", None)
    secret: str | None = getattr(args, "client_secret", None)
    if not client_id and not secret:
        return None
    if not client_id or not secret:
        raise UsageError(
            f"--client-id and --client-secret go together (or ${CLIENT_ID_ENV} and "
            f"${CLIENT_SECRET_ENV})"
        )
    if getattr(args, "bearer", None):
        raise UsageError("give --bearer or --client-id, not both")
    from ..client.oauth import ClientCredentials

    return ClientCredentials(
        client_id, secret, token_url=getattr(args, "token_url", None), scopes=args.scope or ()
    )


@asynccontextmanager
async def connect(args: argparse.Namespace) -> AsyncGenerator[A2AClient]:
    """A client of ``args.url`` with the connection options applied; closed on exit."""
    from ..client import A2AClient

    url = check_url(args.url)
    timeout, stream_timeout = _timeouts(args)
    binding: str | None = args.binding
    version: str | None = args.protocol_version
    _ssl(args)  # the TLS files are usable (a usage error otherwise)
    verify, cert = tls_settings(args)
    verifier = None
    if getattr(args, "trusted_key", None) or getattr(args, "jwks", None):
        from .cardtrust import card_verifier

        verifier = card_verifier(args)
    client = await A2AClient.connect(
        url,
        headers=_headers(args),
        auth=client_credentials(args),
        verify=verify,
        cert=cert,
        verify_card=verifier,
        timeout=timeout,
        stream_timeout=stream_timeout,
        preferred_versions=(version,) if version else ("1.0", "0.3"),
        preferred_bindings=(BINDINGS[binding],) if binding else None,
    )
    try:
        yield client
    finally:
        await client.aclose()


async def fetch_catalog(args: argparse.Namespace) -> AgentCatalog:
    """The AI Catalog at ``args.url`` (a catalog URL, or below the URL, or at its origin)."""
    import httpx

    from ..client.catalog import discover

    url = check_url(args.url)
    async with httpx.AsyncClient(headers=_headers(args), verify=_ssl(args)) as http:
        return await discover(url, http=http)


async def fetch_card(args: argparse.Namespace) -> AgentCard:
    """The card of ``args.url`` as published, without choosing an interface."""
    import httpx

    from ..client import CardResolver

    url = check_url(args.url)
    timeout, _ = _timeouts(args)
    seconds = 10.0 if args.timeout is None else timeout or 3600.0
    async with httpx.AsyncClient(headers=_headers(args), verify=_ssl(args)) as http:
        return await CardResolver(http, timeout=seconds).resolve(url)
