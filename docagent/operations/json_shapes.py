"""The shapes of the operator commands' ``--json`` output, as pydantic models.

The commands build their output as plain data; these models are its contract. docs/reference/cli-json.md is
generated from them (``make docs-gen``), and the integration tests validate every ``--json`` answer they
read against the model of its command (tests/integration/conftest.py, ``docagent``), so a key added to or
dropped from an answer without its model fails there. Nested objects without a model of their own are
described in words (docs/operating.md). The base models are json_output.py's; the kit's commands'
(definition, review) are kit_shapes.py's; this module holds the job commands' and registers them all.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from docagent.operations.json_output import Output, Refusal
from docagent.operations.kit_shapes import (
    DefinitionListOutput,
    DefinitionPublishOutput,
    DefinitionShowOutput,
    DefinitionValidateOutput,
    ReviewDecisionOutput,
    ReviewExportOutput,
    ReviewListOutput,
    ReviewSplitOutput,
)


class DocumentCounts(Output):
    total: int = Field(description="documents in the job")
    succeeded: int = Field(description="children that succeeded (extracted, in review or rejected)")
    rejected: int = Field(description="of the succeeded ones, documents that were rejected")
    review: int = Field(0, description="of the succeeded ones, documents sent to a person (review)")
    failed: int = Field(description="children failed, timed out or aborted")
    running: int
    pending: int
    results_stored: int = Field(description="results stored in S3")


class MapRunSummary(Output):
    map_run_arn: str | None
    status: str | None
    redrive_count: int


# ---- spend (docagent/operations/spend.py; docs/design.md, "Budget")


class BudgetView(Output):
    """The job's budget ledger (docs/design.md, "Budget")."""

    max_cost_usd: float
    spent_usd: float = Field(description="the settled cost of the finished model calls")
    reserved_usd: float = Field(description="held by calls in flight")
    settled_calls: int
    calls_in_flight: int
    warned: bool = Field(description="the warning at 80 % of the budget went out")
    stopped: str | None = Field(description="why the budget refused a call, until the budget is changed")


class BudgetExceededView(Output):
    """Why a stopped job stopped, and how to continue it."""

    error: str = Field(description="BudgetExceeded")
    spent_usd: float
    max_cost_usd: float
    documents_done: int
    documents_pending: int
    commands: list[str] = Field(description="the commands that continue the job")


class JobSpend(Output):
    """The job's actual model cost, from its journal, priced with functions/spend.py."""

    model_cost_usd: float
    per_document_usd: float = Field(description="the mean over the documents with a model call")
    by_class: dict[str, float] = Field(
        description="by the class of the section (or document) each call read; a packet's page "
        "classification: (packet)"
    )
    by_document: dict[str, float]
    model_calls: int
    input_tokens: int
    output_tokens: int
    unpriced_models: list[str] = Field(description="models with no dated price: not in the figures")
    prices_as_of: str
    budget: BudgetView | None = Field(description="null: the job has no budget")
    budget_exceeded: BudgetExceededView | None


class ReviewWaitView(Output):
    """A job's wait for its review queue (jobs/{job}/review-wait.json, docs/design.md "Review")."""

    status: Literal["waiting", "released"]
    documents: int = Field(description="the review queue's length (its items: documents, packets' sections)")
    decided: int = Field(description="queued items with a decision")
    undecided: list[str] = Field(
        description="queued items without a decision, in job order (DOCUMENT, or DOCUMENT#SECTION)"
    )
    requested_at: str
    released_by: str | None = Field(description="WaitForReview (decided already) or reviewer NAME")
    released_at: str | None


