"""The agent card and its parts: interfaces, capabilities, skills, security."""

from __future__ import annotations

from typing import Self

from pydantic import Field, model_validator

from ._base import A2AModel, Struct, falsy, is_empty, not_none, opt

__all__ = [
    "APIKeySecurityScheme",
    "AgentCapabilities",
    "AgentCard",
    "AgentCardSignature",
    "AgentExtension",
    "AgentInterface",
    "AgentProvider",
    "AgentSkill",
    "AuthorizationCodeOAuthFlow",
    "ClientCredentialsOAuthFlow",
    "DeviceCodeOAuthFlow",
    "HTTPAuthSecurityScheme",
    "ImplicitOAuthFlow",
    "MutualTlsSecurityScheme",
    "OAuth2SecurityScheme",
    "OAuthFlows",
    "OpenIdConnectSecurityScheme",
    "PasswordOAuthFlow",
    "SecurityRequirement",
    "SecurityScheme",
    "StringList",
    "TransportProtocol",
]


class TransportProtocol:
    """The protocol binding names of ``AgentInterface.protocol_binding``."""

    JSONRPC = "JSONRPC"
    HTTP_JSON = "HTTP+JSON"
    GRPC = "GRPC"


class AgentInterface(A2AModel):
    """One URL where the agent speaks one binding of one protocol version."""

    url: str
    protocol_binding: str
    tenant: str | None = opt()
    protocol_version: str


class AgentProvider(A2AModel):
    """Who runs the agent."""

    url: str
    organization: str


class AgentExtension(A2AModel):
    """A protocol extension the agent supports."""

    uri: str
    description: str | None = opt()
    required: bool = Field(default=False, exclude_if=falsy)
    params: Struct | None = opt()


class AgentCapabilities(A2AModel):
    """Optional protocol features the agent offers."""

    streaming: bool | None = Field(default=None, exclude_if=not_none)
    push_notifications: bool | None = Field(default=None, exclude_if=not_none)
    extensions: list[AgentExtension] = Field(
        default_factory=list[AgentExtension], exclude_if=is_empty
    )
    extended_agent_card: bool | None = Field(default=None, exclude_if=not_none)


class StringList(A2AModel):
    """A list of strings (the scopes of one scheme in a security requirement)."""

    values: list[str] = Field(default_factory=list[str], alias="list")


class SecurityRequirement(A2AModel):
    """Schemes that together satisfy a requirement: scheme name -> required scopes."""

    schemes: dict[str, StringList] = Field(default_factory=dict[str, StringList])


class APIKeySecurityScheme(A2AModel):
    """An API key sent in a header, query parameter or cookie (``location``) named ``name``."""

    description: str | None = opt()
    location: str
    name: str


class HTTPAuthSecurityScheme(A2AModel):
    """HTTP authentication (RFC 7235): ``scheme`` is e.g. ``Bearer`` or ``Basic``."""

    description: str | None = opt()
    scheme: str
    bearer_format: str | None = opt()


class AuthorizationCodeOAuthFlow(A2AModel):
    """The OAuth 2.0 authorization-code flow: where to authorize, where to get tokens."""

    authorization_url: str
    token_url: str
    refresh_url: str | None = opt()
    scopes: dict[str, str] = Field(default_factory=dict[str, str])
    pkce_required: bool = Field(default=False, exclude_if=falsy)


class ClientCredentialsOAuthFlow(A2AModel):
    """The OAuth 2.0 client-credentials flow, for machine-to-machine callers."""

    token_url: str
    refresh_url: str | None = opt()
    scopes: dict[str, str] = Field(default_factory=dict[str, str])


class ImplicitOAuthFlow(A2AModel):
    """Deprecated in 1.0; kept for 0.3 cards."""

    authorization_url: str
    refresh_url: str | None = opt()
    scopes: dict[str, str] = Field(default_factory=dict[str, str])


class PasswordOAuthFlow(A2AModel):
    """Deprecated in 1.0; kept for 0.3 cards."""

    token_url: str
    refresh_url: str | None = opt()
    scopes: dict[str, str] = Field(default_factory=dict[str, str])


class DeviceCodeOAuthFlow(A2AModel):
    """The OAuth 2.0 device-authorization flow (RFC 8628), for callers without a browser."""

    device_authorization_url: str
    token_url: str
    refresh_url: str | None = opt()
    scopes: dict[str, str] = Field(default_factory=dict[str, str])


