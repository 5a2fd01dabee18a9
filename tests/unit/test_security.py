"""Nothing outside a job's own folder can reach in (issue #39, docs/security.md): a schema's ``$ref``
resolves only inside the definition's folder, and no pattern or model reply can hold a worker. Each case as an
adversary would try it (the console and a listening server: tests/integration/test_security_network.py)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from docagent.cli import main
from docagent.kit.loader import read_bundle
from docagent.kit.validate import validate
from functions.checks.fields import FieldsInvalid, extracted_fields
from functions.checks.outcomes import rule_outcome
from functions.checks.patterns import pattern_problem
from functions.definition.job_spec import ClassBundle, RuleCheck

CLAIMS = Path(__file__).resolve().parents[2] / "examples" / "claims"
SCHEMA = "classes/claim-form.schema.json"


@pytest.fixture
def claims(tmp_path: Path) -> Path:
    copy = tmp_path / "claims"
    shutil.copytree(CLAIMS, copy)
    return copy


def _edit_schema(folder: Path, change: Any) -> None:
    path = folder / SCHEMA
    schema = json.loads(path.read_text())
    change(schema)
    path.write_text(json.dumps(schema))


# ------------------------------------------------------------------------------------------ schema $refs


@pytest.mark.parametrize(
    "ref", ["file:///etc/passwd", "../../job.json", "/etc/passwd", "nowhere.json", "#/$defs/nothing"]
)
def test_every_other_ref_that_leads_nowhere_in_the_folder_is_refused(claims: Path, ref: str) -> None:
    _edit_schema(claims, lambda s: s["properties"].update({"extra": {"$ref": ref}}))
    problems = [p for p in validate(claims) if p.where == "$.properties.extra.$ref"]
    assert len(problems) == 1 and ref in problems[0].message


def test_every_refused_ref_of_a_schema_is_named_at_once(claims: Path) -> None:
    refs = {"remote": "http://127.0.0.1:9/x.json", "passwd": "file:///etc/passwd", "up": "../../job.json"}
    _edit_schema(
        claims, lambda s: s["properties"].update({name: {"$ref": ref} for name, ref in refs.items()})
    )
    (claims / "classes" / "common.json").write_text('{"$defs": {"gone": {"$ref": "missing.json"}}}')
    _edit_schema(claims, lambda s: s["properties"].update({"common": {"$ref": "common.json#/$defs/gone"}}))
    found = {(p.file, p.where): p.message for p in validate(claims)}
    for name, ref in refs.items():
        assert ref in found[(SCHEMA, f"$.properties.{name}.$ref")]
    assert (
        "missing.json" in found[("classes/common.json", "$.$defs.gone.$ref")]
    )  # in the file it is written in
    assert len(found) == 4


def test_a_ref_to_another_file_of_the_folder_is_published_inside_the_schema(claims: Path) -> None:
    (claims / "classes" / "common.json").write_text(
        json.dumps(
            {
                "$defs": {
                    "code": {"$ref": "#/$defs/upper"},
                    "upper": {"type": "string", "pattern": "^[A-Z]{3}$", "x-normalise": "upper"},
                }
            }
        )
    )
    _edit_schema(claims, lambda s: s["properties"].update({"currency": {"$ref": "common.json#/$defs/code"}}))
    assert validate(claims) == []
    schema = read_bundle(claims).classes["claim-form"].schema_
    refs = [value for _, value in _refs(schema)]
    assert refs and all(ref.startswith("#/") for ref in refs)  # nothing left for a function to resolve
    bundled = ClassBundle.model_validate(
        {"spec": read_bundle(claims).classes["claim-form"].spec, "schema": schema}
    )
    assert extracted_fields(json.dumps(_claim(currency="eur")), bundled)["currency"] == "EUR"
    with pytest.raises(FieldsInvalid, match="currency"):
        extracted_fields(json.dumps(_claim(currency="euro")), bundled)


def test_a_bundle_whose_schema_refers_outside_itself_is_refused_where_it_runs(claims: Path) -> None:
    spec = read_bundle(claims).classes["claim-form"].spec
    with pytest.raises(ValueError, match="not inside the schema"):
        ClassBundle.model_validate(
            {"spec": spec, "schema": {"type": "object", "$ref": "http://x.example/s.json"}}
        )


def _refs(node: Any, path: str = "$") -> list[tuple[str, str]]:
    if isinstance(node, dict):
        found = [(path, node["$ref"])] if isinstance(node.get("$ref"), str) else []
        return found + [item for key, value in node.items() for item in _refs(value, f"{path}.{key}")]
    if isinstance(node, list):
        return [item for index, value in enumerate(node) for item in _refs(value, f"{path}[{index}]")]
    return []


def _claim(**fields: Any) -> dict[str, Any]:
    """A valid claim form (the example's first sample's label), with ``fields`` changed."""
    label = json.loads((CLAIMS / "samples" / "claim-form" / "claim-0001.label.json").read_text())
    return {**label, **fields}


# ------------------------------------------------------------------------------------------------ patterns


def test_patterns_re2_cannot_run_are_refused_and_common_ones_pass() -> None:
    """Every pattern runs in RE2 (linear time): one it cannot compile is refused at validate; the shapes that
    backtrack in Python's re are allowed, RE2 runs them (test_hostile_expressions.py times them)."""
    for pattern in (r"^(a)\1$", r"^(?=a)a$", r"a{0,10000}b"):
        assert "linear time" in (pattern_problem(pattern) or ""), pattern
    for pattern in (
        r"^POL-[0-9]{6}$",
        r"^[0-9]+\.[0-9]{2}$",
        r"^[A-Z]{3}$",
        r"(foo|bar)+",
        r"^(\d{2}-)+\d{2}$",
        r"^(a+)+$",
    ):
        assert pattern_problem(pattern) is None, pattern
    assert "not a regular expression" in (pattern_problem("([A-Z]") or "")


