"""One partition of VerifyJob's independent check (docs/design.md, "Verification by fan-in"): a
VerifyPartitions child, in bounded memory whatever the job's size.

A partition is a manifest part (functions/logic/report_fan_in.py ``partitions_of``). Read from storage, not
from earlier steps' outputs: the part's entries, the report's rows of those documents (one ranged read of
rows.jsonl, or report.json's inline rows for a report without a table), the listing of ``results/`` over the
range of the part's result names and over the partition's own range of names (``list_after`` ..
``list_until``: the partitions' ranges cover every name once, so every result object is looked at by exactly
one partition), the listing of the journal over the part's documents, and the SAMPLE_SIZE results of the part
that rank lowest by hash (the job's sample is the lowest of all partitions': verify_job picks it).

What it finds goes to jobs/{job}/verify/part-NNNNN.json (PartitionVerdict); a name in its own range that is
no document of its part is an orphan candidate, which verify_job resolves against the whole manifest.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError
from pydantic import ValidationError

from functions import aws, s3_json, storage
from functions.durability.faults import fault_point, job_options
from functions.errors import JobVerificationFailed
from functions.logic.report_fan_in import partition_entries
from functions.observability import logger
from functions.payloads.document import DocumentResult
from functions.payloads.fan_in import (
    Partition,
    PartitionDone,
    PartitionEvent,
    PartitionVerdict,
    SampleVerdict,
)
from functions.payloads.job import JobManifest, ManifestEntry
from functions.payloads.report import Report, ReportRow, ReportTable
from functions.reviews import ReviewDecision, review_items, reviewed_packet, reviewed_row

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

SAMPLE_SIZE = 16  # results read in full per job, whatever its size
SHOWN = 5  # documents named per problem (the rest counted)
_READ_WORKERS = 16


def rank(job_id: str, document_id: str) -> str:
    """A document's place in the job's sample (the same on every attempt): a hash of job and document."""
    return hashlib.sha256(f"{job_id}/{document_id}".encode()).hexdigest()


def expected_row(result: DocumentResult, row: ReportRow) -> ReportRow:
    """The row the report should hold for a result: its own, or, for a review result the report shows
    decided (the job waited for its review queue), the row with the reviewer's decision applied (a packet's:
    its sections' decisions, functions/reviews.py ``reviewed_packet``)."""
    own = result.report_row(list(row.fields))
    if own.sections is not None:
        if row == own:  # nothing decided (or the job did not wait): no decision to read
            return own
        decisions = {
            item: ReviewDecision.model_validate(data)
            for item in review_items(own)
            if (data := s3_json.get_json_or_none(storage.review_item_key(result.job_id, item))) is not None
        }
        return reviewed_packet(own, decisions, None) if decisions else own
    if result.status != "review" or row.status == "review":
        return own
    data = s3_json.get_json_or_none(storage.review_key(result.job_id, result.document_id))
    return own if data is None else reviewed_row(own, ReviewDecision.model_validate(data), list(row.fields))


def read_report(job_id: str) -> tuple[Report | None, str | None]:
    data = s3_json.get_json_or_none(storage.report_key(job_id))
    if data is None:
        return None, "report.json is missing"
    try:
        return Report.model_validate(data), None
    except ValidationError:
        return None, "report.json is not a valid report"


def read_table(job_id: str) -> ReportTable | None:
    """The report's table (report/table.json, what report.json's ``table`` says), None for a report built
    without one (the previous path): then the partition reads report.json's inline rows."""
    data = s3_json.get_json_or_none(storage.report_table_index_key(job_id))
    try:
        return None if data is None else ReportTable.model_validate(data)
    except ValidationError:
        return None


