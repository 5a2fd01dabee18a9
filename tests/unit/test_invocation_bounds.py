"""The work of one PrepareJob, BuildReport or VerifyJob invocation does not grow with the job (docs/design.md,
"Reports and verification"): every S3 and DynamoDB call they make is counted at two job sizes, each in a fresh
moto, and the counts are the same (all listings fit in one page of 1,000 at both sizes)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from botocore.client import BaseClient
from moto.moto_api._internal.models import moto_api_backend

from functions.logic.build_report import build_report
from functions.logic.verify_job import SAMPLE_SIZE, verify_job
from functions.models import BuildReportEvent, VerifyJobEvent
from tests.fakes import FakeLambdaContext
from tests.support import PREFIX, prepare, process_all, seed_documents, ticket, write_result_files
from tests.unit.conftest import clear_all_caches, create_stack_resources

SIZES = (20, 200)
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
    [job] = jobs
    outcomes = process_all(job)
    map_run = write_result_files(job, outcomes)  # what the Distributed Map's ResultWriter leaves
    summaries = []
    event = BuildReportEvent(job_id=job_id, map_run=map_run)
    calls["report"] = counter.measure(lambda: summaries.append(build_report(event)))
    opened = ticket(job, summaries[0])
    verify_event = VerifyJobEvent.model_validate(
        {
            "job_id": job_id,
            "report": summaries[0].model_dump(),
            "ticket": {"ticket_id": opened.ticket_id, "reference": opened.reference},
        }
    )
    calls["verify"] = counter.measure(lambda: verify_job(verify_event, context=FakeLambdaContext()))
    return calls


def test_prepare_report_and_verify_make_the_same_calls_at_20_and_200_documents(cloud, counter):
    small, large = (_job_calls(size, counter) for size in SIZES)

    for step in ("prepare", "report", "verify"):
        assert large[step] == small[step], step
    # The bound itself, by operation.
    assert large["prepare"][("s3", "GetObject")] <= 2  # request.json, manifest.json: no document is read
    assert large["report"][("s3", "GetObject")] == 3  # manifest, result-writer manifest, SUCCEEDED_0.json
    assert large["report"][("s3", "PutObject")] == 1  # report.json
    assert large["verify"][("s3", "GetObject")] <= 3 + SAMPLE_SIZE + 1  # + one ledger ticket
    assert sum(large["verify"].values()) <= 6 + SAMPLE_SIZE + 2
