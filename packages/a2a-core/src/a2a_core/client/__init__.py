"""The A2A client: discovery, transports, typed results, a sync facade, remote agents.

``RemoteAgentSession`` (``a2a_core.client.session``) is a remote agent as a
framework drives it (the LangChain and CrewAI adapters are thin faces over it).

from a2a_core.client import A2AClient

async with await A2AClient.connect("http://localhost:8000") as client:
    print((await client.send("hello")).text)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..exports import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from ..identity import Credential, MissingCredentialError
    from .bounded import BoundedMap
    from .catalog import (
        AgentCatalog,
        CatalogEntry,
        CatalogNotFoundError,
        discover,
        discover_sync,
    )
    from .client import A2AClient, Content, EventStream, TaskRef
    from .discovery import (
        CachedCard,
        CardCache,
        CardLimits,
        CardNotFoundError,
        CardResolver,
        card_urls,
    )
    from .interfaces import NoCompatibleInterfaceError, select_interface
    from .loop import BackgroundLoop
    from .oauth import ClientCredentials, TokenError
    from .remote import RemoteAgentExecutor, RemoteSkill, remote_skills
    from .results import SendResult, TaskTracker, text_of
    from .session import RemoteAgentSession, RemoteReply, describe_card
    from .sync import SyncA2AClient, SyncEventStream
    from .transports.base import CallOptions, ClientTransport
    from .transports.errors import A2AConnectionError, A2ATimeoutError
    from .transports.inprocess import InProcessTransport
    from .transports.jsonrpc import JsonRpcTransport
    from .transports.rest import RestTransport
    from .untrusted import TextLimits, sanitize_card, sanitize_text

__all__ = [
    "A2AClient",
    "A2AConnectionError",
    "A2ATimeoutError",
    "AgentCatalog",
    "BackgroundLoop",
    "BoundedMap",
    "CachedCard",
    "CallOptions",
    "CardCache",
    "CardLimits",
    "CardNotFoundError",
    "CardResolver",
    "CatalogEntry",
    "CatalogNotFoundError",
    "ClientCredentials",
    "ClientTransport",
    "Content",
    "Credential",
    "EventStream",
    "InProcessTransport",
    "JsonRpcTransport",
    "MissingCredentialError",
    "NoCompatibleInterfaceError",
    "RemoteAgentExecutor",
    "RemoteAgentSession",
    "RemoteReply",
    "RemoteSkill",
    "RestTransport",
    "SendResult",
    "SyncA2AClient",
    "SyncEventStream",
    "TaskRef",
    "TaskTracker",
    "TextLimits",
    "TokenError",
    "card_urls",
    "describe_card",
    "discover",
    "discover_sync",
    "remote_skills",
    "sanitize_card",
    "sanitize_text",
    "select_interface",
    "text_of",
]

# Every name is loaded on first use (``from a2a_core.client import A2AClient`` imports
# only what the client needs: ``a2a send`` starts faster); the remote
# executor would even pull in the server package.
_LAZY = {
    "A2AClient": ".client",
    "Content": ".client",
    "EventStream": ".client",
    "TaskRef": ".client",
    "AgentCatalog": ".catalog",
    "CatalogEntry": ".catalog",
    "CatalogNotFoundError": ".catalog",
    "discover": ".catalog",
    "discover_sync": ".catalog",
    "CachedCard": ".discovery",
    "CardCache": ".discovery",
    "CardLimits": ".discovery",
    "CardNotFoundError": ".discovery",
    "CardResolver": ".discovery",
    "ClientCredentials": ".oauth",
    "TokenError": ".oauth",
    "card_urls": ".discovery",
    "Credential": "..identity",
    "MissingCredentialError": "..identity",
    "A2AConnectionError": ".transports.errors",
    "A2ATimeoutError": ".transports.errors",
    "NoCompatibleInterfaceError": ".interfaces",
    "select_interface": ".interfaces",
    "BackgroundLoop": ".loop",
    "BoundedMap": ".bounded",
    "SendResult": ".results",
    "TaskTracker": ".results",
    "text_of": ".results",
    "RemoteAgentSession": ".session",
    "RemoteReply": ".session",
    "describe_card": ".session",
    "SyncA2AClient": ".sync",
    "SyncEventStream": ".sync",
    "CallOptions": ".transports.base",
    "ClientTransport": ".transports.base",
    "TextLimits": ".untrusted",
    "sanitize_card": ".untrusted",
    "sanitize_text": ".untrusted",
    "RemoteAgentExecutor": ".remote",
    "RemoteSkill": ".remote",
    "remote_skills": ".remote",
    "InProcessTransport": ".transports.inprocess",
    "JsonRpcTransport": ".transports.jsonrpc",
    "RestTransport": ".transports.rest",
}


__getattr__, __dir__ = _lazy_exports(__name__, _LAZY, __all__)
