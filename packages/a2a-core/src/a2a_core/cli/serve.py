"""``a2a serve TARGET``: serve an agent object, or front a remote agent as a gateway.

The object is made servable the way ``serve()`` does it (framework adapters
from plugins, else an AgentExecutor / async function / async generator);
an ``http(s)://`` TARGET is served by a ``RemoteAgentExecutor`` that
forwards every request to that agent. The card is built here (so that
``--skill`` and ``--versions`` shape it), then the server runs until Ctrl-C
or SIGTERM, and stops cleanly (running tasks are canceled, the store closed).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import math
import os
from collections.abc import Generator, Mapping, Sequence
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, cast

from ..bindings import bindings
from .common import ExitCode, UsageError, add_client_options, check_url, parse_header
from .options import check_adapter_options, parse_option
from .parsing import CommandLineParser
from .serveconfig import AgentSpec, agents_from_args, load_settings, track_explicit
from .target import is_url, load_target

if TYPE_CHECKING:
    import logging
    import signal

    from ..adapters import ResolvedAgent
    from ..client import RemoteAgentExecutor
    from ..compose.serve import RunningServer
    from ..hookspecs import CommandParsers
    from ..server.config import ManagerConfig
    from ..server.tls import ServerTLS
    from ..signing import CardSigner
    from ..types import AgentCard, AgentInterface, AgentSkill

__all__ = ["add_parser", "parse_skill", "parse_versions", "run"]

EXAMPLES = """\
examples:
  a2a serve agent.py:agent                      # an object in a file
  a2a serve my_package.agents:support_agent     # an object in an importable module
  a2a serve agent.py:graph --name "Researcher" --skill "search:Search:Finds sources"
  a2a serve agent.py:agent --port 9000 --public-url https://agents.example.com/research
  a2a serve agent.py:agent --bearer-token "$TOKEN" --push --store sqlite:///tasks.db
  a2a serve agent.py:agent --store redis://cache:6379/0 --lease-seconds 15   # one of several
  a2a serve chain.py:chain -o stream=false -o input_key=question   # adapter options
  a2a serve https://agent.example.com --port 9000   # a gateway to a remote agent
  a2a serve chains.py:summarize chains.py:translate team=crew.py:crew   # three agents
  a2a serve --config a2a.toml                    # settings (and agents) from a file

