"""``docagent start --dry-run`` and the budget check before a start (docagent/operations/start_estimate.py),
against moto: a dry run validates and lists, prints the model cost and uploads, publishes and starts nothing;
a job whose estimate is above its max_cost_usd is refused before anything starts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import boto3
import pytest

from docagent import cli, project
from docagent.operations import start_estimate
from docagent.operations.context import OperatorContext
from docagent.operations.json_shapes import StartOutput
from docagent.operations.model_costs import mode, per_1000
from docagent.operations.sources import Limits
from stacks.config import DEFAULT_MODEL_ID
from tests.support import BUCKET
from tests.unit.test_operator_start import INVOICE, ctx, executions, run, uploaded

__all__ = ["ctx"]  # the fixture, reused
LITE = "us.amazon.nova-lite-v1:0"


def three_invoices(tmp_path: Path) -> Path:
    folder = tmp_path / "inbox"
    folder.mkdir()
    for number in range(3):
        (folder / f"inv-{number}.txt").write_text(INVOICE.replace("INV-1", f"INV-{number}"))
    return folder


def nothing_happened(context: OperatorContext, before: list[str]) -> None:
    """No execution, and the bucket as it was (the cloud fixture publishes the example definitions)."""
    assert executions(context) == [], "nothing started"
    assert uploaded("") == before, "nothing uploaded or published"


def test_a_dry_run_prints_the_estimate_and_uploads_and_starts_nothing(ctx, capsys, tmp_path):
    before = uploaded("")
    folder = three_invoices(tmp_path)
    code, answer = run(capsys, "start", "--job-id", "j-dry", "--from-dir", str(folder), "--dry-run")
    assert code == 0, answer
    output = StartOutput.model_validate(answer)  # the documented --json shape
    assert (output.dry_run, output.started, output.execution_arn, output.source.documents) == (
        True,
        False,
        None,
        3,
    )
    estimate = output.estimate
    assert estimate is not None and estimate.models == [DEFAULT_MODEL_ID] and estimate.read == "auto"
    assert [row.mode for row in estimate.per_1000] == ["text", "image", "visual"]
    text = per_1000(DEFAULT_MODEL_ID, mode("text")).on_demand_usd
    assert text is not None and estimate.model_usd == pytest.approx(3 * text / 1000, abs=1e-4)
    assert estimate.max_cost_usd is None
    nothing_happened(ctx, before)

    # the human view: the job, the estimate, and the cost per 1,000 both ways
    capsys.readouterr()
    assert cli.main(["start", "--job-id", "j-dry", "--from-dir", str(folder), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "--dry-run: nothing uploaded or started" in printed
    assert (
        f"{DEFAULT_MODEL_ID} text: ${text:,.2f} on-demand" in printed
        and "batch per 1,000 documents" in printed
    )
    nothing_happened(ctx, before)


def test_a_dry_run_of_a_definition_folder_prices_its_models_without_publishing_it(ctx, capsys, tmp_path):
    before = uploaded("")
    job = tmp_path / "cascade"
    shutil.copytree(project.ROOT / "examples" / "invoices", job)
    definition = json.loads((job / "job.json").read_text())
    (job / "job.json").write_text(
        json.dumps({**definition, "models": [LITE, DEFAULT_MODEL_ID], "read": "visual"})
    )
    folder = three_invoices(tmp_path)
    code, answer = run(capsys, "start", "--from-dir", str(folder), "--job", str(job), "--dry-run")
    assert code == 0, answer
    estimate = StartOutput.model_validate(answer).estimate
    assert estimate is not None and estimate.models == [LITE, DEFAULT_MODEL_ID] and estimate.read == "visual"
    assert [row.model_id for row in estimate.per_1000] == [LITE] * 3 + [DEFAULT_MODEL_ID] * 3
    visual = per_1000(LITE, mode("visual")).on_demand_usd  # the cheap model reads every document
    assert visual is not None and estimate.model_usd == pytest.approx(3 * visual / 1000, abs=1e-4)
    assert answer["definition"].startswith(f"{definition['name']}@")
    nothing_happened(ctx, before)  # the folder was validated, not published


def test_a_job_whose_estimate_is_above_its_budget_is_refused_before_anything_starts(ctx, capsys, tmp_path):
    before = uploaded("")
    folder = three_invoices(tmp_path)
    argv = ["start", "--job-id", "j-budget", "--from-dir", str(folder)]
    code, refused = run(capsys, *argv, "--max-cost-usd", "0.001")
    assert code == 2 and refused["error_type"] == "EstimateOverBudget"
    text = per_1000(DEFAULT_MODEL_ID, mode("text")).on_demand_usd  # three text documents, the one model
    assert text is not None and 3 * text / 1000 > 0.001
    expected = round(3 * text / 1000, 4)
    assert "\n" not in refused["error"] and f"${expected:.4f}" in refused["error"]
    assert "$0.0010" in refused["error"]
    assert (refused["estimate_usd"], refused["max_cost_usd"]) == (expected, 0.001)
    nothing_happened(ctx, before)

    # a dry run reports the same job over its budget and exits 0
    code, answer = run(capsys, *argv, "--max-cost-usd", "0.001", "--dry-run")
    assert code == 0 and answer["estimate"]["max_cost_usd"] == 0.001
    nothing_happened(ctx, before)

    # the deployment's default_max_cost_usd is the budget of a request that sets none
    limits = Limits(max_document_bytes=4000, max_documents=10, default_max_cost_usd=0.005)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(start_estimate, "deployed_limits", lambda context: limits)
        code, refused = run(capsys, *argv)
    assert code == 2 and refused["error_type"] == "EstimateOverBudget" and refused["max_cost_usd"] == 0.005
    nothing_happened(ctx, before)

    # within its budget the job starts
    code, started = run(capsys, *argv, "--max-cost-usd", "0.01")
    assert code == 0 and started["started"] is True and started["estimate"]["model_usd"] == expected
    assert executions(ctx) == ["j-budget"]
    assert (
        len(boto3.client("s3").list_objects_v2(Bucket=BUCKET, Prefix="incoming/j-budget/")["Contents"]) == 3
    )
