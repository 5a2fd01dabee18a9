"""Pydantic models of every payload and stored object in docs/design.md."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

from functions.fields import row_values

# A job id is also the execution's name and a command-line argument: it may not start with '-', or the
# operator's commands would take it for an option.
JOB_ID_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,79}$"
JOB_ID_RULE = "letters, digits, '-' and '_', 1-80, not starting with '-'"
DOCUMENT_ID_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$"

# Converse's per-document limits (looked up 2026-12-01: AWS docs, Bedrock API Reference "Message": "You can
# include up to five documents. Each document's size must be no more than 4.5 MB" and "up to 20 images. Each
# image's size, height, and width must be no more than 3.75 MB, 8000 px, and 8000 px"; Bedrock User Guide
# "API restrictions": "Claude requires PDF documents to be a maximum of 100 pages per request"). docagent
# sends one document and no image per call; a PDF over 100 pages is Bedrock's refusal of that document.
MAX_CONVERSE_DOCUMENT_BYTES = 4_500_000
MAX_CONVERSE_PDF_PAGES = 100
# The document limits' defaults: the stack's config (stacks/config.py), the functions' settings and the
# operator's checks before a job starts all start from these. A document is as large as Converse takes one.
DEFAULT_MAX_DOCUMENT_BYTES = MAX_CONVERSE_DOCUMENT_BYTES
DEFAULT_MAX_DOCUMENTS = 100_000
# S3's minimum multipart part size (as of 2026-11, AWS docs "Amazon S3 multipart upload limits": 5 MiB to
# 5 GiB, no minimum for the last part): each part of a job's items but the last holds at least this much.
DEFAULT_ITEMS_PART_MIN_BYTES = 5 * 1024 * 1024


FaultPointName = Literal[
    "before_model_call",
    "after_model_call",
    "before_store_result",
    "after_store_result",
    "before_action",
    "after_action_request",
    "after_action",
    "before_report",
    "after_report",
    "before_verify",
]

# extracted: accepted (every check passed); review: a check with on_fail "review" failed, none with "reject".
DocumentStatus = Literal["extracted", "review", "rejected"]
# What a model call is for: the class of a document (classify), or its fields (extract).
CallPurpose = Literal["extract", "classify"]
# The Converse document formats (functions/documents.py); ModelCallOutcome: a finished call's outcome.
DocumentFormat = Literal["pdf", "csv", "doc", "docx", "xls", "xlsx", "html", "txt", "md"]
ModelCallOutcome = Literal["ok", "ExtractionFailed", "DocumentUnreadable", "DocumentTooLong"]
# How a job's model calls are made (docs/batch.md): one Converse call per document (on_demand), one Bedrock
# batch inference job for the whole job (batch: about half the price, hours of latency), or batch when the job
# is large enough for it to pay off (auto). InferenceMode: how one finished call was made (priced by it).
Inference = Literal["on_demand", "batch", "auto"]
InferenceMode = Literal["on_demand", "batch"]


def utc_now() -> str:
    """An ISO-8601 UTC timestamp with second precision."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class _Strict(BaseModel):
    """Refuses unknown fields so a typo in a payload is an error, not a silently ignored key."""

    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------------------------- job request


class FaultSpec(_Strict):
    """Where and how to inject a fault (only honoured when FAULT_INJECTION_ENABLED=true)."""

    point: FaultPointName
    document_index: int | None = Field(None, ge=0)
    action: str | None = Field(
        None, description="at the action points: fire only for this action (default: every action)"
    )
    mode: Literal["exit", "raise", "hang"] = "raise"
    until_retry: int | None = Field(None, ge=0, description="fire only while retry_count < until_retry")
    until_redrive: int | None = Field(
        None, ge=0, description="fire only while the execution's redrive count < until_redrive"
    )


