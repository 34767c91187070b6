"""The options of building a server, typed, in one place.

``serve``, ``running_server``, ``configure_service``, ``create_app``, the
mount helpers and ``a2a serve`` all take the same keyword options and hand
them to ``parse_options``, which sorts them into:

- ``AppOptions``: the HTTP layer (routes, limits, auth hook, card caching);
- ``ServiceOptions``: the service (task store, adapter, push, streaming...);
- agent options: everything else, passed on to the adapter, the card hooks
  and the auth backends (``name``, ``bearer_tokens``, LangChain's
  ``input_key``...). These are open-ended, so a name is accepted only when
  something declares it reads it: the core (``CORE_AGENT_OPTIONS``) or a
  loaded plugin (its ``A2A_OPTIONS`` attribute, see ``plugins.declared_options``).

A name nobody takes is a ``TypeError`` listing the valid ones, so a typo
never passes silently. The entry points' own keyword parameters (``host``,
``port``, ``card``...) are in that list and in its "did you mean" hints too
(``explicit``), and ``create_app``, whose options are all explicit
parameters, refuses an unknown one the same way (``refuse_unknown_keywords``).
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from ..errors import HttpStatusMapping
from ..identity import Authenticator
from ..wire import DEFAULT_LIMITS, DecodeLimits
from .head_limits import DEFAULT_MAX_HEADER_BYTES, DEFAULT_MAX_HEADER_COUNT

if TYPE_CHECKING:
    import pluggy

    from ..contracts.task_store import TaskStore
    from ..types import AgentCard
    from .config import ManagerConfig
    from .events import EventBus
    from .files import FileStore
    from .observers import TaskObserver
    from .push_api import PushNotifier
    from .service import CardProvider

__all__ = [
    "CORE_AGENT_OPTIONS",
    "AppOptions",
    "BuildOptions",
    "ServiceOptions",
    "check_agent_options",
    "closest",
    "keyword_names",
    "parse_options",
    "refuse_unknown_keywords",
    "unknown_options_message",
]

_P = ParamSpec("_P")
_R = TypeVar("_R")

CORE_AGENT_OPTIONS: Mapping[str, str] = {
    "name": "the card's name",
    "description": "the card's description",
    "version": "the agent's own version, on the card",
    "auth_backends": "a list of AuthBackend objects",
}
"""Agent options the core itself reads (card defaults and explicit auth backends)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class AppOptions:
    """The HTTP layer: what ``create_app`` configures (see its docstring for each)."""

    jsonrpc_path: str | None = "/"
    rest: bool = True
    rest_prefix: str = ""
    http_status_mapping: HttpStatusMapping | str = HttpStatusMapping.V1_0_1
    rest_content_type: str = "application/json"
    max_body_bytes: int | None = None
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    max_header_count: int = DEFAULT_MAX_HEADER_COUNT
    limits: DecodeLimits = DEFAULT_LIMITS
    card_max_age: int = 300
    card_signer: Callable[[AgentCard], AgentCard] | None = None
    """Signs the served card (``a2a_core.signing.CardSigner``: JWS over its RFC 8785 form)."""
    authenticate: Authenticator | None = None
    """None: the service's own (``configure_service`` composes it from the auth options)."""
    require_auth: bool | None = None
    sse_ping_interval: float | None = 15.0
    sse_send_timeout: float | None = 30.0
    lifespan: Callable[[Any], AbstractAsyncContextManager[Any]] | None = None
    """None: the service's own (the plugins' ``a2a_lifespan`` when it was configured)."""
    public_url: str | None = None
    """The URL clients use; the card's interfaces are published under it. None: under the
    origin of each request (scheme, Host, mount path)."""
    trusted_proxies: Sequence[str] = ()
    """Peers (IPs, networks, ``"*"``) whose ``Forwarded`` / ``X-Forwarded-*`` headers count."""
    playground: bool = True
    """Serve the browser playground at ``/playground/`` (and to browsers at ``/``);
    False for production when nobody should try the agent from a browser."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ServiceOptions:
    """The service: where tasks live, which adapter serves the agent, push, streaming."""

    store_url: str = "memory://"
    store: TaskStore | None = None
    adapter: str | None = None
    plugin_manager: pluggy.PluginManager | None = None
    bus: EventBus | None = None
    config: ManagerConfig | None = None
    push: bool | PushNotifier | None = None
    """True: the built-in webhook sender; or a ``PushNotifier``; None/False: no push."""
    allow_private_push_targets: bool = False
    """With ``push=True``: let webhooks call loopback/private hosts (tests, development)."""
    push_signing_secret: str | bytes | Sequence[str | bytes] | None = None
    """With ``push=True``: sign every delivery (HMAC-SHA256, Standard Webhooks headers; see
    ``a2a_core.webhooks``); several secrets while rotating, the new one first."""
    extended_card: CardProvider | None = None
    streaming: bool = True
    strict_output_modes: bool = False
    """Refuse (-32005) a send whose ``acceptedOutputModes`` the card's modes cannot meet;
    off: answer anyway in the agent's best mode (the agent can read the accepted modes)."""
    observers: Sequence[TaskObserver] = field(default_factory=tuple[Any, ...])
    file_store: FileStore | bool = True
    """Large outgoing files served by URL: True (a default ``FileStore``: above 1 MiB), a
    ``FileStore`` of your own, or False (every file inline)."""
    task_scope: str | None = None
    """Keep this agent's tasks apart from other agents' in a shared store (a task of one
    is not found through another); set per agent by ``server.host``."""
    operation_scopes: Mapping[str, str | Sequence[str]] | None = None
    """Scopes each operation group needs (``read``, ``send``, ``cancel``, ``push``, ``*``),
    any one of them granted by the caller's token; see ``server.authorization``."""


