"""Shared model configuration and scalar types for the A2A data model.

Python attributes are snake_case; the wire names (ProtoJSON camelCase) are
aliases. Both spellings are accepted on input, as ProtoJSON parsers do, and
unknown fields are ignored.
"""

from __future__ import annotations

import base64
import binascii
from datetime import datetime
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer
from pydantic.alias_generators import to_camel

from ._time import format_timestamp, parse_timestamp

__all__ = [
    "A2AModel",
    "Base64Bytes",
    "Struct",
    "Timestamp",
    "built",
    "changed",
    "encode_base64",
    "falsy",
    "format_timestamp",
    "is_empty",
    "not_none",
    "opt",
]


class A2AModel(BaseModel):
    """Base of every A2A model: camelCase on the wire, snake_case in Python."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="ignore",
        use_enum_values=False,
        ser_json_bytes="base64",
        val_json_bytes="base64",
    )


_M = TypeVar("_M", bound=BaseModel)
# BaseModel's slots, set through their descriptors: a call each, without the attribute
# lookup of ``object.__setattr__`` (``built`` runs three times per streamed chunk).
_slots = vars(BaseModel)
_set_dict = _slots["__dict__"].__set__
_set_fields_set = _slots["__pydantic_fields_set__"].__set__
_set_extra = _slots["__pydantic_extra__"].__set__
_set_private = _slots["__pydantic_private__"].__set__


_every_field: dict[type[BaseModel], frozenset[str]] = {}
"""Each class's field names, from which every model ``built`` makes gets its own fields-set."""


def built(cls: type[_M], values: dict[str, Any]) -> _M:
    """A model of values the caller made and checked itself, without validating them.

    For hot paths that build our own objects from values of known types (an updater's
    artifact chunk from a ``str``). ``values`` must hold every field of ``cls``, in
    declaration order, each valid: nothing is checked, which is the point. The result
    equals (``==``) and serializes as the validated model, and like it owns its state:
    changing one model's fields-set never reaches another's.
    """
    model = cls.__new__(cls)
    _set_dict(model, values)
    fields = _every_field.get(cls)
    if fields is None:
        fields = _every_field[cls] = frozenset(cls.model_fields)
    _set_fields_set(model, set(fields))
    _set_extra(model, None)
    _set_private(model, None)
    return model


def changed(model: _M, changes: dict[str, Any]) -> _M:
    """``model.model_copy(update=changes)``, for the copies made on every event.

    The same shallow copy (the values are shared, ``changes`` not validated), without
    pydantic's generic ``__copy__``, which looks for extra fields and private attributes
    on every call. Our models keep neither, so there is nothing more to copy.
    """
    cls = model.__class__
    new = cls.__new__(cls)
    values = model.__dict__.copy()
    values.update(changes)
    _set_dict(new, values)
    _set_fields_set(new, model.__pydantic_fields_set__ | changes.keys())
    _set_extra(new, None)
    _set_private(new, None)
    return new


def is_empty(value: object) -> bool:
    """Proto semantics: unset, empty repeated and empty map fields are omitted."""
    return value is None or value == [] or value == {}


def _decode_base64(value: Any) -> Any:
    """Accept standard and URL-safe base64, with or without padding (as ProtoJSON does)."""
    if isinstance(value, str):
        text = value.strip()
        text += "=" * (-len(text) % 4)
        try:
            if "-" in text or "_" in text:
                return base64.urlsafe_b64decode(text)
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ValueError("invalid base64 data") from exc
    return value


def encode_base64(value: bytes) -> str:
    """Standard base64 (how ``Base64Bytes`` goes on the wire)."""
    return base64.b64encode(value).decode("ascii")


Base64Bytes = Annotated[
    bytes,
    BeforeValidator(_decode_base64),
    PlainSerializer(encode_base64, return_type=str, when_used="json"),
]
"""Raw bytes in Python, standard base64 on the wire."""


Timestamp = Annotated[
    datetime,
    BeforeValidator(parse_timestamp),
    PlainSerializer(format_timestamp, return_type=str, when_used="json"),
]
"""A timezone-aware UTC datetime; RFC 3339 with ``Z`` on the wire."""

Struct = dict[str, Any]
"""A google.protobuf.Struct: a plain JSON object."""


def opt() -> Any:
    """An optional field: None by default, omitted from the wire when unset or empty."""
    return Field(default=None, exclude_if=is_empty)


def not_none(value: object) -> bool:
    """``exclude_if`` for fields whose falsy values are meaningful (JSON ``data`` parts)."""
    return value is None


def falsy(value: object) -> bool:
    """``exclude_if`` for proto booleans: false is the default and is omitted."""
    return not value
