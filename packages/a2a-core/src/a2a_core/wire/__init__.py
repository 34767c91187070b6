"""Wire codecs: the internal model <-> A2A 1.0 ProtoJSON, 0.3 JSON-RPC and 0.3 HTTP+JSON.

Names load on first use (the codecs build the pydantic models), so importing a
light module of this package (``_limits``) does not pay for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..exports import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from ._json import dumps, loads
    from ._limits import DEFAULT_LIMITS, DecodeLimits
    from .codec import REQUEST_TYPES, RESULT_TYPES, Codec
    from .hybrid import card_from_any, hybrid_card
    from .operations import Operation, operation_for_method
    from .v03 import V03JsonRpcCodec
    from .v03_rest import RestRequest, V03RestCodec, assemble_request, split_request
    from .v10 import V10Codec

__all__ = [
    "DEFAULT_LIMITS",
    "REQUEST_TYPES",
    "RESULT_TYPES",
    "Codec",
    "DecodeLimits",
    "Operation",
    "RestRequest",
    "V03JsonRpcCodec",
    "V03RestCodec",
    "V10Codec",
    "assemble_request",
    "card_from_any",
    "dumps",
    "hybrid_card",
    "loads",
    "operation_for_method",
    "split_request",
]

_LAZY = {
    "DEFAULT_LIMITS": "._limits",
    "DecodeLimits": "._limits",
    "dumps": "._json",
    "loads": "._json",
    "REQUEST_TYPES": ".codec",
    "RESULT_TYPES": ".codec",
    "Codec": ".codec",
    "card_from_any": ".hybrid",
    "hybrid_card": ".hybrid",
    "Operation": ".operations",
    "operation_for_method": ".operations",
    "V03JsonRpcCodec": ".v03",
    "RestRequest": ".v03_rest",
    "V03RestCodec": ".v03_rest",
    "assemble_request": ".v03_rest",
    "split_request": ".v03_rest",
    "V10Codec": ".v10",
}


__getattr__, __dir__ = _lazy_exports(__name__, _LAZY, __all__)
