"""A job split into Bedrock batch jobs (docs/batch.md, "A million documents"): each part within one batch
job's records and bytes, the plan written once, each part's records in its own folder and its batch job
submitted once (a crash at every submission redriven: the same token, the same batch job), and each
document's reply read from its own part's output."""

from __future__ import annotations

import json
import random
import time
from typing import Any

import pytest
from botocore.stub import ANY, Stubber

from docagent.localcloud.bedrock.evidence import with_evidence
from functions import aws, s3_json, storage
from functions.batch_inference import invocation_jobs as jobs
from functions.batch_inference import plan as planning
from functions.batch_inference.facts import BATCH_MAX_JOB_BYTES, BATCH_MAX_RECORDS, BATCH_MIN_RECORDS
from functions.batch_inference.input_records import write_record
from functions.batch_inference.output_records import clear_caches, get_batch_job
from functions.batch_inference.payloads import BatchPlan, PlanEvent, SubmitEvent, WriteRecordEvent
from functions.batch_inference.plan import RECORD_OVERHEAD_BYTES, plan, plan_of, record_bytes_bound, split
from functions.errors import InjectedFault
from functions.logic.process_document import process_document
from functions.payloads.common import utc_now
from functions.payloads.job import FaultSpec, JobOptions
from functions.settings import get_settings
from tests.fakes import FakeLambdaContext
from tests.support import document_event, items, prepare, seed_documents, seeded_provider

ROLE = "arn:aws:iam::123456789012:role/batch"
JOB = "job-batch-parts"


def parts_of(starts: list[int], documents: int) -> list[range]:
    return [range(a, b) for a, b in zip(starts, [*starts[1:], documents], strict=True)]


def assert_a_valid_split(
    sizes: list[int | None], starts: list[int], max_records: int, max_bytes: int
) -> None:
    """Every document in exactly one part of consecutive indexes; each part within both limits; each part but
    the last full: one more document would pass a limit (no more batch jobs than the limits require), except
    the one before the last when it gave the last the documents that make Bedrock's minimum."""
    parts = parts_of(starts, len(sizes))
    assert starts[0] == 0 and [i for part in parts for i in part] == list(range(len(sizes)))
    for n, part in enumerate(parts):
        volume = sum(record_bytes_bound(sizes[i]) for i in part)
        assert 1 <= len(part) <= max_records and volume <= max_bytes
        topped_up = n + 2 == len(parts) and len(parts[-1]) == BATCH_MIN_RECORDS
        if n + 1 < len(parts) and not topped_up:
            following = record_bytes_bound(sizes[part.stop])
            assert len(part) == max_records or volume + following > max_bytes


def test_a_million_small_documents_are_twenty_batch_jobs_of_fifty_thousand():
    sizes: list[int | None] = [40_000] * 1_000_000  # a scanned one-page form
    began = time.perf_counter()
    starts = split(sizes, BATCH_MAX_RECORDS, BATCH_MAX_JOB_BYTES)
    print(f"split of 1,000,000 documents: {time.perf_counter() - began:.2f} s")  # a figure, not an assert
    assert starts == list(range(0, 1_000_000, 50_000))
    assert_a_valid_split(sizes, starts, BATCH_MAX_RECORDS, BATCH_MAX_JOB_BYTES)


