"""The functions of docs/design.md as data: each one's handler module and exactly what it may touch (the job
bucket's key patterns it reads and writes, the idempotency table, the sources, the references, the model, the
actions' targets, batch jobs). stacks/lambdas.py turns each into a function with a least-privilege role;
tests/infra holds the roles to this table."""

from __future__ import annotations

from dataclasses import dataclass

from functions import storage as keys
from stacks import outputs


@dataclass(frozen=True)
class FunctionSpec:
    """One function of the design contract and exactly what it may touch.

    Key patterns are relative to the job bucket (docs/design.md, "S3 layout"). The two functions that read
    documents (``reads_sources``) may also read the configured source locations, and nothing else.
    """

    construct_id: str
    module: str
    description: str
    reads: tuple[str, ...]
    writes: tuple[str, ...] = ()
    uses_idempotency: bool = False
    reads_sources: bool = False
    reads_references: bool = False
    invokes_model: bool = False
    # Reads the pages without a text layer by OCR: Amazon Textract DetectDocumentText (docs/design.md, "Page
    # text by OCR"; functions/reading/ocr/).
    reads_page_text: bool = False
    # Keys of multipart uploads the function may abort (s3:AbortMultipartUpload).
    aborts_uploads: tuple[str, ...] = ()
    # Reaches the targets of job-level actions the deployment allows (config ``actions``): its IAM policy
    # gets exactly those buses, topics and secrets (``sends`` False: the secrets only, for lookups).
    reaches_action_targets: bool = False
    sends_actions: bool = False
    # Holds a whole job's listing or result files in memory (O(N) bytes, a bounded number of requests).
    aggregates: bool = False
    # The config setting that is its timeout: RunActions has its own (``actions_timeout_seconds``), so that a
    # retry after a worker died mid-action waits out that, not a document's 120 s (docs/actions.md);
    # VerifyJob has its own (``verify_timeout_seconds``): a partition's listings (stacks/config.py).
    timeout_setting: str = "function_timeout_seconds"
    # Creates and reads the job's Bedrock batch inference job, passes it the batch role and completes the
    # waiting task's token (docs/batch.md).
    runs_batch_jobs: bool = False
    # Completes the WaitForReview task's token when the review queue is already decided (docs/design.md,
    # "Review").
    completes_review_wait: bool = False
    # Passes fault points (functions/durability/fault_points.py): with fault injection enabled it may record
    # a fault's firings under jobs/{job}/faults/ (docs/design.md, "S3 layout").
    passes_fault_points: bool = False

    @property
    def handler(self) -> str:
        return f"functions.handlers.{self.module}.handler"