def test_validate_checks_labels_against_a_backtracking_schema_pattern_fast(claims: Path) -> None:
    _edit_schema(claims, lambda s: s["properties"]["currency"].update({"pattern": "^(a+)+$"}))
    label = claims / "samples" / "claim-form" / "claim-0001.label.json"
    data = json.loads(label.read_text())
    data["currency"] = "a" * 34 + "!"
    label.write_text(json.dumps(data))
    started = time.monotonic()
    problems = validate(claims)
    assert time.monotonic() - started < 5
    mine = [p for p in problems if p.file.endswith("claim-0001.label.json")]
    assert [(p.where, p.message) for p in mine] == [("$.currency", f"'{'a' * 34}!' does not match '^(a+)+$'")]


def test_validate_refuses_a_rule_pattern_re2_cannot_run_naming_the_rule(claims: Path) -> None:
    job = json.loads((claims / "job.json").read_text())
    job["classes"]["claim-form"]["checks"].append(
        {"type": "rule", "name": "odd", "field": "currency", "pattern": "^(a)\\1$"}
    )
    (claims / "job.json").write_text(json.dumps(job))
    problems = [p for p in validate(claims) if p.where.endswith(".pattern")]
    assert len(problems) == 1 and problems[0].where.startswith("$.classes.claim-form.checks[")


def test_a_reply_against_a_polynomial_pattern_fails_its_document_fast(claims: Path) -> None:
    """``a*a*a*b``: 1,000 a's took 46 s in Python's re (2026-12-04); RE2 answers at once."""
    slow = "^a*a*a*b"
    _edit_schema(
        claims,
        lambda s: s["properties"]["claimant"]["properties"]["name"].update(
            {"pattern": slow, "maxLength": 9999}
        ),
    )
    bundle = read_bundle(claims).classes["claim-form"]
    reply = json.dumps(_claim(claimant={"name": "a" * 5000, "email": None}))
    started = time.monotonic()
    with pytest.raises(FieldsInvalid, match=r"must match pattern \^a\*a\*a\*b"):
        extracted_fields(reply, bundle)
    assert time.monotonic() - started < 2
    fast = json.dumps(_claim(claimant={"name": "aab", "email": None}))
    assert extracted_fields(fast, bundle)["claimant"] == {"name": "aab", "email": None}


def test_a_rule_pattern_fails_a_backtracking_value_fast() -> None:
    check = RuleCheck.model_validate({"type": "rule", "name": "odd", "field": "note", "pattern": "a*a*a*b"})
    started = time.monotonic()
    outcome = rule_outcome(check, {"note": "a" * 5000}, today=__import__("datetime").date(2026, 12, 4))
    assert time.monotonic() - started < 2
    assert not outcome.passed and "does not match a*a*a*b" in (outcome.reason or "")
    assert rule_outcome(check, {"note": "aab"}, today=__import__("datetime").date(2026, 12, 4)).passed


# ------------------------------------------------------------------------------------------ bad folders


def test_a_definition_folder_that_is_a_loop_of_links_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loop = tmp_path / "loopy"
    loop.symlink_to(loop)
    assert main(["definition", "validate", str(loop)]) == 2
    printed = capsys.readouterr()
    assert "Traceback" not in printed.err + printed.out
    assert "loop of symbolic links" in printed.out


def test_a_huge_enum_is_not_printed_once_per_label(claims: Path, capsys: pytest.CaptureFixture[str]) -> None:
    values = [f"V{number:06d}" for number in range(300_000)]
    _edit_schema(claims, lambda s: s["properties"]["currency"].update({"enum": values}))
    assert main(["definition", "validate", str(claims)]) == 2
    printed = capsys.readouterr().out
    assert len(printed) < 20_000, len(printed)
    assert "characters in all" in printed
    lines = [line for line in printed.splitlines() if "characters in all" in line]
    assert lines and max(len(line) for line in lines) <= 400, max(len(line) for line in lines)  # security.md
    assert all(line.endswith("(fix: make the label a valid claim-form (its schema))") for line in lines)
