"""Five jobs started together on one local cloud all succeed: invocations beyond a function's worker cap
wait for a free worker (as AWS's larger, shared account concurrency and its retried throttles would let
them run) instead of failing the jobs with Lambda.TooManyRequestsException."""

from __future__ import annotations

from docagent.drills.demo_corpus import seed_inputs
from docagent.drills.local_job import LocalJob
from docagent.localcloud.server import LocalCloud
from tests.support import wait_for_execution

JOBS = 5
# Eight documents a job: the five jobs ask for up to forty invocations at once against a cap of 16 workers
# per function, as thirty and then twelve documents a job did (50 at once, MaxConcurrency 10), with a third
# less work than twelve (measured 2026-12-02: 43 invocations waited for a worker at twelve, 24 at eight).
DOCUMENTS = 8
# Plain text: the workers' concurrency is the point, not the formats (PDF extraction only adds CPU).
FORMATS = ("txt", "md")


def test_five_jobs_started_together_all_succeed_with_no_repeated_model_call(cloud: LocalCloud, deployed):
    jobs = []
    for number in range(JOBS):
        job = LocalJob.on(cloud.endpoint, deployed, f"concurrent-{number}")
        prefix = f"incoming/concurrent-{number}/"
        seed_inputs(job, DOCUMENTS, prefix, FORMATS)
        jobs.append((job, prefix))
    throttled = cloud.runtime.throttled
    for job, prefix in jobs:  # started together: each start only launches the execution
        job.start({"job_id": job.job_id, "prefix": prefix})
    for job, _ in jobs:
        wait_for_execution(job.sfn, job.execution_arn, timeout=600)

    for job, _ in jobs:
        description = job.sfn.describe_execution(executionArn=job.execution_arn)
        assert description["status"] == "SUCCEEDED", (
            job.job_id,
            description.get("error"),
            description.get("cause"),
        )
        job.records.refresh()
        assert len(job.records.results) == DOCUMENTS
        calls = job.records.model_calls
        assert len(calls) == DOCUMENTS and all(len(made) == 1 for made in calls.values()), "no repeated call"
    print(  # how far past the cap the jobs went (printed, not asserted)
        f"invocations that waited for a worker: {cloud.runtime.waited}, "
        f"throttled: {cloud.runtime.throttled - throttled}"
    )