class JobOptions(_Strict):
    """The request's options, normalised: every key present."""

    fault: FaultSpec | None = None
    require_approval: bool = Field(
        False, description="wait for `docagent approve` before the actions (the RequestApproval step)"
    )
    max_cost_usd: float | None = Field(
        None,
        gt=0,
        description="the job's budget in US dollars: no model call starts that would pass it",
    )
    inference: Inference = Field(
        "on_demand",
        description="on_demand, batch (Bedrock batch inference) or auto (batch above its minimum)",
    )

    @model_validator(mode="before")
    @classmethod
    def _legacy_approval_key(cls, value: Any) -> Any:
        """``approval`` was reserved (always null) before ``require_approval``: accept it when null, so
        requests and events stored before the change still validate; anything else is a mistake."""
        if isinstance(value, dict) and "approval" in value:
            if value["approval"] is not None:
                raise ValueError("'approval' is no longer used: set 'require_approval': true")
            value = {name: item for name, item in value.items() if name != "approval"}
        return value


class JobRequest(_Strict):
    """The execution input: exactly one of ``prefix`` or ``documents``."""

    job_id: str = Field(pattern=JOB_ID_PATTERN)
    prefix: str | None = Field(None, min_length=1, max_length=1024)
    documents: list[Annotated[str, Field(min_length=1, max_length=1024)]] | None = None
    bucket: str | None = Field(None, min_length=3, max_length=63)
    # The published job definition to run (functions/definition.py), by name; null: the deployment's
    # DEFAULT_DEFINITION. PrepareJob pins the version that is current when the job starts.
    definition: str | None = Field(None, pattern=r"^[a-z0-9][a-z0-9-]{0,62}$")
    options: JobOptions = Field(default_factory=JobOptions)

    @model_validator(mode="after")
    def _exactly_one_source(self) -> JobRequest:
        if (self.prefix is None) == (self.documents is None):
            raise ValueError("exactly one of 'prefix' or 'documents' is required")
        if self.prefix is not None and not self.prefix.endswith("/"):
            raise ValueError("'prefix' must end with '/'")
        if self.documents is not None and len(set(self.documents)) != len(self.documents):
            raise ValueError("'documents' lists the same key more than once")
        return self


class ManifestEntry(_Strict):
    """One item of items.json, pinned without reading the document: ``version_id`` (versioned bucket) or
    ``etag`` (the object's ETag at listing time); ``size``/``version_id``/``etag`` are null when the object
    was missing. ``sha256`` is set only by manifests from before pinning (the child hashes what it reads)."""

    document_id: str = Field(pattern=DOCUMENT_ID_PATTERN)
    key: str = Field(min_length=1)
    index: int = Field(ge=0)
    size: int | None = Field(None, ge=0)
    sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    version_id: str | None = Field(None, min_length=1, max_length=1024)
    etag: str | None = Field(None, min_length=1, max_length=1024)


class JobVersions(_Strict):
    """What a job is pinned to, so results are reproducible and explainable."""

    model_id: str
    prompt_version: str
    prompt_sha256: str
    code_version: str
    created_at: str
    # The job definition (functions/definition.py) the job runs, by name and content hash: every step reads
    # that bundle (storage.get_definition). Null only in jobs prepared before definitions existed.
    definition: str | None = None
    definition_sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")


class PreparedJob(_Strict):
    """prepare_job's output (the Distributed Map reads ``bucket``/``items_key``)."""

    job_id: str = Field(pattern=JOB_ID_PATTERN)
    bucket: str
    manifest_key: str
    items_key: str
    document_count: int = Field(ge=1)
    options: JobOptions
    versions: JobVersions


class JobInfo(_Strict):
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    source_bucket: str
    prefix: str | None
    request_sha256: str


class JobManifest(_Strict):
    """jobs/{job_id}/manifest.json: written last (by SealJob), never changed afterwards. A summary: the
    entries are in ``parts`` (JSON Lines, storage.manifest_entries reads them); manifests from before the
    paged listing carry them inline in ``entries`` instead."""

    job: JobInfo
    versions: JobVersions
    entries: list[ManifestEntry] = Field(default_factory=list)
    parts: list[str] = Field(default_factory=list)
    document_count: int | None = Field(None, ge=0)
    items_key: str | None = None

    @property
    def count(self) -> int:
        return len(self.entries) if self.document_count is None else self.document_count


