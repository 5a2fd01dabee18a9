"""The S3 layout of docs/design.md, as functions. Nothing else in the code builds an S3 key
(tests/unit/test_storage_owns_keys.py checks it): the Lambda steps, the stack's IAM grants, the operator
and the drills all call these. Reading and writing the objects is functions/s3_json.py's."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterable

JOBS_ROOT = "jobs/"
# The built-in ledger of http actions (functions/actions/ledger.py): one record per idempotency key.
LEDGER_PREFIX = "action-ledger/"
# The ledger's index by reference: one empty object per record under its reference, so a lookup lists one
# reference's records instead of reading every record ever written (a separate root: listing action-ledger/
# still lists records only).
LEDGER_INDEX_PREFIX = "action-ledger-index/"
INCOMING_ROOT = "incoming/"
# Which docagent job each Bedrock batch job belongs to (functions/batch_inference/invocation_jobs.py).
BATCH_JOBS_INDEX_PREFIX = "batch-jobs/"
# Published job definitions (functions/definition/job_spec.py): each version under its content hash.
DEFINITIONS_ROOT = "definitions/"
# The Distributed Map's ResultWriter prefix (statemachines/document_review.asl.json): one folder per Map Run.
MAP_RUNS_PREFIX = "map-runs"
# Any job id, in an IAM resource pattern (``request_key(ANY_JOB)`` is ``jobs/*/request.json``).
ANY_JOB = "*"


class ObjectNotFound(LookupError):  # noqa: N818 (reads better at call sites than ObjectNotFoundError)
    """The S3 object does not exist."""


# ------------------------------------------------------------------------------------------------- keys


def job_prefix(job_id: str) -> str:
    return f"{JOBS_ROOT}{job_id}/"


def request_key(job_id: str) -> str:
    return f"{job_prefix(job_id)}request.json"


def manifest_key(job_id: str) -> str:
    return f"{job_prefix(job_id)}manifest.json"


def items_prefix(job_id: str) -> str:
    """jobs/{job_id}/items/: the JSONL parts the listing steps write, and the object the Map reads."""
    return f"{job_prefix(job_id)}items/"


def items_part_key(job_id: str, part: int) -> str:
    """One part of the job's items, written by one listing step (JSON Lines, one ManifestEntry a line)."""
    return f"{items_prefix(job_id)}part-{part:05d}.jsonl"


def items_key(job_id: str) -> str:
    """The parts joined server-side (a multipart upload of UploadPartCopy) when there are several."""
    return f"{items_prefix(job_id)}items.jsonl"


def legacy_items_key(job_id: str) -> str:
    """items.json (a JSON array): jobs prepared before the paged listing, still read by their executions."""
    return f"{job_prefix(job_id)}items.json"


def listing_prefix(job_id: str) -> str:
    return f"{job_prefix(job_id)}listing/"


def listing_part_key(job_id: str, part: int) -> str:
    """The listing's durable record of one part: where it starts and ends, and whether it is complete."""
    return f"{listing_prefix(job_id)}part-{part:05d}.json"


def results_prefix(job_id: str) -> str:
    return f"{job_prefix(job_id)}results/"


def result_key(job_id: str, document_id: str) -> str:
    return f"{results_prefix(job_id)}{document_id}.json"


def result_ids_of(job_id: str, keys: Iterable[str]) -> list[str]:
    """The document ids among ``keys`` that are result objects of the job."""
    prefix = results_prefix(job_id)
    return [document_id for key in keys if (document_id := id_from_key(prefix, key)) is not None]


def section_result_key(job_id: str, document_id: str, section_id: str) -> str:
    """A packet's section's result (functions/reading/sections.py)."""
    return f"{results_prefix(job_id)}{document_id}/sections/{section_id}.json"


def model_calls_root(job_id: str) -> str:
    """jobs/{job_id}/model-calls/: the journal of every document of the job."""
    return f"{job_prefix(job_id)}model-calls/"


def model_calls_prefix(job_id: str, document_id: str) -> str:
    return f"{model_calls_root(job_id)}{document_id}/"


def model_call_key(job_id: str, document_id: str, call_id: str) -> str:
    return f"{model_calls_prefix(job_id, document_id)}{call_id}.json"


def model_attempts_root(job_id: str) -> str:
    """jobs/{job_id}/model-attempts/: the model calls of the job that did not finish."""
    return f"{job_prefix(job_id)}model-attempts/"


def model_attempts_prefix(job_id: str, document_id: str) -> str:
    return f"{model_attempts_root(job_id)}{document_id}/"


def model_attempt_key(job_id: str, document_id: str, call_id: str) -> str:
    return f"{model_attempts_prefix(job_id, document_id)}{call_id}.json"


