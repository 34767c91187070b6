"""AgentCardBuilder: the strict, fluent way to make an agent card.

The ``AgentCard`` model is lenient because it also parses what remote agents
publish. A card *we* publish should be right, so the builder checks what the
model cannot (empty required arrays, undeclared security schemes, malformed
URLs and versions) and refuses to build with one error that lists every
problem at once.

Defaults: both ``defaultInputModes`` and ``defaultOutputModes`` are
``["text/plain"]`` until ``input_modes()`` / ``output_modes()`` replace them.
Capabilities are left unset (absent from the card) until a capability method
is called. Security schemes are declared with ``security_scheme()`` (or a
helper such as ``bearer_auth()``) and required with ``require()``; declaring a
scheme does not require it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self, overload
from urllib.parse import urlsplit

from pydantic import ValidationError

from .types import (
    AgentCapabilities,
    AgentCard,
    AgentCardSignature,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    MutualTlsSecurityScheme,
    OpenIdConnectSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    TransportProtocol,
)

if TYPE_CHECKING:
    from .types import Struct

__all__ = [
    "DEFAULT_MODES",
    "KNOWN_BINDINGS",
    "AgentCardBuilder",
    "CardValidationError",
    "default_skill",
    "with_default_skill",
]

DEFAULT_MODES: tuple[str, ...] = ("text/plain",)
"""Default input and output media types when none are set."""

KNOWN_BINDINGS = frozenset(
    {TransportProtocol.JSONRPC, TransportProtocol.HTTP_JSON, TransportProtocol.GRPC}
)
"""The standard protocol bindings; anything else must be a URI (a custom binding)."""

_VERSION = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")
_URI_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
_HOST_PORT = re.compile(
    r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):([0-9]{1,5})"
)
_API_KEY_LOCATIONS = frozenset({"header", "query", "cookie"})


class CardValidationError(ValueError):
    """The builder's description of the card is not a valid agent card.

    ``problems`` lists every reason, so one run of ``build()`` shows them all.
    """

    def __init__(self, name: str, problems: Sequence[str]) -> None:
        self.problems: tuple[str, ...] = tuple(problems)
        label = f"agent card {name!r}" if name else "agent card"
        lines = "\n".join(f"  - {p}" for p in self.problems)
        count = len(self.problems)
        noun = "problem" if count == 1 else "problems"
        super().__init__(f"{label} is invalid ({count} {noun}):\n{lines}")


def _strings(values: str | Iterable[str]) -> list[str]:
    """A single string is one item, not a sequence of characters."""
    return [values] if isinstance(values, str) else list(values)


def _url_problem(url: str) -> str | None:
    """Why ``url`` is not an absolute http(s) URL, or None when it is one."""
    if not url:
        return "is empty"
    if url != url.strip() or any(c.isspace() for c in url):
        return "contains whitespace"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError on a bad port)
    except ValueError:
        return "is not a valid URL"
    if parts.scheme not in ("http", "https"):
        return "is not an absolute http(s) URL"
    if not parts.hostname:
        return "has no host"
    return None


def _is_uri(value: str) -> bool:
    """An absolute URI: a scheme, a colon and something after it."""
    scheme, colon, rest = value.partition(":")
    return bool(colon and rest and _URI_SCHEME.fullmatch(scheme)) and not any(
        c.isspace() for c in value
    )


def _is_host_port(value: str) -> bool:
    match = _HOST_PORT.fullmatch(value)
    return match is not None and 0 < int(match.group(2)) <= 65535


class AgentCardBuilder:
    """Builds an ``AgentCard`` step by step; every method returns the builder.

    Example::

        card = (
            AgentCardBuilder("Echo", description="Repeats what you say", version="1.0.0")
            .jsonrpc("https://agent.example.com/a2a")
            .skill("echo", "Echo", "Replies with your message", tags=["demo"])
            .streaming()
            .build()
        )
    """

    def __init__(self, name: str, *, description: str = "", version: str = "") -> None:
        self._name = name
        self._description = description
        self._version = version
        self._provider: AgentProvider | None = None
        self._documentation_url: str | None = None
        self._icon_url: str | None = None
        self._interfaces: list[AgentInterface] = []
        self._skills: list[AgentSkill] = []
        self._input_modes: list[str] = list(DEFAULT_MODES)
        self._output_modes: list[str] = list(DEFAULT_MODES)
        self._streaming: bool | None = None
        self._push_notifications: bool | None = None
        self._extended_card: bool | None = None
        self._extensions: list[AgentExtension] = []
        self._schemes: dict[str, SecurityScheme] = {}
        self._requirements: list[SecurityRequirement] = []
        self._signatures: list[AgentCardSignature] = []
        self._early_problems: list[str] = []

    # identity ------------------------------------------------------------
    def description(self, text: str) -> Self:
        """What the agent does, for people and for other agents choosing it."""
        self._description = text
        return self

    def version(self, version: str) -> Self:
        """The agent's own version (not the protocol version)."""
        self._version = version
        return self

    def provider(self, organization: str, url: str) -> Self:
        """Who runs the agent."""
        self._provider = AgentProvider(organization=organization, url=url)
        return self

    def documentation_url(self, url: str) -> Self:
        """Link the card to the agent's documentation."""
        self._documentation_url = url
        return self

    def icon_url(self, url: str) -> Self:
        """Give the card an icon, shown by clients that list agents."""
        self._icon_url = url
        return self

    # skills and modes ------------------------------------------------------
    @overload
    def skill(self, skill: AgentSkill, /) -> Self: ...

    @overload
    def skill(
        self,
        id: str,
        name: str,
        description: str,
        *,
        tags: str | Iterable[str] = (),
        examples: str | Iterable[str] = (),
        input_modes: str | Iterable[str] = (),
        output_modes: str | Iterable[str] = (),
    ) -> Self: ...

    def skill(
        self,
        id: str | AgentSkill,
        name: str | None = None,
        description: str | None = None,
        *,
        tags: str | Iterable[str] = (),
        examples: str | Iterable[str] = (),
        input_modes: str | Iterable[str] = (),
        output_modes: str | Iterable[str] = (),
    ) -> Self:
        """Add a skill; skills without their own modes use the card's defaults."""
        if isinstance(id, AgentSkill):
            if name is not None or description is not None:
                raise TypeError("pass either an AgentSkill or id, name and description")
            self._skills.append(id.model_copy(deep=True))
            return self
        if name is None or description is None:
            raise TypeError("skill() needs id, name and description")
        self._skills.append(
            AgentSkill(
                id=id,
                name=name,
                description=description,
                tags=_strings(tags),
                examples=_strings(examples),
                input_modes=_strings(input_modes),
                output_modes=_strings(output_modes),
            )
        )
        return self

    def input_modes(self, *modes: str) -> Self:
        """Replace the default input media types (``text/plain`` unless set)."""
        self._input_modes = list(modes)
        return self

    def output_modes(self, *modes: str) -> Self:
        """Replace the default output media types (``text/plain`` unless set)."""
        self._output_modes = list(modes)
        return self

    # capabilities ---------------------------------------------------------
    def streaming(self, enabled: bool = True) -> Self:
        """Declare (or deny) SendStreamingMessage and SubscribeToTask support."""
        self._streaming = enabled
        return self

    def push_notifications(self, enabled: bool = True) -> Self:
        """Declare (or deny) push-notification support."""
        self._push_notifications = enabled
        return self

    def extended_card(self, enabled: bool = True) -> Self:
        """Declare an authenticated extended card (needs a declared security scheme)."""
        self._extended_card = enabled
        return self

    def extension(
        self,
        uri: str,
        description: str | None = None,
        required: bool = False,
        params: Struct | None = None,
    ) -> Self:
        """Declare a protocol extension; ``required`` means clients must use it."""
        self._extensions.append(
            AgentExtension(uri=uri, description=description, required=required, params=params)
        )
        return self

    # interfaces -------------------------------------------------------------
    def interface(
        self,
        url: str,
        binding: str = TransportProtocol.JSONRPC,
        version: str = "1.0",
        tenant: str | None = None,
    ) -> Self:
        """Add one (url, binding, protocol version) the agent serves; first is preferred."""
        self._interfaces.append(
            AgentInterface(
                url=url, protocol_binding=binding, protocol_version=version, tenant=tenant
            )
        )
        return self

    def jsonrpc(
        self, url: str, versions: Sequence[str] = ("1.0", "0.3"), *, tenant: str | None = None
    ) -> Self:
        """The JSON-RPC binding at ``url``, one interface per protocol version."""
        for version in _strings(versions):
            self.interface(url, TransportProtocol.JSONRPC, version, tenant)
        return self

    def http_json(
        self, url: str, versions: Sequence[str] = ("1.0", "0.3"), *, tenant: str | None = None
    ) -> Self:
        """The HTTP+JSON (REST) binding at ``url``, one interface per protocol version."""
        for version in _strings(versions):
            self.interface(url, TransportProtocol.HTTP_JSON, version, tenant)
        return self

    # security ---------------------------------------------------------------
    def security_scheme(self, name: str, scheme: SecurityScheme) -> Self:
        """Declare a security scheme under ``name`` (refer to it with ``require``)."""
        if name in self._schemes:
            self._early_problems.append(f"security scheme {name!r} is declared twice")
        self._schemes[name] = scheme.model_copy(deep=True)
        return self

    def bearer_auth(
        self, name: str = "bearer", bearer_format: str | None = None, description: str | None = None
    ) -> Self:
        """HTTP ``Authorization: Bearer <token>`` (``bearer_format``: a hint such as "JWT")."""
        scheme = HTTPAuthSecurityScheme(
            scheme="Bearer", bearer_format=bearer_format, description=description
        )
        return self.security_scheme(name, SecurityScheme(http_auth_security_scheme=scheme))

    def api_key(
        self, name: str, location: str, param_name: str, description: str | None = None
    ) -> Self:
        """An API key sent in a header, query parameter or cookie called ``param_name``."""
        scheme = APIKeySecurityScheme(location=location, name=param_name, description=description)
        return self.security_scheme(name, SecurityScheme(api_key_security_scheme=scheme))

    def openid_connect(self, name: str, url: str, description: str | None = None) -> Self:
        """OpenID Connect, discovered from ``url`` (the provider's well-known configuration)."""
        scheme = OpenIdConnectSecurityScheme(open_id_connect_url=url, description=description)
        return self.security_scheme(name, SecurityScheme(open_id_connect_security_scheme=scheme))

    def mutual_tls(self, name: str = "mtls", description: str | None = None) -> Self:
        """Client certificates (mutual TLS)."""
        scheme = MutualTlsSecurityScheme(description=description)
        return self.security_scheme(name, SecurityScheme(mtls_security_scheme=scheme))

    def require(self, scheme_name: str, scopes: str | Iterable[str] = ()) -> Self:
        """Add a security requirement; separate calls are alternatives (any one suffices)."""
        return self.require_all({scheme_name: _strings(scopes)})

    def require_all(self, schemes: Mapping[str, str | Iterable[str]]) -> Self:
        """Add one requirement that needs every named scheme together (scheme -> scopes)."""
        value = {name: {"list": _strings(scopes)} for name, scopes in schemes.items()}
        self._requirements.append(SecurityRequirement.model_validate({"schemes": value}))
        return self

    def signature(
        self,
        protected: str | AgentCardSignature,
        signature: str | None = None,
        header: Struct | None = None,
    ) -> Self:
        """Attach a JWS signature (already computed) over the card."""
        if isinstance(protected, AgentCardSignature):
            self._signatures.append(protected.model_copy(deep=True))
        elif signature is None:
            raise TypeError("signature() needs protected and signature")
        else:
            self._signatures.append(
                AgentCardSignature(protected=protected, signature=signature, header=header)
            )
        return self

    # output -----------------------------------------------------------------
    def problems(self) -> list[str]:
        """Every reason the card would be refused (empty when it is valid)."""
        checks = _Checks()
        checks.problems.extend(self._early_problems)
        for field, value in (
            ("name", self._name),
            ("description", self._description),
            ("version", self._version),
        ):
            if not value.strip():
                checks.add(f"{field} is empty")
        if self._provider is not None:
            if not self._provider.organization.strip():
                checks.add("provider organization is empty")
            checks.url("provider url", self._provider.url)
        if self._documentation_url is not None:
            checks.url("documentation url", self._documentation_url)
        if self._icon_url is not None:
            checks.url("icon url", self._icon_url)
        checks.interfaces(self._interfaces)
        checks.modes("default input modes", self._input_modes, required=True)
        checks.modes("default output modes", self._output_modes, required=True)
        checks.skills(self._skills, set(self._schemes))
        checks.extensions(self._extensions)
        checks.schemes(self._schemes)
        checks.requirements("card security", self._requirements, set(self._schemes))
        if self._extended_card and not self._schemes:
            checks.add(
                "extended card is enabled but no security scheme is declared "
                "(the extended card must be fetched with authentication)"
            )
        for i, sig in enumerate(self._signatures):
            if not sig.protected or not sig.signature:
                checks.add(f"signature #{i + 1} needs both protected and signature")
        return checks.problems

    def build(self) -> AgentCard:
        """The card; raises ``CardValidationError`` listing every problem when invalid."""
        problems = self.problems()
        if problems:
            raise CardValidationError(self._name, problems)
        try:
            return AgentCard(
                name=self._name,
                description=self._description,
                version=self._version,
                supported_interfaces=[i.model_copy() for i in self._interfaces],
                provider=self._provider.model_copy() if self._provider else None,
                documentation_url=self._documentation_url,
                icon_url=self._icon_url,
                capabilities=AgentCapabilities(
                    streaming=self._streaming,
                    push_notifications=self._push_notifications,
                    extended_agent_card=self._extended_card,
                    extensions=[e.model_copy(deep=True) for e in self._extensions],
                ),
                security_schemes={k: v.model_copy(deep=True) for k, v in self._schemes.items()},
                security_requirements=[r.model_copy(deep=True) for r in self._requirements],
                default_input_modes=list(self._input_modes),
                default_output_modes=list(self._output_modes),
                skills=[s.model_copy(deep=True) for s in self._skills],
                signatures=[s.model_copy(deep=True) for s in self._signatures],
            )
        except ValidationError as exc:  # defensive: the checks above should catch it all
            raise CardValidationError(self._name, [str(exc)]) from None

    def build_hybrid(self) -> dict[str, Any]:
        """The card's JSON with the 0.3 top-level fields added, for 0.3 and 1.0 clients alike.

        Needs at least one interface with protocol version ``"0.3"``: the 0.3
        fields (``url``, ``preferredTransport``...) are derived from those.
        """
        card = self.build()
        if not any(i.protocol_version == "0.3" for i in card.supported_interfaces):
            raise CardValidationError(
                self._name,
                ["a hybrid card needs at least one interface with protocol version '0.3'"],
            )
        from .wire.hybrid import hybrid_card

        return hybrid_card(card)