class ListingCursor(_Strict):
    """Where the listing of a job stands, carried by the state machine between ListDocuments steps: the part
    the next step writes (or continues), the documents listed before it, and whether the listing is done."""

    part: int = Field(0, ge=0)
    documents: int = Field(0, ge=0)
    done: bool = False


class ListingPart(_Strict):
    """jobs/{job_id}/listing/part-NNNNN.json: the durable record of one part of the items. Written after the
    part's JSONL (``bytes`` of it are the part); ``complete`` once the part holds at least the minimum part
    size or the listing ended (``last``); ``next_*``: where the listing goes on after the part."""

    part: int = Field(ge=0)
    first_index: int = Field(ge=0)
    count: int = Field(ge=0)
    bytes: int = Field(ge=0)
    pages: int = Field(ge=0)
    complete: bool
    last: bool
    next_key_marker: str | None = None
    next_version_id_marker: str | None = None


class StartedJob(_Strict):
    """PrepareJob's output: the request is validated and stored, the listing starts at ``listing``."""

    job_id: str = Field(pattern=JOB_ID_PATTERN)
    bucket: str
    options: JobOptions
    listing: ListingCursor = Field(default_factory=ListingCursor)


class ListingEvent(_Strict):
    """ListDocuments (``action: list``) and SealJob (``action: seal``): the job and the cursor."""

    action: Literal["list", "seal"]
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    listing: ListingCursor


class StoredRequest(_Strict):
    """jobs/{job_id}/request.json."""

    request: JobRequest
    request_sha256: str
    received_at: str
    # The definition PrepareJob pinned (the request's, else DEFAULT_DEFINITION; its current version then):
    # SealJob writes it into the manifest's JobVersions. Null: no definition (the PROMPT_VERSION file).
    definition: str | None = None
    definition_sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")


class PrepareJobEvent(_Strict):
    request: dict[str, Any]
    execution_name: str


# ------------------------------------------------------------------------------------------ extraction


class ModelReply(_Strict):
    """What a ModelProvider returns for a finished call: the reply's text (functions/fields.py reads it)."""

    text: str
    model_id: str
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    inference: InferenceMode = "on_demand"


class ExtractionRecord(_Strict):
    """Result of the durable ``classify`` and ``extract`` steps: a finished model call, successful or not.
    ``fields``: the normalised, schema-valid fields (extract) or ``{"class": NAME or null}`` (classify)."""

    call_id: str
    ok: bool
    purpose: CallPurpose = "extract"
    class_name: str | None = None
    fields: dict[str, JsonValue] | None = None
    error: str | None = None
    reason: str | None = None
    model_id: str
    input_tokens: int = 0
    output_tokens: int = 0
    inference: InferenceMode = "on_demand"


class ModelCallRecord(_Strict):
    """jobs/{job}/model-calls/{document_id}/{call_id}.json: one per model call really made.

    Written before the ``classify`` or ``extract`` step completes, with the call's output, so it doubles as a
    write-ahead log: if the process dies after the call but before the step's record is saved, the retry
    reuses this output (the newest record of the same purpose) instead of calling the model again.
    """

    call_id: str
    job_id: str
    document_id: str
    purpose: CallPurpose = "extract"
    class_name: str | None = Field(None, description="the class extracted (null for a classify call)")
    provider: str
    model_id: str
    prompt_version: str
    prompt_sha256: str
    input_tokens: int
    output_tokens: int
    outcome: ModelCallOutcome
    fields: dict[str, JsonValue] | None = None
    reason: str | None = None
    retry_count: int
    started_at: str
    finished_at: str
    duration_ms: int
    inference: InferenceMode = Field(
        "on_demand", description="on_demand, or batch: an output record of the job's batch job"
    )

    def to_extraction(self) -> ExtractionRecord:
        return ExtractionRecord(
            call_id=self.call_id,
            ok=self.outcome == "ok",
            purpose=self.purpose,
            class_name=self.class_name,
            fields=self.fields,
            error=None if self.outcome == "ok" else self.outcome,
            reason=self.reason,
            model_id=self.model_id,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            inference=self.inference,
        )


