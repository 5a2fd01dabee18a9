"""A kill after the ticket recovers with one ticket, the retry polling the dead invocation's record.

RunActions' worker dies (the product's ``after_action`` fault, once) after the ticket was opened; its durable
step's INPROGRESS record holds until the dead invocation's deadline (Powertools: its remaining time). The
workflow's in-progress retrier polls it (stacks/in_progress_polling.py), so the waits the workflow schedules
between the kill and the successful attempt add up to at most the function timeout plus the crash retry's
first interval plus one poll interval. The waits are counted from the history's failures and the definition's
Retry fields, not timed: on a loaded machine the invocations themselves take longer, never the waits.
"""

from __future__ import annotations

from typing import Any

import pytest

from docagent.drills.experiment.cloud import CloudSession
from docagent.drills.local_job import LocalJob
from docagent.localcloud.synth import local_context
from stacks.config import load_config
from stacks.in_progress_polling import in_progress_polling

# One local cloud per process: these start their own (`make test` runs them apart from the session cloud).
pytestmark = [pytest.mark.integration, pytest.mark.own_cloud]

DOCUMENTS = 3
IN_PROGRESS = "IdempotencyAlreadyInProgressError"
KILL = "Runtime.ExitError"


def retrier_for(state: dict[str, Any], error: str) -> dict[str, Any]:
    return next(r for r in state["Retry"] if error in r["ErrorEquals"])


def scheduled_waits(retrier: dict[str, Any], retries: int) -> float:
    """Seconds a retrier waits over its first ``retries`` retries (no jitter on these retriers)."""
    return sum(retrier["IntervalSeconds"] * retrier["BackoffRate"] ** n for n in range(retries))


def test_a_kill_after_the_ticket_waits_one_function_timeout_and_opens_one_ticket(tmp_path):
    timeout = load_config(local_context()["docagent"]).function_timeout_seconds
    polling = in_progress_polling(timeout)
    with CloudSession(tmp_path / "cloud", time_scale=0.1, batch_size=1) as session:
        run, _ = session.run("per document", DOCUMENTS, DOCUMENTS, None, recovery="retry")
        assert session.stack is not None
        probe = LocalJob.on(session.cloud.endpoint, session.stack, "probe")
        (execution,) = probe.sfn.list_executions(stateMachineArn=probe.ctx.state_machine_arn)["executions"]
        job = LocalJob.on(session.cloud.endpoint, session.stack, execution["name"])
        run_actions = next(entry for entry in job.records.timeline() if entry.name == "RunActions")
        state = job.records.definition["States"]["RunActions"]

    assert run.tickets == 1, "the retry reconciled the ticket the dead invocation opened"
    assert run.correct and run.results == DOCUMENTS
    errors = [failure["error"] for failure in run_actions.failures]
    assert run_actions.status == "succeeded"
    assert errors[0] == KILL
    polls = errors[1:]
    assert polls and set(polls) == {IN_PROGRESS}, "the retry met the dead invocation's INPROGRESS record"

    crash, in_progress = retrier_for(state, KILL), retrier_for(state, IN_PROGRESS)
    assert (in_progress["IntervalSeconds"], in_progress["BackoffRate"]) == (polling.interval_seconds, 1)
    waits = scheduled_waits(crash, 1) + scheduled_waits(in_progress, len(polls))
    # Each poll met the record, which holds at most one function timeout after the kill: the last one
    # failed before it expired, so the polls' waits before it fall short of the timeout, and the successful
    # attempt came one interval later.
    assert waits <= timeout + crash["IntervalSeconds"] + polling.interval_seconds
    print(
        f"kill -> RunActions done: {run.recovery_first_progress_seconds} s at time scale 0.1, "
        f"{len(polls)} polls"
    )
