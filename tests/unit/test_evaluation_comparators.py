"""docagent eval's comparators, field type by field type, as chosen from a JSON Schema (and x-comparator)."""

from __future__ import annotations

import pytest

from docagent.evaluation.comparators import Comparison, SchemaError, check_schema, normalise_text


def outcomes(schema, expected, extracted):
    return {o.path: o for o in Comparison(schema).compare(expected, extracted)}


def one(schema, expected, extracted):
    return outcomes({"type": "object", "properties": {"f": schema}}, {"f": expected}, {"f": extracted})["f"]


def test_plain_string_is_normalised_text_case_spaces_and_punctuation_ignored():
    found = one({"type": "string"}, "ACME Corp.,  Ltd", "acme corp ltd")
    assert (found.comparator, found.outcome) == ("text", "match")
    assert one({"type": "string"}, "ACME Corp", "ACME Group").outcome == "wrong"
    assert normalise_text("  Hello,\tWORLD!  ") == "hello world"


def test_exact_by_x_comparator_tells_case_apart():
    schema = {"type": "string", "x-comparator": {"type": "exact"}}
    assert one(schema, "INV-1", "INV-1").outcome == "match"
    assert one(schema, "INV-1", "inv-1").outcome == "wrong"


def test_number_equal_or_within_absolute_or_relative_tolerance():
    assert one({"type": "number"}, 10.0, "10.00").outcome == "match"
    assert one({"type": "number"}, 10.0, 10.01).outcome == "wrong"
    assert one({"type": "number", "x-comparator": {"abs_tol": 0.01}}, 10.0, 10.01).outcome == "match"
    assert one({"type": "number", "x-comparator": {"abs_tol": 0.01}}, 10.0, 10.02).outcome == "wrong"
    relative = {"type": "number", "x-comparator": {"type": "number", "rel_tol": 0.05}}
    assert one(relative, 200, 209).outcome == "match"
    assert one(relative, 200, 211).outcome == "wrong"
    assert one({"type": "integer"}, 3, "three").outcome == "wrong"


def test_date_parses_several_formats_and_compares_dates():
    schema = {"type": "string", "format": "date"}
    for written in ("2026-03-14", "14 March 2026", "March 14, 2026", "14.03.2026", "2026-03-14T09:30:00Z"):
        assert one(schema, "2026-03-14", written).outcome == "match", written
    assert one(schema, "2026-03-14", "2026-03-15").outcome == "wrong"
    assert one(schema, "2026-03-14", "not a date").outcome == "wrong"
    dayfirst = {"type": "string", "format": "date", "x-comparator": {"dayfirst": True}}
    assert one(dayfirst, "2026-04-03", "03/04/2026").outcome == "match"
    assert one(schema, "2026-04-03", "03/04/2026").outcome == "wrong"  # month first by default


def test_enum_ignores_case_and_surrounding_spaces_only():
    schema = {"enum": ["hardware", "software"], "type": "string"}
    assert one(schema, "hardware", " Hardware ").outcome == "match"
    assert one(schema, "hardware", "software").outcome == "wrong"
    assert one(schema, "hardware", "hard ware").comparator == "enum"


def test_fuzzy_text_matches_above_its_threshold():
    schema = {"type": "string", "x-comparator": {"type": "fuzzy", "threshold": 0.8}}
    close = one(schema, "Consulting services for March", "Consulting service for march")
    assert close.outcome == "match" and 0.8 <= close.score < 1
    far = one(schema, "Consulting services for March", "Hotel night in Lyon")
    assert far.outcome == "wrong" and far.score < 0.8


def test_missing_extra_and_absent_values():
    assert one({"type": "string"}, "a", None).outcome == "missing"
    assert one({"type": "string"}, None, "a").outcome == "extra"
    assert one({"type": "string"}, None, "  ").outcome == "absent"
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number"}}}
    found = outcomes(schema, {"a": "x"}, {"b": 2})
    assert (found["a"].outcome, found["b"].outcome) == ("missing", "extra")


def test_nested_objects_field_by_field_through_refs_and_nullable_unions():
    schema = {
        "type": "object",
        "properties": {"vendor": {"anyOf": [{"$ref": "#/$defs/Vendor"}, {"type": "null"}], "x-weight": 3}},
        "$defs": {
            "Vendor": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "vat": {"type": "string", "x-weight": 2}},
            }
        },
    }
    found = outcomes(schema, {"vendor": {"name": "Contoso", "vat": "EU1"}}, {"vendor": {"name": "contoso"}})
    assert found["vendor.name"].outcome == "match"
    assert found["vendor.vat"].outcome == "missing"
    assert (found["vendor.name"].weight, found["vendor.vat"].weight) == (3, 6)