TARGET names an agent object: a LangChain Runnable or a CrewAI Crew (with
their adapter packages installed), an AgentExecutor (instance or class), or
an async function / async generator function taking the request context.
"""

_SUPPORTED_VERSIONS = ("1.0", "0.3")
REMOTE_CLIENT_ID_ENV = "A2A_REMOTE_CLIENT_ID"
"""The default of ``a2a serve URL --remote-client-id``."""
REMOTE_CLIENT_SECRET_ENV = "A2A_REMOTE_CLIENT_SECRET"
"""The default of ``a2a serve URL --remote-client-secret``."""
PUSH_SIGNING_SECRET_ENV = "A2A_PUSH_SIGNING_SECRET"
"""The default of ``a2a serve --push-signing-secret``."""
_BINDING_ORDER = tuple(b.name for b in bindings())


def add_parser(commands: CommandParsers) -> None:
    # The options are built on a parser of their own, the command's parent, which
    # lists them: they are also read from a config file and the environment.
    parser = CommandLineParser(add_help=False)
    parser.add_argument(
        "targets",
        metavar="TARGET",
        nargs="*",
        help=(
            "module:attribute, path/to/file.py:attribute, or the http(s):// URL of an agent; "
            "several: each served below /NAME (its attribute's name, or PATH=TARGET)"
        ),
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help=(
            "read settings from this TOML file (default: $A2A_CONFIG, else [tool.a2a] in "
            "./pyproject.toml); flags win over A2A_* variables, which win over the file"
        ),
    )
    net = parser.add_argument_group("where")
    net.add_argument(
        "--host", default="127.0.0.1", help="interface to listen on (default: %(default)s)"
    )
    net.add_argument(
        "--port", type=_port, default=8000, help="port (default: %(default)s; 0 picks a free one)"
    )
    net.add_argument(
        "--public-url",
        metavar="URL",
        help="the URL clients use, published in the card (default: http://HOST:PORT)",
    )
    net.add_argument(
        "--grpc-port",
        type=_port,
        metavar="PORT",
        help="also serve the gRPC binding (A2A 1.0) on this port, listed in the card "
        "(0 picks a free one; needs a2a-adapters-core[grpc])",
    )
    tls = parser.add_argument_group("TLS (HTTPS; mutual TLS with --tls-client-ca)")
    tls.add_argument("--tls-cert", metavar="FILE", help="serve HTTPS with this PEM certificate")
    tls.add_argument(
        "--tls-key", metavar="FILE", help="its PEM private key (default: in --tls-cert)"
    )
    tls.add_argument(
        "--tls-client-ca",
        metavar="FILE",
        help=(
            "require client certificates issued by this CA (PEM); the certificate's subject "
            "names the caller (mutual TLS)"
        ),
    )
    tls.add_argument(
        "--tls-client-principal",
        metavar="FIELD",
        default="CN",
        help=(
            "with --tls-client-ca: the field that names the caller: CN, O, OU, serialNumber, "
            "UID, emailAddress, subject (the whole DN), san:uri, san:email, san:dns "
            "(default: %(default)s)"
        ),
    )
    card = parser.add_argument_group("card")
    card.add_argument("--name", help="the agent's name (default: the adapter's or the object's)")
    card.add_argument("--description", help="what the agent does (default: from its docstring)")
    card.add_argument("--agent-version", metavar="VERSION", help="the agent's own version")
    card.add_argument(
        "--skill",
        action="append",
        default=[],
        type=parse_skill,
        metavar="ID:NAME:DESCRIPTION",
        help="add a skill to the card (repeatable)",
    )
    card.add_argument(
        "--versions",
        type=parse_versions,
        default=_SUPPORTED_VERSIONS,
        metavar="LIST",
        help="the A2A versions the card advertises, preferred first (default: 1.0,0.3)",
    )
    card.add_argument(
        "--sign-card-key",
        metavar="FILE",
        help=(
            "sign the served card with this PEM private key (EC, Ed25519 or RSA; JWS over the "
            "card's RFC 8785 form); needs a2a-adapters-core[jwt]"
        ),
    )
    card.add_argument(
        "--sign-card-kid",
        metavar="KID",
        help="with --sign-card-key: the key id in the signature (default: its RFC 7638 thumbprint)",
    )
    behaviour = parser.add_argument_group("behaviour")
    behaviour.add_argument(
        "--store",
        default="memory://",
        metavar="URL",
        help=(
            "where tasks are kept (default: %(default)s): memory://, sqlite:///tasks.db,"
            " redis://host:6379/0 or postgresql://user@host/db (built in; redis:// and"
            " postgresql:// need the redis and postgres extras), or a scheme a plugin registers"
        ),
    )
    cluster = parser.add_argument_group(
        "cluster (leases: sqlite://, redis://, postgresql://; several instances: the last two)"
    )
    cluster.add_argument(
        "--lease-seconds",
        type=_seconds,
        default=30.0,
        metavar="SECONDS",
        help="a task whose instance stops renewing its lease (crashed, killed) is settled "
        "FAILED this long after its last renewal (default: %(default)g)",
    )
    cluster.add_argument(
        "--lease-renew-seconds",
        type=_seconds,
        metavar="SECONDS",
        help="how often an instance renews the leases of the tasks it runs; below "
        "--lease-seconds (default: a third of it, 10)",
    )
    cluster.add_argument(
        "--orphan-sweep-seconds",
        type=_seconds,
        metavar="SECONDS",
        help="how often an instance looks for expired leases to settle "
        "(default: a third of --lease-seconds, 10)",
    )
    cluster.add_argument(
        "--send-retention-seconds",
        type=_retention,
        default=0.0,
        metavar="SECONDS",
        help="idempotent sends: for this long a retried SendMessage (same message and "
        "messageId, same caller) returns the first one's task on any instance "
        "(default: %(default)g, off)",
    )
    behaviour.add_argument(
        "--push", action="store_true", help="enable push notifications (webhooks)"
    )
    behaviour.add_argument(
        "--allow-private-push-targets",
        action="store_true",
        help="let webhooks target loopback and private addresses (local development)",
    )
    behaviour.add_argument(
        "--push-signing-secret",
        metavar="SECRET",
        default=os.environ.get(PUSH_SIGNING_SECRET_ENV) or None,
        help=(
            "with --push: sign every delivery (HMAC-SHA256, Standard Webhooks headers; "
            f"default: ${PUSH_SIGNING_SECRET_ENV}, kept out of ps)"
        ),
    )
    behaviour.add_argument(
        "--strict-output-modes",
        action="store_true",
        help=(
            "refuse sends whose acceptedOutputModes the agent does not produce (-32005); "
            "by default the agent answers in its own best mode"
        ),
    )
    behaviour.add_argument(
        "--bearer-token",
        action="append",
        default=[],
        metavar="TOKEN",
        help="require 'Authorization: Bearer TOKEN' (repeatable: each token is one caller)",
    )
    identity = parser.add_argument_group("identity (JWT bearer tokens from an OIDC issuer)")
    identity.add_argument(
        "--oidc-issuer",
        metavar="URL",
        help="accept JWTs from this issuer (its discovery document and JWKS); needs [jwt]",
    )
    identity.add_argument(
        "--oidc-audience", metavar="AUD", help="with --oidc-issuer: the audience tokens must name"
    )
    identity.add_argument(
        "--oidc-jwks-url", metavar="URL", help="the issuer's key set (default: from discovery)"
    )
    identity.add_argument(
        "--require-scope",
        action="append",
        default=[],
        metavar="GROUP=SCOPE",
        help=(
            "operations of GROUP (read, send, cancel, push, *) need SCOPE in the caller's token "
            "(repeatable; several scopes for one group: any of them)"
        ),
    )
    behaviour.add_argument(
        "--no-playground",
        action="store_true",
        help="do not serve the browser playground at /playground/ (served by default)",
    )
    behaviour.add_argument(
        "--adapter", metavar="NAME", help="the adapter to use (default: found from the object)"
    )
    behaviour.add_argument(
        "-o",
        "--option",
        action="append",
        default=[],
        type=parse_option,
        metavar="NAME=VALUE",
        help=(
            "an adapter option, e.g. -o stream=false (repeatable; VALUE is JSON when it "
            "parses, else a string; an unknown NAME is refused with the valid ones)"
        ),
    )
    behaviour.add_argument(
        "--remote-header",
        action="append",
        default=[],
        metavar="NAME:VALUE",
        help="gateway only: an HTTP header for every request to the remote agent",
    )
    remote = parser.add_argument_group(
        "gateway: how to call the remote agent (an http(s):// TARGET)"
    )
    add_client_options(remote, "remote-", REMOTE_CLIENT_ID_ENV, REMOTE_CLIENT_SECRET_ENV)
    behaviour.add_argument(
        "--passthrough",
        action="store_true",
        help=(
            "gateway only: forward each caller's bearer token to the remote agent instead of "
            "the gateway's own credentials (needs --oidc-issuer or --bearer-token: only a "
            "token the gateway accepted is forwarded; see docs/security.md)"
        ),
    )
    behaviour.add_argument(
        "--log-format",
        default="text",
        choices=("text", "json"),
        help="log lines as text or one JSON object per line (default: %(default)s)",
    )
    behaviour.add_argument(
        "--otel",
        action="store_true",
        help=(
            "OpenTelemetry traces and metrics (needs a2a-adapters-core[otel]; export with an "
            "SDK, e.g. under opentelemetry-instrument)"
        ),
    )
    behaviour.add_argument(
        "--log-level",
        default="warning",
        choices=("critical", "error", "warning", "info", "debug"),
        help="server log level (default: %(default)s)",
    )
    parser.set_defaults(run=run, serve_parser=parser)
    track_explicit(parser)
    commands.add_parser(
        "serve",
        parents=[parser],
        help="serve an agent object (or a remote agent, as a gateway) over A2A",
        description=(
            "Serve TARGET as an A2A agent (JSON-RPC and HTTP+JSON, with its card at "
            "/.well-known/agent-card.json) until Ctrl-C."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {value!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"ports go from 0 to 65535, not {port}")
    return port


def _number(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from None
    if not math.isfinite(seconds):
        raise argparse.ArgumentTypeError(f"not a finite number of seconds: {value!r}")
    return seconds


def _seconds(value: str) -> float:
    """A period in seconds: a finite number above 0."""
    seconds = _number(value)
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0 seconds, not {value!r}")
    return seconds


def _retention(value: str) -> float:
    """A retention in seconds: 0 (off) or more."""
    seconds = _number(value)
    if seconds < 0:
        raise argparse.ArgumentTypeError(f"must be 0 (off) or more seconds, not {value!r}")
    return seconds


def _manager_config(args: argparse.Namespace) -> ManagerConfig:
    """The task manager's lease and idempotency settings from the cluster options."""
    from ..server.config import ManagerConfig

    lease: float = args.lease_seconds
    renew: float = args.lease_renew_seconds or lease / 3
    sweep: float = args.orphan_sweep_seconds or lease / 3
    if renew >= lease:
        raise UsageError(
            f"--lease-renew-seconds ({renew:g}) must be below --lease-seconds ({lease:g}): "
            "a lease must be renewed before it expires"
        )
    return ManagerConfig(
        lease_seconds=lease,
        lease_renew_seconds=renew,
        orphan_sweep_seconds=sweep,
        send_retention_seconds=args.send_retention_seconds,
    )