FUNCTION_SPECS: tuple[FunctionSpec, ...] = (
    FunctionSpec(
        construct_id=outputs.PREPARE_JOB,
        module="prepare_job",
        description="Validates a job request, lists and pins its documents in parts, writes manifest, items.",
        reads=(
            keys.request_key(keys.ANY_JOB),
            keys.manifest_key(keys.ANY_JOB),
            keys.everything_under(keys.items_prefix(keys.ANY_JOB)),  # UploadPartCopy reads the parts
            keys.everything_under(keys.listing_prefix(keys.ANY_JOB)),
            # the published definitions: the one a request names, and the pinned one's review.wait (SealJob)
            keys.everything_under(keys.DEFINITIONS_ROOT),
        ),
        reads_sources=True,
        writes=(
            keys.request_key(keys.ANY_JOB),
            keys.manifest_key(keys.ANY_JOB),
            keys.everything_under(keys.items_prefix(keys.ANY_JOB)),
            keys.everything_under(keys.listing_prefix(keys.ANY_JOB)),
        ),
        # The join of the parts is a multipart upload (PutObject covers Create/UploadPartCopy/Complete).
        aborts_uploads=(keys.items_key(keys.ANY_JOB),),
        uses_idempotency=True,
        aggregates=True,
    ),
    FunctionSpec(
        construct_id=outputs.PROCESS_DOCUMENT,
        passes_fault_points=True,
        module="process_document",
        description="Reviews one document: reads it, extracts its fields with the model, runs its checks.",
        reads=(
            keys.manifest_key(keys.ANY_JOB),
            keys.everything_under(keys.results_prefix(keys.ANY_JOB)),
            keys.everything_under(keys.model_calls_root(keys.ANY_JOB)),
            keys.model_breaker_key(keys.ANY_JOB),
            keys.everything_under(keys.batch_root(keys.ANY_JOB)),  # the batch job's output records
            # the job's pinned definition (its fields, checks and models): found by the local IAM (#50)
            keys.everything_under(keys.DEFINITIONS_ROOT),
            keys.split_decision_key(keys.ANY_JOB, "*"),  # a reviewer's re-split of a packet (resplit)
            keys.everything_under(keys.ocr_root(keys.ANY_JOB)),  # the pages read by OCR, read once
        ),
        reads_sources=True,
        writes=(
            keys.everything_under(keys.results_prefix(keys.ANY_JOB)),
            keys.everything_under(keys.model_calls_root(keys.ANY_JOB)),
            keys.everything_under(keys.model_attempts_root(keys.ANY_JOB)),
            keys.model_breaker_key(keys.ANY_JOB),
            keys.everything_under(keys.ocr_root(keys.ANY_JOB)),
        ),
        uses_idempotency=True,
        reads_references=True,
        invokes_model=True,
        reads_page_text=True,
    ),
    FunctionSpec(
        construct_id=outputs.BUILD_REPORT,
        passes_fault_points=True,
        module="build_report",
        description="Builds the job report by fan-in from the Map results; waits for the review queue.",
        reads=(
            keys.everything_under(keys.JOBS_ROOT),
            keys.everything_under(f"{keys.MAP_RUNS_PREFIX}/"),
            # the pinned definition (its report and review settings): found by the local IAM (#50)
            keys.everything_under(keys.DEFINITIONS_ROOT),
        ),
        writes=(
            keys.report_key(keys.ANY_JOB),
            keys.review_wait_key(keys.ANY_JOB),
            keys.everything_under(keys.report_root(keys.ANY_JOB)),
        ),
        aborts_uploads=(keys.everything_under(keys.report_root(keys.ANY_JOB)),),
        aggregates=True,
        completes_review_wait=True,
    ),
    FunctionSpec(
        construct_id=outputs.RUN_ACTIONS,
        passes_fault_points=True,
        module="run_actions",
        description="Runs the job-level actions of the job's pinned definition, each exactly once.",
        timeout_setting="actions_timeout_seconds",
        reads=(
            keys.everything_under(keys.JOBS_ROOT),
            keys.everything_under(keys.DEFINITIONS_ROOT),
            keys.everything_under(keys.LEDGER_PREFIX),
            keys.everything_under(keys.LEDGER_INDEX_PREFIX),
        ),
        writes=(
            keys.everything_under(keys.actions_root(keys.ANY_JOB)),
            keys.everything_under(keys.export_prefix(keys.ANY_JOB, keys.ANY_JOB)),
            keys.report_key(keys.ANY_JOB),
            keys.everything_under(keys.LEDGER_PREFIX),
            keys.everything_under(keys.LEDGER_INDEX_PREFIX),
        ),
        # An export's files are written in parts (functions/s3_streams.py MultipartWriter).
        aborts_uploads=(keys.everything_under(keys.export_prefix(keys.ANY_JOB, keys.ANY_JOB)),),
        uses_idempotency=True,
        reaches_action_targets=True,
        sends_actions=True,
        aggregates=True,
    ),
    FunctionSpec(
        construct_id=outputs.REQUEST_APPROVAL,
        module="request_approval",
        description="Records a pending human approval before the actions, then the decision in the report.",
        reads=(keys.approval_key(keys.ANY_JOB), keys.report_key(keys.ANY_JOB)),
        writes=(keys.approval_key(keys.ANY_JOB), keys.report_key(keys.ANY_JOB)),
    ),
    FunctionSpec(
        construct_id=outputs.VERIFY_JOB,
        passes_fault_points=True,
        module="verify_job",
        description="Checks that the job's artefacts agree with each other before it succeeds.",
        reads=(
            keys.everything_under(keys.JOBS_ROOT),
            keys.everything_under(keys.DEFINITIONS_ROOT),
            keys.everything_under(keys.LEDGER_PREFIX),
            keys.everything_under(keys.LEDGER_INDEX_PREFIX),
        ),
        writes=(keys.everything_under(keys.verify_root(keys.ANY_JOB)),),
        timeout_setting="verify_timeout_seconds",
        reaches_action_targets=True,
        aggregates=True,
    ),
    FunctionSpec(
        construct_id=outputs.BATCH_INFERENCE,
        passes_fault_points=True,
        module="batch_inference",
        description="Batch inference: plans a job's batch jobs, writes a document's record, submits a part's "
        "batch job, waits.",
        reads=(
            keys.manifest_key(keys.ANY_JOB),
            keys.everything_under(keys.items_prefix(keys.ANY_JOB)),  # the manifest's parts (PlanBatchJobs)
            keys.everything_under(keys.DEFINITIONS_ROOT),
            keys.everything_under(keys.batch_root(keys.ANY_JOB)),
            keys.everything_under(keys.BATCH_JOBS_INDEX_PREFIX),
        ),
        reads_sources=True,
        writes=(
            keys.everything_under(keys.batch_root(keys.ANY_JOB)),
            keys.everything_under(keys.BATCH_JOBS_INDEX_PREFIX),
        ),
        runs_batch_jobs=True,
    ),
)