class ModelAttemptRecord(_Strict):
    """jobs/{job}/model-attempts/{document_id}/{call_id}.json: one per model call that did not finish
    (throttled, unavailable, refused). With model-calls/ (the finished calls) the journal holds every
    attempt."""

    call_id: str
    job_id: str
    document_id: str
    provider: str
    model_id: str
    error: str
    message: str
    retryable: bool
    retry_count: int
    redrive_count: int = 0
    started_at: str
    finished_at: str
    duration_ms: int


class ModelBreaker(_Strict):
    """jobs/{job}/model-breaker.json: the job's model circuit breaker, opened by the first permanent refusal.

    While it is open (until ``open_until``), a document that would call the model fails at once with the same
    error instead. It closes by itself after the cool-down (the next document probes the model again), and
    ``docagent redrive`` removes it before it redrives (the operator has fixed the cause)."""

    job_id: str
    model_id: str
    error: str
    message: str
    document_id: str
    opened_at: str
    open_until: str


class LookupRecord(_Strict):
    """Result of a durable ``lookup-{check}`` step: the reference table's row for the key, if any."""

    table: str
    key: str
    found: bool
    row: dict[str, JsonValue] | None = None


class CheckOutcome(_Strict):
    """One check of a document's class, as it went (DocumentResult.checks, in the definition's order)."""

    name: str
    type: Literal["rule", "lookup"]
    passed: bool
    on_fail: Literal["reject", "review"]
    error: str | None = Field(None, description="the check's error name when it failed")
    reason: str | None = None


# ------------------------------------------------------------------------------------- process_document


class ProcessDocumentEvent(_Strict):
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    options: JobOptions = Field(default_factory=JobOptions)
    document: ManifestEntry
    retry_count: int = Field(0, ge=0)
    redrive_count: int = Field(0, ge=0)


class BatchItem(_Strict):
    """One item of a batched child's ``Items`` (the ItemSelector's output): its document."""

    document: ManifestEntry


class ProcessBatchEvent(_Strict):
    """process_document's payload with ``documents_per_child`` > 1: the batch's items, the job once."""

    job_id: str = Field(pattern=JOB_ID_PATTERN)
    options: JobOptions = Field(default_factory=JobOptions)
    items: list[BatchItem] = Field(min_length=1)
    retry_count: int = Field(0, ge=0)
    redrive_count: int = Field(0, ge=0)

    def document_events(self) -> list[ProcessDocumentEvent]:
        """Each document as the per-document event it would be in a child of its own."""
        return [
            ProcessDocumentEvent(
                job_id=self.job_id,
                options=self.options,
                document=item.document,
                retry_count=self.retry_count,
                redrive_count=self.redrive_count,
            )
            for item in self.items
        ]


class DocumentResult(_Strict):
    """jobs/{job_id}/results/{document_id}.json: exactly one per document, extracted, review or rejected."""

    job_id: str = Field(pattern=JOB_ID_PATTERN)
    document_id: str = Field(pattern=DOCUMENT_ID_PATTERN)
    key: str
    index: int = Field(ge=0)
    status: DocumentStatus
    class_name: str | None = None
    fields: dict[str, JsonValue] | None = None
    attached: dict[str, dict[str, JsonValue]] = Field(
        default_factory=dict, description="rows found by lookup checks, by the check's attach name"
    )
    checks: list[CheckOutcome] = Field(default_factory=list)
    error: str | None = None
    reason: str | None = None
    model_call_id: str | None = None
    classify_call_id: str | None = None
    model_cost_usd: float | None = Field(
        None, description="its model calls priced (functions/spend.py); null: no dated price, or older"
    )
    versions: JobVersions
    format: DocumentFormat | None = None
    processed_at: str
    sha256: str | None = Field(
        None, pattern=r"^[0-9a-f]{64}$", description="of the bytes read (null: not read)"
    )

    @model_validator(mode="after")
    def _consistent(self) -> DocumentResult:
        if self.status != "rejected" and (self.fields is None or self.class_name is None or self.error):
            raise ValueError(f"a {self.status} result needs a class and fields and no error")
        if self.status == "rejected" and not self.error:
            raise ValueError("a rejected result needs an error name")
        return self

    def report_row(self, columns: list[str]) -> ReportRow:
        """This document's row of report.json (carried in the child's output, see DocumentOutcome): the
        ``columns`` of its fields as text (functions/fields.py ``row_values``)."""
        return ReportRow(
            document_id=self.document_id,
            index=self.index,
            key=self.key,
            status=self.status,
            class_name=self.class_name,
            error=self.error,
            reason=self.reason,
            fields=row_values(self.fields, columns) if self.fields is not None else {},
            model_call_id=self.model_call_id,
            model_cost_usd=self.model_cost_usd,
        )