class _Checks:
    """Collects problems; one method per part of the card."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def add(self, problem: str) -> None:
        self.problems.append(problem)

    def url(self, what: str, url: str) -> None:
        problem = _url_problem(url)
        if problem:
            self.add(f"{what} {url!r} {problem}")

    def interfaces(self, interfaces: Sequence[AgentInterface]) -> None:
        if not interfaces:
            self.add("no interfaces: add one with interface(), jsonrpc() or http_json()")
        seen: set[tuple[str, str, str, str | None]] = set()
        for i, iface in enumerate(interfaces):
            label = f"interface #{i + 1} ({iface.protocol_binding} {iface.url})"
            binding = iface.protocol_binding
            if binding not in KNOWN_BINDINGS and not _is_uri(binding):
                hint = next((b for b in KNOWN_BINDINGS if b.lower() == binding.lower()), None)
                extra = f" (did you mean {hint!r}?)" if hint else ""
                self.add(
                    f"{label}: binding {binding!r} is neither JSONRPC, HTTP+JSON, GRPC "
                    f"nor a URI naming a custom binding{extra}"
                )
            version = iface.protocol_version
            if not _VERSION.fullmatch(version):
                extra = ""
                parts = version.split(".")
                if len(parts) == 3 and _VERSION.fullmatch(".".join(parts[:2])):
                    extra = f" (use {'.'.join(parts[:2])!r}: patch numbers are not part of it)"
                self.add(
                    f"{label}: protocol version {version!r} is not Major.Minor "
                    f"such as '1.0' or '0.3'{extra}"
                )
            self._interface_url(label, iface)
            if iface.tenant is not None and not iface.tenant.strip():
                self.add(f"{label}: tenant is empty (omit it instead)")
            elif iface.tenant is not None and version == "0.3":
                self.add(f"{label}: A2A 0.3 has no tenants (serve 0.3 at a URL of its own)")
            key = (iface.url, binding, version, iface.tenant)
            if key in seen:
                self.add(f"{label}: listed twice with protocol version {version!r}")
            seen.add(key)

    def _interface_url(self, label: str, iface: AgentInterface) -> None:
        url, binding = iface.url, iface.protocol_binding
        if binding == TransportProtocol.GRPC:
            if _is_host_port(url) or _url_problem(url) is None:
                return
            self.add(f"{label}: url {url!r} is neither host:port nor an absolute http(s) URL")
        elif binding in KNOWN_BINDINGS or not _is_uri(binding):
            self.url(f"{label}: url", url)
        else:
            # A custom binding may use its own scheme (ws://, ...), but it must be a URL.
            try:
                parts = urlsplit(url)
            except ValueError:
                parts = None
            if parts is None or not parts.scheme or not parts.netloc:
                self.add(f"{label}: url {url!r} is not an absolute URL")

    def modes(self, what: str, modes: Sequence[str], *, required: bool) -> None:
        if required and not modes:
            self.add(f"{what} are empty (give at least one media type, e.g. 'text/plain')")
        for mode in modes:
            if not mode.strip():
                self.add(f"{what}: a media type is empty")
            elif "/" not in mode:
                self.add(f"{what}: {mode!r} is not a media type (type/subtype, e.g. 'text/plain')")

    def skills(self, skills: Sequence[AgentSkill], schemes: set[str]) -> None:
        if not skills:
            self.add("no skills: add at least one with skill()")
        seen: set[str] = set()
        for i, skill in enumerate(skills):
            label = f"skill {skill.id!r}" if skill.id.strip() else f"skill #{i + 1}"
            if not skill.id.strip():
                self.add(f"{label}: id is empty")
            elif skill.id in seen:
                self.add(f"{label}: id is used by another skill")
            seen.add(skill.id)
            if not skill.name.strip():
                self.add(f"{label}: name is empty")
            if not skill.description.strip():
                self.add(f"{label}: description is empty")
            if not skill.tags:
                self.add(f"{label}: has no tags (at least one is required)")
            elif any(not t.strip() for t in skill.tags):
                self.add(f"{label}: a tag is empty")
            self.modes(f"{label} input modes", skill.input_modes, required=False)
            self.modes(f"{label} output modes", skill.output_modes, required=False)
            self.requirements(f"{label} security", skill.security_requirements, schemes)

    def extensions(self, extensions: Sequence[AgentExtension]) -> None:
        seen: set[str] = set()
        for ext in extensions:
            if not _is_uri(ext.uri):
                self.add(f"extension {ext.uri!r} is not a URI")
            elif ext.uri in seen:
                self.add(f"extension {ext.uri!r} is declared twice")
            seen.add(ext.uri)

    def schemes(self, schemes: Mapping[str, SecurityScheme]) -> None:
        for name, scheme in schemes.items():
            label = f"security scheme {name!r}"
            if not name.strip():
                self.add("a security scheme has an empty name")
            api_key = scheme.api_key_security_scheme
            if api_key is not None:
                if api_key.location not in _API_KEY_LOCATIONS:
                    self.add(
                        f"{label}: location {api_key.location!r} is not header, query or cookie"
                    )
                if not api_key.name.strip():
                    self.add(f"{label}: the API key parameter name is empty")
            http = scheme.http_auth_security_scheme
            if http is not None and not http.scheme.strip():
                self.add(f"{label}: the HTTP auth scheme is empty")
            oidc = scheme.open_id_connect_security_scheme
            if oidc is not None:
                self.url(f"{label}: OpenID Connect url", oidc.open_id_connect_url)
            oauth = scheme.oauth2_security_scheme
            if oauth is not None:
                if oauth.oauth2_metadata_url is not None:
                    self.url(f"{label}: metadata url", oauth.oauth2_metadata_url)
                flow_urls = oauth.flows.model_dump(exclude_none=True, by_alias=False)
                for flow_name, flow in flow_urls.items():
                    for key, value in flow.items():
                        if key.endswith("_url") and isinstance(value, str):
                            self.url(f"{label}: {flow_name} {key}", value)

    def requirements(
        self, owner: str, requirements: Sequence[SecurityRequirement], schemes: set[str]
    ) -> None:
        for requirement in requirements:
            if not requirement.schemes:
                self.add(f"{owner}: a requirement names no scheme")
            for name in requirement.schemes:
                if name not in schemes:
                    declared = ", ".join(repr(s) for s in sorted(schemes)) or "none"
                    self.add(
                        f"{owner}: a requirement names undeclared scheme {name!r} "
                        f"(declared: {declared})"
                    )


def default_skill(card: AgentCard) -> AgentSkill:
    """One skill standing for the whole agent: its name, description and modes.

    A 1.0 card must list at least one skill (and linters flag an empty list),
    but a plain function or executor has no skills of its own to describe.
    """
    words = re.findall(r"[a-z0-9]+", card.name.lower())
    return AgentSkill(
        id="-".join(words)[:64].rstrip("-") or "agent",
        name=card.name,
        description=card.description or card.name,
        tags=list(dict.fromkeys(words))[:5] or ["agent"],
        input_modes=list(card.default_input_modes),
        output_modes=list(card.default_output_modes),
    )


def with_default_skill(card: AgentCard) -> AgentCard:
    """``card`` itself when it lists a skill, else a copy with ``default_skill`` added."""
    if card.skills:
        return card
    return card.model_copy(update={"skills": [default_skill(card)]})