class StatusOutput(Output):
    """``docagent status JOB``: the execution, its current state and the documents' progress."""

    job_id: str
    execution_arn: str
    status: str = Field(description="RUNNING, SUCCEEDED, FAILED, TIMED_OUT or ABORTED")
    current_state: str | None = Field(description="the state running now, or where the job stopped")
    error: str | None
    cause: str | None
    started_at: str | None = Field(description="ISO 8601")
    stopped_at: str | None
    elapsed_seconds: float | None
    redrive_count: int
    redrive_date: str | None
    documents: DocumentCounts
    map_run: MapRunSummary | None
    approval: str | None = Field(description="pending, approved, rejected, or null without approval")
    review_wait: ReviewWaitView | None = Field(None, description="null: the job never waited for review")
    waiting_for_review: bool = Field(False, description="running, in WaitForReview")
    spend: JobSpend | None = Field(None, description="the actual model cost and the budget")


class StartSource(Output):
    kind: Literal["prefix", "manifest", "from_dir"]
    bucket: str
    prefix: str | None
    documents: int
    bytes: int
    uploaded: int = Field(description="files uploaded by --from-dir")
    skipped: list[dict[str, str]] = Field(
        description='--from-dir: entries not uploaded, and why: [{"path", "reason"}] (links out of the '
        "folder, broken links, loops, what is no regular file)"
    )
    too_large: list[str] = Field(
        description="documents over MAX_DOCUMENT_BYTES: started anyway, the job rejects each "
        "(DocumentTooLarge)"
    )


class ModelCost(Output):
    """What 1,000 documents cost in one model's calls read one way (docagent/operations/model_costs.py)."""

    model_id: str
    mode: Literal["text", "image", "visual"] = Field(description="how the pages reach the model")
    input_tokens: int = Field(description="of 1,000 documents, from the measured tokens a document or page")
    output_tokens: int
    priced: bool = Field(description="false: functions/spend.py has no dated price for the model")
    reads: bool | None = Field(description="Converse lets the model read this way; null: not recorded")
    on_demand_usd: float | None
    batch_usd: float | None


class StartEstimate(Output):
    """``start``'s estimate before anything starts (--dry-run prints it; a job over its budget is refused)."""

    documents: int
    models: list[str] = Field(
        description="the definition's models (cheap, strong) or the deployment's model_id"
    )
    read: str = Field(description="the definition's read mode (auto: priced as text)")
    model_usd: float | None = Field(
        description="the first model reading every document, on-demand: a floor (a cascade's strong model "
        "comes on top for the documents it is asked about)"
    )
    max_cost_usd: float | None = Field(description="the job's budget; null: none")
    per_1000: list[ModelCost]


class StartOutput(Output):
    """``docagent start``: the job started (or found already started with the same input)."""

    job_id: str
    job_id_derived: bool = Field(
        description="true: no --job-id; derived from the definition's version and the documents (the same "
        "documents started again are the same job)"
    )
    execution_arn: str | None = Field(description="null with --dry-run of a job not started")
    started: bool = Field(description="false: the same request had started it before (or --dry-run)")
    status: str | None = Field(description="null with --dry-run of a job not started")
    started_at: str | None
    request: dict[str, Any] = Field(description="the execution input (docs/design.md: JobRequest)")
    request_sha256: str
    source: StartSource
    final: StatusOutput | None = Field(description="the status after --wait, else null")
    warnings: list[str] = Field(description="before a new job: e.g. the customers table is empty")
    definition: str | None = Field(
        None,
        description="--definition/--job: the definition's current version (name@sha12), which PrepareJob "
        "pins; null: the deployment's default_definition",
    )
    dry_run: bool = Field(False, description="--dry-run: validated and listed; nothing uploaded or started")
    estimate: StartEstimate | None = Field(None, description="the model cost before the start")


class JobRow(Output):
    job_id: str
    status: str
    documents: int | None
    started_at: str | None
    stopped_at: str | None
    redrive_count: int
    error: str | None


class ListOutput(Output):
    """``docagent list``: jobs, newest first."""

    status_filter: str | None
    count: int
    jobs: list[JobRow]


class ApprovalOutput(Output):
    """``docagent approve JOB`` / ``docagent reject JOB``: the decision recorded."""

    job_id: str
    decision: Literal["approved", "rejected"]
    decided_by: str
    decided_at: str
    reason: str | None
    approval_key: str = Field(description="the S3 key of the job's approval record")
    execution_arn: str


