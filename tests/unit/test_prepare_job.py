from __future__ import annotations

import hashlib
import re
from typing import Any

import boto3
import pytest

from docagent.kit.loader import read_bundle
from functions import s3_json
from functions.errors import InvalidJobRequest, JobConflict, NoDocuments
from functions.handlers.prepare_job import handler
from functions.logic.prepare_job import document_id_for
from functions.logic.process_document import read_document
from functions.payloads.common import DOCUMENT_ID_PATTERN
from functions.payloads.job import JobManifest, ManifestEntry
from functions.settings import get_settings
from tests.fakes import FakeLambdaContext
from tests.support import (
    BUCKET,
    EXAMPLES,
    IDEMPOTENCY_TABLE,
    PREFIX,
    get_json,
    items,
    list_keys,
    prepare,
    put_object,
    seed_documents,
    without_models,
)


def test_handler_prepares_a_prefix_job(cloud, load_event):
    documents = seed_documents(3)
    put_object(f"{PREFIX}sub/", b"")  # a folder marker is not a document
    started = handler(load_event("prepare_job"), FakeLambdaContext())
    assert started == {
        "job_id": "job-unit-1",
        "bucket": BUCKET,
        "options": {"fault": None, "require_approval": False, "max_cost_usd": None, "inference": "on_demand"},
        "listing": {"part": 0, "documents": 0, "done": False},
    }
    list_event = {"action": "list", "job_id": "job-unit-1", "listing": started["listing"]}
    listing = handler(list_event, FakeLambdaContext())
    assert listing == {"part": 1, "documents": 3, "done": True}
    job = handler({"action": "seal", "job_id": "job-unit-1", "listing": listing}, FakeLambdaContext())

    assert job == {
        "job_id": "job-unit-1",
        "bucket": BUCKET,
        "manifest_key": "jobs/job-unit-1/manifest.json",
        "items_key": "jobs/job-unit-1/items/part-00000.jsonl",  # one part: the Map reads it as it is
        "document_count": 3,
        # SealJob decides wait_for_review: the request leaves it to the definition, whose review.wait is unset
        "options": {
            "fault": None,
            "require_approval": False,
            "max_cost_usd": None,
            "inference": "on_demand",
            "wait_for_review": False,
        },
        "versions": job["versions"],
    }
    versions = job["versions"]
    assert versions["model_id"] == "fake-model"
    invoices = without_models(read_bundle(EXAMPLES / "invoices"))  # as tests/unit/conftest.py publishes it
    assert (versions["definition"], versions["definition_sha256"]) == ("invoices", invoices.sha256)
    assert versions["prompt_version"] == f"invoices@{invoices.sha256[:12]}"
    assert versions["prompt_sha256"] == invoices.sha256
    assert versions["code_version"] == "test-0000000"

    entries = items_of(job)
    assert [entry.document_id for entry in entries] == [f"{d.document_id}.txt" for d in documents]
    assert [entry.index for entry in entries] == [0, 1, 2]
    for entry, document in zip(entries, documents, strict=True):
        assert entry.key == f"{PREFIX}{document.document_id}.txt"
        assert entry.size == len(document.text.encode())
        assert entry.etag == f'"{hashlib.md5(document.text.encode()).hexdigest()}"'
        assert (entry.sha256, entry.version_id) == (None, None)  # not read; the bucket is not versioned

    manifest = JobManifest.model_validate(get_json(job["manifest_key"]))
    assert manifest.entries == []  # a summary: the entries are in the parts
    assert manifest.parts == [job["items_key"]] and manifest.document_count == 3
    assert s3_json.manifest_entries(manifest) == entries
    assert manifest.job.source_bucket == BUCKET
    assert get_json("jobs/job-unit-1/request.json")["request"]["prefix"] == PREFIX


def items_of(job: dict[str, Any]) -> list[ManifestEntry]:
    body = boto3.client("s3").get_object(Bucket=BUCKET, Key=job["items_key"])["Body"].read()
    lines = body.decode().splitlines()
    assert body.endswith(b"\n") and all(line.startswith("{") for line in lines)  # JSON Lines
    return [ManifestEntry.model_validate_json(line) for line in lines]