class DocumentOutcome(_Strict):
    """process_document's output: small, the Map's per-child result.

    ``row`` is the document's report row: the ResultWriter's result files carry it to build_report and
    verify_job, so neither reads one object per document. Null only in outputs of code from before it existed.
    """

    document_id: str
    status: DocumentStatus
    result_key: str
    error: str | None = None
    row: ReportRow | None = None


class BatchOutcome(_Strict):
    """process_document's output for a batch: one DocumentOutcome per item, in the batch's order."""

    outcomes: list[DocumentOutcome]


# ---------------------------------------------------------------------------------------- build_report


class WriterDetails(BaseModel):
    model_config = ConfigDict(extra="ignore")

    Bucket: str
    Key: str


class MapRunInfo(BaseModel):
    """The Distributed Map's ResultPath output; tolerant of missing fields (local interpreters)."""

    model_config = ConfigDict(extra="ignore")

    MapRunArn: str | None = None
    ResultWriterDetails: WriterDetails | None = None


class BuildReportEvent(_Strict):
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    map_run: MapRunInfo = Field(default_factory=MapRunInfo)
    retry_count: int = Field(0, ge=0)
    redrive_count: int = Field(0, ge=0)
    options: JobOptions = Field(default_factory=JobOptions)

    @field_validator("map_run", mode="before")
    @classmethod
    def _tolerate_other_shapes(cls, value: Any) -> Any:
        """Without a ResultWriter (or on an interpreter that ignores it) the Map's output is the list of the
        children's outputs: nothing to read then, the stored results are the source of truth."""
        return value if isinstance(value, (dict, MapRunInfo)) else {}


class ChildFailure(_Strict):
    document_id: str
    status: str
    error: str | None = None
    cause: str | None = None
    execution_arn: str | None = None


class ReportRow(_Strict):
    """A document's row: ``fields`` holds its class's columns (and the fields the definition's totals read),
    each value as text (null: absent)."""

    document_id: str
    index: int
    key: str
    status: Literal["extracted", "review", "rejected", "failed"]
    class_name: str | None = None
    error: str | None = None
    reason: str | None = None
    fields: dict[str, str | None] = Field(default_factory=dict)
    model_call_id: str | None = None
    model_cost_usd: float | None = None


class MapRunSummary(_Strict):
    map_run_arn: str | None = None
    result_files_read: bool = False
    result_writer_bucket: str | None = None
    result_writer_key: str | None = None
    succeeded: int = 0
    failed: int = 0
    pending: int = 0


class ReportApproval(_Strict):
    """The report's ``approval`` section, written by the RecordApproval step once the operator approved.

    Its times are the operator's (from the decision), not the writer's clock, so rewriting it is byte-stable.
    """

    decision: Literal["approved"]
    decided_by: str
    decided_at: str
    reason: str | None = None
    requested_at: str


class ReportAction(_Strict):
    """One entry of the report's ``actions`` section (written by RunActions from the actions' done.json, so
    rewriting it is byte-stable). ``outcome``: ``performed`` (done by this job), ``reconciled`` (an earlier
    attempt with an unknown outcome had done it), ``skipped`` (its ``when`` did not hold)."""

    name: str
    type: Literal["http", "eventbridge", "sns", "export"]
    outcome: Literal["performed", "reconciled", "skipped"]
    idempotency_key: str
    reference: str | None = Field(
        None, description="the target's id (http record id, EventBridge event id, SNS message id, export key)"
    )
    done_at: str