def test_large_documents_split_by_the_five_gigabytes_of_a_batch_job():
    sizes: list[int | None] = [4_500_000] * 10_000  # Converse's largest document, every one
    starts = split(sizes, BATCH_MAX_RECORDS, BATCH_MAX_JOB_BYTES)
    per_part = BATCH_MAX_JOB_BYTES // record_bytes_bound(4_500_000)
    assert per_part == 828 and starts[1] == per_part and len(starts) == -(-10_000 // per_part)
    assert_a_valid_split(sizes, starts, BATCH_MAX_RECORDS, BATCH_MAX_JOB_BYTES)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mixed_sizes_and_missing_documents_split_within_both_limits(seed):
    rng = random.Random(seed)
    sizes = [
        None if rng.random() < 0.01 else rng.choice([2_000, 90_000, 700_000, 4_500_000])
        for _ in range(60_000)
    ]
    starts = split(sizes, 5_000, 400_000_000)
    assert len(starts) > 12  # bytes bind here, not records
    assert_a_valid_split(sizes, starts, 5_000, 400_000_000)
    assert (
        record_bytes_bound(None) == RECORD_OVERHEAD_BYTES
        and record_bytes_bound(3) == 4 + RECORD_OVERHEAD_BYTES
    )


def test_a_last_part_under_the_minimum_takes_what_it_lacks_from_the_one_before():
    sizes: list[int | None] = [40_000] * 50_050
    starts = split(sizes, BATCH_MAX_RECORDS, BATCH_MAX_JOB_BYTES)
    assert starts == [0, 49_950]  # 49,950 and 100: both batch jobs (not 50,000 and 50, the 50 on-demand)
    assert_a_valid_split(sizes, starts, BATCH_MAX_RECORDS, BATCH_MAX_JOB_BYTES)
    # a part before that cannot spare them keeps them: 150 documents at 100 a job stay 100 and 50
    assert split([1] * 150, 100, BATCH_MAX_JOB_BYTES) == [0, 100]


def test_a_plan_finds_each_index_its_part():
    plan_ = BatchPlan(job_id="j", documents=7, max_records=3, max_bytes=1, starts=[0, 3, 6], created_at="t")
    assert [plan_.part_of(i) for i in range(7)] == [0, 0, 0, 1, 1, 1, 2]
    assert plan_.parts == 3


# -- a job of three documents in two parts (the bytes per batch job lowered so two records fill one) --------


@pytest.fixture
def planned(cloud: None, env: pytest.MonkeyPatch, monkeypatch: pytest.MonkeyPatch) -> Any:
    clear_caches()
    env.setenv("BATCH_ROLE_ARN", ROLE)
    env.setenv("FAULT_INJECTION_ENABLED", "true")
    get_settings.cache_clear()
    documents = seed_documents(3)
    prepared = prepare(JOB, options={"inference": "batch"})
    monkeypatch.setattr(planning, "BATCH_MAX_JOB_BYTES", 2 * RECORD_OVERHEAD_BYTES + 20_000)
    monkeypatch.setattr(jobs, "BATCH_MIN_RECORDS", 1)
    outcome = plan(PlanEvent(job_id=JOB))
    entries = items(prepared)
    for entry in entries:
        write_record(WriteRecordEvent(job_id=JOB, options=prepared.options, document=entry))
    yield prepared, entries, documents, outcome
    clear_caches()
    get_settings.cache_clear()


def test_the_plan_is_written_once_with_the_maps_items(planned, monkeypatch):
    _, entries, _, outcome = planned
    assert outcome.parts == 2 and outcome.parts_key == storage.batch_parts_key(JOB)
    lines = s3_json.get_bytes(storage.batch_parts_key(JOB)).decode().splitlines()
    assert [json.loads(line) for line in lines] == [{"part": 0}, {"part": 1}]
    written = plan_of(JOB)
    assert written is not None and written.starts == [0, 2] and written.documents == 3
    # a retry or a redrive reads the plan, whatever the limits are by then
    monkeypatch.setattr(planning, "BATCH_MAX_JOB_BYTES", BATCH_MAX_JOB_BYTES)
    assert plan(PlanEvent(job_id=JOB)) == outcome and s3_json.get_json(
        storage.batch_plan_key(JOB)
    ) == json.loads(written.model_dump_json())
    # each record in its part's folder: the part's batch job reads exactly its documents
    folders = [
        sorted(o["Key"] for o in s3_json.list_objects(storage.batch_input_prefix(JOB, n))) for n in (0, 1)
    ]
    assert folders == [
        sorted(storage.batch_input_key(JOB, 0, e.document_id) for e in entries[:2]),
        [storage.batch_input_key(JOB, 1, entries[2].document_id)],
    ]


def arn(part: int) -> str:
    return f"arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/part{part}job"


def create(part: int) -> dict[str, Any]:
    return {
        "jobName": jobs.batch_job_name(JOB, part),
        "roleArn": ROLE,
        "clientRequestToken": jobs.client_request_token(JOB, part),
        "modelId": ANY,
        "modelInvocationType": "Converse",
        "inputDataConfig": {
            "s3InputDataConfig": {
                "s3Uri": f"s3://{get_settings().bucket_name}/{storage.batch_input_prefix(JOB, part)}",
                "s3InputFormat": "JSONL",
            }
        },
        "outputDataConfig": {
            "s3OutputDataConfig": {
                "s3Uri": f"s3://{get_settings().bucket_name}/{storage.batch_output_prefix(JOB, part)}"
            }
        },
        "timeoutDurationInHours": ANY,
        "tags": ANY,
    }


def test_a_crash_at_every_submission_redrives_to_one_batch_job_a_part(planned):
    options = JobOptions(fault=FaultSpec(point="after_batch_submit", mode="raise", until_redrive=1))
    tokens: list[str] = []
    with Stubber(aws.bedrock_client()) as stub:
        for part in (0, 1):  # each child of BatchJobs: two attempts die after their create, then the redrive
            for retry in range(2):
                stub.add_response("create_model_invocation_job", {"jobArn": arn(part)}, create(part))
                with pytest.raises(InjectedFault):
                    jobs.submit(SubmitEvent(job_id=JOB, part=part, options=options, retry_count=retry))
                assert get_batch_job(JOB, part) is None
                tokens.append(jobs.client_request_token(JOB, part))
            stub.add_response("create_model_invocation_job", {"jobArn": arn(part)}, create(part))
            redriven = jobs.submit(SubmitEvent(job_id=JOB, part=part, options=options, redrive_count=1))
            again = jobs.submit(SubmitEvent(job_id=JOB, part=part, options=options, redrive_count=1))
            assert redriven == again and redriven.job_arn == arn(part) and redriven.part == part
            tokens.append(jobs.client_request_token(JOB, part))
        stub.assert_no_pending_responses()  # the record answers the last attempt: no fourth create a part
    # Bedrock creates one job per token: every create of a part carried its part's token, two tokens in all
    assert len(set(tokens)) == 2 and tokens[:3] == [jobs.client_request_token(JOB, 0)] * 3
    records = [get_batch_job(JOB, part) for part in (0, 1)]
    assert [(r.records, r.status) for r in records if r] == [(2, "Submitted"), (1, "Submitted")]
    for part in (0, 1):
        index = s3_json.get_json(storage.batch_jobs_index_key(f"part{part}job"))
        assert index == {"job_id": JOB, "part": part}


def test_each_document_reads_its_reply_from_its_own_parts_output(planned):
    prepared, entries, documents, _ = planned
    for part, owned in ((0, entries[:2]), (1, entries[2:])):
        now = utc_now()
        record = get_batch_job(JOB, part)
        assert record is None
        s3_json.put_json(
            storage.batch_job_key(JOB, part),
            {
                "job_id": JOB, "part": part, "status": "Completed", "model_id": "fake-model",
                "records": len(owned),
                "client_request_token": jobs.client_request_token(JOB, part),
                "job_name": jobs.batch_job_name(JOB, part), "job_arn": arn(part), "submitted_at": now,
                "updated_at": now,
            },
        )  # fmt: skip
        for entry in owned:
            line = json.loads(s3_json.get_bytes(storage.batch_input_key(JOB, part, entry.document_id)))
            truth = documents[entry.index]
            reply = with_evidence(truth.truth.model_dump_json(), [truth.text])
            line["modelOutput"] = {
                "output": {"message": {"role": "assistant", "content": [{"text": reply}]}},
                "stopReason": "end_turn",
                "usage": {
                    "inputTokens": 100 + entry.index,
                    "outputTokens": 10,
                    "totalTokens": 110 + entry.index,
                },
            }
            key = storage.batch_output_key(JOB, part, f"part{part}job", entry.document_id)
            s3_json.put_bytes(key, (json.dumps(line) + "\n").encode(), content_type="application/jsonl")
    provider = seeded_provider()
    outcomes = [
        process_document(document_event(prepared, entry), FakeLambdaContext(), provider=provider)
        for entry in entries
    ]
    assert [o.status for o in outcomes] == ["extracted"] * 3 and provider.calls == []  # nothing on-demand
    calls = [s3_json.list_model_calls(JOB, e.document_id) for e in entries]
    assert [[(c.inference, c.input_tokens) for c in doc] for doc in calls] == [
        [("batch", 100)],
        [("batch", 101)],
        [("batch", 102)],  # the second part's output, matched to its document
    ]
