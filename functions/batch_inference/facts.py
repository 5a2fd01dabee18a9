"""What Bedrock batch inference is, as looked up (dated): the numbers docagent's batch path depends on.

Looked up 2026-12-02 (AWS docs, Bedrock User Guide "Process multiple prompts with batch inference",
"Format and upload your batch inference data", "View the results of a batch inference job", "Monitor Amazon
Bedrock job state changes using Amazon EventBridge"; Bedrock API Reference "CreateModelInvocationJob",
"GetModelInvocationJob", "ModelInvocationJobSummary"; the "Amazon Bedrock pricing" page):

- Input: JSON Lines files (``.jsonl``) under the input S3 location, one record a line,
  ``{"recordId": "...", "modelInput": {...}}``. ``modelInput`` is the model's native InvokeModel body (the
  default invocation type) or, with the ``Converse`` invocation type, the body of a Converse request: docagent
  uses Converse, so a record is exactly the on-demand call (system prompt, the document block, the text).
  Tool use is not supported in batch; docagent uses none. Record order in the output is not guaranteed: the
  record id says which document a line answers.
- Output: per input file ``{file}.out`` under ``{output location}/{job id}/`` (the job id is the last part of
  the job's ARN), each line ``{"recordId", "modelInput", "modelOutput"}`` or, for a record that failed,
  ``{"recordId", "modelInput", "error": {"errorCode", "errorMessage"}}``; plus ``manifest.json.out``
  (``totalRecordCount``, ``processedRecordCount``, ``successRecordCount``, ``errorRecordCount``,
  ``inputTokenCount``, ``outputTokenCount``).
- Quotas: see below (looked up again 2026-12-04).
- Time: ``timeoutDurationInHours`` 24 to 168 (a job not finished by then ends ``Expired`` or
  ``PartiallyCompleted``; records not processed have no output line).
- Statuses: Submitted, Validating, Scheduled, InProgress, Completed, PartiallyCompleted, Failed, Stopping,
  Stopped, Expired.
- Idempotency: ``clientRequestToken`` ([a-zA-Z0-9](-*[a-zA-Z0-9]){0,256}): the same token again is ignored
  without an error, so a retried or redriven submit never creates a second job.
- Events: source ``aws.bedrock``, detail-type ``Batch Inference Job State Change``, on the default bus, best
  effort (hence docagent's polling fallback); the detail names the job's ARN and its status.
- Price: batch inference is priced at 50 % of the on-demand price of the same model, input and output tokens
  alike, for the models that offer it (Anthropic Claude among them); Regions: where the model offers batch
  (us-east-1, us-west-2 and others; cross-Region inference profiles are accepted).

Quotas, looked up 2026-12-04 (Bedrock User Guide "Format and upload your batch inference data", which names
them, https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-data.html; their default values in
the Amazon Bedrock service quotas table of the AWS General Reference,
https://docs.aws.amazon.com/general/latest/gr/bedrock.html#limits_bedrock, one row per model, the same value
for every Claude model listed), per model and Region:

- "Minimum number of records per batch inference job": 100 (not adjustable).
- "Records per batch inference job": 50,000 across all the job's input files (adjustable).
- "Records per input file per batch inference job": 50,000 (adjustable).
- "Batch inference input file size (in GB)": 1 (not adjustable).
- "Batch inference job size (in GB)": 5, the cumulative size of all the job's input files (not adjustable).
- "Sum of in-progress and submitted batch inference jobs using a base model for <model>": 20 (adjustable).

So a job of more than 50,000 documents (or more than 5 GB of records) is several batch jobs, at most 20 of
them submitted or in progress at once (functions/batch_inference/plan.py splits; the workflow's BatchJobs Map
runs them with that MaxConcurrency). docagent writes one input file per document, far under the per-file
limits.
"""

from __future__ import annotations

from typing import Final