def parse_skill(value: str) -> AgentSkill:
    """``id:name:description`` (the description may itself contain colons)."""
    from ..types import AgentSkill

    pieces = [p.strip() for p in value.split(":", 2)]
    if len(pieces) != 3 or not all(pieces):
        raise argparse.ArgumentTypeError(
            f"--skill expects ID:NAME:DESCRIPTION (all three non-empty), not {value!r}"
        )
    return AgentSkill(id=pieces[0], name=pieces[1], description=pieces[2], tags=[])


def parse_versions(value: str) -> tuple[str, ...]:
    """``"1.0,0.3"`` -> ("1.0", "0.3"); "1" and "1.0.0" are read as "1.0"."""
    versions: list[str] = []
    for raw in value.split(","):
        pieces = raw.strip().lstrip("vV").split(".")
        if not pieces[0]:
            continue
        version = f"{pieces[0]}.{pieces[1] if len(pieces) > 1 and pieces[1] else '0'}"
        if version not in _SUPPORTED_VERSIONS:
            raise argparse.ArgumentTypeError(
                f"unsupported A2A version {raw.strip()!r} (supported: 1.0, 0.3)"
            )
        if version not in versions:
            versions.append(version)
    if not versions:
        raise argparse.ArgumentTypeError("--versions needs at least one version (1.0, 0.3)")
    return tuple(versions)


