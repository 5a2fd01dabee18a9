"""A job's budget on the local cloud, as a user runs it (`docagent demo --json`, a subprocess): the
budget stops the job with BudgetExceeded before it passes, a raised budget and a redrive finish it, with no
model call repeated and exactly the spend of the same documents run without a budget (a second job on the
demo's kept cloud)."""

from __future__ import annotations

import pytest

from docagent.operations.json_shapes import validate_output
from functions.storage import incoming_prefix
from tests.integration.test_demo import demo, docagent, kept_operator, stop_kept_cloud

# 10 plain-text documents: the stop comes after 3 or 4 (the reservation below), so 10 still leaves most of the
# job pending; the documents' format is not what this test is about. The default definition reads with Amazon
# Nova Lite first (issue #54): the local model's calls on the real-sized invoices cost about $0.00012 each
# (what Bedrock would bill: docs/cost.md, "Token counting") and are reserved at about $0.00028 (their input
# estimate and 800 output tokens): a budget of $0.0006 lets the first calls through and stops the job well
# before its end (with Claude Haiku 4.5 alone it was $0.012, at $0.0018 a call reserved at $0.0058).
DOCUMENTS = "10"
FORMATS = ("--formats", "txt,md")
BUDGET = 0.0006


def test_the_budget_stops_the_job_and_a_raised_budget_and_a_redrive_finish_it_at_the_same_spend(
    tmp_path,
) -> None:
    kept = tmp_path / "budget"
    summary, unstopped = budgeted_demo(kept)
    assert unstopped["budget"] is None and unstopped["budget_exceeded"] is None
    stop = summary["budget_exceeded"]
    assert stop is not None, "the budget did not stop the job"
    assert stop["error"] == "BudgetExceeded"
    assert stop["spent_usd"] <= BUDGET
    assert 0 < stop["documents_done"] < int(DOCUMENTS)
    assert stop["documents_done"] + stop["documents_pending"] == int(DOCUMENTS)
    assert stop["commands"] == [
        f"docagent budget {summary['job_id']} --max-usd N",
        f"docagent redrive {summary['job_id']}",
    ]
    # raised and redriven: finished, nothing called twice, the spend of the unstopped job to the nano-dollar
    assert summary["status"] == "SUCCEEDED" and summary["verified"]
    assert summary["redrive_count"] == 1
    assert summary["results"] == int(DOCUMENTS)
    assert summary["repeated_model_calls"] == 0
    assert summary["model_calls"] == unstopped["model_calls"]
    assert summary["model_cost_usd"] == unstopped["model_cost_usd"] > BUDGET
    ledger = summary["spend"]["budget"]
    assert ledger["spent_usd"] == summary["model_cost_usd"]
    assert (ledger["max_cost_usd"], ledger["reserved_usd"], ledger["stopped"]) == (1.0, 0.0, None)
    print(
        f"unstopped ${unstopped['model_cost_usd']}; stopped at ${stop['spent_usd']} of ${BUDGET} with "
        f"{stop['documents_done']} done, {stop['documents_pending']} pending; raised and redriven "
        f"${summary['model_cost_usd']} ({summary['model_calls']} calls, "
        f"{summary['repeated_model_calls']} repeated)"
    )


def budgeted_demo(kept) -> tuple[dict, dict]:
    """`docagent demo --max-cost-usd B --then-max-cost-usd 1 --keep`, what the operator sees of it, and the
    spend (`status`'s) of the same documents started again on the kept cloud without a budget: the
    unstopped job to compare with. (It was a second demo beside this one: a second local cloud and deploy
    for one job of ten documents.)"""
    try:
        summary = demo(
            kept,
            "--no-crash",
            "--documents",
            DOCUMENTS,
            *FORMATS,
            "--time-scale",
            "0.1",
            "--max-cost-usd",
            str(BUDGET),
            "--then-max-cost-usd",
            "1",
            "--keep",
        )
        check_the_operator_sees_the_spend(kept, summary)
        prefix = incoming_prefix(summary["job_id"])  # where the demo uploaded its documents
        start = ("start", "--job-id", "unbudgeted", "--prefix", prefix, "--wait")
        started = kept_operator(kept, summary, *start)
        assert started["final"]["status"] == "SUCCEEDED", started
        assert started["final"]["documents"]["total"] == int(DOCUMENTS)
        unstopped = kept_operator(kept, summary, "status", "unbudgeted")["spend"]
    finally:
        stop_kept_cloud(kept)
    return summary, unstopped


def check_the_operator_sees_the_spend(kept, summary: dict) -> None:
    """status, inspect and cost --from-job show the actual cost per job and per document; budget sets it (each
    in this process against the kept cloud, its answer checked against the command's documented shape)."""
    job_id = summary["job_id"]
    assert summary["kept"]["commands"][:3] == [
        f"docagent {name} {job_id}" for name in ("inspect", "logs", "trace")
    ]
    assert summary["cpu_seconds"] is None  # the kept cloud runs in a process of its own: not measured
    # A subprocess, as a user runs it: the kept cloud found by its state folder; the others in this process.
    status = docagent(kept, "status", job_id)
    validate_output("status", status)
    assert status["spend"]["model_cost_usd"] == summary["model_cost_usd"]
    assert len(status["spend"]["by_document"]) == int(DOCUMENTS)
    assert sum(status["spend"]["by_document"].values()) == pytest.approx(summary["model_cost_usd"])
    report = kept_operator(kept, summary, "inspect", job_id)
    assert report["spend"]["model_cost_usd"] == summary["model_cost_usd"]
    costs = {doc["document_id"]: doc["model_cost_usd"] for doc in report["document_details"]}
    assert costs == status["spend"]["by_document"] and all(cost > 0 for cost in costs.values())
    compared = kept_operator(kept, summary, "cost", "--from-job", job_id)
    assert compared["actual"]["model_cost_usd"] == summary["model_cost_usd"]
    assert compared["actual"]["batch_usd"] == pytest.approx(summary["model_cost_usd"] / 2, abs=1e-6)
    assert compared["estimate"]["model_cost_usd"] > 0
    changed = kept_operator(kept, summary, "budget", job_id, "--max-usd", "2")
    assert (changed["max_cost_usd"], changed["spent_usd"], changed["next"]) == (
        2.0,
        summary["model_cost_usd"],
        None,
    )