APP_OPTION_NAMES = frozenset(f.name for f in fields(AppOptions))
SERVICE_OPTION_NAMES = frozenset(f.name for f in fields(ServiceOptions))


@dataclass(frozen=True, slots=True)
class BuildOptions:
    """Keyword options sorted by who takes them."""

    app: AppOptions = field(default_factory=AppOptions)
    service: ServiceOptions = field(default_factory=ServiceOptions)
    agent: Mapping[str, Any] = field(default_factory=dict[str, Any])
    service_given: frozenset[str] = frozenset()
    """The service options given explicitly (a ready ``A2AService`` takes none)."""
    explicit: frozenset[str] = frozenset()
    """The calling entry point's own keyword parameters (``host``, ``card``...): valid
    names too, so the message for an unknown one lists and suggests them."""


def parse_options(
    options: Mapping[str, Any], *, app: bool = True, explicit: Iterable[str] = ()
) -> BuildOptions:
    """Sort ``options``; ``app=False`` (``configure_service``) refuses the HTTP ones.

    ``explicit``: the entry point's own keyword parameters (see ``BuildOptions.explicit``).

    Agent options are not checked here (that needs the plugins): the builder
    calls ``check_agent_options`` once it has its plugin manager.
    """
    app_kwargs = {k: v for k, v in options.items() if k in APP_OPTION_NAMES}
    if app_kwargs and not app:
        names = ", ".join(sorted(app_kwargs))
        raise TypeError(
            f"{names}: option(s) of the HTTP app, not of the service; "
            "give them to create_app (or serve / mount)"
        )
    service_kwargs = {k: v for k, v in options.items() if k in SERVICE_OPTION_NAMES}
    _check_manager_config(service_kwargs.get("config"))
    agent = {
        k: v
        for k, v in options.items()
        if k not in APP_OPTION_NAMES and k not in SERVICE_OPTION_NAMES
    }
    return BuildOptions(
        AppOptions(**app_kwargs),
        ServiceOptions(**service_kwargs),
        agent,
        frozenset(service_kwargs),
        frozenset(explicit),
    )


def _check_manager_config(config: object) -> None:
    """``config`` is the task manager's settings; a framework's own config has its own name.

    A mapping here is most often a LangChain ``RunnableConfig`` given to the wrong
    option: say which one takes it, instead of failing later on a missing attribute.
    """
    if config is None:
        return
    from .config import ManagerConfig

    if isinstance(config, ManagerConfig):
        return
    kind = type(config).__name__
    hint = ""
    if isinstance(config, Mapping):
        hint = (
            "; a LangChain RunnableConfig (callbacks, tags, recursion_limit...) is runnable_config="
        )
    raise TypeError(
        f"config= takes the task manager's a2a_core.server.ManagerConfig, not {kind}{hint}"
    )


def check_agent_options(
    options: Collection[str],
    declared: Mapping[str, str],
    *,
    app: bool = True,
    explicit: Iterable[str] = (),
) -> None:
    """Refuse option names that neither the core nor a loaded plugin takes.

    ``declared`` maps each agent option a plugin declares to that plugin;
    ``explicit`` names the entry point's own keyword parameters (listed as valid).
    """
    known = {**CORE_AGENT_OPTIONS, **declared}
    unknown = sorted(name for name in options if name not in known)
    if not unknown:
        return
    valid = {*known, *SERVICE_OPTION_NAMES, *(APP_OPTION_NAMES if app else ()), *explicit}
    raise TypeError(
        unknown_options_message(unknown, valid) + " (plugins add theirs through A2A_OPTIONS)"
    )


def unknown_options_message(unknown: Iterable[str], valid: Iterable[str]) -> str:
    """ "unknown option 'x' (did you mean 'y'?). Valid options: ...": one wording everywhere."""
    names = sorted(set(valid))
    hints: list[str] = []
    for name in sorted(unknown):
        close = closest(name, names)
        hints.append(f"{name!r} (did you mean {close!r}?)" if close else repr(name))
    plural = "s" if len(hints) > 1 else ""
    return f"unknown option{plural} {', '.join(hints)}. Valid options: {', '.join(names)}"


def closest(name: str, valid: Iterable[str]) -> str | None:
    """The valid name ``name`` was most likely meant to be (None when none is close)."""
    found = difflib.get_close_matches(name, list(valid), n=1)
    return found[0] if found else None


def keyword_names(function: Callable[..., Any]) -> frozenset[str]:
    """The keyword-only parameters of ``function``: its options (not ``**kwargs`` itself)."""
    return frozenset(
        p.name
        for p in inspect.signature(function).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    )


def refuse_unknown_keywords(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """``function``, refusing an unknown keyword with ``unknown_options_message``.

    For entry points whose options are all explicit parameters (``create_app``):
    Python's own "unexpected keyword argument" names neither the valid ones nor
    the one meant.
    """
    valid = keyword_names(function)
    accepted = valid | {
        p.name
        for p in inspect.signature(function).parameters.values()
        if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    }

    @functools.wraps(function)
    def checked(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        unknown = [name for name in kwargs if name not in accepted]
        if unknown:
            raise TypeError(unknown_options_message(unknown, valid))
        return function(*args, **kwargs)

    return checked
