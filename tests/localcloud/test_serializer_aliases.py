"""The serializer's kept alias keys and timestamps (localcloud/serializer_aliases.py) give what moto's own
code gives, also where moto rewrites a shared shape's parent between two answers. Whole answers are compared
in test_endpoint_answers.py."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from moto.core.model import ShapeResolver
from moto.core.serialize import AttributePickerContext, TimestampSerializer, XFormedAttributePicker

from docagent.localcloud import serializer_aliases

_DEFINITIONS: Any = {  # as botocore's model files give them (plain JSON)
    "DBInstance": {"type": "structure", "members": {"DBInstanceIdentifier": {"shape": "Text"}}},
    "Cluster": {"type": "structure", "members": {"Name": {"shape": "Text"}}},
    "Text": {"type": "string"},
}
_SHAPES = ShapeResolver(_DEFINITIONS)


def _picked(picker: XFormedAttributePicker, obj: Any, key: str, shape: Any) -> tuple[Any, Any]:
    """(the value the kept keys pick, the value moto's picker picks)."""
    context = AttributePickerContext(obj=obj, key=key, shape=shape)
    kept = serializer_aliases.pick(picker, context)
    moto = serializer_aliases._moto_pick(picker, context)
    return kept, moto


def test_a_shared_member_shape_is_looked_up_under_the_parent_it_has_now(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(XFormedAttributePicker, "get_possible_keys", serializer_aliases.possible_keys)
    monkeypatch.setattr(serializer_aliases, "_keys", {})
    instance: Any = _SHAPES.get_shape_by_name("DBInstance")
    cluster: Any = _SHAPES.get_shape_by_name("Cluster")
    member = instance.members["DBInstanceIdentifier"]
    value = {"Identifier": "db-1"}  # found only by ShapePrefixAlias, and only under a parent named DBInstance
    picker = XFormedAttributePicker()
    member.parent = instance
    assert _picked(picker, value, "DBInstanceIdentifier", member) == ("db-1", "db-1")
    member.parent = cluster  # moto's ``member_shape.parent = shape`` when another structure shares it
    assert _picked(picker, value, "DBInstanceIdentifier", member) == (None, None)
    member.parent = instance
    assert _picked(picker, value, "DBInstanceIdentifier", member) == ("db-1", "db-1")
    del member.parent
    assert _picked(picker, value, "DBInstanceIdentifier", member) == (None, None)
    assert len(serializer_aliases._keys) == 3  # one entry per parent (and none)


class _Model:
    class Meta:
        serialization_aliases = {"Name": "label"}

    label = "from-meta"


class _Mapping(dict[str, str]):
    pass


def test_values_other_than_plain_dicts_take_moto_s_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(XFormedAttributePicker, "get_possible_keys", serializer_aliases.possible_keys)
    monkeypatch.setattr(serializer_aliases, "_keys", {})
    cluster: Any = _SHAPES.get_shape_by_name("Cluster")
    member = cluster.members["Name"]
    member.parent = cluster
    picker = XFormedAttributePicker()
    assert _picked(picker, _Model(), "Name", member) == ("from-meta", "from-meta")
    assert _picked(picker, _Mapping(Name="n"), "Name", member) == ("n", "n")
    assert serializer_aliases._keys == {}
    assert _picked(picker, {"Name": "n"}, "Name", member) == ("n", "n")
    assert len(serializer_aliases._keys) == 1
    transformed = XFormedAttributePicker(response_transformers={"Name": str.upper})
    assert _picked(transformed, {"Name": "n"}, "Name", member) == ("N", "N")


@pytest.mark.parametrize(
    "value",
    [
        "2026-12-08T03:21:09.000Z",
        "2026-12-08T03:21:09.123456Z",
        "2026-12-08T03:21:09Z",
        "2026-12-08T03:21:09+02:00",
        "2026-12-08",
        "1765164069",
        1765164069,
        datetime(2026, 12, 8, 3, 21, 9, 5000, tzinfo=UTC),
    ],
)
@pytest.mark.parametrize("timestamp_format", ["iso8601", "rfc822", "unixtimestamp", "ISO8601_zeroed"])
def test_timestamps_are_written_as_moto_writes_them(value: Any, timestamp_format: str) -> None:
    serializer = TimestampSerializer("iso8601")
    expected = serializer_aliases._moto_convert_timestamp(serializer, value, timestamp_format)
    for _ in range(2):  # parsed, then kept
        written = serializer_aliases.convert_timestamp(serializer, value, timestamp_format)
        assert (written, type(written)) == (expected, type(expected))