def ocr_root(job_id: str) -> str:
    """jobs/{job_id}/ocr/: the page texts and word boxes read by OCR (docs/design.md, "Page text by OCR")."""
    return f"{job_prefix(job_id)}ocr/"


def ocr_key(job_id: str, document_id: str, section_id: str | None = None) -> str:
    """A document's OcrRecord (a packet's section's: under the document's folder), written once."""
    if section_id is None:
        return f"{ocr_root(job_id)}{document_id}.json"
    return f"{ocr_root(job_id)}{document_id}/sections/{section_id}.json"


def model_breaker_key(job_id: str) -> str:
    return f"{job_prefix(job_id)}model-breaker.json"


def batch_root(job_id: str) -> str:
    """jobs/{job_id}/batch/: the job's Bedrock batch inference (docs/batch.md)."""
    return f"{job_prefix(job_id)}batch/"


def batch_plan_key(job_id: str) -> str:
    """The job's split into batch jobs (BatchPlan: the first document index of each part), written once."""
    return f"{batch_root(job_id)}plan.json"


def batch_parts_key(job_id: str) -> str:
    """The BatchJobs Map's items: one ``{"part": n}`` a line, one line per batch job of the plan."""
    return f"{batch_root(job_id)}parts.jsonl"


def map_item_key_patterns(job_id: str) -> tuple[str, ...]:
    """What the workflow's Distributed Maps read their items from (ItemReader), as IAM key patterns: the
    documents Map's items (a part or the parts joined, under items/; items.json for jobs prepared before the
    paged listing) and the BatchJobs Map's parts. The workflow role's grant is built from this
    (stacks/workflow.py), so a new ItemReader key added here is granted with it."""
    return (everything_under(items_prefix(job_id)), legacy_items_key(job_id), batch_parts_key(job_id))


def _part(part: int) -> str:
    return f"{part:05d}"


def batch_job_key(job_id: str, part: int) -> str:
    """A part's batch job record (BatchJobRecord): its ARN once submitted, the waiting task's token."""
    return f"{batch_root(job_id)}jobs/{_part(part)}.json"


def batch_inputs_root(job_id: str) -> str:
    """Every part's input folder is under it (what the batch role may read)."""
    return f"{batch_root(job_id)}input/"


def batch_input_prefix(job_id: str, part: int) -> str:
    """A part's batch job input location: one JSON Lines file of one record per document of the part."""
    return f"{batch_inputs_root(job_id)}{_part(part)}/"


def batch_input_key(job_id: str, part: int, document_id: str) -> str:
    return f"{batch_input_prefix(job_id, part)}{document_id}.jsonl"


def batch_outputs_root(job_id: str) -> str:
    """Every part's output folder is under it (what the batch role may write)."""
    return f"{batch_root(job_id)}output/"


def batch_output_prefix(job_id: str, part: int) -> str:
    """A part's batch job output location; Bedrock writes under ``{prefix}{bedrock job id}/``."""
    return f"{batch_outputs_root(job_id)}{_part(part)}/"


def batch_output_key(job_id: str, part: int, bedrock_job_id: str, document_id: str) -> str:
    """The output file Bedrock writes for a document's input file (``{input file name}.out``)."""
    return f"{batch_output_prefix(job_id, part)}{bedrock_job_id}/{document_id}.jsonl.out"


def batch_jobs_index_key(bedrock_job_id: str) -> str:
    """batch-jobs/{bedrock job id}.json: which docagent job and part a Bedrock batch job belongs to (its
    state-change event names the Bedrock job only)."""
    return f"{BATCH_JOBS_INDEX_PREFIX}{bedrock_job_id}.json"


def report_key(job_id: str) -> str:
    return f"{job_prefix(job_id)}report.json"


def report_root(job_id: str) -> str:
    """jobs/{job_id}/report/: the report's fan-in (docs/design.md, "Report by fan-in")."""
    return f"{job_prefix(job_id)}report/"


def report_plan_key(job_id: str) -> str:
    """ReportPlan: the Map Run's counts and the job's partitions (one per manifest part)."""
    return f"{report_root(job_id)}plan.json"


def report_rows_root(job_id: str) -> str:
    return f"{report_root(job_id)}rows/"


def report_rows_prefix(job_id: str, partition: int) -> str:
    """The rows and failures SummarizeResults routed to one partition, in objects of about 1 MiB."""
    return f"{report_rows_root(job_id)}part-{partition:05d}/"


def report_rows_key(job_id: str, partition: int, sequence: int) -> str:
    return f"{report_rows_prefix(job_id, partition)}{sequence:06d}.jsonl"


