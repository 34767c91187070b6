"""Shared pieces of the two A2A 0.3 codecs (JSON-RPC shapes and 0.3 ProtoJSON).

Decoding turns untrusted 0.3 JSON into the 1.0 dict shape, then validates
it once with the internal pydantic model. The transforms only rewrite what
has the expected type and pass anything else through unchanged, so the
model's validation reports it; the decode guards below turn every failure
into our error types. Encoding reads the internal models' attributes
directly (no intermediate dump) and raises UnrepresentableError for values
0.3 cannot carry, never dropping them silently.

The agent card is shared: the JSON-RPC card (``types.ts``) and the 0.3
proto card differ only in how security schemes and requirements are
spelled, and the decoder accepts both spellings.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from typing import Any, TypeVar, cast

from pydantic import ValidationError

from ..errors import A2AError, UnrepresentableError
from ..types import (
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    OAuthFlows,
    Role,
    SecurityRequirement,
    SecurityScheme,
    TaskState,
)
from .codec import validation_message

__all__ = [
    "ROLE_FROM_V03",
    "ROLE_TO_V03",
    "STATE_FROM_V03",
    "STATE_TO_V03",
    "V03_VERSION",
    "Converter",
    "FieldMap",
    "as_list",
    "as_obj",
    "b64",
    "card_in",
    "card_out",
    "each",
    "field_map",
    "guard",
    "has",
    "interfaces_out",
    "is_final",
    "map_list",
    "nested",
    "nonempty",
    "pick",
    "push_in",
    "push_out",
    "put",
    "remap",
    "scheme_to_v03",
    "security_to_v03",
    "v03_interfaces",
]

T = TypeVar("T")

V03_VERSION = "0.3"
"""The ``protocolVersion`` tag of interfaces spoken with the 0.3 codecs."""
_CARD_PROTOCOL_VERSION = "0.3.0"

# --- untrusted-dict access ---------------------------------------------------

_SNAKE_CACHE: dict[str, str] = {}
_CAMEL_HUMP = re.compile(r"(?<!^)(?=[A-Z])")


def _snake(name: str) -> str:
    snake = _SNAKE_CACHE.get(name)
    if snake is None:
        snake = _CAMEL_HUMP.sub("_", name).lower()
        _SNAKE_CACHE[name] = snake
    return snake


def as_obj(value: Any) -> dict[str, Any] | None:
    """The value as a JSON object, or None when it is something else."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def as_list(value: Any) -> list[Any] | None:
    """The value as a JSON array, or None when it is something else."""
    return cast("list[Any]", value) if isinstance(value, list) else None


def pick(obj: dict[str, Any], name: str) -> Any:
    """A field by its camelCase JSON name or its snake_case proto name (ProtoJSON accepts both)."""
    value = obj.get(name)
    if value is None:
        snake = _snake(name)
        if snake != name:
            value = obj.get(snake)
    return value


def has(obj: dict[str, Any], name: str) -> bool:
    """Whether a field is present (and not null) under either spelling."""
    return pick(obj, name) is not None