class PreflightCheck(Output):
    name: str
    status: Literal["ok", "warn", "fail"]
    detail: str
    fix: str = Field(description="what to do when the check is not ok; empty when it is")


class EstimatePace(Output):
    documents_per_minute: float
    bound_by: Literal["bedrock_quotas", "map_concurrency", "lambda_concurrency"]
    bedrock_quotas: float = Field(description="documents a minute the model's stated quotas allow")
    map_concurrency: float = Field(description="documents a minute the Map's children in flight carry")
    lambda_concurrency: float = Field(
        description="documents a minute the account's Lambda concurrency carries"
    )


class OnDemandEstimate(Output):
    seconds: int
    duration: str
    within_job_timeout: bool = Field(description="the job ends before job_timeout_seconds (else TIMED_OUT)")
    pace: EstimatePace
    usd: float


class BatchEstimate(Output):
    possible: bool = Field(description="at least Bedrock's minimum of records per batch job")
    batch_jobs: int = Field(description="Bedrock batch jobs at the records per job")
    waves: int = Field(description="batch_jobs in waves of batch_jobs_in_flight")
    batch_jobs_at_largest_documents: int = Field(description="if every document were max_document_bytes")
    waves_at_largest_documents: int
    batch_jobs_in_flight: int
    records_per_batch_job: int
    seconds_at_most: int = Field(description="each wave at its 24 h batch job timeout: an upper bound")
    duration_at_most: str
    within_job_timeout: bool = Field(description="seconds_at_most is within job_timeout_seconds")
    usd: float | None


class JobEstimate(Output):
    """How long a job of N documents takes at the stated quotas and what it costs (job_estimate.py)."""

    documents: int
    over_max_documents: bool
    job_timeout_seconds: int
    on_demand: OnDemandEstimate
    batch: BatchEstimate
    cost_measured: bool = Field(description="priced with a measured usage file (--usage): the whole job")
    cost_covers: str
    prices_as_of: str
    verdict: str
    summary: str = Field(description="the estimate in one line, as the human view prints it")
    per_1000: list[ModelCost] = Field(
        description="1,000 documents' model cost by model (--definition's models, else model_id) and reading "
        "mode, on-demand and batch"
    )


class PreflightOutput(Output):
    """``docagent preflight``: one line per check of a deployment (or of the local cloud), and the estimate
    of a job of ``--documents`` documents."""

    ok: bool = Field(description="no check failed")
    target: Literal["aws", "local"]
    region: str
    model_id: str
    checks: list[PreflightCheck]
    estimate: JobEstimate | None = Field(
        description="the job of --documents N (docagent/drills/job_estimate.py)"
    )


class LogEvent(Output):
    timestamp: str
    timestamp_ms: int
    function: str
    log_group: str
    log_stream: str | None
    level: str = Field(description="the line's level, or RUNTIME for the Lambda runtime's own lines")
    message: str
    document_id: str | None
    request_id: str | None
    record: dict[str, Any] | None = Field(description="the parsed JSON log line, or null")


class LogsOutput(Output):
    """``docagent logs JOB``: the job's structured log lines from each function's log group."""

    job_id: str
    document_id: str | None
    function: str | None
    count: int
    events: list[LogEvent]


class RedriveReason(Output):
    code: str
    message: str


