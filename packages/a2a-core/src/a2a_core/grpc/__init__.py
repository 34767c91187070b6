"""The gRPC binding (extra ``a2a-adapters-core[grpc]``): server and client transport.

- ``GrpcServer`` serves an ``A2AApp``'s service as ``lf.a2a.v1.A2AService``;
  ``serve(..., grpc_port=...)`` / ``running_server(..., grpc_port=...)`` /
  ``a2a serve --grpc-port`` start it beside the HTTP server.
- ``GrpcTransport`` is the client side, chosen by interface selection when
  the card lists a ``GRPC`` interface (or ``A2AClient.for_endpoint(...,
  binding="GRPC")``).

Nothing here is imported by ``import a2a_core``; importing this package
without grpcio and protobuf installed raises ImportError naming the extra.
"""

from __future__ import annotations

from importlib.util import find_spec


def _missing() -> list[str]:
    out: list[str] = []
    for module in ("grpc", "google.protobuf", "google.rpc"):
        try:
            if find_spec(module) is None:
                out.append(module)
        except (ImportError, ValueError):
            out.append(module)
    return out


if _missing():
    raise ImportError(
        "The gRPC binding needs the grpc extra: pip install 'a2a-adapters-core[grpc]' "
        f"(missing: {', '.join(_missing())})"
    )

from ..exports import publish as _publish  # noqa: E402
from .client import GrpcTransport, grpc_target  # noqa: E402
from .server import GrpcServer, grpc_address  # noqa: E402

__all__ = ["GrpcServer", "GrpcTransport", "grpc_address", "grpc_target"]

_publish(__name__, [value for name, value in globals().items() if name in __all__])