BATCH_MIN_RECORDS: Final = 100
BATCH_MAX_RECORDS: Final = 50_000  # "Records per batch inference job" (default; adjustable)
BATCH_MAX_RECORDS_PER_FILE: Final = 50_000  # "Records per input file per batch inference job"
BATCH_MAX_FILE_BYTES: Final = 1_000_000_000  # "Batch inference input file size (in GB)": 1
BATCH_MAX_JOB_BYTES: Final = 5_000_000_000  # "Batch inference job size (in GB)": 5
BATCH_MAX_JOBS_IN_FLIGHT: Final = 20  # "Sum of in-progress and submitted batch inference jobs ..." (default)
BATCH_TIMEOUT_HOURS_MIN: Final = 24
BATCH_TIMEOUT_HOURS_MAX: Final = 168
# Bedrock statuses after which nothing more will be written.
TERMINAL_STATUSES: Final = frozenset({"Completed", "PartiallyCompleted", "Failed", "Stopped", "Expired"})
EVENT_SOURCE: Final = "aws.bedrock"
EVENT_DETAIL_TYPE: Final = "Batch Inference Job State Change"
INVOCATION_TYPE: Final = "Converse"

# Which model ids batch inference accepts (looked up 2026-12-07, AWS docs "Supported Regions and models for
# batch inference", https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-supported.html).
# Its table has, per model, the "Regions supporting foundation model" (the in-Region id) and the "Regions
# supporting inference profile": the source Regions of the *geographic* cross-Region profiles (us., eu.,
# apac.; the rows read, Amazon Nova Lite, Micro and Pro, list us-east-1 us-east-2 us-west-2 ap-northeast-1
# ap-northeast-2 ap-south-1 ap-southeast-1 ap-southeast-2 eu-central-1 eu-north-1 eu-south-1 eu-south-2
# eu-west-1 eu-west-3). No row names a global profile (global.): a job on one calls the model on-demand
# (the workflow's Catch of BatchUnavailable), at twice the batch price. Per model the list is narrower and
# moves; preflight says which of the three cases it is, and the first batch job is the proof.
BATCH_PROFILE_SOURCE_REGIONS: Final[dict[str, frozenset[str]]] = {
    "us": frozenset({"us-east-1", "us-east-2", "us-west-2"}),
    "eu": frozenset({"eu-central-1", "eu-north-1", "eu-south-1", "eu-south-2", "eu-west-1", "eu-west-3"}),
    "apac": frozenset({"ap-northeast-1", "ap-northeast-2", "ap-south-1", "ap-southeast-1", "ap-southeast-2"}),
}
BATCH_UNLISTED_PROFILES: Final = frozenset({"global"})


def batch_acceptance(model_id: str, region: str) -> tuple[bool | None, str]:
    """Whether batch inference accepts ``model_id`` called from ``region`` by the table above: True (a
    geographic profile from one of its listed Regions), False (a global profile, or a geographic one from a
    Region the table does not list for it), None (a foundation model id or an ARN: the model's own row
    decides), with the reason."""
    prefix = model_id.split(".", 1)[0] if "." in model_id and not model_id.startswith("arn:") else ""
    base = model_id.split(".", 1)[1] if prefix else model_id
    listed = sorted(geo for geo, regions in BATCH_PROFILE_SOURCE_REGIONS.items() if region in regions)
    usable = f"{listed[0]}.{base}" if listed else None
    instead = f": use {usable} for batch" if usable else ""
    if prefix in BATCH_UNLISTED_PROFILES:
        return False, f"batch inference lists no {prefix}. profile{instead}"
    if prefix in BATCH_PROFILE_SOURCE_REGIONS:
        if region in BATCH_PROFILE_SOURCE_REGIONS[prefix]:
            return True, f"batch inference lists {prefix}. profiles from {region}"
        return (
            False,
            f"batch inference lists {prefix}. profiles only from other Regions than {region}{instead}",
        )
    return None, "a foundation model id: batch inference accepts it where the model's row lists the Region"


def uses_batch(inference: str, documents: int) -> bool:
    """Whether a job of ``documents`` documents runs its model calls as batch jobs: ``batch`` always (a part
    under the minimum is not submitted: its documents go on-demand), ``auto`` from the batch minimum up (a job
    over the records or bytes of one batch job is split into several: functions/batch_inference/plan.py),
    where half the price pays for the wait."""
    if inference == "batch":
        return True
    return inference == "auto" and documents >= BATCH_MIN_RECORDS