def put(out: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` unless the value is null (absent and null mean the same)."""
    if value is not None:
        out[key] = value


def nonempty(value: Any) -> Any:
    """Proto3 scalar semantics: an empty string is an unset field."""
    return None if value == "" else value


def map_list(value: Any, convert: Callable[[Any], Any]) -> Any:
    """Convert each element of a list; anything else passes through to validation."""
    items = as_list(value)
    return [convert(x) for x in items] if items is not None else value


Converter = Callable[[Any], Any]
FieldMap = dict[str, tuple[str, Converter | None]]
"""Wire key (either spelling) -> (1.0 camelCase key, converter or None)."""


def field_map(**fields: str | Converter | tuple[str, Converter] | None) -> FieldMap:
    """A FieldMap from camelCase wire names; their snake_case spellings are added.

    Each value is None (same name, copied), a new name, a converter, or both.
    """
    table: FieldMap = {}
    for wire, spec in fields.items():
        if spec is None:
            entry: tuple[str, Converter | None] = (wire, None)
        elif isinstance(spec, str):
            entry = (spec, None)
        elif callable(spec):
            entry = (wire, spec)
        else:
            entry = spec
        table[wire] = entry
        table.setdefault(_snake(wire), entry)
    return table


def remap(obj: dict[str, Any], table: FieldMap) -> dict[str, Any]:
    """Copy the known fields of ``obj`` into a fresh 1.0 dict in one pass over its keys.

    Unknown fields are dropped and nulls mean absent. A converter returning
    None leaves the field unset. (Sending both spellings of one field is
    malformed ProtoJSON; here the later one wins.)
    """
    out: dict[str, Any] = {}
    for key, value in obj.items():
        entry = table.get(key)
        if entry is None or value is None:
            continue
        target, convert = entry
        if convert is not None:
            value = convert(value)
            if value is None:
                continue
        out[target] = value
    return out


def nested(table: FieldMap) -> Converter:
    """A converter remapping an object with ``table``; anything else passes through."""

    def convert(value: Any) -> Any:
        obj = as_obj(value)
        return value if obj is None else remap(obj, table)

    return convert


def each(convert: Converter) -> Converter:
    """A converter applying ``convert`` to every element of a list."""
    return lambda value: map_list(value, convert)


def b64(raw: bytes) -> str:
    """Standard base64 with padding, as both 0.3 forms use."""
    return base64.b64encode(raw).decode("ascii")


def guard(error: type[A2AError], prefix: str, convert: Callable[[], T]) -> T:
    """Run a decode step; any failure becomes ``error`` (A2A errors pass through)."""
    try:
        return convert()
    except A2AError:
        raise
    except ValidationError as exc:
        raise error(f"{prefix}: {validation_message(exc)}") from None
    except (
        ValueError,
        TypeError,
        KeyError,
        AttributeError,
        IndexError,
        ArithmeticError,  # e.g. OverflowError from an out-of-range timestamp
        RecursionError,
    ) as exc:
        raise error(f"{prefix}: {exc}") from None


# --- enums ---------------------------------------------------------------

STATE_TO_V03: dict[TaskState, str] = {
    TaskState.UNSPECIFIED: "unknown",
    TaskState.SUBMITTED: "submitted",
    TaskState.WORKING: "working",
    TaskState.COMPLETED: "completed",
    TaskState.FAILED: "failed",
    TaskState.CANCELED: "canceled",
    TaskState.INPUT_REQUIRED: "input-required",
    TaskState.REJECTED: "rejected",
    TaskState.AUTH_REQUIRED: "auth-required",
}
STATE_FROM_V03: dict[str, str] = {
    **{name: state.value for state, name in STATE_TO_V03.items()},
    "cancelled": TaskState.CANCELED.value,
}
ROLE_TO_V03: dict[Role, str] = {Role.USER: "user", Role.AGENT: "agent"}
ROLE_FROM_V03: dict[str, str] = {name: role.value for role, name in ROLE_TO_V03.items()}


def is_final(state: TaskState) -> bool:
    """0.3 ``final``: the stream ends after this status (terminal or interrupted)."""
    return state.is_terminal or state.is_interrupted


# --- push notification config (same field names in both 0.3 forms) ---------


def push_out(config: Any) -> dict[str, Any]:
    """Internal TaskPushNotificationConfig -> 0.3 PushNotificationConfig (no task id)."""
    if config.tenant:
        raise UnrepresentableError("A2A 0.3 push notification configs have no tenant")
    out: dict[str, Any] = {}
    put(out, "id", config.id)
    out["url"] = config.url
    put(out, "token", config.token)
    auth = config.authentication
    if auth is not None:
        auth_out: dict[str, Any] = {"schemes": [auth.scheme] if auth.scheme else []}
        put(auth_out, "credentials", auth.credentials)
        out["authentication"] = auth_out
    return out


def _first_scheme(value: Any) -> Any:
    items = as_list(value)
    if items is None:
        raise ValueError("authentication.schemes must be a list")
    return items[0] if items else ""


def _push_table(norm: Converter | None) -> FieldMap:
    auth = field_map(schemes=("scheme", _first_scheme), credentials=norm)
    return field_map(id=norm, url=None, token=norm, authentication=_auth_converter(auth))


def _auth_converter(table: FieldMap) -> Converter:
    def convert(value: Any) -> Any:
        obj = as_obj(value)
        if obj is None:
            return value
        out = remap(obj, table)
        out.setdefault("scheme", "")
        return out

    return convert


_PUSH_JSON = _push_table(None)
_PUSH_PROTO = _push_table(nonempty)


def push_in(value: Any, proto: bool) -> Any:
    """0.3 PushNotificationConfig -> the 1.0 TaskPushNotificationConfig dict (no task id).

    0.3 lists authentication ``schemes``; 1.0 has one ``scheme``: the first is
    kept (an empty list becomes the empty scheme). ``proto`` applies proto3
    semantics: empty strings are unset.
    """
    obj = as_obj(value)
    if obj is None:
        return value
    return remap(obj, _PUSH_PROTO if proto else _PUSH_JSON)


# --- agent card ----------------------------------------------------------


def _is_v03(version: str) -> bool:
    return version == V03_VERSION or version.startswith(V03_VERSION + ".")


def v03_interfaces(card: AgentCard) -> list[AgentInterface]:
    """The interfaces a 0.3 client may use: those tagged 0.3, else all of them."""
    tagged = [i for i in card.supported_interfaces if _is_v03(i.protocol_version)]
    return tagged or list(card.supported_interfaces)


def interfaces_out(interfaces: list[AgentInterface]) -> dict[str, Any]:
    """``url``, ``preferredTransport`` and ``additionalInterfaces`` of a 0.3 card.

    The first interface is the main one; with several, ``additionalInterfaces``
    lists them all (the main one included, as 0.3 recommends).
    """
    if not interfaces:
        raise UnrepresentableError("A 0.3 agent card needs at least one interface (its url)")
    for iface in interfaces:
        if iface.tenant:
            raise UnrepresentableError("A2A 0.3 agent interfaces have no tenant")
    main = interfaces[0]
    out: dict[str, Any] = {"url": main.url, "preferredTransport": main.protocol_binding}
    if len(interfaces) > 1:
        out["additionalInterfaces"] = [
            {"url": i.url, "transport": i.protocol_binding} for i in interfaces
        ]
    return out


def _interfaces_in(obj: dict[str, Any]) -> list[Any]:
    url = pick(obj, "url")
    transport = pick(obj, "preferredTransport") or "JSONRPC"
    main = {"url": url, "protocolBinding": transport, "protocolVersion": V03_VERSION}
    result: list[Any] = [main]
    extra = pick(obj, "additionalInterfaces")
    if extra is None:
        return result
    items = as_list(extra)
    if items is None:
        raise ValueError("additionalInterfaces must be a list")
    for item in items:
        iface = as_obj(item)
        if iface is None:
            result.append(item)
            continue
        entry = {
            "url": pick(iface, "url"),
            "protocolBinding": pick(iface, "transport"),
            "protocolVersion": V03_VERSION,
        }
        if entry["url"] == url and entry["protocolBinding"] == transport:
            continue  # the main interface, listed again as 0.3 recommends
        result.append(entry)
    return result


def _check_flows(flows: OAuthFlows) -> None:
    if flows.device_code is not None:
        raise UnrepresentableError("A2A 0.3 has no OAuth 2.0 device code flow")
    if flows.authorization_code is not None and flows.authorization_code.pkce_required:
        raise UnrepresentableError("A2A 0.3 OAuth 2.0 flows cannot require PKCE")


def _flow_out(flow: Any, fields: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in fields:
        put(out, _CAMEL[name], getattr(flow, name))
    out["scopes"] = dict(flow.scopes)
    return out


_CAMEL = {
    "authorization_url": "authorizationUrl",
    "token_url": "tokenUrl",
    "refresh_url": "refreshUrl",
}


def _flows_to_v03(flows: OAuthFlows) -> dict[str, Any]:
    _check_flows(flows)
    if flows.authorization_code is not None:
        return {
            "authorizationCode": _flow_out(
                flows.authorization_code, ("authorization_url", "token_url", "refresh_url")
            )
        }
    if flows.client_credentials is not None:
        return {
            "clientCredentials": _flow_out(flows.client_credentials, ("token_url", "refresh_url"))
        }
    if flows.implicit is not None:
        return {"implicit": _flow_out(flows.implicit, ("authorization_url", "refresh_url"))}
    assert flows.password is not None  # validated: exactly one flow
    return {"password": _flow_out(flows.password, ("token_url", "refresh_url"))}


def scheme_to_v03(scheme: SecurityScheme) -> dict[str, Any]:
    """A 1.0 security scheme in the 0.3 OpenAPI ``type`` form."""
    out: dict[str, Any]
    description: str | None
    if scheme.api_key_security_scheme is not None:
        key = scheme.api_key_security_scheme
        if key.location not in ("query", "header", "cookie"):
            raise UnrepresentableError(
                f"A2A 0.3 API key location must be query, header or cookie, not {key.location!r}"
            )
        out = {"type": "apiKey", "in": key.location, "name": key.name}
        description = key.description
    elif scheme.http_auth_security_scheme is not None:
        http = scheme.http_auth_security_scheme
        out = {"type": "http", "scheme": http.scheme}
        put(out, "bearerFormat", http.bearer_format)
        description = http.description
    elif scheme.oauth2_security_scheme is not None:
        oauth = scheme.oauth2_security_scheme
        out = {"type": "oauth2", "flows": _flows_to_v03(oauth.flows)}
        put(out, "oauth2MetadataUrl", oauth.oauth2_metadata_url)
        description = oauth.description
    elif scheme.open_id_connect_security_scheme is not None:
        oidc = scheme.open_id_connect_security_scheme
        out = {"type": "openIdConnect", "openIdConnectUrl": oidc.open_id_connect_url}
        description = oidc.description
    else:
        out = {"type": "mutualTLS"}
        mtls = scheme.mtls_security_scheme
        description = mtls.description if mtls is not None else None
    put(out, "description", description)
    return out


def _scheme_to_proto(scheme: SecurityScheme) -> dict[str, Any]:
    """The 0.3 proto form is the 1.0 form minus device code and PKCE."""
    if scheme.oauth2_security_scheme is not None:
        _check_flows(scheme.oauth2_security_scheme.flows)
    return scheme.model_dump(mode="json", by_alias=True)


# 0.3 flows may hold several at once; 1.0 keeps one, the first in this order.
_FLOW_PRIORITY = ("authorizationCode", "clientCredentials", "deviceCode", "implicit", "password")
_FLOW_FIELDS = (
    "authorizationUrl",
    "tokenUrl",
    "refreshUrl",
    "deviceAuthorizationUrl",
    "pkceRequired",
)


def _flows_in(value: Any) -> Any:
    flows = as_obj(value)
    if flows is None:
        return value
    for name in _FLOW_PRIORITY:
        flow_value = pick(flows, name)
        if flow_value is None:
            continue
        flow = as_obj(flow_value)
        if flow is None:
            return {name: flow_value}
        out: dict[str, Any] = {}
        for field in _FLOW_FIELDS:
            put(out, field, pick(flow, field))
        put(out, "scopes", pick(flow, "scopes"))
        return {name: out}
    return {}


_SCHEME_WRAPPERS = (
    "apiKeySecurityScheme",
    "httpAuthSecurityScheme",
    "oauth2SecurityScheme",
    "openIdConnectSecurityScheme",
    "mtlsSecurityScheme",
)


def _scheme_in(value: Any) -> Any:
    """A 0.3 scheme (OpenAPI ``type`` form, or the proto oneof form) -> the 1.0 dict."""
    obj = as_obj(value)
    if obj is None:
        return value
    kind = obj.get("type")
    if kind is None:
        # The 0.3 proto (and 1.0) spell a scheme as a oneof wrapper.
        wrapped = {k: pick(obj, k) for k in _SCHEME_WRAPPERS if has(obj, k)}
        return wrapped or obj
    inner: dict[str, Any] = {}
    put(inner, "description", pick(obj, "description"))
    if kind == "apiKey":
        put(inner, "location", obj.get("in"))
        put(inner, "name", pick(obj, "name"))
        return {"apiKeySecurityScheme": inner}
    if kind == "http":
        put(inner, "scheme", pick(obj, "scheme"))
        put(inner, "bearerFormat", pick(obj, "bearerFormat"))
        return {"httpAuthSecurityScheme": inner}
    if kind == "oauth2":
        put(inner, "flows", _flows_in(pick(obj, "flows")))
        put(inner, "oauth2MetadataUrl", pick(obj, "oauth2MetadataUrl"))
        return {"oauth2SecurityScheme": inner}
    if kind == "openIdConnect":
        put(inner, "openIdConnectUrl", pick(obj, "openIdConnectUrl"))
        return {"openIdConnectSecurityScheme": inner}
    if kind == "mutualTLS":
        return {"mtlsSecurityScheme": inner}
    raise ValueError(f"unknown security scheme type {str(kind)[:40]!r}")


def security_to_v03(requirements: list[SecurityRequirement]) -> list[dict[str, list[str]]]:
    """1.0 security requirements -> 0.3 ``[{scheme: [scopes]}]``."""
    return [
        {name: list(scopes.values) for name, scopes in req.schemes.items()} for req in requirements
    ]


def _security_to_proto(requirements: list[SecurityRequirement]) -> list[dict[str, Any]]:
    return [req.model_dump(mode="json", by_alias=True) for req in requirements]


def _requirement_in(value: Any) -> Any:
    """A requirement in either 0.3 spelling -> the 1.0 dict."""
    obj = as_obj(value)
    if obj is None:
        return value
    schemes = as_obj(obj.get("schemes"))
    if schemes is not None and len(obj) == 1 and all(isinstance(v, dict) for v in schemes.values()):
        return obj  # the proto form {"schemes": {name: {"list": [...]}}}
    out: dict[str, Any] = {}
    for name, scopes in obj.items():
        out[name] = {"list": scopes} if isinstance(scopes, list) else scopes
    return {"schemes": out}


def _extension_out(ext: AgentExtension) -> dict[str, Any]:
    out: dict[str, Any] = {"uri": ext.uri}
    put(out, "description", ext.description)
    if ext.required:
        out["required"] = True
    put(out, "params", ext.params)
    return out


def _skill_out(skill: AgentSkill, proto: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": skill.id,
        "name": skill.name,
        "description": skill.description,
        "tags": list(skill.tags),
    }
    if skill.examples:
        out["examples"] = list(skill.examples)
    if skill.input_modes:
        out["inputModes"] = list(skill.input_modes)
    if skill.output_modes:
        out["outputModes"] = list(skill.output_modes)
    if skill.security_requirements:
        reqs = skill.security_requirements
        out["security"] = _security_to_proto(reqs) if proto else security_to_v03(reqs)
    return out


def card_out(card: AgentCard, proto: bool) -> dict[str, Any]:
    """The 0.3 card: ``types.ts`` shape, or the 0.3 proto's ProtoJSON when ``proto``."""
    out: dict[str, Any] = {
        "protocolVersion": _CARD_PROTOCOL_VERSION,
        "name": card.name,
        "description": card.description,
        **interfaces_out(v03_interfaces(card)),
    }
    if card.provider is not None:
        out["provider"] = {"url": card.provider.url, "organization": card.provider.organization}
    out["version"] = card.version
    put(out, "documentationUrl", card.documentation_url)
    put(out, "iconUrl", card.icon_url)
    caps = card.capabilities
    caps_out: dict[str, Any] = {}
    put(caps_out, "streaming", caps.streaming)
    put(caps_out, "pushNotifications", caps.push_notifications)
    if caps.extensions:
        caps_out["extensions"] = [_extension_out(e) for e in caps.extensions]
    out["capabilities"] = caps_out
    if card.security_schemes:
        convert = _scheme_to_proto if proto else scheme_to_v03
        out["securitySchemes"] = {k: convert(v) for k, v in card.security_schemes.items()}
    if card.security_requirements:
        reqs = card.security_requirements
        out["security"] = _security_to_proto(reqs) if proto else security_to_v03(reqs)
    out["defaultInputModes"] = list(card.default_input_modes)
    out["defaultOutputModes"] = list(card.default_output_modes)
    out["skills"] = [_skill_out(s, proto) for s in card.skills]
    put(out, "supportsAuthenticatedExtendedCard", caps.extended_agent_card)
    if card.signatures:
        out["signatures"] = [s.model_dump(mode="json", by_alias=True) for s in card.signatures]
    return out


def _extension_in(value: Any) -> Any:
    obj = as_obj(value)
    if obj is None:
        return value
    out: dict[str, Any] = {}
    for name in ("uri", "description", "required", "params"):
        put(out, name, pick(obj, name))
    return out


def _skill_in(value: Any) -> Any:
    obj = as_obj(value)
    if obj is None:
        return value
    out: dict[str, Any] = {}
    for name in ("id", "name", "description", "tags", "examples", "inputModes", "outputModes"):
        put(out, name, pick(obj, name))
    put(out, "securityRequirements", map_list(pick(obj, "security"), _requirement_in))
    return out


def _signature_in(value: Any) -> Any:
    obj = as_obj(value)
    if obj is None:
        return value
    out: dict[str, Any] = {}
    for name in ("protected", "signature", "header"):
        put(out, name, pick(obj, name))
    return out


def card_in(value: Any) -> dict[str, Any]:
    """A 0.3 card (either spelling) -> the 1.0 card dict; interfaces are tagged 0.3."""
    obj = as_obj(value)
    if obj is None:
        raise ValueError("an agent card must be a JSON object")
    out: dict[str, Any] = {}
    for name in ("name", "description", "version", "documentationUrl", "iconUrl"):
        put(out, name, pick(obj, name))
    out["supportedInterfaces"] = _interfaces_in(obj)
    provider = as_obj(pick(obj, "provider"))
    if provider is not None:
        out["provider"] = {
            "url": pick(provider, "url"),
            "organization": pick(provider, "organization"),
        }
    else:
        put(out, "provider", pick(obj, "provider"))
    caps_value = pick(obj, "capabilities")
    caps = as_obj(caps_value)
    if caps is not None:
        caps_out: dict[str, Any] = {}
        put(caps_out, "streaming", pick(caps, "streaming"))
        put(caps_out, "pushNotifications", pick(caps, "pushNotifications"))
        put(caps_out, "extensions", map_list(pick(caps, "extensions"), _extension_in))
        put(caps_out, "extendedAgentCard", pick(obj, "supportsAuthenticatedExtendedCard"))
        out["capabilities"] = caps_out
    elif caps_value is not None:
        out["capabilities"] = caps_value
    else:
        caps_out = {}
        put(caps_out, "extendedAgentCard", pick(obj, "supportsAuthenticatedExtendedCard"))
        out["capabilities"] = caps_out
    schemes_value = pick(obj, "securitySchemes")
    schemes = as_obj(schemes_value)
    if schemes is not None:
        out["securitySchemes"] = {k: _scheme_in(v) for k, v in schemes.items()}
    else:
        put(out, "securitySchemes", schemes_value)
    put(out, "securityRequirements", map_list(pick(obj, "security"), _requirement_in))
    put(out, "defaultInputModes", pick(obj, "defaultInputModes"))
    put(out, "defaultOutputModes", pick(obj, "defaultOutputModes"))
    put(out, "skills", map_list(pick(obj, "skills"), _skill_in))
    put(out, "signatures", map_list(pick(obj, "signatures"), _signature_in))
    return out


def task_shapes(
    status_in: Converter, message_in: Converter, artifact_in: Converter
) -> tuple[Converter, FieldMap, FieldMap]:
    """The task, status-update and artifact-update maps, the same in both 0.3 forms.

    Only the leaves differ between 0.3 JSON-RPC and 0.3 HTTP+JSON (parts, states,
    messages), so each codec passes its own leaf converters.
    """
    task_in = nested(
        field_map(
            id=None,
            contextId=None,
            status=status_in,
            artifacts=each(artifact_in),
            history=each(message_in),
            metadata=None,
        )
    )
    status_update = field_map(taskId=None, contextId=None, status=status_in, metadata=None)
    artifact_update = field_map(
        taskId=None,
        contextId=None,
        artifact=artifact_in,
        append=None,
        lastChunk=None,
        metadata=None,
    )
    return task_in, status_update, artifact_update
