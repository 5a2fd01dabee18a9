"""One crash-matrix run's jobs on one local cloud: the baseline, each cell (armed, waited for, redriven when
the cell says, observed and checked), and the at-least-once cell on the EXPRESS stack."""

from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING, Any

from docagent.drills.chaos.invariants import check as check_invariants
from docagent.drills.chaos.matrix import (
    DOCUMENT_POINTS,
    MODE_ERRORS,
    POINT_STATES,
    Cell,
    is_probe,
    not_applicable,
)
from docagent.drills.chaos.observed import Observed, observe
from docagent.drills.chaos.outcome import CellOutcome
from docagent.drills.demo_corpus import seed_inputs
from docagent.drills.local_job import LocalJob
from docagent.localcloud.stepfunctions.distributed_map import deliver_twice
from functions import s3_json, storage
from stacks import outputs as names

if TYPE_CHECKING:
    from docagent.drills.job_folder import JobFolder  # `chaos --job` only (the kit's definition and labels)
    from docagent.localcloud.deploy import LocalStack
    from docagent.localcloud.server import LocalCloud

INPUT_PREFIX = storage.incoming_prefix("chaos")
STACK_NAME = names.STACK_NAME


class ChaosRun:
    """One local cloud, the deployed stacks, the baseline, and the cells run against them."""

    def __init__(
        self,
        cloud: LocalCloud,
        stack: LocalStack,
        *,
        documents: int,
        run_id: str,
        poll_seconds: float = 0.5,
        job_timeout_seconds: float = 300.0,
        job_folder: JobFolder | None = None,
    ) -> None:
        self.cloud = cloud
        self.job_folder = job_folder
        self.stack = stack
        self.documents = documents
        self.run_id = run_id
        self.poll_seconds = poll_seconds
        self.job_timeout_seconds = job_timeout_seconds
        self.document_index = documents // 2
        self.base = LocalJob.on(cloud.endpoint, stack, f"chaos-{run_id}-seed")
        self.definition: dict[str, Any] = json.loads(
            self.base.sfn.describe_state_machine(stateMachineArn=self.base.ctx.state_machine_arn)[
                "definition"
            ]
        )
        self.baseline: Observed | None = None
        self.baseline_ready = threading.Event()  # cells run alongside the baseline, checked after it
        self.stopping = threading.Event()  # set on Ctrl-C: waits end at once, the cloud can stop

    # -- running jobs ----------------------------------------------------------------------------

    def job(self, name: str, stack: LocalStack | None = None) -> LocalJob:
        job_id = f"chaos-{self.run_id}-{name}"
        if stack is None or stack is self.stack:
            return self.base.renamed(job_id)
        return LocalJob.on(self.cloud.endpoint, stack, job_id)

    def start(self, job: LocalJob, options: dict[str, Any] | None = None) -> None:
        request: dict[str, Any] = {"job_id": job.job_id, "prefix": INPUT_PREFIX}
        request.update(self.job_folder.request() if self.job_folder is not None else {})
        if options:
            request["options"] = options
        job.start(request)

    def seed(self, job: LocalJob) -> None:
        """The documents on ``job``'s deployment: the invoice corpus, or (--job) the folder's samples."""
        if self.job_folder is None:
            seed_inputs(job, self.documents, INPUT_PREFIX)
        else:
            self.job_folder.seed(job, INPUT_PREFIX)

    def wait(self, job: LocalJob) -> str:
        deadline = time.time() + self.job_timeout_seconds
        while (status := job.status()) == "RUNNING":
            if time.time() > deadline:
                return "TIMED_OUT_WAITING"
            if self.stopping.wait(self.poll_seconds):
                raise KeyboardInterrupt
        return status

    @staticmethod
    def error_of(job: LocalJob) -> str | None:
        """The execution's error and cause, if it failed."""
        described = job.sfn.describe_execution(executionArn=job.execution_arn)
        if not described.get("error"):
            return None
        error = f"{described['error']}: {str(described.get('cause') or '')[:300]}"
        children = [
            f"#{json.loads(entry['Input'])['document']['index']} {entry.get('Error')}: "
            f"{str(entry.get('Cause') or '')[:200]}"
            for entry in job.map_run_entries("FAILED")
        ]
        return error + (f" (failed documents: {'; '.join(children)})" if children else "")

    # -- reading what a job left -------------------------------------------------------------------

    def observe(self, job: LocalJob) -> Observed:
        return observe(job, self.cloud.tickets)

    def faulted_attempts(self, job_id: str, cell: Cell) -> int:
        """This job's invocations that failed with the cell's error (at its document, if a document point)."""
        count = 0
        for record in list(self.cloud.runtime.invocations):
            event = record.event if isinstance(record.event, dict) else {}
            if event.get("job_id") != job_id or record.error_type != MODE_ERRORS[cell.mode]:
                continue
            if cell.point in DOCUMENT_POINTS and (event.get("document") or {}).get("index") != (
                self.document_index
            ):
                continue
            count += 1
        return count

    @staticmethod
    def firings(job: LocalJob) -> int:
        """The markers of the job's fault firings (a fault armed with ``times``: written before it fired)."""
        markers = s3_json.list_objects(storage.faults_root(job.job_id), bucket=job.bucket, client=job.s3)
        return sum(1 for _ in markers)

    # -- the invariants ------------------------------------------------------------------------------

    def check(self, seen: Observed) -> dict[str, str | None]:
        """Every invariant, once the baseline (run alongside) is there to compare with."""
        self.baseline_ready.wait(self.job_timeout_seconds)
        return check_invariants(seen, self.baseline, self.documents)

    # -- cells ----------------------------------------------------------------------------------------

    def run_baseline(self) -> CellOutcome:
        outcome = CellOutcome("baseline", "none", "none")
        started = time.time()
        job = self.job("baseline")
        outcome.job_id = job.job_id
        try:
            self.start(job)
            outcome.first_status = outcome.final_status = self.wait(job)
            outcome.first_error = self.error_of(job)
            seen = self.observe(job)
            self.baseline = seen
        finally:
            self.baseline_ready.set()
        outcome.checks = {
            "expected_path": None if outcome.final_status == "SUCCEEDED" else f"ended {outcome.final_status}"
        }
        outcome.checks |= self.check(seen)
        self._count_calls(outcome, seen)
        outcome.seconds = round(time.time() - started, 1)
        return outcome.settle()

    def start_cell(self, cell: Cell, slot: int) -> tuple[LocalJob, float]:
        job = self.job(f"{slot:02d}-{cell.point}-{cell.mode}-{cell.recovery}".replace("_", "-"))
        started = time.time()
        self.start(job, {"fault": cell.fault(self.document_index)})
        return job, started

    def finish_cell(self, cell: Cell, job: LocalJob, started: float) -> CellOutcome:
        outcome = CellOutcome(cell.point, cell.mode, cell.recovery, job_id=job.job_id)
        outcome.first_status = status = self.wait(job)
        outcome.first_error = self.error_of(job)
        if cell.recovery == "redrive" and status == "FAILED":
            job.sfn.redrive_execution(executionArn=job.execution_arn)
            outcome.redrives = 1
            status = self.wait(job)
        outcome.final_status = status
        outcome.faulted_attempts = self.faulted_attempts(job.job_id, cell)
        probe_confirmed = is_probe(cell) and outcome.first_status == "SUCCEEDED"
        # A retry cell's fault fires once, at the first attempt that reaches the point: its marker says it
        # did (an attempt that timed out before the point fails with Sandbox.Timedout too, and fired nothing).
        fired = self.firings(job) if cell.recovery == "retry" else None
        outcome.checks = {"expected_path": self._path_problem(cell, outcome, probe_confirmed, fired)}
        if status == "TIMED_OUT_WAITING":
            outcome.checks["expected_path"] = f"still running after {self.job_timeout_seconds:.0f} s"
        else:
            seen = self.observe(job)
            outcome.checks |= self.check(seen)
            self._count_calls(outcome, seen)
        outcome.seconds = round(time.time() - started, 1)
        outcome.settle()
        if probe_confirmed and outcome.status == "pass":
            outcome.status = "n/a"
            outcome.reason = (
                f"{not_applicable(cell, self.definition)} (confirmed by a run: {outcome.faulted_attempts} "
                "attempt(s) faulted, the job succeeded with no redrive, every invariant held)"
            )
        return outcome

    @staticmethod
    def _path_problem(
        cell: Cell, outcome: CellOutcome, probe_confirmed: bool = False, fired: int | None = None
    ) -> str | None:
        if outcome.faulted_attempts == 0:
            return f"the fault never fired (no {MODE_ERRORS[cell.mode]} at {POINT_STATES[cell.point]})"
        if fired == 0:
            return (
                f"the fault never fired (no marker under {storage.faults_root(outcome.job_id or '')}: "
                f"the {MODE_ERRORS[cell.mode]} at {POINT_STATES[cell.point]} was not the fault's)"
            )
        if probe_confirmed:
            return None
        if cell.recovery == "retry" and outcome.first_status != "SUCCEEDED":
            return f"Retry did not recover it: the job ended {outcome.first_status}"
        if cell.recovery == "redrive" and outcome.first_status != "FAILED":
            return f"the job ended {outcome.first_status} before any redrive (expected FAILED)"
        if outcome.final_status != "SUCCEEDED":
            return f"the job ended {outcome.final_status} after {outcome.redrives} redrive(s)"
        return None

    @staticmethod
    def _count_calls(outcome: CellOutcome, seen: Observed) -> None:
        outcome.model_calls = sum(len(calls) for calls in seen.calls.values())
        outcome.repeated_model_calls = outcome.model_calls - seen.call_groups

    def run_at_least_once(self, stack: LocalStack) -> dict[str, Any]:
        """EXPRESS children, one document delivered twice at once: one model call and one result."""
        started = time.time()
        job = self.job("at-least-once", stack)
        self.seed(job)
        index = self.document_index
        deliver_twice({index})
        try:
            self.start(job)
            status = self.wait(job)
        finally:
            deliver_twice(set())
        function = stack.outputs[names.function_name_output(names.PROCESS_DOCUMENT)]
        deliveries = {
            record.request_id
            for record in self.cloud.runtime.invocations_of(function)
            if isinstance(record.event, dict)
            and record.event.get("job_id") == job.job_id
            and (record.event.get("document") or {}).get("index") == index
            and record.event.get("retry_count") == 0
        }
        outcome: dict[str, Any] = {
            "status": "pass",
            "reason": None,
            "stack": stack.stack_name,
            "job_id": job.job_id,
            "document_index": index,
            "final_status": status,
            "deliveries": len(deliveries),
            "model_calls": 0,
            "document_model_calls": 0,
            "repeated_model_calls": 0,
            "results": 0,
            "seconds": 0.0,
            "checks": {},
        }
        checks: dict[str, str | None] = {
            "expected_path": None if status == "SUCCEEDED" else f"the job ended {status}",
            "delivered_twice": None
            if len(deliveries) >= 2
            else f"document {index} started {len(deliveries)} time(s), expected 2",
        }
        if status != "TIMED_OUT_WAITING":
            seen = self.observe(job)
            checks |= self.check(seen)
            document_id = seen.manifest_ids[index] if index < len(seen.manifest_ids) else f"#{index}"
            # one call per purpose: classify (a definition of several classes) and extract
            calls = len(seen.calls.get(document_id, []))
            repeated = seen.repeats.get(document_id)
            checks["one_model_call_for_the_document"] = (
                None
                if calls >= 1 and not repeated
                else f"{calls} journalled model calls for {document_id}"
                + (f": {repeated}" if repeated else "")
            )
            outcome["model_calls"] = sum(len(c) for c in seen.calls.values())
            outcome["document_model_calls"] = calls
            outcome["repeated_model_calls"] = outcome["model_calls"] - seen.call_groups
            outcome["results"] = len(seen.results)
        failed = {name: problem for name, problem in checks.items() if problem is not None}
        outcome["checks"] = checks
        outcome["status"] = "fail" if failed else "pass"
        outcome["reason"] = "; ".join(f"{name}: {problem}" for name, problem in failed.items()) or None
        outcome["seconds"] = round(time.time() - started, 1)
        return outcome