class RedriveOutput(Output):
    """``docagent redrive JOB``: eligibility, what would run again, and the redrive (unless --dry-run)."""

    job_id: str
    execution_arn: str
    status: str
    eligible: bool
    reasons: list[RedriveReason] = Field(description="why the job cannot be redriven (empty when it can)")
    warnings: list[str]
    failed_state: str | None
    error: str | None = Field(description="the execution's error, or why the redrive was refused")
    redrive_count: int
    history_events: int
    map_run: MapRunSummary | None
    rerun_all: bool = Field(description="a new Map Run would run every document again (docs/semantics.md M4)")
    will_run: dict[str, Any] = Field(
        description='{"states", "conditional_states", "documents": [...], "document_count", '
        '"documents_with_results"}'
    )
    versions: dict[str, Any] = Field(
        description='{"pinned", "deployed", "differences": [{"field", "pinned", "deployed", "blocking"}], '
        '"drift", "note", "definition": {"name", "sha256", "version", "present", "current_sha256", '
        '"current"} or null}: a job keeps its pinned definition; a missing bundle refuses the redrive'
    )
    armed_fault: dict[str, Any] | None = Field(description="a fault drill still armed for the redrive")
    dry_run: bool
    redriven: bool
    already_redriven: bool = Field(
        False, description="another command redrove the job first (this one did not: redriven is false)"
    )
    redrive_date: str | None
    drift_recorded: str | None = Field(description="the drift.json key, when --allow-version-drift")
    final: StatusOutput | None = Field(description="the status after --wait, else null")
    exit_code: int | None = Field(None, description="2 when refused")
    model_breaker_cleared: bool | None = Field(None, description="the job's model breaker was removed")


class TraceOutput(Output):
    """``docagent trace JOB``: the job's one trace (job → document → step → model call)."""

    job_id: str
    trace_id: str
    execution_arn: str | None
    status: str | None
    started_at: str | None
    stopped_at: str | None
    redrive_count: int
    document_id: str | None
    events: list[dict[str, Any]] = Field(description='[{"type", "timestamp", "error", "cause"}]')
    steps: list[dict[str, Any]] = Field(
        description='[{"step", "status", "attempts", "killed_attempts", "spans"}]'
    )
    documents: list[dict[str, Any]] = Field(description="one per document shown, with its attempts' spans")
    counts: dict[str, int] = Field(description="documents by status")
    killed_attempts: int
    spans: int
    xray: dict[str, Any] | None = Field(description='{"filter_expression", "trace_ids"} on AWS, else null')


class ConsoleOutput(Output):
    """``docagent console``: printed once it serves (it serves until Ctrl-C)."""

    url: str = Field(description="http://127.0.0.1:PORT")
    where: str = Field(description="the local cloud's endpoint, or AWS and its region")
    stack_name: str


class BudgetOutput(Output):
    """``docagent budget JOB --max-usd N``: the job's budget after the change."""

    job_id: str
    max_cost_usd: float
    spent_usd: float
    reserved_usd: float
    status: str
    next: str | None = Field(description="the command that continues a failed job")


# The model of each command's --json answer, by the command's words on the command line.
COMMAND_OUTPUTS: dict[str, type[Output]] = {
    "start": StartOutput,
    "status": StatusOutput,
    "list": ListOutput,
    "redrive": RedriveOutput,
    "logs": LogsOutput,
    "trace": TraceOutput,
    "approve": ApprovalOutput,
    "reject": ApprovalOutput,
    "preflight": PreflightOutput,
    "definition validate": DefinitionValidateOutput,
    "definition publish": DefinitionPublishOutput,
    "definition list": DefinitionListOutput,
    "definition show": DefinitionShowOutput,
    "review accept": ReviewDecisionOutput,
    "review reject": ReviewDecisionOutput,
    "review list": ReviewListOutput,
    "review export": ReviewExportOutput,
    "review split": ReviewSplitOutput,
    "console": ConsoleOutput,
    "budget": BudgetOutput,
}


def validate_output(command: str, payload: dict[str, Any]) -> Output | None:
    """Check one --json answer against its command's model (a refusal against Refusal); None: no model.
    ``command``: the command's first words (``definition publish``; ``start --job`` is ``start``)."""
    if "error_type" in payload:
        return Refusal.model_validate(payload)
    model = COMMAND_OUTPUTS.get(command) or COMMAND_OUTPUTS.get(command.split(" ", maxsplit=1)[0])
    return None if model is None else model.model_validate(payload)