def _free_port(host: str) -> int:
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _interfaces(
    base: str, versions: Sequence[str], grpc_address: str | None = None
) -> list[AgentInterface]:
    from ..compose.serve import interfaces_for

    chosen = [
        i for i in interfaces_for(base, grpc_address=grpc_address) if i.protocol_version in versions
    ]
    chosen.sort(
        key=lambda i: (
            _BINDING_ORDER.index(i.protocol_binding),
            versions.index(i.protocol_version),
        )
    )
    return chosen


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """Options for adapters, card hooks and auth backends (as ``serve()`` passes them)."""
    options: dict[str, Any] = {}
    for key, value in (
        ("name", args.name),
        ("description", args.description),
        ("version", args.agent_version),
    ):
        if value:
            options[key] = value
    tokens: Sequence[str] = args.bearer_token
    if any(not t.strip() for t in tokens):
        raise UsageError("--bearer-token must not be empty")
    if tokens:
        options["bearer_tokens"] = {t.strip(): f"token-{i}" for i, t in enumerate(tokens, 1)}
    if args.oidc_issuer:
        if not args.oidc_audience:
            raise UsageError("--oidc-issuer needs --oidc-audience (the audience tokens must name)")
        options["oidc_issuer"] = args.oidc_issuer
        options["oidc_audience"] = args.oidc_audience
        if args.oidc_jwks_url:
            options["oidc_jwks_url"] = args.oidc_jwks_url
    elif args.oidc_audience or args.oidc_jwks_url:
        raise UsageError("--oidc-audience and --oidc-jwks-url need --oidc-issuer")
    return options


def _server_tls(args: argparse.Namespace) -> ServerTLS | None:
    """``--tls-cert/--tls-key/--tls-client-ca/--tls-client-principal`` as a ``ServerTLS``."""
    from ..server.tls import ServerTLS

    if not args.tls_cert:
        if args.tls_key or args.tls_client_ca:
            raise UsageError("--tls-key and --tls-client-ca go with --tls-cert")
        return None
    tls = ServerTLS(
        args.tls_cert,
        args.tls_key,
        client_ca=args.tls_client_ca,
        principal_field=args.tls_client_principal,
    )
    try:
        tls.check()
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return tls


