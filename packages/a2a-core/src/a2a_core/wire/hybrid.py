"""One agent card document that both 1.0 and 0.3 clients can read.

A server speaking both versions publishes the 1.0 card plus the 0.3
top-level fields (``protocolVersion``, ``url``, ``preferredTransport``,
``additionalInterfaces``, ``supportsAuthenticatedExtendedCard``, ``security``
and each skill's ``security``), derived from the interfaces tagged "0.3".
1.0 readers ignore the extra fields; 0.3 readers ignore the 1.0 ones.

``securitySchemes`` has the same key in both versions but different shapes.
Each scheme keeps its 1.0 oneof wrapper (``{"apiKeySecurityScheme": {...}}``)
and gains the 0.3 OpenAPI fields beside it (``"type": "apiKey", "in", "name"``).
The two never share a key, so the object reads correctly as either version:
1.0 parsers that ignore unknown fields see the wrapper, 0.3 parsers see
``type`` and its fields. A scheme 0.3 cannot express (device code flow,
PKCE) keeps only its 1.0 form rather than telling 0.3 clients something false.
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidAgentResponseError, UnrepresentableError
from ..types import AgentCard
from ._v03_convert import (
    V03_VERSION,
    as_obj,
    guard,
    interfaces_out,
    scheme_to_v03,
    security_to_v03,
)
from .v03 import V03JsonRpcCodec

__all__ = ["card_from_any", "hybrid_card"]

_V03_CODEC = V03JsonRpcCodec()


def _tagged_v03(card: AgentCard) -> list[Any]:
    return [
        i
        for i in card.supported_interfaces
        if i.protocol_version == V03_VERSION or i.protocol_version.startswith(V03_VERSION + ".")
    ]


def hybrid_card(card: AgentCard) -> dict[str, Any]:
    """The 1.0 card JSON plus the 0.3 fields; the plain 1.0 card if no interface is tagged 0.3.

    Raises UnrepresentableError when a 0.3 interface has a tenant (0.3 has none).
    """
    out = card.model_dump(mode="json", by_alias=True)
    interfaces = _tagged_v03(card)
    if not interfaces:
        return out
    out["protocolVersion"] = "0.3.0"
    out.update(interfaces_out(interfaces))
    if card.capabilities.extended_agent_card is not None:
        out["supportsAuthenticatedExtendedCard"] = card.capabilities.extended_agent_card
    if card.security_requirements:
        out["security"] = security_to_v03(card.security_requirements)
    for skill, skill_out in zip(card.skills, out.get("skills", []), strict=True):
        if skill.security_requirements:
            skill_out["security"] = security_to_v03(skill.security_requirements)
    schemes_out: dict[str, Any] = out.get("securitySchemes", {})
    for name, scheme in card.security_schemes.items():
        try:
            legacy = scheme_to_v03(scheme)
        except UnrepresentableError:
            continue
        schemes_out[name].update(legacy)
    return out


def card_from_any(value: Any) -> AgentCard:
    """A 1.0, 0.3 or hybrid card -> the internal card.

    A card with ``supportedInterfaces`` is read as 1.0 (a hybrid card is a 1.0
    card with extra fields); anything else as a 0.3 card, whose interfaces
    are tagged "0.3". Malformed input raises InvalidAgentResponseError.
    """
    obj = as_obj(value)
    if obj is None:
        raise InvalidAgentResponseError("Malformed agent card: it must be a JSON object")
    if "supportedInterfaces" in obj or "supported_interfaces" in obj:
        return guard(
            InvalidAgentResponseError,
            "Malformed agent card",
            lambda: AgentCard.model_validate(obj),
        )
    return _V03_CODEC.decode_card(obj)
