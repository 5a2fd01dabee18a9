"""`docagent eval` as a user runs it (--json): a labelled set through the real pipeline on a local cloud (a
subprocess), a baseline saved, the unchanged run passes the gate and a run whose local model corrupts one
field fails it, naming that field, the documents that changed and the versions compared (those two runs are
jobs on the session's cloud, scored with `eval --from-job`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from docagent.evaluation import labelled_sets as samples
from docagent.localcloud.bedrock.model_faults import parse_model_faults, set_model_faults, wrong_value
from tests.integration.test_demo import docagent as run_docagent

pytestmark = pytest.mark.integration
DOCUMENTS = 4  # the gate names the corrupted field and every changed document at any size


def eval_command(tmp_path, *arguments: str, expect: int = 0) -> dict:
    return run_docagent(tmp_path / "state", "eval", *arguments, expect=expect)


def test_a_corrupted_field_fails_the_gate_and_the_unchanged_run_passes(docagent, customers, cloud, tmp_path):
    """The baseline is `eval --samples` run as a user runs it (a subprocess, its own local cloud); the runs
    the gate compares with it are the same documents run again, on the session's cloud, scored with
    `eval --from-job` (the same scoring and gate: a run of its own cloud each cost ~4 s of CPU more)."""
    labelled = tmp_path / "samples"  # as `eval --write-samples` writes it (tests/unit/test_evaluation.py)
    samples.write_samples(labelled, DOCUMENTS)
    baseline = tmp_path / "baseline.json"
    first = eval_command(tmp_path, "--samples", str(labelled), "--save-baseline", str(baseline))
    run = first["run"]
    assert run["mode"] == "labels" and "not a model" in run["mode_meaning"]
    assert (run["samples"], run["results_matched"]) == (DOCUMENTS, DOCUMENTS)
    fields = {f["path"]: f for f in run["fields"]}
    assert fields["invoice_number"]["rates"]["f1"] == 1.0
    assert fields["invoice_date"]["comparator"] == "date" and fields["amount"]["comparator"] == "number"
    assert run["usage"]["model_calls"] == DOCUMENTS and run["usage"]["cost_usd"] > 0
    assert run["definition"]["prompt_version"] and run["definition"]["model_id"]
    assert first["written"] == [str(baseline)]

    def rerun(job_id: str, *arguments: str, faults: str | None = None) -> tuple[int, dict]:
        """The labelled documents run again as job ``job_id`` (under ``faults``), scored against the
        baseline."""
        set_model_faults(cloud.endpoint, parse_model_faults(faults) if faults else None)
        try:
            code, started = docagent("start", "--job-id", job_id, "--from-dir", str(documents), "--wait")
        finally:
            set_model_faults(cloud.endpoint, None)
        assert code == 0, started
        return docagent(
            "eval", "--from-job", job_id, "--samples", str(labelled), "--baseline", str(baseline), *arguments
        )

    documents = unlabelled(labelled, tmp_path / "documents")
    code, _ = docagent("local", "labels", str(labelled))  # the model answers them from their labels, as above
    assert code == 0
    report = tmp_path / "report"
    code, same = rerun("eval-gate-unchanged", "--out", str(report))
    assert code == 0 and same["gate"]["passed"] and same["gate"]["regressions"] == [], same
    plots = ["change.png", "field-f1.png", "reliability.png", "scores.png"]
    assert sorted(os.listdir(report)) == sorted(["eval.json", "eval.md", *plots])

    code, worse = rerun("eval-gate-corrupted", faults="corrupt=invoice_number")
    assert code == 1, worse
    gate = worse["gate"]
    assert not gate["passed"]
    assert [r["path"] for r in gate["regressions"]] == ["invoice_number"]
    assert gate["regressions"][0]["current_f1"] == 0.0
    changed = {d["sample"]: d["newly_wrong"] for d in gate["changed_documents"]}
    assert len(changed) == DOCUMENTS and set(map(tuple, changed.values())) == {("invoice_number",)}
    assert gate["baseline"] == run["definition"] == gate["current"]
    wrong = worse["run"]["documents"][0]["wrong"]
    assert any(
        o["path"] == "invoice_number" and o["extracted"] == wrong_value(o["expected"]) != o["expected"]
        for o in wrong
    )


def unlabelled(labelled: Path, documents: Path) -> Path:
    """What a user uploads: the labelled set's documents without their labels (in ``documents``)."""
    documents.mkdir()
    for path in labelled.iterdir():
        if not path.name.endswith(samples.LABEL_SUFFIX):
            shutil.copyfile(path, documents / path.name)
    return documents


def test_from_job_scores_a_job_that_already_ran_matching_documents_by_key(docagent, customers, tmp_path):
    labelled = tmp_path / "samples"
    samples.write_samples(labelled, 4)
    documents = unlabelled(labelled, tmp_path / "documents")
    code, started = docagent("start", "--job-id", "eval-from-job", "--from-dir", str(documents), "--wait")
    assert code == 0, started
    code, answer = docagent("eval", "--from-job", "eval-from-job", "--samples", str(labelled))
    assert code == 0, answer
    run = answer["run"]
    assert (run["job_id"], run["mode"], run["samples"], run["results_matched"]) == (
        "eval-from-job",
        "labels",
        4,
        4,
    )
    assert {d["key"] for d in run["documents"]} == {
        f"incoming/eval-from-job/{p.name}" for p in documents.iterdir()
    }
    assert {f["path"]: f["rates"]["f1"] for f in run["fields"]}["invoice_number"] == 1.0
    assert run["usage"]["model_calls"] == 4
    code, answer = docagent("eval", "--from-job", "eval-no-such-job", "--samples", str(labelled))
    assert (code, answer["error_type"]) == (3, "JobNotFound")


CHEAP = "anthropic.claude-3-haiku-20240307-v1:0"


def test_the_cascade_is_measured_beside_the_strong_model_alone(tmp_path):
    """`eval --cascade CHEAP` with the cheap model's invoice dates all moved a day (valid, not in the
    documents): every date is escalated to the strong model, so the cascade's F1 is the strong model's, the
    cheap model's own is lower, and the cost of both calls is reported per model."""
    labelled = tmp_path / "samples"
    samples.write_samples(labelled, DOCUMENTS)
    answer = eval_command(
        tmp_path, "--samples", str(labelled), "--cascade", CHEAP, "--model-faults", "corrupt=invoice_date"
    )
    comparison = answer["cascade"]
    alone, cheap, cascade = comparison["strong_alone"], comparison["cheap_alone"], comparison["cascade"]
    strong = comparison["strong_model"]
    assert comparison["model_faults"] == f"corrupt=invoice_date,models={CHEAP}"
    assert alone["calls_by_model"] == {strong: DOCUMENTS} and alone["f1"] == 1.0
    assert cascade["calls_by_model"] == {CHEAP: DOCUMENTS, strong: DOCUMENTS}  # every date escalated
    assert cascade["f1"] == 1.0 and cascade["accepted"] == DOCUMENTS
    assert cheap["f1"] < 1.0 and cheap["accepted"] is None
    assert cascade["cost_by_model"][CHEAP] == cheap["cost_usd"] > 0
    assert cascade["cost_usd"] == pytest.approx(sum(cascade["cost_by_model"].values()))
    assert comparison["cost_share"] == pytest.approx(cascade["cost_usd"] / alone["cost_usd"], abs=1e-4)
    assert answer["run"]["job_id"] == cascade["job_id"] != alone["job_id"]
