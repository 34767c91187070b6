"""URLs named by a peer: which targets may be contacted, and a transport that keeps to them.

A push config's webhook and a file part's download URL are both chosen by a
peer. ``url_policy.UrlPolicy`` says which of them may be contacted (public
addresses only unless the operator opens more); ``vetted_transport.VettedTransport``
connects only to addresses that policy allowed, so a DNS answer that changes
after the check cannot redirect the request. Push delivery (``server.push``)
and client file downloads (``client.files``) both use them; this package
imports neither. ``a2a_core.server.push`` re-exports the same names.
"""

from ..exports import publish as _publish
from .url_policy import ResolutionError, TargetRefusedError, UrlPolicy, address_class
from .vetted_transport import VettedTransport

__all__ = ["ResolutionError", "TargetRefusedError", "UrlPolicy", "VettedTransport", "address_class"]

_publish(__name__, [value for name, value in globals().items() if name in __all__])
