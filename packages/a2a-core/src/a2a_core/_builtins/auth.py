"""Built-in plugin: bearer-token and API-key backends, configured from server options.

``bearer_tokens={"token": "principal-id"}`` and ``api_keys={"key": "principal-id"}``
(with ``api_key_header``, default ``X-API-Key``); without those options the
factories return None and nothing is required of callers.
"""

from __future__ import annotations

from ..auth import AuthBackendRegistrar, api_key_backend_from_options, bearer_backend_from_options
from ..hookspecs import hookimpl

A2A_OPTIONS = ("bearer_tokens", "api_keys", "api_key_header")
"""The server options these backends read."""


@hookimpl
def a2a_register_auth_backends(register: AuthBackendRegistrar) -> None:
    register("bearer", bearer_backend_from_options)
    register("api_key", api_key_backend_from_options)