def report_partial_key(job_id: str, partition: int) -> str:
    """ReportPartial: one partition's counts, totals, cost, rejected rows and failures."""
    return f"{report_root(job_id)}partials/part-{partition:05d}.json"


def report_segment_key(job_id: str, partition: int, extension: str) -> str:
    """One partition's rows of the table (csv: the header in partition 0 only; jsonl), joined later."""
    return f"{report_root(job_id)}segments/part-{partition:05d}.{extension}"


def report_table_key(job_id: str, extension: str) -> str:
    """The per-document table, one row per manifest document in index order: rows.csv and rows.jsonl."""
    return f"{report_root(job_id)}rows.{extension}"


def report_results_key(job_id: str) -> str:
    """Every stored result of the job, canonical JSON Lines in index order: the export's results.jsonl, joined
    from the partitions' ``results.jsonl`` segments (only when the definition exports JSON Lines)."""
    return f"{report_root(job_id)}results.jsonl"


def report_table_index_key(job_id: str) -> str:
    """ReportTable alone (report.json's ``table``): where each partition's rows lie in rows.jsonl."""
    return f"{report_root(job_id)}table.json"


def verify_root(job_id: str) -> str:
    """jobs/{job_id}/verify/: the verification's fan-in (docs/design.md, "Verification by fan-in")."""
    return f"{job_prefix(job_id)}verify/"


def verify_partition_key(job_id: str, partition: int) -> str:
    """PartitionVerdict: what VerifyPartitions found for one partition."""
    return f"{verify_root(job_id)}part-{partition:05d}.json"


def actions_root(job_id: str) -> str:
    """jobs/{job_id}/actions/: one folder per job-level action, by the action's name."""
    return f"{job_prefix(job_id)}actions/"


def action_attempt_key(job_id: str, action: str) -> str:
    """The action's intent, written before every request (ActionAttempt)."""
    return f"{actions_root(job_id)}{action}/attempt.json"


def action_done_key(job_id: str, action: str) -> str:
    """The action's outcome (ActionDone): present means the action is never run again."""
    return f"{actions_root(job_id)}{action}/done.json"


def export_prefix(job_id: str, action: str) -> str:
    """jobs/{job_id}/exports/{action}/: an export action's files (results.csv, results.jsonl)."""
    return f"{job_prefix(job_id)}exports/{action}/"


def export_key(job_id: str, action: str, extension: str) -> str:
    return f"{export_prefix(job_id, action)}results.{extension}"


def faults_root(job_id: str) -> str:
    """jobs/{job_id}/faults/: fault drills only, the firings of a fault armed with ``times``."""
    return f"{job_prefix(job_id)}faults/"


def fault_fired_key(job_id: str, point: str, place: str, firing: int) -> str:
    """The ``firing``-th firing (from 0) of the job's fault at ``point`` and ``place`` (``document-7``,
    ``action-export``, ``part-0``, ``job``): written once, before the fault fires
    (functions/durability/faults.py)."""
    return f"{faults_root(job_id)}{point}/{place}/fired-{firing}.json"


def approval_key(job_id: str) -> str:
    return f"{job_prefix(job_id)}approval.json"


def reviews_prefix(job_id: str) -> str:
    """jobs/{job_id}/reviews/: the reviewers' decisions, one per document (docs/design.md, "Review")."""
    return f"{job_prefix(job_id)}reviews/"


def review_key(job_id: str, document_id: str) -> str:
    """A reviewer's decision on one document, beside its result (results/{document_id}.json)."""
    return f"{reviews_prefix(job_id)}{document_id}.json"


def section_review_key(job_id: str, document_id: str, section_id: str) -> str:
    """A reviewer's decision on one section of a packet (its result: ``section_result_key``)."""
    return f"{reviews_prefix(job_id)}{document_id}/sections/{section_id}.json"


SPLIT_DECISION = "split.json"


def split_decision_key(job_id: str, document_id: str) -> str:
    """A reviewer's re-split of a packet (functions/resplit.py ``SplitDecision``), beside its sections'
    decisions."""
    return f"{reviews_prefix(job_id)}{document_id}/{SPLIT_DECISION}"


def split_document_of_key(prefix: str, key: str) -> str | None:
    """The packet a key under reviews/ holds the re-split of (``{document_id}/split.json``), else None."""
    name = key[len(prefix) :] if key.startswith(prefix) else ""
    document_id, _, rest = name.partition("/")
    return document_id if rest == SPLIT_DECISION and document_id else None


# A review item is a document (its id) or a packet's section (``{document_id}#{section_id}``, as eval names a
# labelled section): a document id never holds "#" (DOCUMENT_ID_PATTERN).
ITEM_SEPARATOR = "#"