def test_a_manifest_from_before_the_paged_listing_still_reads(cloud):
    entry = ManifestEntry(document_id="a.txt", key=f"{PREFIX}a.txt", index=0)
    old = {
        "job": {"job_id": "old", "source_bucket": BUCKET, "prefix": PREFIX, "request_sha256": "0" * 64},
        "versions": {
            "model_id": "m", "prompt_version": "extract-v1", "prompt_sha256": "1" * 64,
            "code_version": "c", "created_at": "2026-11-01T00:00:00Z",
        },
        "entries": [entry.model_dump(mode="json")],
    }  # fmt: skip
    manifest = JobManifest.model_validate(old)
    assert (s3_json.manifest_entries(manifest), manifest.count) == ([entry], 1)
    assert s3_json.parse_items(b'[{"document_id": "a.txt", "key": "k", "index": 0}]')[0].key == "k"


def test_a_document_list_job_keeps_the_listed_order_and_lists_missing_keys(cloud):
    put_object("incoming/in/b.txt", "Invoice")
    put_object("incoming/other/a.txt", "Invoice")
    job = prepare(
        "job-list",
        documents=["incoming/in/b.txt", "incoming/other/a.txt", "incoming/in/a.txt", "incoming/gone.txt"],
    )
    entries = items(job)
    # Two keys share the base name a.txt: both are named by their whole key, made safe and hashed.
    assert [entry.document_id for entry in entries] == [
        "b.txt",
        document_id_for("incoming/other/a.txt"),
        document_id_for("incoming/in/a.txt"),
        "gone.txt",
    ]
    assert entries[1].document_id.startswith("incoming_other_a.txt-h")
    assert (entries[1].size, entries[1].etag) == (7, f'"{hashlib.md5(b"Invoice").hexdigest()}"')
    assert (entries[2].size, entries[2].etag) == (None, None)
    assert (entries[3].size, entries[3].etag) == (None, None)  # rejected later as DocumentMissing


def test_an_oversized_document_is_listed_not_refused(cloud):
    put_object(f"{PREFIX}big.txt", "x" * 5000)
    put_object(f"{PREFIX}small.txt", "Invoice")
    job = prepare("job-big")
    big, small = items(job)
    assert (big.document_id, big.size) == ("big.txt", 5000)
    assert small.size == 7 and small.etag is not None


def test_a_versioned_bucket_pins_each_document_to_its_version_and_the_child_reads_it(cloud):
    s3 = boto3.client("s3")
    s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    put_object(f"{PREFIX}a.txt", "first draft")
    put_object(f"{PREFIX}a.txt", "the version the job sees")
    job = prepare("job-versions")
    [entry] = items(job)
    current = s3.head_object(Bucket=BUCKET, Key=entry.key)["VersionId"]
    assert entry.version_id == current
    put_object(f"{PREFIX}a.txt", "edited while the job runs")  # a newer version: the job keeps its own

    got = read_document(BUCKET, entry, max_bytes=4000)
    assert (got.document.data, got.sha256) == (
        b"the version the job sees",
        hashlib.sha256(b"the version the job sees").hexdigest(),
    )


def test_same_job_twice_returns_the_same_result_without_rewriting(cloud, monkeypatch):
    seed_documents(2)
    first = prepare("job-twice")
    s3 = boto3.client("s3")
    before = {key: s3.head_object(Bucket=BUCKET, Key=key)["ETag"] for key in list_keys("jobs/job-twice/")}
    writes = []
    monkeypatch.setattr(s3_json, "put_json", lambda *args, **kwargs: writes.append(args))
    second = prepare("job-twice")
    assert second == first
    assert writes == []
    after = {key: s3.head_object(Bucket=BUCKET, Key=key)["ETag"] for key in list_keys("jobs/job-twice/")}
    assert after == before


def test_same_job_id_with_another_request_is_a_conflict(cloud):
    seed_documents(2)
    put_object("incoming/elsewhere/x.txt", "Invoice")
    prepare("job-conflict")
    with pytest.raises(JobConflict, match="job-conflict"):
        prepare("job-conflict", prefix="incoming/elsewhere/")
    with pytest.raises(JobConflict):
        prepare("job-conflict", options={"fault": {"point": "before_action"}})


def test_conflict_is_still_refused_after_the_idempotency_record_expired(cloud):
    seed_documents(2)
    put_object("incoming/elsewhere/x.txt", "Invoice")
    prepare("job-old")
    dynamodb = boto3.client("dynamodb")
    for item in dynamodb.scan(TableName=IDEMPOTENCY_TABLE)["Items"]:
        dynamodb.delete_item(TableName=IDEMPOTENCY_TABLE, Key={"id": item["id"]})
    with pytest.raises(JobConflict):
        prepare("job-old", prefix="incoming/elsewhere/")
    assert prepare("job-old").document_count == 2  # the same request is still fine


