"""``docagent demo --max-cost-usd B [--then-max-cost-usd N]``: the job's budget stops it (BudgetExceeded);
with ``--then-max-cost-usd`` the demo raises the budget (as ``docagent budget JOB --max-usd N`` does) and
redrives the job, which ends with the documents done not called again and the spend of an unstopped job."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from docagent.operations.spend import job_spend, ledger_table
from functions import budget

if TYPE_CHECKING:
    from docagent.drills.local_job import LocalJob


@dataclass(frozen=True)
class DemoBudget:
    """The demo job's budget, and the one it is raised to after it stopped (None: not raised)."""

    max_cost_usd: float
    then_max_cost_usd: float | None = None

    def job_options(self) -> dict[str, Any]:
        return {"max_cost_usd": self.max_cost_usd}


def stopped_by_budget(job: LocalJob) -> dict[str, Any] | None:
    """The BudgetExceeded view of a failed job: spent, budget, documents done and pending, how to continue."""
    job.records.refresh()
    exceeded = job_spend(job.records).budget_exceeded
    return None if exceeded is None else exceeded.model_dump(mode="json")


def after_budget(
    job: LocalJob, demo_budget: DemoBudget | None, status: str, follow: Callable[[], str]
) -> tuple[str, dict[str, Any] | None]:
    """The job's status and, if its budget stopped it, the stop's figures; when a higher budget is given, the
    budget is raised, the job redriven and followed to its end first (the status is the redriven job's)."""
    if status == "SUCCEEDED" or demo_budget is None:
        return status, None
    exceeded = stopped_by_budget(job)
    if exceeded is None or demo_budget.then_max_cost_usd is None:
        return status, exceeded
    budget.set_budget(job.job_id, demo_budget.then_max_cost_usd, ledger_table(job.ctx))
    job.sfn.redrive_execution(executionArn=job.execution_arn)
    return follow(), exceeded


def spend_summary(job: LocalJob) -> dict[str, Any]:
    """The demo summary's spend: the actual model cost (per job, per document, per class) and the budget."""
    return job_spend(job.records).model_dump(mode="json", exclude={"by_document"})