def _card_signer(args: argparse.Namespace) -> CardSigner | None:
    """``--sign-card-key`` / ``--sign-card-kid`` as the ``card_signer`` option."""
    if not args.sign_card_key:
        if args.sign_card_kid:
            raise UsageError("--sign-card-kid goes with --sign-card-key")
        return None
    from .cardtrust import card_signer

    return card_signer(args.sign_card_key, args.sign_card_kid)


def _operation_scopes(args: argparse.Namespace) -> dict[str, list[str]] | None:
    """``--require-scope GROUP=SCOPE`` (repeatable) as the ``operation_scopes`` option."""
    scopes: dict[str, list[str]] = {}
    for item in cast("Sequence[str]", args.require_scope):
        group, sep, scope = item.partition("=")
        if not sep or not group.strip() or not scope.strip():
            raise UsageError(f"--require-scope takes GROUP=SCOPE, not {item!r}")
        scopes.setdefault(group.strip(), []).append(scope.strip())
    return scopes or None


async def _resolve_local(
    agent: object, args: argparse.Namespace, options: Mapping[str, Any]
) -> ResolvedAgent:
    from ..adapters import resolve_agent
    from ..errors import ConfigurationError

    try:
        return resolve_agent(agent, options, adapter=args.adapter or None)
    except (TypeError, ConfigurationError) as exc:
        raise UsageError(_first_line(exc), cause=exc) from None


_REMOTE_ONLY = (
    "remote_client_id",
    "remote_client_secret",
    "remote_token_url",
    "remote_scope",
    "remote_cacert",
    "remote_cert",
    "remote_key",
    "remote_header",
    "passthrough",
)


def _refuse_remote_options(args: argparse.Namespace) -> None:
    """The ``--remote-*`` options are for gateways; refused (not ignored) otherwise.

    Values that came from the environment alone are not the user's mistake here.
    """
    env = {
        "remote_client_id": REMOTE_CLIENT_ID_ENV,
        "remote_client_secret": REMOTE_CLIENT_SECRET_ENV,
    }
    for name in _REMOTE_ONLY:
        value = getattr(args, name)
        if value and not (name in env and value == os.environ.get(env[name])):
            flag = "--" + name.replace("_", "-")
            raise UsageError(f"{flag} is for a gateway (an http(s):// TARGET)")


def _push_signing_secret(args: argparse.Namespace) -> str | None:
    """``--push-signing-secret`` (or its environment variable), which goes with ``--push``."""
    secret: str | None = args.push_signing_secret
    if secret is None:
        return None
    if not args.push:
        if secret == os.environ.get(PUSH_SIGNING_SECRET_ENV):
            return None  # set in the environment for other runs: not this one's mistake
        raise UsageError("--push-signing-secret goes with --push")
    return secret


def _remote_connection(args: argparse.Namespace) -> dict[str, Any]:
    """How the gateway connects to the remote agent: client credentials, TLS files."""
    from .common import tls_settings

    options: dict[str, Any] = {}
    client_id: str | None = args.remote_client_id
    secret: str | None = args.remote_client_secret
    if client_id or secret:
        if not client_id or not secret:
            raise UsageError(
                "--remote-client-id and --remote-client-secret go together (or "
                f"${REMOTE_CLIENT_ID_ENV} and ${REMOTE_CLIENT_SECRET_ENV})"
            )
        from ..client.oauth import ClientCredentials

        options["auth"] = ClientCredentials(
            client_id, secret, token_url=args.remote_token_url, scopes=args.remote_scope
        )
    elif args.remote_token_url or args.remote_scope:
        raise UsageError("--remote-token-url and --remote-scope go with --remote-client-id")
    verify, cert = tls_settings(args, "remote-")
    if verify is not True:
        options["verify"] = verify
    if cert is not None:
        options["cert"] = cert
    return options


