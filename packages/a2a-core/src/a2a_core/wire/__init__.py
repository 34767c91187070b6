"""Wire codecs: the internal model <-> A2A 1.0 ProtoJSON, 0.3 JSON-RPC and 0.3 HTTP+JSON."""

from ._json import DEFAULT_LIMITS, DecodeLimits, dumps, loads
from .codec import REQUEST_TYPES, RESULT_TYPES, Codec
from .operations import Operation, operation_for_method
from .v10 import V10Codec

__all__ = [
    "DEFAULT_LIMITS",
    "REQUEST_TYPES",
    "RESULT_TYPES",
    "Codec",
    "DecodeLimits",
    "Operation",
    "V10Codec",
    "dumps",
    "loads",
    "operation_for_method",
]
