"""The work of one PrepareJob, ListDocuments, SealJob, BuildReport or VerifyJob invocation does not grow with
the job (docs/design.md, "Reports and verification"): every S3 and DynamoDB call they make is counted at
two job sizes, each in a fresh moto. Report and verify: the counts are the same (all listings fit in one
page of 1,000 at both sizes; the larger is three times the smaller and past verify's sample of 16). The
listing: at 200 and 600 documents (pages of 100 and parts of two pages, so that many steps and parts run;
moto lists versions in time linear in the bucket, so bigger sizes only cost suite time), no ListDocuments
invocation makes more calls than the bound, at either size; SealJob makes a fixed number of calls per part."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import moto.s3.models
import pytest
from botocore.client import BaseClient
from moto.moto_api._internal.models import moto_api_backend

from functions import s3_json, storage
from functions.logic import list_documents
from functions.logic.build_report import build_report
from functions.logic.list_documents import list_step, seal
from functions.logic.prepare_job import prepare_job
from functions.logic.verify_job import SAMPLE_SIZE, verify_job
from functions.payloads.job import ListingCursor, ListingEvent, PreparedJob
from functions.payloads.report import BuildReportEvent
from functions.payloads.verification import VerifyJobEvent
from functions.settings import Settings, get_settings
from tests.fakes import FakeLambdaContext
from tests.moto_state import put_straight
from tests.support import (
    BUCKET,
    PREFIX,
    actions,
    list_and_seal,
    prepare,
    process_all,
    s3,
    seed_documents,
    write_result_files,
)
from tests.unit.conftest import clear_all_caches, create_stack_resources

SIZES = (20, 60)
Calls = Counter[tuple[str, str]]


class CallCounter:
    """Counts botocore API calls by (service, operation) while ``counting`` is on."""

    def __init__(self) -> None:
        self.calls: Calls = Counter()
        self.on = False

    def measure(self, fn: Callable[[], Any]) -> Calls:
        self.calls, self.on = Counter(), True
        try:
            fn()
        finally:
            self.on = False
        return self.calls


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch) -> Iterator[CallCounter]:
    counting = CallCounter()
    original = BaseClient._make_api_call

    def make_api_call(client: BaseClient, operation: str, params: Any) -> Any:
        if counting.on:
            counting.calls[(client.meta.service_model.service_name, operation)] += 1
        return original(client, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", make_api_call)
    yield counting


def _job_calls(size: int, counter: CallCounter) -> dict[str, Calls]:
    """Calls per step of one job of ``size`` documents, in a fresh moto."""
    moto_api_backend.reset()
    clear_all_caches()
    create_stack_resources()
    seed_documents(size)
    job_id = f"job-bounds-{size}"
    calls: dict[str, Calls] = {}
    jobs = []
    calls["prepare"] = counter.measure(lambda: jobs.append(prepare(job_id, prefix=PREFIX)))
    job = jobs[0]
    outcomes = process_all(job)
    map_run = write_result_files(job, outcomes)  # what the Distributed Map's ResultWriter leaves
    summaries = []
    event = BuildReportEvent(job_id=job_id, map_run=map_run)
    calls["report"] = counter.measure(lambda: summaries.append(build_report(event)))
    done = actions(job, summaries[0])
    verify_event = VerifyJobEvent.model_validate(
        {"job_id": job_id, "report": summaries[0].model_dump(), "actions": done.model_dump()["actions"]}
    )
    calls["verify"] = counter.measure(lambda: verify_job(verify_event, context=FakeLambdaContext()))
    return calls


def test_prepare_report_and_verify_make_the_same_calls_at_20_and_60_documents(cloud, counter):
    small, large = (_job_calls(size, counter) for size in SIZES)

    for step in ("prepare", "report", "verify"):
        assert large[step] == small[step], step
    # The bound itself, by operation (prepare: PrepareJob, one ListDocuments, SealJob of one part).
    # request.json (x3), part records, manifest, the definition's current pointer, the pinned definition
    # (SealJob: its review.wait): no document
    assert large["prepare"][("s3", "GetObject")] <= 8
    assert large["prepare"][("s3", "ListObjectVersions")] == 2  # the bucket check, one page
    assert (
        large["report"][("s3", "GetObject")] == 5
    )  # manifest, its part, the pinned definition, result-writer manifest, SUCCEEDED_0
    assert large["report"][("s3", "PutObject")] == 1  # report.json
    # manifest, its part and its listing record, the partition's verdict (none here: verified in place),
    # report/table.json (none: the previous path built this report) so report.json for the partition's rows,
    # report.json for the merge, the pinned definition, the action's done.json and its ledger record
    assert large["verify"][("s3", "GetObject")] <= 10 + SAMPLE_SIZE
    assert sum(large["verify"].values()) <= 13 + SAMPLE_SIZE + 2


# -- the listing, spread over steps -------------------------------------------------------------------------

LISTING_SIZES = (200, 600)
PAGE_SIZE = 100
MAX_PAGES = 1
PART_MIN_BYTES = 24 * 1024  # ~160 entries of ~150 B: each part takes two steps (the first leaves it open)


def seed_fast(count: int) -> None:
    """``count`` small objects put straight into moto's backend (seeding through the API would take longer);
    the listing reads them through the API like any others."""
    for number in range(count):
        put_straight(BUCKET, f"{PREFIX}doc-{number:06d}.txt", b"Invoice")


@pytest.fixture
def small_listing(env: pytest.MonkeyPatch) -> None:
    env.setenv("ITEMS_PART_MIN_BYTES", str(PART_MIN_BYTES))
    env.setenv("MAX_DOCUMENTS", "100000")
    env.setenv("LISTING_PAGE_SIZE", str(PAGE_SIZE))
    env.setattr(list_documents, "MAX_PAGES_PER_STEP", MAX_PAGES)
    # moto refuses parts under S3's 5 MiB minimum like S3; these parts are smaller on purpose.
    env.setattr(moto.s3.models, "S3_UPLOAD_PART_MIN_SIZE", 1)
    get_settings.cache_clear()


def _listing_calls(size: int, counter: CallCounter) -> tuple[list[Calls], Calls, PreparedJob]:
    """The calls of every ListDocuments invocation of a job of ``size`` documents, and SealJob's."""
    moto_api_backend.reset()
    clear_all_caches()
    create_stack_resources()
    seed_fast(size)
    job_id = f"job-listing-{size}"
    started = prepare_job({"request": {"job_id": job_id, "prefix": PREFIX}, "execution_name": job_id},
                          FakeLambdaContext())  # fmt: skip
    settings = get_settings()
    cursor, steps = started.listing, []
    while not cursor.done:
        event = ListingEvent(action="list", job_id=job_id, listing=cursor)
        results: list[ListingCursor] = []
        steps.append(counter.measure(partial(_append_step, results, event, settings)))
        [cursor] = results
    jobs: list[PreparedJob] = []
    sealing = ListingEvent(action="seal", job_id=job_id, listing=cursor)
    sealed = counter.measure(lambda: jobs.append(seal(sealing, settings)))
    return steps, sealed, jobs[0]