class Report(_Strict):
    """jobs/{job_id}/report.json: deterministic for the same inputs (no wall-clock fields of its own).

    ``approval`` is null unless the job required approval and was approved (set by RecordApproval).
    """

    job_id: str
    versions: JobVersions
    documents: int
    extracted: int
    review: int = 0
    rejected: int
    failed: int
    rejection_reasons: dict[str, int]
    # The definition's totals by name, then by the value of its ``by`` field ("" without one): the sum of
    # its ``sum`` field over the accepted (extracted) documents, as text.
    totals: dict[str, dict[str, str]] = Field(default_factory=dict)
    # The rows' model costs summed (functions/spend.py), rounded to the nano-dollar; null: no row has one.
    model_cost_usd: float | None = None
    rows: list[ReportRow]
    rejected_documents: list[ReportRow]
    failed_documents: list[ChildFailure]
    map_run: MapRunSummary
    approval: ReportApproval | None = None
    actions: list[ReportAction] | None = None


class ReportSummary(_Strict):
    """build_report's output (and the ``report`` field of later events)."""

    report_key: str
    documents: int = Field(ge=0)
    extracted: int = Field(ge=0)
    review: int = Field(0, ge=0)
    rejected: int = Field(ge=0)


# ------------------------------------------------------------------------------------- request_approval

ApprovalStatus = Literal["pending", "approved", "rejected", "expired"]
APPROVAL_REJECTED_ERROR = "ApprovalRejected"


class ApprovalDecision(BaseModel):
    """The operator's decision as the workflow receives it: the SendTaskSuccess output (approved) or the
    SendTaskFailure cause (rejected). Lenient, so a token completed by hand (console, aws cli) still
    records."""

    model_config = ConfigDict(extra="ignore")

    decision: Literal["approved", "rejected"] = "approved"
    # The job and execution the decision was made for (docagent approve/reject set them; a token completed by
    # hand may not): RecordApproval refuses a decision naming another job or execution.
    job_id: str | None = None
    execution_arn: str | None = None
    decided_by: str = Field("unknown", min_length=1, max_length=200)
    decided_at: str | None = None
    reason: str | None = Field(None, max_length=2000)


class PastDecision(_Strict):
    """A decision that a later request (a redrive after a rejection or a timeout) replaced."""

    status: ApprovalStatus
    requested_at: str
    decided_by: str | None = None
    decided_at: str | None = None
    reason: str | None = None


class ApprovalRecord(_Strict):
    """jobs/{job_id}/approval.json: the pending approval, durable while the execution waits, then its outcome.

    Only the newest ``task_token`` is valid: a retried RequestApproval (new attempt, new token) replaces it.
    """

    job_id: str = Field(pattern=JOB_ID_PATTERN)
    status: ApprovalStatus
    report_key: str
    task_token: str = Field(min_length=1)
    execution_arn: str | None = None
    requested_at: str
    token_updated_at: str
    requests: int = Field(1, ge=1, description="invocations that recorded this request")
    decided_by: str | None = None
    decided_at: str | None = None
    reason: str | None = None
    previous: list[PastDecision] = Field(default_factory=list)


class RequestApprovalEvent(_Strict):
    """The RequestApproval task's payload (``lambda:invoke.waitForTaskToken``)."""

    action: Literal["request"] = "request"
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    report: ReportSummary
    task_token: str = Field(min_length=1)
    execution_arn: str | None = None


class RecordApprovalEvent(_Strict):
    """The RecordApproval task's payload: the decision the RequestApproval task returned."""

    action: Literal["record"]
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    execution_arn: str | None = None
    report: ReportSummary
    approval: ApprovalDecision


class ApprovalRequested(_Strict):
    """request_approval's output for a request (Step Functions ignores it: the task waits for the token)."""

    approval_key: str
    status: Literal["pending"]


# ------------------------------------------------------------------------------------------- verify_job


class VerifyJobEvent(_Strict):
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    report: ReportSummary
    actions: list[ReportAction] | None = Field(
        None, description="RunActions' output, checked against storage"
    )
    retry_count: int = Field(0, ge=0)
    redrive_count: int = Field(0, ge=0)
    options: JobOptions = Field(default_factory=JobOptions)


class Verification(_Strict):
    verified: bool
    checks: dict[str, str]
