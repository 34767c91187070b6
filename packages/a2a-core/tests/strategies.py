"""Hypothesis strategies that build valid internal A2A models.

The values are canonical for the wire: what a ProtoJSON peer would send back
unchanged. Required strings are non-empty (ProtoJSON omits ``""``), optional
strings are unset or non-empty, enums avoid the UNSPECIFIED zero value where
the field is required, integers fit their proto types, and Struct numbers fit
a double exactly.

A ``Flavor`` narrows the values to what a wire form can carry:
``v03`` for both 0.3 forms (object-only data parts, file metadata only on
file parts, no tenants, no device-code flow or PKCE, interfaces tagged 0.3,
no push-config paging over JSON-RPC, ...), and ``rest`` additionally for the
0.3 HTTP+JSON form (0.3 proto semantics: ids usable in resource names, no
``referenceTaskIds``, no ``historyLength`` 0, no cancel metadata, capability
flags unset or true).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from functools import cache
from typing import Any, TypeVar

from a2a_core import types as t
from a2a_core.wire import Operation
from hypothesis import strategies as st

__all__ = [
    "DEFAULT",
    "V03",
    "V03_REST",
    "Flavor",
    "agent_cards",
    "artifact_events",
    "artifacts",
    "events",
    "interfaces",
    "json_values",
    "messages",
    "parts",
    "push_configs",
    "requests",
    "results",
    "security_schemes",
    "status_events",
    "structs",
    "task_statuses",
    "tasks",
    "timestamps",
]

M = TypeVar("M", bound=t.A2AModel)

INT32_MAX = 2**31 - 1
EXACT_DOUBLE = 2**53


@dataclass(frozen=True)
class Flavor:
    """Which subset of the model to generate."""

    v03: bool = False
    """Only values that both 0.3 wire forms (JSON-RPC and HTTP+JSON) can represent."""
    rest: bool = False
    """With ``v03``: only what the 0.3 HTTP+JSON form (0.3 ProtoJSON) can represent."""
    jsonrpc: bool = False
    """With ``v03``: only what the 0.3 JSON-RPC form can represent (no push-config paging)."""
    big_bytes: bool = True
    """Now and then a raw part of 4-64 KiB (1 MiB is tested explicitly)."""
    raw: bool = True
    """Generate raw (bytes) parts at all."""


DEFAULT = Flavor()
V03 = Flavor(v03=True, jsonrpc=True)
V03_REST = Flavor(v03=True, rest=True)

# scalars -------------------------------------------------------------------

texts = st.text(max_size=24)
"""Any unicode (astral characters included, no lone surrogates)."""
nonempty = st.text(min_size=1, max_size=16)
urls = st.one_of(
    st.sampled_from(["https://agent.example/a2a", "http://127.0.0.1:8000/", "file:///tmp/x.bin"]),
    nonempty,
)
media_types = st.sampled_from(["text/plain", "application/json", "image/png", "text/csv; q=1"])
modes = st.lists(media_types, max_size=3)
small_str_lists = st.lists(nonempty, max_size=3)


def _model(model: type[M], **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[M]:
    """A model from python-named fields (``st.builds`` would also invent aliased required args)."""
    return st.fixed_dictionaries(fields).map(model.model_validate)


def optional(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


@cache
def ids(flavor: Flavor = DEFAULT) -> st.SearchStrategy[str]:
    """Identifiers; 0.3 HTTP+JSON puts them in resource names, so no '/' there."""
    text = nonempty.filter(lambda x: "/" not in x) if flavor.rest else nonempty
    return st.one_of(st.uuids().map(str), text)


def _with_offset(value: datetime, minutes: int) -> datetime:
    return value.astimezone(timezone(timedelta(minutes=minutes)))


timestamps = st.builds(
    _with_offset,
    st.datetimes(
        # The whole proto Timestamp range, less a day at each end for the offsets below.
        min_value=datetime(1, 1, 2),
        max_value=datetime(9999, 12, 30),
        timezones=st.just(UTC),
    ),
    st.integers(-23 * 60, 23 * 60),
)
"""Aware datetimes with µs precision and arbitrary offsets (the model keeps UTC)."""

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-EXACT_DOUBLE, EXACT_DOUBLE),
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
)


@cache
def json_values(depth: int = 3) -> st.SearchStrategy[Any]:
    """Any JSON value nested at most ``depth`` containers deep."""
    if depth == 0:
        return json_scalars
    inner = json_values(depth - 1)
    return st.one_of(
        json_scalars,
        st.lists(inner, max_size=3),
        st.dictionaries(texts, inner, max_size=3),
    )


def structs(min_size: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    """A google.protobuf.Struct: a JSON object with nested values."""
    return st.dictionaries(texts, json_values(2), min_size=min_size, max_size=4)


metadata = optional(structs(min_size=1))
"""Optional Struct fields: unset or non-empty (an empty one is omitted on the wire)."""


def _random_bytes(size: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)


def _raw_bytes(flavor: Flavor) -> st.SearchStrategy[bytes]:
    small = st.binary(max_size=48)
    if not flavor.big_bytes:
        return small
    big = st.builds(_random_bytes, st.integers(4096, 65536), st.integers(0, 2**32))
    return st.one_of(small, small, small, big)


# content -------------------------------------------------------------------


@cache
def parts(flavor: Flavor = DEFAULT) -> st.SearchStrategy[t.Part]:
    """Parts of all four kinds, with optional filename, media type and metadata."""
    file_extras = {"filename": nonempty, "media_type": media_types}
    plain_extras = {} if flavor.v03 else file_extras
    data = structs() if flavor.v03 else json_values(3).filter(lambda v: v is not None)

    def kind(content: dict[str, Any], extras: dict[str, Any]) -> st.SearchStrategy[t.Part]:
        return st.fixed_dictionaries(
            content, optional={"metadata": structs(min_size=1), **extras}
        ).map(t.Part.model_validate)

    kinds = [
        kind({"text": texts}, plain_extras),
        kind({"url": urls}, file_extras),
        kind({"data": data}, plain_extras),
    ]
    if flavor.raw:
        kinds.append(kind({"raw": _raw_bytes(flavor)}, file_extras))
    return st.one_of(kinds)


def _part_lists(flavor: Flavor) -> st.SearchStrategy[list[t.Part]]:
    return st.lists(parts(flavor), min_size=1, max_size=3)


roles = st.sampled_from([t.Role.USER, t.Role.AGENT])
states = st.sampled_from([s for s in t.TaskState if s is not t.TaskState.UNSPECIFIED])


@cache
def messages(flavor: Flavor = DEFAULT) -> st.SearchStrategy[t.Message]:
    return _model(
        t.Message,
        message_id=ids(flavor),
        context_id=optional(ids(flavor)),
        task_id=optional(ids(flavor)),
        role=roles,
        parts=_part_lists(flavor),
        metadata=metadata,
        extensions=small_str_lists,
        reference_task_ids=st.just([]) if flavor.rest else st.lists(ids(flavor), max_size=2),
    )


@cache
def task_statuses(flavor: Flavor = DEFAULT) -> st.SearchStrategy[t.TaskStatus]:
    return _model(
        t.TaskStatus,
        state=states,
        message=optional(messages(flavor)),
        timestamp=optional(timestamps),
    )


@cache
def artifacts(flavor: Flavor = DEFAULT) -> st.SearchStrategy[t.Artifact]:
    return _model(
        t.Artifact,
        artifact_id=ids(flavor),
        name=optional(nonempty),
        description=optional(nonempty),
        parts=_part_lists(flavor),
        metadata=metadata,
        extensions=small_str_lists,
    )


def _context_ids(flavor: Flavor) -> st.SearchStrategy[str]:
    # 0.3 JSON-RPC requires contextId on tasks and events; 1.0 defaults it to "".
    return ids(flavor) if flavor.v03 else st.one_of(st.just(""), ids(flavor))


@cache
def tasks(flavor: Flavor = DEFAULT) -> st.SearchStrategy[t.Task]:
    return _model(
        t.Task,
        id=ids(flavor),
        context_id=_context_ids(flavor),
        status=task_statuses(flavor),
        artifacts=st.lists(artifacts(flavor), max_size=2),
        history=st.lists(messages(flavor), max_size=3),
        metadata=metadata,
    )


@cache
def status_events(flavor: Flavor = DEFAULT) -> st.SearchStrategy[t.TaskStatusUpdateEvent]:
    return _model(
        t.TaskStatusUpdateEvent,
        task_id=ids(flavor),
        context_id=_context_ids(flavor),
        status=task_statuses(flavor),
        metadata=metadata,
    )


@cache
def artifact_events(flavor: Flavor = DEFAULT) -> st.SearchStrategy[t.TaskArtifactUpdateEvent]:
    return _model(
        t.TaskArtifactUpdateEvent,
        task_id=ids(flavor),
        context_id=_context_ids(flavor),
        artifact=artifacts(flavor),
        append=st.booleans(),
        last_chunk=st.booleans(),
        metadata=metadata,
    )


@cache
def events(flavor: Flavor = DEFAULT) -> st.SearchStrategy[t.StreamEvent]:
    """Every kind of stream event."""
    return st.one_of(
        tasks(flavor), messages(flavor), status_events(flavor), artifact_events(flavor)
    )


# push notifications --------------------------------------------------------


@cache
def push_configs(
    flavor: Flavor = DEFAULT, with_task_id: bool | None = None, with_id: bool = False
) -> st.SearchStrategy[t.TaskPushNotificationConfig]:
    """Push configs; ``with_task_id`` forces the task id set (True) or unset (False).

    ``with_id``: the config id is set, as in every config a server returns.
    """
    task_id = {None: optional(ids(flavor)), True: ids(flavor), False: st.none()}[with_task_id]
    return _model(
        t.TaskPushNotificationConfig,
        tenant=_tenant(flavor),
        id=ids(flavor) if with_id else optional(ids(flavor)),
        task_id=task_id,
        url=urls,
        token=optional(nonempty),
        authentication=optional(
            _model(
                t.AuthenticationInfo,
                scheme=st.sampled_from(["Bearer", "Basic", "bearer"]),
                credentials=optional(nonempty),
            )
        ),
    )


# agent card ----------------------------------------------------------------

scopes = st.dictionaries(nonempty, texts, max_size=3)
security_requirements = st.lists(
    _model(
        t.SecurityRequirement,
        schemes=st.dictionaries(
            nonempty,
            st.lists(nonempty, max_size=3).map(lambda v: t.StringList.model_validate({"list": v})),
            max_size=2,
        ),
    ),
    max_size=2,
)


def _flows(flavor: Flavor) -> st.SearchStrategy[t.OAuthFlows]:
    refresh = optional(urls)
    choices: list[st.SearchStrategy[t.OAuthFlows]] = [
        _model(
            t.AuthorizationCodeOAuthFlow,
            authorization_url=urls,
            token_url=urls,
            refresh_url=refresh,
            scopes=scopes,
            pkce_required=st.just(False) if flavor.v03 else st.booleans(),
        ).map(lambda f: t.OAuthFlows(authorization_code=f)),
        _model(
            t.ClientCredentialsOAuthFlow, token_url=urls, refresh_url=refresh, scopes=scopes
        ).map(lambda f: t.OAuthFlows(client_credentials=f)),
        _model(t.ImplicitOAuthFlow, authorization_url=urls, refresh_url=refresh, scopes=scopes).map(
            lambda f: t.OAuthFlows(implicit=f)
        ),
        _model(t.PasswordOAuthFlow, token_url=urls, refresh_url=refresh, scopes=scopes).map(
            lambda f: t.OAuthFlows(password=f)
        ),
    ]
    if not flavor.v03:
        choices.append(
            _model(
                t.DeviceCodeOAuthFlow,
                device_authorization_url=urls,
                token_url=urls,
                refresh_url=refresh,
                scopes=scopes,
            ).map(lambda f: t.OAuthFlows(device_code=f))
        )
    return st.one_of(choices)


@cache
def security_schemes(flavor: Flavor = DEFAULT) -> st.SearchStrategy[t.SecurityScheme]:
    """One scheme of every kind: API key, HTTP auth, OAuth 2.0 (each flow), OIDC, mTLS."""
    description = optional(nonempty)
    return st.one_of(
        _model(
            t.APIKeySecurityScheme,
            description=description,
            location=st.sampled_from(["header", "query", "cookie"]),
            name=nonempty,
        ).map(lambda s: t.SecurityScheme(api_key_security_scheme=s)),
        _model(
            t.HTTPAuthSecurityScheme,
            description=description,
            scheme=st.sampled_from(["Bearer", "Basic", "Digest"]),
            bearer_format=optional(st.sampled_from(["JWT", "opaque"])),
        ).map(lambda s: t.SecurityScheme(http_auth_security_scheme=s)),
        _model(
            t.OAuth2SecurityScheme,
            description=description,
            flows=_flows(flavor),
            oauth2_metadata_url=optional(urls),
        ).map(lambda s: t.SecurityScheme(oauth2_security_scheme=s)),
        _model(
            t.OpenIdConnectSecurityScheme, description=description, open_id_connect_url=urls
        ).map(lambda s: t.SecurityScheme(open_id_connect_security_scheme=s)),
        _model(t.MutualTlsSecurityScheme, description=description).map(
            lambda s: t.SecurityScheme(mtls_security_scheme=s)
        ),
    )


bindings = st.sampled_from(["JSONRPC", "HTTP+JSON", "GRPC"])


@cache
def interfaces(flavor: Flavor = DEFAULT) -> st.SearchStrategy[t.AgentInterface]:
    return _model(
        t.AgentInterface,
        url=urls,
        protocol_binding=bindings,
        tenant=_tenant(flavor),
        protocol_version=st.just("0.3") if flavor.v03 else st.sampled_from(["1.0", "0.3", "1.1"]),
    )


def _flags(flavor: Flavor) -> st.SearchStrategy[bool | None]:
    # A 0.3 proto capability is a plain bool: false and unset are the same there.
    return optional(st.just(True)) if flavor.rest else optional(st.booleans())


@cache
def agent_cards(flavor: Flavor = DEFAULT) -> st.SearchStrategy[t.AgentCard]:
    """Cards with interfaces, provider, capabilities, extensions, skills, schemes, signatures."""
    extension = _model(
        t.AgentExtension,
        uri=urls,
        description=optional(nonempty),
        required=st.booleans(),
        params=metadata,
    )
    capabilities = _model(
        t.AgentCapabilities,
        streaming=_flags(flavor),
        push_notifications=_flags(flavor),
        extensions=st.lists(extension, max_size=2),
        extended_agent_card=_flags(flavor),
    )
    skill = _model(
        t.AgentSkill,
        id=ids(flavor),
        name=nonempty,
        description=nonempty,
        tags=small_str_lists,
        examples=small_str_lists,
        input_modes=modes,
        output_modes=modes,
        security_requirements=security_requirements,
    )
    signature = _model(
        t.AgentCardSignature,
        protected=nonempty,
        signature=nonempty,
        header=metadata,
    )
    return _model(
        t.AgentCard,
        name=nonempty,
        description=nonempty,
        supported_interfaces=st.lists(
            interfaces(flavor),
            min_size=1,
            max_size=3,
            unique_by=lambda i: (i.url, i.protocol_binding),
        ),
        provider=optional(_model(t.AgentProvider, url=urls, organization=nonempty)),
        version=nonempty,
        documentation_url=optional(urls),
        capabilities=capabilities,
        security_schemes=st.dictionaries(nonempty, security_schemes(flavor), max_size=3),
        security_requirements=security_requirements,
        default_input_modes=modes,
        default_output_modes=modes,
        skills=st.lists(skill, max_size=3),
        signatures=st.lists(signature, max_size=2),
        icon_url=optional(urls),
    )


# requests and results ------------------------------------------------------


def _history_lengths(flavor: Flavor) -> st.SearchStrategy[int | None]:
    # 0.3 has no agreed meaning for historyLength 0: 0.3 ProtoJSON reads it as unset, and
    # the SDK's 0.3 layer as "unlimited" on JSON-RPC too (see the report on V03JsonRpcCodec).
    return optional(st.integers(1 if flavor.v03 else 0, INT32_MAX))


def _tenant(flavor: Flavor) -> st.SearchStrategy[str | None]:
    return st.none() if flavor.v03 else optional(nonempty)


@cache
def requests(op: Operation, flavor: Flavor = DEFAULT) -> st.SearchStrategy[Any]:
    """A valid internal request model for ``op``."""
    tenant = _tenant(flavor)
    ident = ids(flavor)
    if op in (Operation.SEND_MESSAGE, Operation.SEND_STREAMING_MESSAGE):
        configuration = _model(
            t.SendMessageConfiguration,
            accepted_output_modes=modes,
            task_push_notification_config=optional(push_configs(flavor, with_task_id=False)),
            history_length=_history_lengths(flavor),
            return_immediately=st.booleans(),
        )
        return _model(
            t.SendMessageRequest,
            tenant=tenant,
            message=messages(flavor),
            configuration=optional(configuration),
            metadata=metadata,
        )
    if op is Operation.GET_TASK:
        return _model(
            t.GetTaskRequest, tenant=tenant, id=ident, history_length=_history_lengths(flavor)
        )
    if op is Operation.LIST_TASKS:
        return _model(
            t.ListTasksRequest,
            tenant=tenant,
            context_id=optional(ident),
            status=optional(states),
            page_size=optional(st.integers(1, 100)),
            page_token=optional(nonempty),
            history_length=_history_lengths(flavor),
            status_timestamp_after=optional(timestamps),
            include_artifacts=optional(st.booleans()),
        )
    if op is Operation.CANCEL_TASK:
        return _model(
            t.CancelTaskRequest,
            tenant=tenant,
            id=ident,
            metadata=st.none() if flavor.rest else metadata,
        )
    if op is Operation.SUBSCRIBE_TO_TASK:
        return _model(t.SubscribeToTaskRequest, tenant=tenant, id=ident)
    if op is Operation.CREATE_PUSH_CONFIG:
        return push_configs(flavor, with_task_id=True)
    if op is Operation.GET_PUSH_CONFIG:
        return _model(
            t.GetTaskPushNotificationConfigRequest, tenant=tenant, task_id=ident, id=ident
        )
    if op is Operation.DELETE_PUSH_CONFIG:
        return _model(
            t.DeleteTaskPushNotificationConfigRequest, tenant=tenant, task_id=ident, id=ident
        )
    if op is Operation.LIST_PUSH_CONFIGS:
        no_paging = flavor.v03 and flavor.jsonrpc
        return _model(
            t.ListTaskPushNotificationConfigsRequest,
            tenant=tenant,
            task_id=ident,
            page_size=st.none() if no_paging else optional(st.integers(1, INT32_MAX)),
            page_token=st.none() if no_paging else optional(nonempty),
        )
    if op is Operation.GET_EXTENDED_CARD:
        return _model(t.GetExtendedAgentCardRequest, tenant=tenant)
    raise AssertionError(f"no strategy for {op}")


@cache
def results(op: Operation, flavor: Flavor = DEFAULT) -> st.SearchStrategy[Any]:
    """A valid internal result for ``op`` (one event for streaming operations)."""
    if op is Operation.SEND_MESSAGE:
        return st.one_of(tasks(flavor), messages(flavor))
    if op.streaming:
        return events(flavor)
    if op in (Operation.GET_TASK, Operation.CANCEL_TASK):
        return tasks(flavor)
    if op is Operation.LIST_TASKS:
        return _model(
            t.ListTasksResponse,
            tasks=st.lists(tasks(flavor), max_size=2),
            next_page_token=st.one_of(st.just(""), nonempty),
            page_size=st.integers(0, 100),
            total_size=st.integers(0, INT32_MAX),
        )
    if op in (Operation.CREATE_PUSH_CONFIG, Operation.GET_PUSH_CONFIG):
        return push_configs(flavor, with_task_id=True, with_id=True)
    if op is Operation.LIST_PUSH_CONFIGS:
        no_paging = flavor.v03 and flavor.jsonrpc
        return _model(
            t.ListTaskPushNotificationConfigsResponse,
            configs=st.lists(push_configs(flavor, with_task_id=True, with_id=True), max_size=3),
            next_page_token=st.just("") if no_paging else st.one_of(st.just(""), nonempty),
        )
    if op is Operation.DELETE_PUSH_CONFIG:
        return st.none()
    if op is Operation.GET_EXTENDED_CARD:
        return agent_cards(flavor)
    raise AssertionError(f"no strategy for {op}")
