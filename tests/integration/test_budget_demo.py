"""A job's budget on the local cloud, as a user runs it (`docagent demo --json`, a subprocess): the
budget stops the job with BudgetExceeded before it passes, a raised budget and a redrive finish it, with no
model call repeated and exactly the spend of the same job run without a budget."""

from __future__ import annotations

from tests.integration.test_demo import demo

DOCUMENTS = "20"
# The local model's calls cost about $0.00044 each and are reserved at about $0.0065 (their input estimate and
# 800 output tokens): a budget of $0.008 lets the first calls through and stops the job well before its end.
BUDGET = 0.008


def test_the_budget_stops_the_job_and_a_raised_budget_and_a_redrive_finish_it_at_the_same_spend(
    tmp_path,
) -> None:
    unstopped = demo(tmp_path / "unstopped", "--no-crash", "--documents", DOCUMENTS, "--time-scale", "0.1")
    assert unstopped["status"] == "SUCCEEDED" and unstopped["budget_exceeded"] is None

    summary = demo(
        tmp_path / "budget",
        "--no-crash",
        "--documents",
        DOCUMENTS,
        "--time-scale",
        "0.1",
        "--max-cost-usd",
        str(BUDGET),
        "--then-max-cost-usd",
        "1",
    )
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
    assert summary["model_cost_usd"] == unstopped["model_cost_usd"] > 0
    ledger = summary["spend"]["budget"]
    assert ledger["spent_usd"] == summary["model_cost_usd"]
    assert (ledger["max_cost_usd"], ledger["reserved_usd"], ledger["stopped"]) == (1.0, 0.0, None)
    print(
        f"unstopped ${unstopped['model_cost_usd']}; stopped at ${stop['spent_usd']} of ${BUDGET} with "
        f"{stop['documents_done']} done, {stop['documents_pending']} pending; raised and redriven "
        f"${summary['model_cost_usd']} ({summary['model_calls']} calls, "
        f"{summary['repeated_model_calls']} repeated)"
    )
