"""docagent definition validate: every problem of a definition folder, one per problem, each naming its file,
where in it and the fix; a valid folder (the invoice example) has none."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from docagent.cli import main
from docagent.kit.loader import DefinitionInvalid, read_bundle
from docagent.kit.registry import checked_bundle
from docagent.kit.validate import validate
from functions.actions.allowed import AllowedTargets

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "invoices"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    copy = tmp_path / "invoices"
    shutil.copytree(EXAMPLE, copy)
    return copy


def _edit(path: Path, change: object) -> None:
    data = json.loads(path.read_text())
    change(data)  # type: ignore[operator]
    path.write_text(json.dumps(data))


def test_the_invoice_example_is_valid() -> None:
    assert validate(EXAMPLE) == []
    assert checked_bundle(EXAMPLE).name == "invoices"


def test_an_error_in_each_part_is_one_message_naming_where_it_is(folder: Path) -> None:
    schema = folder / "classes" / "invoice.schema.json"
    _edit(schema, lambda s: s["properties"]["summary"].update({"x-normalise": "cents"}))
    (folder / "classes" / "invoice.prompt.txt").write_text("  \n")

    def job(data: dict[str, Any]) -> None:
        data["classes"]["invoice"]["checks"][0]["field"] = "client_id"
        data["actions"][0]["url"] = "https://elsewhere.example.net/tickets"
        data["actions"].append({"type": "sns", "name": "notify", "topic_arn": "not-an-arn"})

    _edit(folder / "job.json", job)

    problems = validate(folder, AllowedTargets(hosts=["tickets.example.com"]))

    found = {(p.file, p.where) for p in problems}
    assert found == {
        ("classes/invoice.schema.json", "$.properties.summary.x-normalise"),
        ("classes/invoice.prompt.txt", "$"),
        ("job.json", "$.classes.invoice.checks[0].field"),
        ("job.json", "$.actions[0].url"),
        ("job.json", "$.actions[1].sns.topic_arn"),
    }
    assert len(problems) == len(found)  # one message per problem
    by_where = {p.where: p for p in problems}
    assert "cents" in by_where["$.properties.summary.x-normalise"].message
    assert "amount" in by_where["$.properties.summary.x-normalise"].fix  # the normalisers allowed
    assert "client_id" in by_where["$.classes.invoice.checks[0].field"].message
    assert "elsewhere.example.net" in by_where["$.actions[0].url"].message
    assert all(p.fix for p in problems)
    with pytest.raises(DefinitionInvalid) as refused:
        checked_bundle(folder, AllowedTargets(hosts=["tickets.example.com"]))
    assert len(refused.value.problems) == len(problems)


CHEAP, DEPLOYED = "anthropic.claude-3-haiku-20240307-v1:0", "global.anthropic.claude-haiku-4-5-20251001-v1:0"


def test_models_the_deployment_does_not_allow_are_named_at_their_index(folder: Path) -> None:
    """job.json ``models`` against the deployment's MODELS_ALLOWED (model_id, extra_model_ids): each model it
    does not allow is a problem at ``$.models[N]`` with the fix; unknown (None): not checked."""
    _edit(folder / "job.json", lambda data: data.update({"models": [CHEAP, DEPLOYED]}))

    problems = validate(folder, models_allowed=[DEPLOYED])

    assert [(p.file, p.where) for p in problems] == [("job.json", "$.models[0]")]
    assert CHEAP in problems[0].message and "ModelNotAllowed" in problems[0].message
    assert "add it to cdk.json's extra_model_ids and deploy" in problems[0].fix
    assert validate(folder, models_allowed=[DEPLOYED, CHEAP]) == []
    assert validate(folder) == []  # no deployment known: nothing to check against
    with pytest.raises(DefinitionInvalid) as refused:
        checked_bundle(folder, None, [DEPLOYED])
    assert "$.models[0]" in refused.value.problems[0]


def test_check_types_and_dates_are_checked_against_the_schema(folder: Path) -> None:
    def job(data: dict[str, Any]) -> None:
        data["classes"]["invoice"]["checks"] += [
            {"type": "rule", "name": "small", "field": "category", "maximum": 10},
            {"type": "rule", "name": "past", "field": "invoice_date", "not_after": "due_date"},
            {"type": "rule", "name": "ok-date", "field": "invoice_date", "not_after": "today"},
            {"type": "rule", "name": "big", "field": "amount", "minimum": "0.01"},
            {"type": "rule", "name": "code", "field": "currency", "pattern": "([A-Z]"},
        ]
        data["classes"]["invoice"]["columns"].append("missing_column")
        data["totals"][0]["sum"] = "currency"

    _edit(folder / "job.json", job)

    problems = {p.where: p for p in validate(folder)}

    assert set(problems) == {
        "$.classes.invoice.checks[1].field",
        "$.classes.invoice.checks[2].not_after",
        "$.classes.invoice.checks[5].pattern",
        "$.classes.invoice.columns[5]",
        "$.totals[0].sum",
    }
    assert "number" in problems["$.classes.invoice.checks[1].field"].message
    assert "due_date" in problems["$.classes.invoice.checks[2].not_after"].message


def test_schema_meta_schema_keywords_and_top_level_type(folder: Path) -> None:
    schema = folder / "classes" / "invoice.schema.json"
    _edit(
        schema,
        lambda s: (
            s.update({"type": "array"}),
            s["properties"]["summary"].update({"minLength": -1}),
            s["properties"]["currency"].update({"if": {"const": "EUR"}}),
        ),
    )

    problems = {p.where for p in validate(folder)}

    assert {"$.type", "$.properties.summary.minLength", "$.properties.currency.if"} <= problems


def test_a_model_error_names_the_key_and_its_fix(folder: Path) -> None:
    _edit(folder / "job.json", lambda d: d.update({"name": "Invoices!", "colour": "blue"}))

    problems = {p.where: p for p in validate(folder)}

    assert set(problems) == {"$.name", "$.colour"}
    assert "lower-case" in problems["$.name"].fix
    assert "remove" in problems["$.colour"].fix


def test_duplicate_action_names_name_each_entry(folder: Path) -> None:
    _edit(folder / "job.json", lambda d: d["actions"].append({"type": "export", "name": "ticket"}))

    problems = [p.where for p in validate(folder)]

    assert problems == ["$.actions[0].name", "$.actions[1].name"]


def test_sample_labels_are_checked_against_their_schema(folder: Path) -> None:
    samples = folder / "samples"
    samples.mkdir()
    good = {
        "customer_id": "CUST-00001",
        "invoice_number": "A-1",
        "invoice_date": "2026-01-02",
        "amount": "10.00",
        "currency": "EUR",
        "category": "other",
        "summary": "a thing",
    }
    (samples / "one.txt").write_text("invoice")
    (samples / "one.label.json").write_text(json.dumps(good))
    (samples / "two.txt").write_text("invoice")
    (samples / "two.label.json").write_text(json.dumps({**good, "amount": 10}))
    (samples / "three.label.json").write_text(json.dumps(good))

    problems = [(p.file, p.where) for p in validate(folder)]

    assert problems == [("samples/three.label.json", "$"), ("samples/two.label.json", "$.amount")]


def test_the_command_prints_every_problem_and_exits_2(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "classes" / "invoice.prompt.txt").unlink()

    assert main(["definition", "validate", str(folder), "--json"]) == 2
    answer = json.loads(capsys.readouterr().out)
    assert answer["ok"] is False
    assert [p["file"] for p in answer["problems"]] == ["classes/invoice.prompt.txt"]
    assert main(["definition", "validate", str(EXAMPLE)]) == 0
    assert "valid (invoices@" in capsys.readouterr().out


def test_the_loader_names_the_fix_too(folder: Path) -> None:
    _edit(folder / "job.json", lambda d: d.update({"colour": "blue"}))

    with pytest.raises(DefinitionInvalid) as refused:
        read_bundle(folder)

    (problem,) = refused.value.problems
    assert problem.startswith("job.json: $.colour: ") and "(fix: remove it" in problem


def test_with_several_classes_a_sample_sits_in_its_class_folder(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"total": {"type": "number"}, "signed_on": {"type": "string", "format": "date"}},
        "required": ["total"],
    }
    (tmp_path / "a.schema.json").write_text(json.dumps(schema))
    (tmp_path / "job.json").write_text(
        json.dumps(
            {
                "name": "two",
                "classes": {
                    "claim": {"description": "a claim", "schema": "a.schema.json"},
                    "letter": {"description": "a letter", "schema": "a.schema.json"},
                },
            }
        )
    )
    (tmp_path / "samples" / "claim").mkdir(parents=True)
    (tmp_path / "samples" / "claim" / "c1.txt").write_text("claim")
    (tmp_path / "samples" / "claim" / "c1.label.json").write_text(json.dumps({"total": 3}))
    (tmp_path / "samples" / "loose.txt").write_text("?")
    (tmp_path / "samples" / "loose.label.json").write_text(json.dumps({"total": 3}))
    (tmp_path / "samples" / "memo").mkdir()
    (tmp_path / "samples" / "memo" / "m.txt").write_text("?")
    (tmp_path / "samples" / "memo" / "m.label.json").write_text(json.dumps({"total": 3}))
    # A label may say its class instead (#40): a flat sample, and one of no class.
    (tmp_path / "samples" / "flat.txt").write_text("claim")
    (tmp_path / "samples" / "flat.label.json").write_text(
        json.dumps({"class": "claim", "fields": {"total": 3}})
    )
    (tmp_path / "samples" / "none.txt").write_text("?")
    (tmp_path / "samples" / "none.label.json").write_text(json.dumps({"class": None}))
    (tmp_path / "samples" / "wrong.txt").write_text("?")
    (tmp_path / "samples" / "wrong.label.json").write_text(json.dumps({"class": "invoice", "fields": {}}))

    problems = [(p.file, p.message) for p in validate(tmp_path)]

    several = (
        "with several classes (claim, letter) a sample sits in samples/CLASS/ or its label says its class"
    )
    assert [file for file, _ in problems] == [
        "samples/loose.label.json",
        "samples/memo/m.label.json",
        "samples/wrong.label.json",
    ]
    assert problems[0][1].startswith(several) and problems[1][1].startswith(several)
    assert "'invoice' is not one of the definition's (claim, letter)" in problems[2][1]


def test_a_rule_expression_that_does_not_compile_is_named(folder: Path) -> None:
    def job(data: dict[str, Any]) -> None:
        data["classes"]["invoice"]["checks"].append(
            {"type": "rule", "name": "adds-up", "field": "amount", "expression": "$sum(line_items.amount"}
        )

    _edit(folder / "job.json", job)
    problems = [p for p in validate(folder) if p.where.endswith(".expression")]
    assert len(problems) == 1
    assert problems[0].where == "$.classes.invoice.checks[1].expression"
    assert "rule 'adds-up'" in problems[0].message and "does not compile" in problems[0].message