def _append_step(results: list[ListingCursor], event: ListingEvent, settings: Settings) -> None:
    results.append(list_step(event, settings))


def _step_bound(calls: Calls) -> None:
    assert calls[("s3", "ListObjectVersions")] <= MAX_PAGES
    assert calls[("s3", "GetObject")] <= 3  # request.json, this part's record (or the one before), open part
    assert calls[("s3", "PutObject")] == 2  # the part, then its record
    assert sum(calls.values()) <= MAX_PAGES + 5


def test_each_listing_step_is_bounded_at_200_and_600_documents(cloud, counter, small_listing):
    for size in LISTING_SIZES:
        steps, sealed, job = _listing_calls(size, counter)
        for calls in steps:
            _step_bound(calls)
        # The whole listing was read once: ceil(V / PAGE_SIZE) pages over all steps, none twice.
        assert sum(calls[("s3", "ListObjectVersions")] for calls in steps) == -(-size // PAGE_SIZE)
        assert job.document_count == size
        manifest = s3_json.get_manifest(job.job_id)
        assert manifest is not None
        parts = len(manifest.parts)
        assert parts == -(-size // (2 * PAGE_SIZE))  # parts grow with N: two pages each ...
        # ... and SealJob's calls by the parts: request, manifest, one record per part, the join (exists?,
        # create, one UploadPartCopy per part, complete; nothing for one part), the manifest write.
        joins = 0 if parts == 1 else 1
        assert sealed[("s3", "GetObject")] == 3 + parts  # and the pinned definition (its review.wait)
        assert sealed[("s3", "UploadPartCopy")] == parts * joins
        assert sealed[("s3", "CreateMultipartUpload")] == sealed[("s3", "CompleteMultipartUpload")] == joins
        assert sealed[("s3", "PutObject")] == 1
        assert (job.items_key == manifest.parts[0]) == (parts == 1)
        entries = s3_json.parse_items(
            s3().get_object(Bucket=BUCKET, Key=job.items_key)["Body"].read()
        )  # the joined object the Map reads: every document once, in order
        assert [entry.index for entry in entries] == list(range(size))
        assert len({entry.document_id for entry in entries}) == size
        assert entries[-1].document_id == f"doc-{size - 1:06d}.txt"


def test_a_crash_mid_listing_resumes_from_the_last_written_part(cloud, counter, small_listing):
    seed_fast(400)
    job_id = "job-crash"
    started = prepare_job({"request": {"job_id": job_id, "prefix": PREFIX}, "execution_name": job_id},
                          FakeLambdaContext())  # fmt: skip
    settings = get_settings()
    cursor = started.listing
    for _ in range(3):  # part 0 (two steps, complete), part 1 open after one page
        cursor = list_step(ListingEvent(action="list", job_id=job_id, listing=cursor), settings)
    assert (cursor.part, cursor.documents, cursor.done) == (1, 3 * PAGE_SIZE, False)
    written = s3_json.get_json(storage.listing_part_key(job_id, 1))
    markers: list[str | None] = []
    original_page, original_put = s3_json.list_versions_page, s3_json.put_json

    def crash_while_listing(prefix: str, **kwargs: Any) -> s3_json.VersionsPage:
        markers.append(kwargs.get("key_marker"))
        raise RuntimeError("the worker died mid-listing")  # nothing of this step is written

    def crash_before_the_record(key: str, data: Any, **kwargs: Any) -> None:
        if key.startswith(storage.listing_prefix(job_id)):
            raise RuntimeError("the worker died after writing the part, before its record")
        original_put(key, data, **kwargs)

    event = ListingEvent(action="list", job_id=job_id, listing=cursor)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(s3_json, "list_versions_page", crash_while_listing)
        with pytest.raises(RuntimeError):
            list_step(event, settings)
    assert markers == [written["next_key_marker"]]  # it went on from the open part's record
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(s3_json, "put_json", crash_before_the_record)
        with pytest.raises(RuntimeError):
            list_step(event, settings)  # the part object now holds more than its record names
    # The retry (same cursor) lists one page from the record's marker, no earlier page again, and reads back
    # only the bytes the record names.
    markers.clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            s3_json,
            "list_versions_page",
            lambda prefix, **kwargs: (
                markers.append(kwargs.get("key_marker")) or original_page(prefix, **kwargs)
            ),
        )
        retried = counter.measure(lambda: list_step(event, settings))
    assert markers == [written["next_key_marker"]]
    _step_bound(retried)
    job = list_and_seal(job_id, cursor)
    entries = s3_json.manifest_entries(s3_json.get_manifest(job_id))  # type: ignore[arg-type]
    assert [entry.index for entry in entries] == list(range(400))
    assert len({entry.key for entry in entries}) == 400 and job.document_count == 400
    # A complete part is reused without listing: a repeat of the whole job lists and writes nothing.
    repeat = counter.measure(lambda: list_and_seal(job_id))
    assert repeat[("s3", "ListObjectVersions")] == 0 and repeat[("s3", "PutObject")] == 0
    # The join is the parts' bytes in order; lost (a local cloud restored without it), it is joined again.
    manifest = s3_json.get_manifest(job_id)
    assert manifest is not None and len(manifest.parts) == 2
    parts = b"".join(s3().get_object(Bucket=BUCKET, Key=key)["Body"].read() for key in manifest.parts)
    s3().delete_object(Bucket=BUCKET, Key=job.items_key)
    assert list_and_seal(job_id) == job
    assert s3().get_object(Bucket=BUCKET, Key=job.items_key)["Body"].read() == parts