async def _resolve_remote(
    args: argparse.Namespace, stack: AsyncExitStack
) -> tuple[ResolvedAgent, RemoteAgentExecutor]:
    from ..adapters import ResolvedAgent
    from ..client import RemoteAgentExecutor, sanitize_card

    url = check_url(args.target)
    headers = dict(parse_header(h) for h in args.remote_header)
    if args.passthrough and not (args.oidc_issuer or args.bearer_token):
        raise UsageError(
            "--passthrough forwards the token each caller was authenticated with: "
            "give --oidc-issuer (or --bearer-token) so the gateway authenticates its callers"
        )
    remote = RemoteAgentExecutor(
        url, headers=headers, passthrough=args.passthrough, **_remote_connection(args)
    )
    stack.push_async_callback(remote.aclose)
    client = await remote.client()  # fails early (exit 4 / 3) when the agent is unreachable
    card = client.card
    if card is None:  # pragma: no cover - connect() always has a card
        raise UsageError(f"the agent at {url} published no card")
    card = sanitize_card(card)
    resolved = ResolvedAgent(
        remote,
        name=card.name,
        description=card.description,
        version=card.version,
        skills=tuple(card.skills),
        input_modes=tuple(card.default_input_modes),
        output_modes=tuple(card.default_output_modes),
        adapter="remote",
    )
    return resolved, remote


def _card(
    resolved: ResolvedAgent,
    options: Mapping[str, Any],
    skills: Sequence[AgentSkill],
    interfaces: list[AgentInterface],
) -> AgentCard:
    from ..adapters import default_card

    card = default_card(resolved, options)
    ids = [s.id for s in card.skills]
    for skill in skills:
        if skill.id in ids:
            raise UsageError(f"the card already has a skill with id {skill.id!r}")
        ids.append(skill.id)
    return card.model_copy(
        update={"skills": [*card.skills, *skills], "supported_interfaces": interfaces}
    )


_PER_AGENT = ("name", "description", "agent_version", "skill", "option", "adapter")


def _agents(args: argparse.Namespace) -> list[AgentSpec]:
    """The agents to serve: the TARGETs given, else those of the environment or file."""
    layered = load_settings(args, args.serve_parser)
    targets: list[str] = list(args.targets or [])
    specs = agents_from_args(targets) if targets else (layered.agents or [])
    if not specs:
        where = f" or in {layered.source}" if layered.source else ""
        raise UsageError(
            f"name a TARGET to serve (on the command line{where}: targets = [...] or "
            "[agents.NAME] in a config file, or $A2A_TARGETS)"
        )
    return specs


def _enable_telemetry(args: argparse.Namespace) -> None:
    """``--otel``: turn on tracing, or say in one line why it cannot be."""
    if args.otel:
        from .. import telemetry

        try:
            telemetry.enable()
        except telemetry.TelemetryUnavailableError as exc:
            raise UsageError(str(exc)) from None


def _stop_signal(stack: AsyncExitStack) -> _StopSignal:
    """Ctrl-C and SIGTERM stop the server quietly while ``stack`` is open."""
    stop = _StopSignal()
    stack.callback(stop.uninstall)
    stop.install()
    stack.enter_context(_quiet_cancellations(stop))
    return stop


