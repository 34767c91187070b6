"""One builder: agent -> executor -> service -> ASGI app.

``serve``, ``running_server``, ``configure_service``, the mount helpers and
``a2a serve`` all come through here, so an option means the same thing
everywhere (``server.options`` sorts and checks them):

1. the agent is resolved by ``adapters.resolve_agent`` (the named
   ``adapter``, else the ``a2a_adapt_agent`` hook, else a plain async
   function / generator / ``AgentExecutor``);
2. without a card, one is made from the adapter's defaults and the
   ``name``/``description``/``version`` options;
3. the auth backends the options configure add their security schemes, and
   become the service's ``authenticate``;
4. every ``a2a_agent_card`` hook adjusts the card;
5. the task store is ``store``, else opened from ``store_url``;
6. ``a2a_task_transition`` hooks become one task observer, the plugins'
   ``a2a_lifespan`` the service's lifespan;
7. ``build_app`` puts the ASGI app on top, with the card's interfaces
   filled in for where it is served when the card lists none.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..adapters import default_card, resolve_agent
from ..auth import auth_backends, chain_authenticators, with_security_schemes
from ..card import AgentCardBuilder
from ..errors import ConfigurationError
from ..plugins import (
    apply_card_hooks,
    declared_options,
    get_plugin_manager,
    plugin_lifespan,
    transition_observer,
)
from ..server.asgi.app import A2AApp
from ..server.asgi.host import AgentHost
from ..server.asgi.origin import interfaces_for
from ..server.asgi.routes import published_interfaces
from ..server.authorization import OperationScopes
from ..server.files import FileStore
from ..server.options import (
    BuildOptions,
    ServiceOptions,
    check_agent_options,
    keyword_names,
    parse_options,
)
from ..server.push_api import PushNotifier
from ..server.service import A2AService
from ..store_registry import open_task_store
from ..types import AgentCard, AgentInterface

__all__ = [
    "LOCAL_BASE",
    "CardLike",
    "HostedAgent",
    "build_app",
    "build_host",
    "build_service",
    "configure_service",
    "interfaces_for",
    "resolve_card",
]

CardLike = AgentCard | AgentCardBuilder
"""A finished card, or a builder whose interfaces may still be missing."""

LOCAL_BASE = "http://localhost"
"""The base of a card's interfaces when nothing says where the app is served (a mounted
app without ``public_url``); the app publishes them under each request's origin instead."""


def configure_service(agent: Any, *, card: AgentCard | None = None, **options: Any) -> A2AService:
    """An ``A2AService`` for any agent object, with every plugin applied (see the module doc).

    ``options``: the service options (``store_url``, ``adapter``, ``push``...,
    see ``ServiceOptions``) and the agent options the core and the plugins
    read (``name``, ``bearer_tokens``...). The service carries its
    ``authenticate`` and plugin lifespan, so ``create_app(service)`` serves
    it with the same auth. An unknown option is a ``TypeError``.
    """
    parsed = parse_options(options, app=False, explicit=keyword_names(configure_service))
    return build_service(agent, card=card, options=parsed, app=False)