def partition_rows(job_id: str, position: int, own: set[str]) -> tuple[list[ReportRow], str | None]:
    """The report's rows of the partition's documents (``own``): a ranged read of rows.jsonl (the
    ``position``-th segment), or report.json's inline rows of those documents (a report without a table);
    and report.json's problem when that was read and is missing or invalid."""
    table = read_table(job_id)
    if table is None:
        report, problem = read_report(job_id)
        return ([row for row in report.rows if row.document_id in own] if report is not None else []), problem
    if position >= len(table.jsonl_segments):
        return [], None
    rows = _segment_rows(table, position)
    return rows, None


def _segment_rows(table: ReportTable, position: int) -> list[ReportRow]:
    start = sum(table.jsonl_segments[:position])
    size = table.jsonl_segments[position]
    if size == 0:
        return []
    try:
        body = (
            aws.s3_client()
            .get_object(
                Bucket=s3_json.bucket_name(), Key=table.jsonl_key, Range=f"bytes={start}-{start + size - 1}"
            )["Body"]
            .read()
        )
    except ClientError as error:  # the table is missing or shorter than report.json says: no rows here
        if s3_json.is_not_found(error) or error.response.get("Error", {}).get("Code") == "InvalidRange":
            return []
        raise
    if len(body) != size:
        return []
    try:
        return [ReportRow.model_validate_json(line) for line in body.splitlines() if line.strip()]
    except ValidationError:
        return []


def _keys_between(prefix: str, start_after: str | None, stop_above: str | None) -> Iterator[str]:
    """Keys under ``prefix`` after ``start_after`` (exclusive), up to ``stop_above`` (inclusive)."""
    for obj in s3_json.list_objects(prefix, start_after=start_after):
        if stop_above is not None and obj["Key"] > stop_above:
            return
        yield obj["Key"]


def _listed_results(job_id: str, names: list[str], partition: Partition) -> tuple[set[str], list[str]]:
    """The part's names that have a result object, and the ids of the result objects in the partition's own
    range that are not the part's (orphan candidates). One listing over both ranges."""
    prefix = storage.results_prefix(job_id)
    own = set(names)
    starts = [f"{prefix}{names[0][:-1]}"] if names else []  # just before the smallest name
    starts.append(f"{prefix}{partition.list_after}" if partition.list_after is not None else "")
    stops = [f"{prefix}{names[-1]}"] if names else []
    stops.append(f"{prefix}{partition.list_until}" if partition.list_until is not None else "")
    start = min(starts) or None
    stop = None if "" in stops else max(stops)
    present: set[str] = set()
    candidates: list[str] = []
    for key in _keys_between(prefix, start, stop):
        document_id = storage.id_from_key(prefix, key)
        if document_id is None:
            continue
        name = key[len(prefix) :]
        if name in own:
            present.add(name)
        elif (partition.list_after is None or name > partition.list_after) and (
            partition.list_until is None or name <= partition.list_until
        ):
            candidates.append(document_id)
    return present, candidates


def _journalled(job_id: str, expected: set[str], document_ids: list[str]) -> set[str]:
    """Which of the expected journal names (``{document}/{call}.json``) the journal holds: one listing over
    the range of the part's documents."""
    if not expected:
        return set()
    root = storage.model_calls_root(job_id)
    folders = sorted(f"{document_id}/" for document_id in document_ids)
    stop = f"{root}{folders[-1][:-1]}0"  # '0' follows '/': past every key of the last document
    found = set()
    for key in _keys_between(root, f"{root}{folders[0][:-1]}", stop):
        name = key[len(root) :]
        if name in expected:
            found.add(name)
    return found


def _sample(job_id: str, present_ids: list[str], rows: dict[str, ReportRow]) -> list[SampleVerdict]:
    ranked = sorted(present_ids, key=lambda document_id: rank(job_id, document_id))[:SAMPLE_SIZE]

    def judge(document_id: str) -> SampleVerdict:
        verdict = SampleVerdict(document_id=document_id, rank=rank(job_id, document_id))
        data = s3_json.get_json_or_none(storage.result_key(job_id, document_id))
        try:
            result = DocumentResult.model_validate(data)
        except ValidationError:
            return verdict.model_copy(update={"problem": "invalid"})
        if result.job_id != job_id or result.document_id != document_id:
            return verdict.model_copy(update={"problem": "invalid"})
        row = rows.get(document_id)
        if row is not None and row.status != "failed" and row != expected_row(result, row):
            return verdict.model_copy(update={"problem": "differs"})
        return verdict

    if not ranked:
        return []
    with ThreadPoolExecutor(max_workers=min(_READ_WORKERS, len(ranked))) as pool:
        return list(pool.map(judge, ranked))


