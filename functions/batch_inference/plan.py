"""A job's documents split into batch jobs (docs/batch.md, "A million documents"): PlanBatchJobs.

Bedrock bounds one batch job by its records (50,000 by default) and by the cumulative size of its input files
(5 GB), and an account by the batch jobs submitted or in progress at once (20 by default): the numbers, dated,
are in functions/batch_inference/facts.py. A job of more documents is split into parts of consecutive document
indexes, each part one batch job over its own input folder (``jobs/{job}/batch/input/{part}/``). A part closes
when one more document would pass either bound; a document's record is bounded by its size in the manifest
(the listing's, before anything is read): base64 (4/3) plus the prompt and the JSON around it
(RECORD_OVERHEAD_BYTES). SubmitBatchJob checks the bytes the part's records really hold before it submits.

The plan is written once (``jobs/{job}/batch/plan.json``) before any record: a retried or redriven step, a
record writer and a document's review all read that one, whatever the settings are by then. It reads the
manifest's parts one at a time: a million entries in bounded memory, one GetObject per part.
"""

from __future__ import annotations

import functools
import math
from collections import deque
from collections.abc import Iterable, Iterator

from functions import aws, s3_json, storage
from functions.batch_inference.facts import BATCH_MAX_JOB_BYTES, BATCH_MIN_RECORDS
from functions.batch_inference.payloads import BatchPlan, PlanEvent, PlanOutcome
from functions.observability import logger
from functions.payloads.common import utc_now
from functions.payloads.job import JobManifest, ManifestEntry
from functions.settings import get_settings

# What a record holds besides the document's bytes: the system prompt, the instruction text, the Converse
# body's and the record's JSON. A definition's prompt is a few KB; 32 KiB leaves room for a long one.
RECORD_OVERHEAD_BYTES = 32 * 1024


def record_bytes_bound(document_bytes: int | None) -> int:
    """The most a document's input record can hold: its bytes in base64 plus the overhead (a missing
    document, size unknown, writes no record: counted at the overhead)."""
    return 4 * math.ceil((document_bytes or 0) / 3) + RECORD_OVERHEAD_BYTES


def split(sizes: Iterable[int | None], max_records: int, max_bytes: int) -> list[int]:
    """The first index of each part: consecutive documents (their sizes in index order) while a part stays
    within ``max_records`` records and ``max_bytes`` bytes of records. A last part under Bedrock's minimum of
    records starts earlier, taking the documents it lacks from the part before when that one keeps the
    minimum (50,050 documents: 49,950 and 100, not 50,000 and 50 of which none could be a batch job)."""
    starts: list[int] = []
    records = volume = count = 0
    recent: deque[int] = deque(maxlen=BATCH_MIN_RECORDS)  # the last documents' weights
    for index, size in enumerate(sizes):
        weight = record_bytes_bound(size)
        if not starts or records + 1 > max_records or volume + weight > max_bytes:
            starts.append(index)
            records = volume = 0
        records += 1
        volume += weight
        count = index + 1
        recent.append(weight)
    if len(starts) > 1:
        last, before = count - starts[-1], starts[-1] - starts[-2]
        lacking = BATCH_MIN_RECORDS - last
        if lacking > 0 and before - lacking >= BATCH_MIN_RECORDS and sum(recent) <= max_bytes:
            starts[-1] -= lacking
    return starts


def _entries(manifest: JobManifest) -> Iterator[ManifestEntry]:
    """The manifest's entries in index order, one part in memory at a time."""
    if manifest.entries or not manifest.parts:
        yield from manifest.entries
        return
    s3 = aws.s3_client()
    for key in manifest.parts:
        body = s3.get_object(Bucket=get_settings().bucket_name, Key=key)["Body"].read()
        yield from s3_json.parse_items(body)


def plan(event: PlanEvent) -> PlanOutcome:
    """The job's plan, made once, and the BatchJobs Map's items (one ``{"part": n}`` a line)."""
    existing = get_plan(event.job_id)
    if existing is None:
        settings, manifest = get_settings(), s3_json.get_manifest(event.job_id)
        if manifest is None:
            raise LookupError(f"job {event.job_id} has no manifest: SealJob did not run")
        sizes = (entry.size for entry in _entries(manifest))
        max_records, max_bytes = settings.batch_records_per_job, BATCH_MAX_JOB_BYTES
        starts = split(sizes, max_records, max_bytes)
        existing = BatchPlan(
            job_id=event.job_id,
            documents=manifest.count,
            max_records=max_records,
            max_bytes=max_bytes,
            starts=starts,
            created_at=utc_now(),
        )
        lines = "".join(f'{{"part": {part}}}\n' for part in range(existing.parts))
        # The items first, the plan last: a plan on S3 means its items are there too.
        s3_json.put_bytes(
            storage.batch_parts_key(event.job_id), lines.encode(), content_type="application/jsonl"
        )
        s3_json.put_json(storage.batch_plan_key(event.job_id), existing)
        logger.info("batch jobs planned", extra={"parts": existing.parts, "documents": existing.documents})
    return PlanOutcome(
        job_id=event.job_id, parts=existing.parts, parts_key=storage.batch_parts_key(event.job_id)
    )


def get_plan(job_id: str) -> BatchPlan | None:
    data = s3_json.get_json_or_none(storage.batch_plan_key(job_id))
    return None if data is None else BatchPlan.model_validate(data)


@functools.lru_cache(maxsize=32)
def _cached_plan(bucket: str, job_id: str) -> BatchPlan:
    found = get_plan(job_id)
    if found is None:
        raise LookupError("no plan")  # not cached: PlanBatchJobs may write it yet
    return found


def plan_of(job_id: str) -> BatchPlan | None:
    """The job's plan (read once per warm container: it never changes once written), or None."""
    try:
        return _cached_plan(get_settings().bucket_name, job_id)
    except LookupError:
        return None


def clear_caches() -> None:
    _cached_plan.cache_clear()