async def run(args: argparse.Namespace) -> int:
    specs = _agents(args)
    many = len(specs) > 1 or specs[0].named
    if many:
        _refuse_per_agent_options(args)
    # loaded before anything starts: a typo fails fast
    loaded = [(spec, None if is_url(spec.target) else load_target(spec.target)) for spec in specs]

    from ..bindings import BindingUnavailableError
    from ..compose.builder import HostedAgent
    from ..compose.serve import (
        freeze_startup_objects,
        public_base_url,
        public_grpc_address,
        running_server,
    )
    from ..errors import ConfigurationError
    from ..store_registry import redact_url
    from .render import Console, safe_text

    console = Console()
    options = _options(args)
    shared: dict[str, Any] = {
        k: v for k, v in options.items() if k not in ("name", "description", "version")
    }
    config = _manager_config(args)
    tls = _server_tls(args)
    if args.public_url:
        check_url(args.public_url)
    if many and not any(agent is None for _, agent in loaded):
        _refuse_remote_options(args)
    _enable_telemetry(args)
    async with AsyncExitStack() as stack:
        stop = _stop_signal(stack)
        if not many and loaded[0][1] is not None:
            _refuse_remote_options(args)
        port: int = args.port or _free_port(args.host)
        base = public_base_url(args.host, port, args.public_url, scheme=_scheme(tls))
        versions: tuple[str, ...] = args.versions
        grpc_port: int | None = args.grpc_port
        grpc_address: str | None = None
        if grpc_port is not None:
            if "1.0" not in versions:
                raise UsageError("--grpc-port serves A2A 1.0: add 1.0 to --versions")
            grpc_port = grpc_port or _free_port(args.host)
            grpc_address = public_grpc_address(
                args.host, grpc_port, args.public_url, secure=tls is not None
            )
        agents: dict[str, HostedAgent] = {}
        kinds: dict[str, str] = {}
        titles: dict[str, str] = {}
        for spec, agent in loaded:
            mine = argparse.Namespace(**{**vars(args), **spec.settings, "target": spec.target})
            agent_options = _options(mine) if many else options
            resolved, kinds[spec.name] = await _resolve(
                agent, mine, agent_options, stack, spec.name if many else None
            )
            interfaces = _interfaces(
                f"{base}/{spec.name}" if many else base, versions, grpc_address
            )
            card = _card(resolved, agent_options, mine.skill, interfaces)
            titles[spec.name] = card.name
            agents[spec.name] = HostedAgent(resolved, card=card)
        signer = _card_signer(args)
        served: Any = agents
        if not many:
            (only,) = agents.values()
            served, shared = only.agent, {"card": only.card, **options}
        try:
            server = await stack.enter_async_context(
                running_server(
                    served,
                    host=args.host,
                    port=port,
                    public_url=args.public_url,
                    log_level=args.log_level,
                    push=bool(args.push),
                    allow_private_push_targets=bool(args.allow_private_push_targets),
                    push_signing_secret=_push_signing_secret(args),
                    graceful_shutdown=3,
                    grpc_port=grpc_port,
                    store_url=args.store,
                    config=config,
                    strict_output_modes=bool(args.strict_output_modes),
                    operation_scopes=_operation_scopes(args),
                    playground=not args.no_playground,
                    card_signer=signer,
                    tls=tls,
                    **shared,
                )
            )
        except BindingUnavailableError as exc:
            raise UsageError(str(exc)) from None
        except OSError as exc:
            # 8000 is also `python3 dev.py docs-serve`'s: say how to pick another.
            hint = "; give another with --port (0 picks a free one)"
            raise UsageError(
                f"cannot listen on {args.host}:{port}: {exc.strerror or exc}"
                + (hint if exc.errno == errno.EADDRINUSE and not many else "")
            ) from None
        except (ConfigurationError, TypeError, ValueError, RuntimeError) as exc:
            raise UsageError(_first_line(exc), cause=exc) from None
        stop.server = server
        if not many:
            freeze_startup_objects()  # a2a serve owns its process (see the function)
        if args.log_format != "text":
            from ..server.asgi.access import use_log_level

            use_log_level(args.log_level, args.log_format)
        url = server.url
        if many:
            console.line(f"Serving {len(agents)} agents at {url}")
            for name in agents:
                title = safe_text(titles[name], single_line=True)
                console.line(f'  "{title}" ({kinds[name]}) at {url}/{name}')
            first = next(iter(agents))
            console.line(
                f"Agent card: {url}/{first}/.well-known/agent-card.json (each below its URL)"
            )
            console.line(f"Catalog: {url}/.well-known/ai-catalog.json")
            if not args.no_playground:
                console.line(f"Playground: {url}/ (lists the agents)")
        else:
            (kind,) = kinds.values()
            title = safe_text(server.service.card.name, single_line=True)
            console.line(f'Serving "{title}" ({kind}) at {url}')
            console.line(f"Agent card: {url}/.well-known/agent-card.json")
            if not args.no_playground:
                console.line(f"Playground: {url}/playground/")
            if grpc_address:
                console.line(f"gRPC: {grpc_address}")
        console.line(f"Health: {url}/healthz (live), {url}/readyz (ready)")
        store = redact_url(args.store)
        if many:
            details = [f"A2A {', '.join(versions)}", f"store {store} (shared)"]
        else:
            bindings = "JSON-RPC, HTTP+JSON and gRPC" if grpc_address else "JSON-RPC and HTTP+JSON"
            details = [f"A2A {', '.join(versions)}", bindings, f"store {store}"]
        if args.push:
            signed = " (signed)" if args.push_signing_secret and not many else ""
            details.append(f"push notifications on{signed}")
        if options.get("bearer_tokens"):
            details.append(f"bearer auth ({len(options['bearer_tokens'])} token(s))")
        if options.get("oidc_issuer"):
            details.append(f"JWT auth from {options['oidc_issuer']}")
        if tls is not None and not many:
            details.append(
                f"mutual TLS (caller: certificate {tls.principal_field})" if tls.mutual else "TLS"
            )
        if signer is not None:
            what = "cards and catalog" if many else "card"
            details.append(f"{what} signed ({signer.algorithm}, kid {signer.kid})")
        console.line(console.dim("; ".join(details)))
        if args.public_url and not many:
            console.line(console.dim(f"Listening on {args.host}:{port}"))
        console.line("Press Ctrl-C to stop.")
        await stop.wait()
        console.line(f"Stopping{'…' if console.unicode else '...'} (Ctrl-C again: at once)")
    console.line("Stopped.")
    return ExitCode.OK