def verify_partition_of(
    job_id: str, manifest: JobManifest, partition: Partition, position: int
) -> PartitionVerdict:
    """What one partition finds (nothing written here)."""
    entries: list[ManifestEntry] = partition_entries(manifest, partition)
    names = sorted(f"{entry.document_id}.json" for entry in entries)
    rows, _ = partition_rows(job_id, position, {entry.document_id for entry in entries})
    by_id = {row.document_id: row for row in rows}
    expected = {
        f"{row.document_id}/{row.model_call_id}.json" for row in rows if row.model_call_id is not None
    }
    # The two listings side by side: each is pages one after another (a page names where the next starts).
    with ThreadPoolExecutor(max_workers=2) as pool:
        listed = pool.submit(_listed_results, job_id, names, partition)
        journal = pool.submit(
            _journalled, job_id, expected, [entry.document_id for entry in entries] + list(by_id)
        )
        (present, candidates), found = listed.result(), journal.result()
    stored = {name[: -len(".json")] for name in present}
    missing = [entry.document_id for entry in entries if entry.document_id not in stored]
    without = [row.document_id for row in rows if row.status != "failed" and row.document_id not in stored]
    unjournalled = [
        row.document_id
        for row in rows
        if row.model_call_id is not None and f"{row.document_id}/{row.model_call_id}.json" not in found
    ]
    ordered = [entry.document_id for entry in entries]
    return PartitionVerdict(
        partition=partition.partition,
        key=partition.key,
        documents=len(entries),
        missing=missing[:SHOWN],
        missing_count=len(missing),
        orphan_candidates=sorted(candidates),
        rows_cover_partition=sorted(by_id) == sorted(ordered) and len(rows) == len(entries),
        rows_without_result=without[:SHOWN],
        rows_without_result_count=len(without),
        stored_by_status=dict(Counter(row.status for row in rows if row.document_id in stored)),
        unjournalled=unjournalled[:SHOWN],
        unjournalled_count=len(unjournalled),
        sample=_sample(job_id, [document_id for document_id in ordered if document_id in stored], by_id),
        smallest_name=names[0] if names else None,
        largest_name=names[-1] if names else None,
    )


def verify_partition(event: PartitionEvent, context: LambdaContext | None = None) -> PartitionDone:
    """A VerifyPartitions child: the partition's verdict, written to jobs/{job}/verify/part-NNNNN.json."""
    job_id, partition = event.job_id, event.partition
    logger.append_keys(job_id=job_id, partition=partition.partition)
    manifest = s3_json.get_manifest(job_id)
    if manifest is None:
        raise JobVerificationFailed(f"job {job_id} failed verification: manifest: manifest.json is missing")
    verdict = verify_partition_of(job_id, manifest, partition, partition.partition)
    key = storage.verify_partition_key(job_id, partition.partition)
    s3_json.put_json(key, verdict)
    fault_point(
        "after_verify_partition",
        job_options(job_id, event.options),
        event.retry_count,
        job_id=job_id,
        redrive_count=event.redrive_count,
        part=partition.partition,
        context=context,
    )
    return PartitionDone(partition=partition.partition, key=key)


def read_verdict(job_id: str, partition: Partition) -> PartitionVerdict | None:
    data: Any = s3_json.get_json_or_none(storage.verify_partition_key(job_id, partition.partition))
    return None if data is None else PartitionVerdict.model_validate(data)