def review_item(document_id: str, section_id: str | None = None) -> str:
    """A review item's id: the document's id, or ``{document_id}#{section_id}`` for a packet's section."""
    return document_id if section_id is None else f"{document_id}{ITEM_SEPARATOR}{section_id}"


def review_item_parts(item: str) -> tuple[str, str | None]:
    """``(document_id, section_id)`` of a review item's id (section_id None: a document)."""
    document_id, separator, section_id = item.partition(ITEM_SEPARATOR)
    return document_id, section_id if separator else None


def review_item_key(job_id: str, item: str) -> str:
    """The decision's key of a review item: ``review_key`` or ``section_review_key``."""
    document_id, section_id = review_item_parts(item)
    if section_id is None:
        return review_key(job_id, document_id)
    return section_review_key(job_id, document_id, section_id)


def review_item_of_key(prefix: str, key: str) -> str | None:
    """The review item a key under reviews/ holds the decision of: ``{document_id}.json`` → the document,
    ``{document_id}/sections/{section_id}.json`` → its section; None for any other key."""
    name = key[len(prefix) :] if key.startswith(prefix) else ""
    if not name.endswith(".json"):
        return None
    parts = name[: -len(".json")].split("/")
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 3 and parts[1] == "sections":
        return review_item(parts[0], parts[2])
    return None


def review_wait_key(job_id: str) -> str:
    """The waiting WaitForReview task's token and the job's review queue, beside approval.json
    (docs/design.md, "Review")."""
    return f"{job_prefix(job_id)}review-wait.json"


def drift_key(job_id: str) -> str:
    """Every redrive the operator allowed to run with versions other than the pinned ones."""
    return f"{job_prefix(job_id)}drift.json"


def ledger_key(idempotency_key: str) -> str:
    return f"{LEDGER_PREFIX}{idempotency_key}.json"


def ledger_reference_prefix(reference: str) -> str:
    """``action-ledger-index/{reference, percent-encoded}/``: the index entries of one reference."""
    return f"{LEDGER_INDEX_PREFIX}{urllib.parse.quote(reference, safe='')}/"


def ledger_index_key(reference: str, idempotency_key: str) -> str:
    """An index entry names the record: ``ledger_key(idempotency_key_of_index_key(...))``."""
    return f"{ledger_reference_prefix(reference)}{idempotency_key}.json"


def idempotency_key_of_index_key(index_key: str) -> str:
    return index_key.rsplit("/", 1)[-1].removesuffix(".json")


def definition_key(name: str, sha256: str) -> str:
    """definitions/{name}/versions/{sha256}.json: a published definition bundle, never changed."""
    return f"{DEFINITIONS_ROOT}{name}/versions/{sha256}.json"


def definition_current_key(name: str) -> str:
    """definitions/{name}/current.json: which version of the definition new jobs pin (DefinitionPointer)."""
    return f"{DEFINITIONS_ROOT}{name}/current.json"


def map_run_manifest_key(map_run_arn: str, prefix: str = MAP_RUNS_PREFIX) -> str:
    """The ResultWriter manifest of a Map Run: ``{prefix}/{map run id}/manifest.json``."""
    return f"{prefix.rstrip('/')}/{map_run_arn.rsplit(':', 1)[-1]}/manifest.json"


def map_run_result_file_key(map_run_arn: str, status: str, number: int, prefix: str = MAP_RUNS_PREFIX) -> str:
    """One ResultWriter result file: ``{prefix}/{map run id}/{SUCCEEDED|FAILED|PENDING}_{n}.json``."""
    return f"{prefix.rstrip('/')}/{map_run_arn.rsplit(':', 1)[-1]}/{status}_{number}.json"


def incoming_prefix(batch: str) -> str:
    """incoming/{batch}/: where the operator (``start --dir``) and the demo upload a job's documents."""
    return f"{INCOMING_ROOT}{batch}/"


def uploaded_key(prefix: str, relative_path: str) -> str:
    """A file uploaded under ``prefix`` (e.g. ``incoming_prefix(job_id)``) by its path in its folder."""
    return f"{prefix}{relative_path}"


def everything_under(prefix: str) -> str:
    """The IAM resource pattern of every key under ``prefix`` (``jobs/`` → ``jobs/*``)."""
    return f"{prefix}*"


def id_from_key(prefix: str, key: str) -> str | None:
    """``{prefix}{id}.json`` → ``id``; None for any other key (a deeper one, another suffix)."""
    name = key[len(prefix) :] if key.startswith(prefix) else ""
    return name[: -len(".json")] if name.endswith(".json") and "/" not in name else None


def model_call_document(job_id: str, key: str) -> str:
    """The document id of a model-call journal key."""
    return key[len(model_calls_root(job_id)) :].split("/", 1)[0]