LINES = {
    "type": "object",
    "properties": {
        "lines": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "description": {"type": "string", "x-comparator": {"type": "fuzzy", "threshold": 0.8}},
                    "total": {"type": "number", "x-comparator": {"abs_tol": 0.01}},
                },
            },
        }
    },
}
LABELLED = [
    {"description": "Laptop stand", "total": 45.0},
    {"description": "USB-C dock", "total": 199.99},
    {"description": "27in monitor", "total": 320.0},
]


def paths(found_outcomes):
    return sorted((o.path, o.outcome, o.expected, o.extracted) for o in found_outcomes)


def test_list_items_are_matched_by_best_assignment_whatever_their_order():
    shuffled = [LABELLED[2], LABELLED[0], {"description": "USB C dock", "total": 199.99}]
    found = Comparison(LINES).compare({"lines": LABELLED}, {"lines": shuffled})
    assert [o.outcome for o in found] == ["match"] * 6
    assert {o.path for o in found} == {"lines[].description", "lines[].total"}


def test_a_missing_list_item_is_counted_missing_and_the_others_still_match():
    found = Comparison(LINES).compare({"lines": LABELLED}, {"lines": [LABELLED[2], LABELLED[0]]})
    missing = [o for o in found if o.outcome == "missing"]
    assert sorted(str(o.expected) for o in missing) == ["199.99", "USB-C dock"]
    assert sum(o.outcome == "match" for o in found) == 4


def test_an_extra_list_item_is_counted_extra_and_a_wrong_field_in_a_paired_item_wrong():
    extracted = [
        *LABELLED[:2],
        {"description": "27in monitor", "total": 302.0},
        {"description": "Cable", "total": 5},
    ]
    found = Comparison(LINES).compare({"lines": LABELLED}, {"lines": extracted})
    assert ("lines[].total", "wrong", 320.0, 302.0) in paths(found)
    assert sorted(str(o.extracted) for o in found if o.outcome == "extra") == ["5", "Cable"]


def test_items_less_similar_than_the_threshold_stay_unpaired():
    schema = {
        "type": "object",
        "properties": {"lines": {**LINES["properties"]["lines"], "x-comparator": {"threshold": 0.9}}},
    }
    found = Comparison(schema).compare(
        {"lines": LABELLED[:1]}, {"lines": [{"description": "Laptop stand", "total": 1}]}
    )
    assert sorted(o.outcome for o in found) == ["extra", "extra", "missing", "missing"]


def test_lists_of_scalars_match_out_of_order():
    schema = {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}}
    found = Comparison(schema).compare({"tags": ["urgent", "EU"]}, {"tags": ["eu", "Urgent", "late"]})
    assert sorted(o.outcome for o in found) == ["extra", "match", "match"]


def test_a_bad_x_comparator_or_ref_is_a_clear_error():
    with pytest.raises(SchemaError, match="x-comparator"):
        one({"type": "string", "x-comparator": {"type": "sorta"}}, "a", "a")
    with pytest.raises(SchemaError, match=r"\$ref '#/\$defs/Nope' points nowhere"):
        Comparison({"type": "object", "properties": {"a": {"$ref": "#/$defs/Nope"}}}).compare({}, {})


def test_check_schema_finds_a_bad_comparator_deep_in_a_list_before_anything_runs():
    bad = {
        "type": "array",
        "items": {"type": "object", "properties": {"x": {"x-comparator": {"abs_tol": -1}}}},
    }
    with pytest.raises(SchemaError, match=r"lines\[\]\.x: x-comparator"):
        check_schema({"type": "object", "properties": {"lines": bad}})
    check_schema(LINES)


def test_thresholds_default_to_half_for_list_items_and_085_for_fuzzy_text():
    half = {"description": "Laptop stand", "total": 1}  # one of two fields right: similarity 0.5
    plain = Comparison(LINES).compare({"lines": LABELLED[:1]}, {"lines": [half]})
    lines = {**LINES["properties"]["lines"], "x-comparator": {}}
    empty = Comparison({"type": "object", "properties": {"lines": lines}})
    assert [o.outcome for o in plain] == ["match", "wrong"]
    assert [o.outcome for o in empty.compare({"lines": LABELLED[:1]}, {"lines": [half]})] == [
        "match",
        "wrong",
    ]
    fuzzy = {"type": "string", "x-comparator": {"type": "fuzzy"}}
    assert one(fuzzy, "abcdefghij", "abcdefghiX").outcome == "match"  # 0.9
    assert one(fuzzy, "abcdefghij", "abcdefghXY").outcome == "wrong"  # 0.8