class OAuthFlows(A2AModel):
    """Exactly one OAuth 2.0 flow (a oneof in 1.0)."""

    authorization_code: AuthorizationCodeOAuthFlow | None = opt()
    client_credentials: ClientCredentialsOAuthFlow | None = opt()
    implicit: ImplicitOAuthFlow | None = opt()
    password: PasswordOAuthFlow | None = opt()
    device_code: DeviceCodeOAuthFlow | None = opt()

    @model_validator(mode="after")
    def _one_flow(self) -> Self:
        count = sum(
            x is not None
            for x in (
                self.authorization_code,
                self.client_credentials,
                self.implicit,
                self.password,
                self.device_code,
            )
        )
        if count != 1:
            raise ValueError("OAuthFlows needs exactly one flow")
        return self


class OAuth2SecurityScheme(A2AModel):
    """OAuth 2.0: the flows the agent accepts tokens from."""

    description: str | None = opt()
    flows: OAuthFlows
    oauth2_metadata_url: str | None = opt()


class OpenIdConnectSecurityScheme(A2AModel):
    """OpenID Connect: the discovery URL clients read the provider's settings from."""

    description: str | None = opt()
    open_id_connect_url: str


class MutualTlsSecurityScheme(A2AModel):
    """Mutual TLS: the caller is identified by its client certificate."""

    description: str | None = opt()


class SecurityScheme(A2AModel):
    """One security scheme: exactly one member is set (a oneof in 1.0)."""

    api_key_security_scheme: APIKeySecurityScheme | None = opt()
    http_auth_security_scheme: HTTPAuthSecurityScheme | None = opt()
    oauth2_security_scheme: OAuth2SecurityScheme | None = opt()
    open_id_connect_security_scheme: OpenIdConnectSecurityScheme | None = opt()
    mtls_security_scheme: MutualTlsSecurityScheme | None = Field(default=None, exclude_if=not_none)

    @model_validator(mode="after")
    def _one_scheme(self) -> Self:
        count = sum(
            x is not None
            for x in (
                self.api_key_security_scheme,
                self.http_auth_security_scheme,
                self.oauth2_security_scheme,
                self.open_id_connect_security_scheme,
                self.mtls_security_scheme,
            )
        )
        if count != 1:
            raise ValueError("a security scheme needs exactly one scheme member")
        return self


class AgentSkill(A2AModel):
    """Something the agent can do."""

    id: str
    name: str
    description: str
    tags: list[str] = Field(default_factory=list[str])
    examples: list[str] = Field(default_factory=list[str], exclude_if=is_empty)
    input_modes: list[str] = Field(default_factory=list[str], exclude_if=is_empty)
    output_modes: list[str] = Field(default_factory=list[str], exclude_if=is_empty)
    security_requirements: list[SecurityRequirement] = Field(
        default_factory=list[SecurityRequirement], exclude_if=is_empty
    )


class AgentCardSignature(A2AModel):
    """A JWS signature over the card (RFC 7515, JCS-canonicalized payload)."""

    protected: str
    signature: str
    header: Struct | None = opt()


class AgentCard(A2AModel):
    """The agent's self-description, published at ``/.well-known/agent-card.json``.

    The model accepts what remote agents publish; ``AgentCardBuilder`` is the
    strict way to make one (it refuses empty required arrays).
    """

    name: str
    description: str
    supported_interfaces: list[AgentInterface] = Field(default_factory=list[AgentInterface])
    provider: AgentProvider | None = opt()
    version: str
    documentation_url: str | None = opt()
    capabilities: AgentCapabilities = Field(default_factory=AgentCapabilities)
    security_schemes: dict[str, SecurityScheme] = Field(
        default_factory=dict[str, SecurityScheme], exclude_if=is_empty
    )
    security_requirements: list[SecurityRequirement] = Field(
        default_factory=list[SecurityRequirement], exclude_if=is_empty
    )
    default_input_modes: list[str] = Field(default_factory=list[str])
    default_output_modes: list[str] = Field(default_factory=list[str])
    skills: list[AgentSkill] = Field(default_factory=list[AgentSkill])
    signatures: list[AgentCardSignature] = Field(
        default_factory=list[AgentCardSignature], exclude_if=is_empty
    )
    icon_url: str | None = opt()