def build_service(
    agent: Any, *, card: AgentCard | None = None, options: BuildOptions, app: bool = True
) -> A2AService:
    """The service for ``agent`` from sorted options (``app``: whether app options were allowed,
    for the error message listing the valid names)."""
    svc = options.service
    pm = svc.plugin_manager if svc.plugin_manager is not None else get_plugin_manager()
    check_agent_options(options.agent, declared_options(pm), app=app, explicit=options.explicit)
    opts: Mapping[str, Any] = MappingProxyType(dict(options.agent))
    resolved = resolve_agent(agent, opts, adapter=svc.adapter, plugin_manager=pm)
    the_card = card if card is not None else default_card(resolved, opts)
    auth_opts = opts
    if svc.operation_scopes:
        auth_opts = MappingProxyType({**opts, "operation_scopes": svc.operation_scopes})
    backends = auth_backends(pm, auth_opts)
    scopes = _scopes_of(svc.operation_scopes)
    the_card = with_security_schemes(the_card, backends, scopes)
    the_card = apply_card_hooks(pm, the_card, opts)
    observers = list(svc.observers)
    observer = transition_observer(pm)
    if observer is not None:
        observers.append(observer)
    store = svc.store
    if store is None:
        store = open_task_store(svc.store_url, plugin_manager=pm)

    def lifespan(app: Any) -> AbstractAsyncContextManager[None]:
        return plugin_lifespan(pm, app)

    return A2AService(
        resolved.executor,
        the_card,
        store=store,
        bus=svc.bus,
        config=svc.config,
        push=_notifier(svc),
        extended_card=svc.extended_card,
        streaming=svc.streaming,
        strict_output_modes=svc.strict_output_modes,
        observers=observers,
        authenticate=chain_authenticators(backends) if backends else None,
        lifespan=lifespan,
        files=_file_store(svc),
        operation_scopes=svc.operation_scopes,
        task_scope=svc.task_scope,
    )


def _scopes_of(mapping: Any) -> frozenset[str]:
    """Every scope ``operation_scopes`` names (listed in the card's requirements)."""
    if not mapping:
        return frozenset()
    found = mapping if isinstance(mapping, OperationScopes) else OperationScopes(mapping)
    return found.scopes()


def _file_store(svc: ServiceOptions) -> FileStore | None:
    if svc.file_store is True:
        return FileStore()
    if svc.file_store is False:
        return None
    return svc.file_store


def _notifier(svc: ServiceOptions) -> PushNotifier | None:
    if svc.push is True:
        from ..server.push import PushNotificationService

        return PushNotificationService(
            allow_private_targets=svc.allow_private_push_targets,
            signing_secret=svc.push_signing_secret,
        )
    if svc.push_signing_secret is not None:
        raise ConfigurationError(
            "push_signing_secret configures the built-in sender (push=True); give your own "
            "PushNotifier its secret yourself"
        )
    if svc.push is None or svc.push is False:
        return None
    return svc.push


def build_app(
    agent_or_service: Any,
    *,
    card: CardLike | None = None,
    options: BuildOptions,
    base_url: str | None = None,
    grpc_address: str | None = None,
) -> A2AApp:
    """The ASGI app for an agent (built with ``build_service``) or a ready ``A2AService``.

    A card without interfaces gets those of the app's routes under the
    ``public_url`` option when given; else under ``base_url`` (where
    ``serve`` listens; ``LOCAL_BASE`` when unknown, as for a mounted app),
    which the app replaces with the origin of each request. ``grpc_address``
    adds the gRPC interface served beside the app.
    """
    app_opts = options.app
    served_base = None if app_opts.public_url else (base_url or LOCAL_BASE)
    interfaces = published_interfaces(
        app_opts.public_url.rstrip("/") if app_opts.public_url else (base_url or LOCAL_BASE),
        app_opts,
        {"GRPC": grpc_address} if grpc_address is not None else None,
    )
    the_card = resolve_card(card, interfaces)
    if isinstance(agent_or_service, A2AService):
        if options.agent or options.service_given:
            given = sorted({*options.agent, *options.service_given})
            raise TypeError(
                f"options for building a service ({', '.join(given)}) were given "
                "with an A2AService: configure the service itself"
            )
        service = agent_or_service
        published = the_card or resolve_card(service.card, interfaces)
    else:
        service = build_service(agent_or_service, card=the_card, options=options)
        published = resolve_card(service.card, interfaces)  # with the hooks' changes
    return A2AApp(service, card=published, options=app_opts, served_base=served_base)