def _refuse_per_agent_options(args: argparse.Namespace) -> None:
    """With several agents, the options that describe one agent are set per agent."""
    for dest in _PER_AGENT:
        value = getattr(args, dest)
        if value and value != args.serve_parser.get_default(dest):
            flag = "-o" if dest == "option" else "--" + dest.replace("_", "-")
            raise UsageError(
                f"{flag} is one agent's: with several agents, set it per agent "
                "([agents.NAME] tables in a config file)"
            )
    if args.grpc_port is not None:
        raise UsageError("--grpc-port serves one agent; several agents are served over HTTP")


async def _resolve(
    agent: object | None,
    args: argparse.Namespace,
    options: Mapping[str, Any],
    stack: AsyncExitStack,
    name: str | None,
) -> tuple[ResolvedAgent, str]:
    """One agent made servable (a gateway when ``agent`` is None), and its kind."""
    adapter_options: dict[str, Any] = dict(args.option)
    if agent is None:
        if adapter_options:
            if name is not None:
                raise UsageError(f"{name}: -o sets adapter options; a gateway has none")
            raise UsageError("-o sets adapter options; a gateway has no adapter")
        resolved, _ = await _resolve_remote(args, stack)
        return resolved, f"a gateway to {args.target}"
    resolved = await _resolve_local(agent, args, {**options, **adapter_options})
    check_adapter_options(resolved, adapter_options)
    return resolved, _kind(resolved)


def _scheme(tls: ServerTLS | None) -> str:
    return "https" if tls is not None else "http"


class _StopSignal:
    """Ctrl-C / SIGTERM: the first asks for a clean stop, the second forces it."""

    def __init__(self) -> None:
        import asyncio

        self.server: RunningServer | None = None
        self._event = asyncio.Event()
        self._installed: list[signal.Signals] = []

    def install(self) -> None:
        import asyncio
        import signal

        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self._on_signal)
            except (NotImplementedError, RuntimeError, ValueError):  # pragma: no cover - Windows
                continue  # Ctrl-C then arrives as KeyboardInterrupt, which main() handles
            self._installed.append(sig)

    def uninstall(self) -> None:
        import asyncio

        loop = asyncio.get_running_loop()
        for sig in self._installed:
            loop.remove_signal_handler(sig)
        self._installed.clear()

    def _on_signal(self) -> None:
        if self._event.is_set() and self.server is not None:
            self.server.server.force_exit = True
        self._event.set()

    @property
    def requested(self) -> bool:
        return self._event.is_set()

    async def wait(self) -> None:
        await self._event.wait()


class _DropCancellations:
    """A logging filter (any object with ``filter`` is one): no logging import at startup."""

    def __init__(self, stop: _StopSignal) -> None:
        self.stop = stop

    def filter(self, record: logging.LogRecord) -> bool:
        import asyncio

        error = record.exc_info[1] if record.exc_info else None
        return not (self.stop.requested and isinstance(error, asyncio.CancelledError))


@contextlib.contextmanager
def _quiet_cancellations(stop: _StopSignal) -> Generator[None]:
    """Once stopping, uvicorn cancels the streams still open after the graceful timeout and
    logs each as an application error with a traceback: expected then, so not shown."""
    import logging

    log = logging.getLogger("uvicorn.error")
    quiet = _DropCancellations(stop)
    log.addFilter(quiet)
    try:
        yield
    finally:
        log.removeFilter(quiet)


def _kind(resolved: ResolvedAgent) -> str:
    """How the object is served, for the startup line."""
    if resolved.adapter:
        return f"{resolved.adapter} adapter"
    kinds = {"FunctionExecutor": "async function", "GeneratorExecutor": "async generator"}
    return kinds.get(type(resolved.executor).__name__, "AgentExecutor")


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
