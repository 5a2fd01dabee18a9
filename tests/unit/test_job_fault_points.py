"""Fault points in report building and verification, and the list of points against docs/design.md."""

from __future__ import annotations

import typing

import pytest

from functions import s3_json, storage
from functions.errors import InjectedFault
from functions.logic.build_report import build_report
from functions.logic.verify_job import verify_job
from functions.payloads.common import FaultPointName
from functions.payloads.job import PreparedJob
from functions.payloads.report import BuildReportEvent
from functions.payloads.verification import VerifyJobEvent
from functions.settings import get_settings
from stacks.lambdas import REPO_ROOT
from tests.fakes import FakeLambdaContext
from tests.support import actions, prepare, process_all, report, seed_documents


@pytest.fixture
def enabled(env):
    env.setenv("FAULT_INJECTION_ENABLED", "true")
    get_settings.cache_clear()


def processed(job_id: str, point: str, **spec: object) -> PreparedJob:
    seed_documents(2)
    job = prepare(job_id, options={"fault": {"point": point, "mode": "raise", **spec}})
    process_all(job)
    return job


def test_every_fault_point_is_in_the_design():
    design = (REPO_ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    missing = [name for name in typing.get_args(FaultPointName) if f"`{name}`" not in design]
    assert missing == []


def test_before_report_fires_before_anything_is_written(cloud, enabled):
    job = processed("job-before-report", "before_report", times=1)
    event = BuildReportEvent(job_id=job.job_id, options=job.options)
    with pytest.raises(InjectedFault, match="before_report"):
        build_report(event, FakeLambdaContext())
    assert not s3_json.exists(storage.report_key(job.job_id))
    summary = build_report(event.model_copy(update={"retry_count": 1}), FakeLambdaContext())
    assert summary.documents == 2


def test_after_report_fires_once_the_report_is_written(cloud, enabled):
    job = processed("job-after-report", "after_report", until_redrive=1)
    with pytest.raises(InjectedFault, match="after_report"):
        build_report(BuildReportEvent(job_id=job.job_id, options=job.options), FakeLambdaContext())
    written = s3_json.get_json(storage.report_key(job.job_id))
    summary = build_report(
        BuildReportEvent(job_id=job.job_id, options=job.options, redrive_count=1), FakeLambdaContext()
    )
    assert s3_json.get_json(summary.report_key) == written, "the rerun writes the same report"


def test_job_level_points_read_the_jobs_options_when_the_event_has_none(cloud, enabled):
    job = processed("job-options-from-request", "before_report")
    with pytest.raises(InjectedFault):
        build_report(BuildReportEvent(job_id=job.job_id), FakeLambdaContext())


def test_before_verify_fires_before_the_checks(cloud, enabled):
    job = processed("job-before-verify", "before_verify", times=1)
    summary = report(job)
    done = actions(job, summary)
    event = VerifyJobEvent(job_id=job.job_id, report=summary, actions=done.actions, options=job.options)
    with pytest.raises(InjectedFault, match="before_verify"):
        verify_job(event, context=FakeLambdaContext())
    assert verify_job(event.model_copy(update={"retry_count": 1})).verified is True