def resolve_card(card: CardLike | None, interfaces: list[AgentInterface]) -> AgentCard | None:
    """The card with ``interfaces`` filled in where it has none."""
    if card is None:
        return None
    if isinstance(card, AgentCardBuilder):
        builder = card
        if any(p.startswith("no interfaces") for p in builder.problems()):
            builder = copy.deepcopy(card)
            for iface in interfaces:
                builder.interface(iface.url, iface.protocol_binding, iface.protocol_version)
        return builder.build()
    if not card.supported_interfaces:
        return card.model_copy(update={"supported_interfaces": interfaces})
    return card


@dataclass(frozen=True, slots=True)
class HostedAgent:
    """One agent of a service hosting several, with what is its own: its card and its
    options (``name``, ``adapter``, an adapter's ``input_key``...). A plain agent object
    in ``serve({...})`` stands for ``HostedAgent(agent)``."""

    agent: Any
    card: CardLike | None = None
    options: Mapping[str, Any] = field(default_factory=dict[str, Any])


_SEGMENT = re.compile(r"[A-Za-z0-9._~-]+(?:/[A-Za-z0-9._~-]+)*")
_SHARED_ONLY = frozenset({"store", "store_url", "push", "push_signing_secret", "public_url"})
"""Options that configure what the agents share: given once, for the whole service."""


def _agent_path(name: str) -> str:
    """``"summarize"`` -> ``"/summarize"``: the path an agent is served below, checked."""
    cleaned = name.strip("/")
    if not _SEGMENT.fullmatch(cleaned) or cleaned.startswith(".well-known"):
        raise ConfigurationError(
            f"agent path {name!r}: use letters, digits and . _ ~ - (segments joined by '/'), "
            "not .well-known"
        )
    return "/" + cleaned


def build_host(
    agents: Mapping[str, Any],
    *,
    options: Mapping[str, Any],
    base_url: str | None = None,
    explicit: Iterable[str] = (),
) -> AgentHost:
    """The app serving every agent of ``agents`` (path name -> agent or ``HostedAgent``).

    ``options`` are ``serve``'s and apply to every agent; the agents share one task
    store (opened once from ``store_url``, or ``store``), one push service and the
    auth the options configure, while each keeps its tasks to itself
    (``ServiceOptions.task_scope``). A ``HostedAgent``'s own options come on top of
    the shared ones. ``base_url``: where the service listens (the agents' card
    interfaces follow each request's origin below it).
    """
    if not agents:
        raise ConfigurationError("serve at least one agent")
    names = frozenset(explicit)
    shared = parse_options(options, explicit=names)
    svc = shared.service
    pm = svc.plugin_manager if svc.plugin_manager is not None else get_plugin_manager()
    store = (
        svc.store if svc.store is not None else open_task_store(svc.store_url, plugin_manager=pm)
    )
    push = _notifier(svc)
    public_url = shared.app.public_url.rstrip("/") if shared.app.public_url else None
    common = {
        k: v for k, v in options.items() if k not in _SHARED_ONLY and k != "push_signing_secret"
    }
    common.pop("allow_private_push_targets", None)
    apps: dict[str, A2AApp] = {}
    for name, given in agents.items():
        path = _agent_path(name)
        if path in apps:
            raise ConfigurationError(f"two agents are served at {path}")
        spec = given if isinstance(given, HostedAgent) else HostedAgent(given)
        shared_here = sorted(_SHARED_ONLY.intersection(spec.options))
        if shared_here:
            raise ConfigurationError(
                f"{name}: {', '.join(shared_here)} configure(s) what the agents share: "
                "give it once, for the whole service"
            )
        own: dict[str, Any] = {**common, **spec.options, "store": store, "task_scope": name}
        if push is not None:
            own["push"] = push
        if public_url:
            own["public_url"] = public_url + path
        apps[path] = build_app(
            spec.agent,
            card=spec.card,
            options=parse_options(own, explicit=names),
            base_url=base_url + path if base_url else None,
        )
    return AgentHost(
        apps,
        public_url=public_url,
        trusted_proxies=shared.app.trusted_proxies,
        card_signer=shared.app.card_signer,
        card_max_age=shared.app.card_max_age,
    )
