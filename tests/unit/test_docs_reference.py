"""What can be generated is generated: docs/reference/ is what docagent/docs_gen.py writes from the code,
and the generator covers every setting and every command's --json model."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from docagent import docs_gen
from docagent.docs_meanings import CONFIG_MEANINGS
from docagent.operations.json_output import Output, Refusal
from docagent.operations.json_shapes import COMMAND_OUTPUTS, StatusOutput, validate_output
from functions.durability.fault_points import FAULT_POINTS
from stacks.config import DocAgentConfig


@pytest.mark.parametrize("name", sorted(docs_gen.PAGES))
def test_the_committed_reference_page_is_what_the_code_generates(name: str) -> None:
    committed = (docs_gen.REFERENCE_DIR / name).read_text(encoding="utf-8")
    assert committed == docs_gen.PAGES[name](), f"docs/reference/{name} is stale: run `make docs-gen`"


def test_drift_is_reported_for_a_changed_page(tmp_path) -> None:
    for name, render in docs_gen.PAGES.items():
        (tmp_path / name).write_text(render(), encoding="utf-8")
    assert docs_gen.drifted(tmp_path) == []
    (tmp_path / "configuration.md").write_text("# hand-edited\n", encoding="utf-8")
    assert docs_gen.drifted(tmp_path) == ["configuration.md"]


def test_every_setting_is_in_the_configuration_page_with_its_default() -> None:
    page = docs_gen.configuration_page()
    for name, field in DocAgentConfig.model_fields.items():
        row = next(line for line in page.splitlines() if line.startswith(f"| `{name}` |"))
        default = field.get_default(call_default_factory=True)
        if isinstance(default, BaseModel):  # a nested setting (actions): its JSON with every key
            default = default.model_dump(mode="json")
        if default not in ("", None, ()):
            default = list(default) if isinstance(default, tuple) else default
            assert f"`{json.dumps(default)}`" in row


def test_a_setting_without_a_meaning_stops_the_generator(monkeypatch) -> None:
    monkeypatch.delitem(CONFIG_MEANINGS, "map_label")
    with pytest.raises(ValueError, match="map_label"):
        docs_gen.configuration_page()


def test_every_command_model_has_a_section() -> None:
    page = docs_gen.cli_json_page()
    models: list[type[Output]] = [Refusal, *COMMAND_OUTPUTS.values()]
    for model in models:
        assert f"\n## {model.__name__}\n" in page


def test_an_answer_with_an_undeclared_key_fails_its_model() -> None:
    status = {
        "job_id": "j",
        "execution_arn": "arn",
        "status": "RUNNING",
        "current_state": "ReviewDocuments",
        "error": None,
        "cause": None,
        "started_at": None,
        "stopped_at": None,
        "elapsed_seconds": None,
        "redrive_count": 0,
        "redrive_date": None,
        "documents": dict.fromkeys(
            ("total", "succeeded", "rejected", "failed", "running", "pending", "results_stored"), 0
        ),
        "map_run": None,
        "approval": None,
    }
    assert isinstance(validate_output("status", status), StatusOutput)
    with pytest.raises(ValueError, match="surprise"):
        validate_output("status", {**status, "surprise": 1})
    refusal = validate_output("status", {"error": "no job", "error_type": "JobNotFound", "exit_code": 3})
    assert isinstance(refusal, Refusal)


@pytest.mark.parametrize(
    ("page", "name", "source", "render"), docs_gen.BLOCKS, ids=[block[1] for block in docs_gen.BLOCKS]
)
def test_the_committed_generated_block_is_what_the_code_generates(page, name, source, render) -> None:
    text = (docs_gen.DOCS_DIR / page).read_text(encoding="utf-8")
    assert docs_gen.with_block(text, name, source, render()) == text, f"docs/{page} is stale: make docs-gen"


def test_a_changed_or_missing_block_is_reported(tmp_path) -> None:
    for name, render in docs_gen.PAGES.items():
        (tmp_path / name).write_text(render(), encoding="utf-8")
    page, name, source, render = docs_gen.BLOCKS[0]
    fresh = docs_gen.with_block(
        (docs_gen.DOCS_DIR / page).read_text(encoding="utf-8"), name, source, render()
    )
    (tmp_path / page).write_text(fresh, encoding="utf-8")
    assert docs_gen.drifted(tmp_path, tmp_path) == []
    (tmp_path / page).write_text(fresh.replace("| `after_report` |", "| `after_lunch` |"), encoding="utf-8")
    assert docs_gen.drifted(tmp_path, tmp_path) == [page]
    (tmp_path / page).write_text("# no markers\n", encoding="utf-8")
    assert docs_gen.drifted(tmp_path, tmp_path) == [page]


def test_the_fault_point_table_has_a_row_per_registered_point() -> None:
    table = docs_gen.fault_points_table()
    for point in FAULT_POINTS:
        row = next(line for line in table.splitlines() if line.startswith(f"| `{point.name}` |"))
        assert f"| {point.step} |" in row
