"""moto's response serializer without asking six alias providers for every member of every value.

moto 5 serializes every answer built as an ``ActionResult`` (every DynamoDB answer; S3's ListObjectsV2; the
errors of both) with ``moto.core.serialize``: for each member of each structure, ``XFormedAttributePicker``
asks six alias providers (``ExplicitAlias``, ``ShapeNameAlias``, ``NoAlias``, ``ShapePrefixAlias``,
``ClassPrefixAlias``, ``ModelAlias``; each one a new object) which keys the value may hide under, and
``botocore.xform_name`` each key's snake-case form (moto/core/serialize.py, read 2026-12-08). For a plain
``dict`` the answer depends on nothing but:

- the member's key and its shape (``name``, ``type_name``, ``serialization``: botocore's shapes are made once
  per service model, compared by identity, never changed);
- the shape's ``parent`` at that moment: moto rewrites ``member_shape.parent = shape`` on shared shapes as it
  walks a structure, so a list member's shape can carry the parent of whatever was serialized last;
- the value's class (``ClassPrefixAlias``) and its ``Meta.serialization_aliases`` (``ExplicitAlias``): for an
  object of exactly ``dict``, always "dict" and none.

Here the keys are remembered per (key, shape, parent or none) for a value whose type is exactly ``dict``,
computed by moto's own providers the first time; any other value (moto's model objects, a ``dict``
subclass), or a picker given other providers than moto's list, goes through moto's code as before.
``AttributePicker.__call__`` builds a key path only when there are response transformers to match it against.

Also kept: the datetime moto's timestamp serializer parses from a ``...Z`` string (S3's ``LastModified``, a
``dateutil`` parse each time): the same text always gives the same aware datetime (an explicit UTC, so the
machine's local zone plays no part), and datetimes are immutable.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from botocore.utils import parse_to_aware_datetime
from moto.core import serialize
from moto.core.constants import MISSING
from moto.core.serialize import (
    AttributePicker,
    AttributePickerContext,
    TimestampSerializer,
    XFormedAttributePicker,
)
from moto.core.utils import get_value

# (key, shape, parent) entries and parsed timestamps kept; a service model has a few thousand shapes
KEPT = 4096
_NO_PARENT = object()
_moto_possible_keys = XFormedAttributePicker.get_possible_keys
_moto_pick = AttributePicker.__call__
_moto_convert_timestamp = TimestampSerializer._convert_timestamp_to_str
_keys: dict[tuple[str, object, object], tuple[str, ...]] = {}


def possible_keys(self: XFormedAttributePicker, context: AttributePickerContext) -> Iterator[str]:
    if type(context.obj) is not dict or self.alias_providers is not serialize.DEFAULT_ALIAS_PROVIDERS:
        return _moto_possible_keys(self, context)
    shape = context.shape
    memo = (context.key, shape, getattr(shape, "parent", _NO_PARENT))
    keys = _keys.get(memo)
    if keys is None:
        keys = tuple(_moto_possible_keys(self, context))
        if len(_keys) >= KEPT:
            _keys.clear()
        _keys[memo] = keys
    return iter(keys)


def pick(self: AttributePicker, context: AttributePickerContext) -> Any:
    if self.response_transformers:
        return _moto_pick(self, context)
    obj = context.obj
    for possible_key in self.get_possible_keys(context):
        value = get_value(obj, possible_key, MISSING)
        if value is not MISSING:
            return value
    return None


@functools.lru_cache(maxsize=KEPT)
def _utc_datetime(text: str) -> Any:
    return parse_to_aware_datetime(text)  # moto.core.serialize's, imported from botocore


def convert_timestamp(self: TimestampSerializer, value: Any, timestamp_format: str) -> Any:
    if type(value) is not str or not value.endswith("Z"):
        return _moto_convert_timestamp(self, value, timestamp_format)
    converter = getattr(self, f"_timestamp_{timestamp_format.lower()}")
    return converter(_utc_datetime(value))


def install() -> None:
    XFormedAttributePicker.get_possible_keys = possible_keys  # type: ignore[method-assign,assignment]
    AttributePicker.__call__ = pick  # type: ignore[method-assign]
    TimestampSerializer._convert_timestamp_to_str = convert_timestamp  # type: ignore[method-assign]