def test_a_prefix_without_documents_is_no_documents(cloud):
    with pytest.raises(NoDocuments):
        prepare("job-empty", prefix="incoming/nothing-here/")


def test_an_empty_document_list_is_no_documents(cloud):
    with pytest.raises(NoDocuments):
        prepare("job-empty-list", documents=[])


def test_a_failed_prepare_can_be_retried(cloud):
    with pytest.raises(NoDocuments):
        prepare("job-later")
    seed_documents(1)
    assert prepare("job-later").document_count == 1


@pytest.mark.parametrize(
    ("event", "message"),
    [
        ({"request": {"job_id": "j1"}, "execution_name": "j1"}, "exactly one of 'prefix' or 'documents'"),
        ({"request": {"job_id": "j1", "prefix": "incoming"}, "execution_name": "j1"}, "must end with '/'"),
        ({"request": {"job_id": "j1", "prefix": "a/"}, "execution_name": "other"}, "must equal the job id"),
        ({"request": {"job_id": "j 1", "prefix": "a/"}, "execution_name": "j 1"}, "job_id"),
        ({"request": {"job_id": "j1", "prefix": "a/"}}, "execution_name"),
        ({"job_id": "j1", "prefix": "a/"}, "request"),
    ],
)
def test_malformed_requests_are_invalid_job_requests(cloud, event, message):
    with pytest.raises(InvalidJobRequest, match=message):
        handler(event, FakeLambdaContext())


def test_a_missing_bucket_is_an_invalid_request(cloud, env):
    env.setenv("SOURCE_LOCATIONS", "incoming/,s3://no-such-bucket/a/")
    get_settings.cache_clear()
    event = {"request": {"job_id": "j1", "prefix": "a/", "bucket": "no-such-bucket"}, "execution_name": "j1"}
    with pytest.raises(InvalidJobRequest, match="NoSuchBucket"):
        handler(event, FakeLambdaContext())


@pytest.mark.parametrize(
    ("request_fields", "named"),
    [
        ({"prefix": "jobs/"}, "s3://docagent-test-bucket/jobs/"),
        (
            {"documents": ["incoming/batch-1/doc-00000.txt", "jobs/other/approval.json"]},
            "jobs/other/approval.json",
        ),
        ({"prefix": "map-runs/"}, "s3://docagent-test-bucket/map-runs/"),
        ({"prefix": "a/", "bucket": "another-bucket"}, "s3://another-bucket/a/"),
    ],
)
def test_documents_come_only_from_the_source_locations(cloud, request_fields, named):
    """Never the job records (another job's approval.json holds its task token) nor any other prefix."""
    seed_documents(1)
    event = {"request": {"job_id": "j1", **request_fields}, "execution_name": "j1"}
    with pytest.raises(InvalidJobRequest) as refused:
        handler(event, FakeLambdaContext())
    message = str(refused.value)
    assert named in message
    assert "outside the source locations" in message and "source_locations in cdk.json" in message
    assert not s3_json.exists("jobs/j1/request.json")  # refused before anything is written


def test_too_many_documents_is_an_invalid_request(cloud, env):
    env.setenv("MAX_DOCUMENTS", "2")
    seed_documents(3)
    with pytest.raises(InvalidJobRequest, match="MAX_DOCUMENTS=2"):
        prepare("job-many")


def test_document_ids_come_from_the_key_alone_safe_keys_unchanged():
    for safe in ("doc-00001.txt", "a_x.txt", "sub.dir.v2", "A" * 180):
        assert document_id_for(safe) == safe  # the demo and test corpora keep their ids
    hashed = {
        key: document_id_for(key) for key in ("a/x.txt", "b/x.txt", "a x.txt", ".hidden", "-x", "a" * 500)
    }
    for key, document_id in hashed.items():
        assert re.fullmatch(DOCUMENT_ID_PATTERN, document_id), document_id
        assert document_id.endswith("-h" + hashlib.sha256(key.encode()).hexdigest()[:16])
        assert len(document_id) <= 180
    assert hashed["a/x.txt"].startswith("a_x.txt-h") and hashed[".hidden"].startswith("_.hidden-h")
    assert len(set(hashed.values())) == len(hashed)  # "a/x.txt" and "a x.txt" sanitise alike, differ by hash
    # A safe key that looks like a hashed id is hashed too, so it cannot take another key's id.
    lookalike = hashed["a/x.txt"]
    assert document_id_for(lookalike) != lookalike
    assert document_id_for("sub dir/ä b.txt") == document_id_for("sub dir/ä b.txt")  # deterministic
