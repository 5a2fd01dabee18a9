"""The reference table (docs/design.md, "Tables"): ONE DynamoDB table holding every reference
table of every definition, partition key ``table`` (the reference table's name), sort key ``key`` (the value a
lookup check looks up); the row's other attributes beside them. ``docagent reference load`` fills it."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer
from pydantic import JsonValue

from functions import aws
from functions.settings import get_settings

TABLE_ATTRIBUTE = "table"
KEY_ATTRIBUTE = "key"

_deserializer = TypeDeserializer()


def _plain(value: Any) -> JsonValue:
    """A DynamoDB value as JSON: numbers without a fraction as int, others as float; sets as sorted lists."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {str(name): _plain(item) for name, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return [_plain(item) for item in sorted(value, key=str)]
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8", errors="replace")
    return value  # type: ignore[no-any-return]


def lookup(table: str, key: str) -> dict[str, JsonValue] | None:
    """The row of ``table`` under ``key`` (its attributes but the two keys), or None: one consistent read."""
    response = aws.dynamodb_client().get_item(
        TableName=get_settings().reference_table_name,
        Key={TABLE_ATTRIBUTE: {"S": table}, KEY_ATTRIBUTE: {"S": key}},
        ConsistentRead=True,
    )
    item = response.get("Item")
    if item is None:
        return None
    return {
        name: _plain(_deserializer.deserialize(value))
        for name, value in sorted(item.items())
        if name not in (TABLE_ATTRIBUTE, KEY_ATTRIBUTE)
    }
