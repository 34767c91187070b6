"""Wire codecs: the internal model <-> A2A 1.0 ProtoJSON, 0.3 JSON-RPC and 0.3 HTTP+JSON."""

from .._api import publish as _publish
from ._json import DEFAULT_LIMITS, DecodeLimits, dumps, loads
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

_publish(__name__, [value for name, value in globals().items() if name in __all__])
