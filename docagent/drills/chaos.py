"""``docagent chaos``: the crash matrix, run on one local cloud.

Every fault point (functions/faults.py) x every mode (``exit``: the worker process dies, ``raise``: the
handler raises ``InjectedFault``, ``hang``: the worker sleeps past its deadline and is killed as
``Sandbox.Timedout``) x every recovery (``retry``: only the first attempt dies and the state's Retry must
recover it; ``redrive``: every attempt dies until the execution is redriven, so the job fails first and
``RedriveExecution`` must recover it). Each cell is a small job over the same documents as a crash-free
baseline job, and is checked against the baseline:

- ``one_result_per_document`` / ``results_match_baseline``: every document has exactly one result, equal to
  the baseline's byte for byte once the fields that legitimately differ between two jobs are removed
  (``IGNORED_RESULT_FIELDS``: the job id, the processing time, the model call's id, the job's creation time);
- ``no_completed_call_repeated``: at most one journalled model call per document. The journal records a call
  only once it finished, so a call cut off in flight (the only repeat allowed) never shows there: any repeat
  in the journal is a finished call made twice. The count is reported per cell;
- ``actions_done_once``: every action of the job is done (its done.json), the execution's output says the
  same, and the local http service (the ticket service) holds exactly one record per http action done, the
  one its done.json names;
- ``report_covers_every_document`` / ``verified``: report.json has a row per document, none failed, and equals
  the baseline's report (without ``IGNORED_REPORT_FIELDS``: the job id, the Map Run, the creation time and
  each row's model call id); the execution's output says
  ``verification.verified``;
- ``nothing_in_progress``: none of the job's idempotency records (prepare, each document's durable
  steps: classify, extract, lookup-{check}; actions) is left INPROGRESS;
- ``expected_path``: the fault really fired, and the job was recovered the way the cell says (a retry cell
  succeeds without a redrive; a redrive cell fails first and succeeds after exactly one redrive).

A cell that cannot apply is ``n/a`` with its reason, never skipped: a ``retry`` cell whose error is in no
Retry rule of its state (read from the deployed definition; not run), and a ``redrive`` cell at a point that
a crash reaches only once (the retry replays a durable record and never reaches the point again, so Retry
always recovers first and the job cannot fail into a redrive). Those still run, the fault armed until a
redrive: n/a only once the run confirms it (recovered without a redrive, every invariant held); a job that
does fail is redriven and judged like any redrive cell.

Also the at-least-once cell: the app synthesized with ``child_execution_type: EXPRESS`` (a second stack in the
same cloud) and one document delivered twice at once must make one model call and one result.
"""

from __future__ import annotations

import copy
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from rich.console import Console
from rich.table import Table
from rich.text import Text

from docagent import project
from docagent.drills.demo import LocalJob, call_groups, seed_inputs
from docagent.localcloud.deploy import LocalStack, deploy
from docagent.localcloud.server import LocalCloud
from docagent.localcloud.stepfunctions import status_events as alerts
from docagent.localcloud.stepfunctions.distributed_map import deliver_twice
from docagent.localcloud.synth import synth_local_variants
from docagent.operations.records import JobRecords, document_step_key, document_steps, job_step_key
from docagent.operations.workflow_definition import retry_rule
from functions import storage
from functions.models import FaultPointName
from stacks import outputs as names

if TYPE_CHECKING:  # `chaos --job` only (it needs the kit's definition and label modules)
    from docagent.drills.job_folder import JobFolder

Mode = Literal["exit", "raise", "hang"]
Recovery = Literal["retry", "redrive"]
Status = Literal["pass", "fail", "n/a"]

POINTS: tuple[str, ...] = get_args(FaultPointName)
MODES: tuple[str, ...] = get_args(Mode)
RECOVERIES: tuple[str, ...] = get_args(Recovery)

DEFAULT_DOCUMENTS = 3
DEFAULT_TIME_SCALE = 0.1
DEFAULT_PARALLEL = 6
INPUT_PREFIX = storage.incoming_prefix("chaos")
STACK_NAME = names.STACK_NAME
EXPRESS_STACK_NAME = "DocAgentExpress"
EXPRESS_PROFILE: dict[str, Any] = {"child_execution_type": "EXPRESS", "stack_name": EXPRESS_STACK_NAME}
# Workers per function: AWS allows 1,000 concurrent executions per account; the local default of 16 would
# throttle a matrix's concurrent jobs (each holds a worker for a whole timeout while it hangs).
MAX_WORKERS_PER_FUNCTION = 64
# The first cells start this far apart: a worker's cold start costs about a second of CPU, and a burst of
# them on a small machine can push healthy invocations past their (scaled) timeouts.
START_STAGGER_SECONDS = 0.5

# The state whose Lambda function passes each point; the per-document points fire for one document only.
POINT_STATES: dict[str, str] = {
    "before_model_call": "ProcessDocument",
    "after_model_call": "ProcessDocument",
    "before_store_result": "ProcessDocument",
    "after_store_result": "ProcessDocument",
    "before_report": "BuildReport",
    "after_report": "BuildReport",
    "before_action": "RunActions",
    "after_action_request": "RunActions",
    "after_action": "RunActions",
    "before_verify": "VerifyJob",
}
DOCUMENT_POINTS = frozenset(point for point, state in POINT_STATES.items() if state == "ProcessDocument")
# The error each mode surfaces as (docs/semantics.md L2): what a Retry rule must name to recover it.
MODE_ERRORS: dict[str, str] = {
    "exit": "Runtime.ExitError",
    "raise": "InjectedFault",
    "hang": "Sandbox.Timedout",
}
# Points a crash (exit, hang) reaches once: the next attempt replays a durable record and never gets there
# again, so Retry recovers the crash before the job can fail, and a redrive has nothing to recover. (A raise
# fails the state at once, no Retry names InjectedFault, so its redrive cells apply everywhere.)
REACHED_ONCE: dict[str, str] = {
    "after_model_call": "the retry finds the call in the model-call journal and reuses it without passing "
    "the point again",
    "after_store_result": "the retry finds the stored result and returns it before the point",
    "after_action_request": "the retry reconciles: it finds the action's record by the job's reference and "
    "adopts it without sending another request",
}
# Points inside a durable step (extract, actions): a process that dies there leaves an INPROGRESS record that
# blocks the next attempt until the dead invocation's deadline.
IN_STEP_POINTS = frozenset(
    {"before_model_call", "after_model_call", "before_action", "after_action_request", "after_action"}
)
MODE_WORDS: dict[str, str] = {"exit": "process exit", "raise": "raised InjectedFault", "hang": "timeout"}
IGNORED_RESULT_FIELDS = ("job_id", "processed_at", "model_call_id", "classify_call_id", "versions.created_at")
IGNORED_REPORT_FIELDS = (
    "job_id",
    "map_run",
    "versions.created_at",
    "rows.model_call_id",
    "rejected_documents.model_call_id",
    "actions",
)
CHECKS = (
    "expected_path",
    "one_result_per_document",
    "results_match_baseline",
    "no_completed_call_repeated",
    "actions_done_once",
    "report_covers_every_document",
    "verified",
    "nothing_in_progress",
)
AT_LEAST_ONCE_CHECKS = ("delivered_twice", "one_model_call_for_the_document")


@dataclass(frozen=True)
class Cell:
    point: str
    mode: str
    recovery: str

    def fault(self, document_index: int) -> dict[str, Any]:
        until = {"until_retry": 1} if self.recovery == "retry" else {"until_redrive": 1}
        spec: dict[str, Any] = {"point": self.point, "mode": self.mode, **until}
        if self.point in DOCUMENT_POINTS:
            spec["document_index"] = document_index
        return spec


def full_matrix(
    points: Iterable[str] = POINTS, modes: Iterable[str] = MODES, recoveries: Iterable[str] = RECOVERIES
) -> list[Cell]:
    chosen_modes, chosen_recoveries = list(modes), list(recoveries)
    return [Cell(p, m, r) for p in points for m in chosen_modes for r in chosen_recoveries]


def parse_choices(value: str | None, allowed: Sequence[str], what: str) -> list[str]:
    """A comma-separated subset of ``allowed`` (all of it when ``value`` is empty), in ``allowed``'s order."""
    if not value:
        return list(allowed)
    chosen = [item.strip() for item in value.split(",") if item.strip()]
    unknown = [item for item in chosen if item not in allowed]
    if unknown or not chosen:
        raise ValueError(
            f"unknown {what}: {', '.join(unknown) or repr(value)} (choose from {', '.join(allowed)})"
        )
    return [item for item in allowed if item in chosen]


def select_cells(
    points: str | None = None,
    modes: str | None = None,
    recoveries: str | None = None,
    *,
    reduced: bool = False,
) -> list[Cell]:
    """The cells the options name: the full matrix (or the reduced one) restricted to the chosen values."""
    chosen_points = parse_choices(points, POINTS, "fault point")
    chosen_modes = parse_choices(modes, MODES, "mode")
    chosen_recoveries = parse_choices(recoveries, RECOVERIES, "recovery")
    cells = list(REDUCED) if reduced else full_matrix(chosen_points, chosen_modes, chosen_recoveries)
    selected = [
        cell
        for cell in cells
        if cell.point in chosen_points and cell.mode in chosen_modes and cell.recovery in chosen_recoveries
    ]
    if not selected:
        raise ValueError("no cell of the matrix matches the chosen points, modes and recoveries")
    return selected


# The reduced matrix of the default test suite: every point once, every mode, both recoveries, the fast
# variants (a crash inside a durable step waits for its in-progress record to expire on every attempt).
REDUCED: tuple[Cell, ...] = (
    Cell("before_model_call", "raise", "redrive"),
    Cell("after_model_call", "exit", "retry"),
    Cell("before_store_result", "exit", "redrive"),
    Cell("after_store_result", "hang", "retry"),
    Cell("before_report", "hang", "retry"),
    Cell("after_report", "raise", "redrive"),
    Cell("before_action", "hang", "retry"),
    Cell("after_action_request", "exit", "retry"),
    Cell("after_action", "raise", "redrive"),
    Cell("before_verify", "exit", "redrive"),
)


# ------------------------------------------------------------------------------------------ applicability


def not_applicable(cell: Cell, definition: dict[str, Any]) -> str | None:
    """Why the cell cannot apply to this workflow, or None when it does."""
    state, error = POINT_STATES[cell.point], MODE_ERRORS[cell.mode]
    if cell.recovery == "retry" and retry_rule(definition, state, error) is None:
        return (
            f"{error} is in no Retry rule of {state}: the first failure fails the state, so only a redrive "
            "recovers it (the redrive cell)"
        )
    if is_probe(cell):
        return (
            f"a {MODE_WORDS[cell.mode]} here cannot fail the job into a redrive: Retry recovers it first, "
            f"because {REACHED_ONCE[cell.point]}"
        )
    return None


def is_probe(cell: Cell) -> bool:
    """A redrive cell that is n/a because its point is reached once. It still runs, the fault armed until a
    redrive, to confirm that: confirmed, it is n/a; if the job does fail, it is judged as a redrive cell."""
    return cell.recovery == "redrive" and cell.mode != "raise" and cell.point in REACHED_ONCE


# ---------------------------------------------------------------------------------------------- outcomes


@dataclass
class CellOutcome:
    """One cell's run: its status and every check (None: holds; a string: what is wrong)."""

    point: str
    mode: str
    recovery: str
    status: Status = "pass"
    reason: str | None = None
    job_id: str | None = None
    first_status: str | None = None
    first_error: str | None = None
    final_status: str | None = None
    redrives: int = 0
    faulted_attempts: int = 0
    model_calls: int = 0
    repeated_model_calls: int = 0
    seconds: float = 0.0
    checks: dict[str, str | None] = field(default_factory=dict)

    def settle(self) -> CellOutcome:
        if self.status != "n/a":
            failed = {name: problem for name, problem in self.checks.items() if problem is not None}
            self.status = "fail" if failed else "pass"
            self.reason = "; ".join(f"{name}: {problem}" for name, problem in failed.items()) or None
        return self

    def as_json(self) -> dict[str, Any]:
        return {
            "point": self.point,
            "mode": self.mode,
            "recovery": self.recovery,
            "status": self.status,
            "reason": self.reason,
            "job_id": self.job_id,
            "first_status": self.first_status,
            "first_error": self.first_error,
            "final_status": self.final_status,
            "redrives": self.redrives,
            "faulted_attempts": self.faulted_attempts,
            "model_calls": self.model_calls,
            "repeated_model_calls": self.repeated_model_calls,
            "seconds": self.seconds,
            "checks": dict(self.checks),
        }


def _drop(node: Any, parts: list[str]) -> None:
    """Remove the field at ``parts`` below ``node``; a list applies the rest of the path to every item."""
    if isinstance(node, list):
        for item in node:
            _drop(item, parts)
    elif isinstance(node, dict):
        if len(parts) == 1:
            node.pop(parts[0], None)
        else:
            _drop(node.get(parts[0]), parts[1:])


def _without(value: Any, dotted: Sequence[str]) -> Any:
    value = copy.deepcopy(value)
    for path in dotted:
        _drop(value, path.split("."))
    return value


def canonical(value: Any, ignored: Sequence[str]) -> str:
    """The JSON text compared between two jobs: sorted keys, no whitespace, ``ignored`` fields removed."""
    return json.dumps(_without(value, ignored), sort_keys=True, separators=(",", ":"))


def differing_fields(seen: Any, expected: Any, ignored: Sequence[str]) -> list[str]:
    """The top-level fields of a result that differ between two jobs (``ignored`` removed); ``missing``
    when one of them has no result."""
    if seen is None or expected is None:
        return ["missing"]
    mine, theirs = _without(seen, ignored), _without(expected, ignored)
    names = sorted(set(mine) | set(theirs))
    return [name for name in names if canonical(mine.get(name), ()) != canonical(theirs.get(name), ())]


@dataclass
class Observed:
    """What a finished job left behind, read from durable records only."""

    job_id: str
    manifest_ids: list[str]
    results: dict[str, dict[str, Any]]
    calls: dict[str, list[str]]
    repeats: dict[str, list[str]]  # the journalled calls of documents with more than one of a purpose
    report: dict[str, Any] | None
    output: dict[str, Any]
    actions: dict[str, dict[str, Any] | None]  # each recorded action's done.json outcome (None: not done)
    tickets: list[dict[str, Any]]
    in_progress: list[str]
    missing_records: list[str]
    call_groups: int = 0  # journalled calls counted once per document and purpose (classify, extract)


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
        records = job.records
        records.refresh()
        manifest_ids = [entry.document_id for entry in records.entries()]
        journal = records.model_calls
        groups = call_groups(journal)
        repeats: dict[str, list[str]] = {}
        for (document_id, _), calls in groups.items():
            if len(calls) > 1:
                repeats.setdefault(document_id, []).extend(
                    f"{call.call_id} (retry {call.retry_count}, {call.duration_ms} ms, "
                    f"finished {call.finished_at})"
                    for call in calls
                )
        in_progress, missing = self._in_progress(records, manifest_ids)
        return Observed(
            job_id=job.job_id,
            manifest_ids=manifest_ids,
            results={
                document_id: result.model_dump(mode="json") for document_id, result in records.results.items()
            },
            calls={document_id: [call.call_id for call in calls] for document_id, calls in journal.items()},
            repeats=repeats,
            call_groups=len(groups),
            report=records.report.model_dump(mode="json") if records.report else None,
            output=json.loads(records.require_execution().get("output") or "{}"),
            actions={
                name: done.outcome.model_dump(mode="json") if done else None
                for name, (_, done) in records.actions.items()
            },
            tickets=self.cloud.tickets.tickets(job.job_id),
            in_progress=in_progress,
            missing_records=missing,
        )

    @staticmethod
    def _in_progress(records: JobRecords, document_ids: list[str]) -> tuple[list[str], list[str]]:
        """The job's idempotency records left INPROGRESS, and the completed steps with no record at all."""
        job_id = records.job_id
        keys = {job_step_key("prepare", job_id): "prepare", job_step_key("actions", job_id): "actions"}
        for document_id in document_ids:
            for step in document_steps(records.bundle):
                keys[document_step_key(step, job_id, document_id)] = f"{step} {document_id}"
        found = records.idempotency_records(list(keys))
        in_progress = sorted(keys[key] for key, record in found.items() if record.status == "INPROGRESS")
        missing = sorted(step for key, step in keys.items() if key not in found)
        return in_progress, missing

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

    # -- the invariants ------------------------------------------------------------------------------

    def check(self, seen: Observed) -> dict[str, str | None]:
        self.baseline_ready.wait(self.job_timeout_seconds)
        baseline = self.baseline
        checks: dict[str, str | None] = {}
        expected_ids = sorted(seen.manifest_ids)
        if len(expected_ids) != self.documents or sorted(seen.results) != expected_ids:
            missing = sorted(set(expected_ids) - set(seen.results))
            extra = sorted(set(seen.results) - set(expected_ids))
            checks["one_result_per_document"] = (
                f"{len(seen.results)} results for {len(expected_ids)} documents"
                + (f"; missing {missing}" if missing else "")
                + (f"; unexpected {extra}" if extra else "")
            )
        else:
            checks["one_result_per_document"] = None
        if baseline is not None:
            differing = {
                document_id: differing_fields(
                    seen.results.get(document_id), baseline.results.get(document_id), IGNORED_RESULT_FIELDS
                )
                for document_id in expected_ids
            }
            differing = {document_id: fields for document_id, fields in differing.items() if fields}
            checks["results_match_baseline"] = (
                "differ from the baseline: "
                + "; ".join(
                    f"{document_id} ({', '.join(fields)})" for document_id, fields in differing.items()
                )
                if differing
                else None
            )
        else:
            checks["results_match_baseline"] = "no baseline to compare with (the baseline job did not finish)"
        linked = [
            document_id
            for document_id, result in seen.results.items()
            if result.get("model_call_id") and result["model_call_id"] not in seen.calls.get(document_id, [])
        ]
        checks["no_completed_call_repeated"] = (
            "; ".join(
                ([f"more than one journalled call: {seen.repeats}"] if seen.repeats else [])
                + ([f"results name a call missing from the journal: {linked}"] if linked else [])
            )
            or None
        )
        checks["actions_done_once"] = self._actions_problem(seen)
        checks["report_covers_every_document"] = self._report_problem(seen)
        verification = seen.output.get("verification") or {}
        checks["verified"] = (
            None if verification.get("verified") is True else f"execution output verification: {verification}"
        )
        problems = []
        if seen.in_progress:
            problems.append(f"left INPROGRESS: {seen.in_progress}")
        if seen.missing_records:
            problems.append(f"no idempotency record for: {seen.missing_records}")
        checks["nothing_in_progress"] = "; ".join(problems) or None
        return checks

    def _actions_problem(self, seen: Observed) -> str | None:
        undone = sorted(name for name, outcome in seen.actions.items() if outcome is None)
        if undone:
            return f"actions without done.json: {undone}"
        outcomes = list(seen.actions.values())
        http = sorted(
            str(outcome["reference"])
            for outcome in outcomes
            if outcome and outcome["type"] == "http" and outcome["outcome"] != "skipped"
        )
        held = sorted(str(record["id"]) for record in seen.tickets)
        if held != http:
            return (
                f"the local http service holds {held} with reference {seen.job_id}; the http actions' "
                f"done.json name {http}"
            )
        output = (seen.output.get("actions") or {}).get("actions") or []
        if sorted(output, key=lambda item: str(item.get("name"))) != sorted(
            outcomes, key=lambda item: str((item or {}).get("name"))
        ):
            return f"the execution output's actions ({output}) differ from the actions' done.json"
        return None

    def _report_problem(self, seen: Observed) -> str | None:
        report = seen.report
        if report is None:
            return "no report.json"
        rows = sorted(row["document_id"] for row in report.get("rows", []))
        if rows != sorted(seen.manifest_ids) or report.get("failed") != 0:
            return f"report rows {rows}, failed {report.get('failed')}"
        expected = self.baseline.report if self.baseline is not None else None
        if expected is not None and canonical(report, IGNORED_REPORT_FIELDS) != canonical(
            expected, IGNORED_REPORT_FIELDS
        ):
            return "the report differs from the baseline's"
        return None

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
        outcome.checks = {"expected_path": self._path_problem(cell, outcome, probe_confirmed)}
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
    def _path_problem(cell: Cell, outcome: CellOutcome, probe_confirmed: bool = False) -> str | None:
        if outcome.faulted_attempts == 0:
            return f"the fault never fired (no {MODE_ERRORS[cell.mode]} at {POINT_STATES[cell.point]})"
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


# -------------------------------------------------------------------------------------------- the run


def run_chaos(
    cells: Sequence[Cell] | None = None,
    *,
    documents: int = DEFAULT_DOCUMENTS,
    at_least_once: bool = True,
    time_scale: float = DEFAULT_TIME_SCALE,
    parallel: int = DEFAULT_PARALLEL,
    state_dir: Path | None = None,
    on_cell: Callable[[CellOutcome], None] | None = None,
    job_folder: JobFolder | None = None,
) -> dict[str, Any]:
    """Synthesize, start one local cloud, deploy, then run the baseline, the cells and the at-least-once cell
    side by side (every check waits for the baseline); return the matrix (the ``--json`` object). With
    ``job_folder`` (``--job PATH``) the jobs run that definition on its samples."""
    documents = documents if job_folder is None else len(job_folder.documents)
    if documents < 1:
        raise ValueError("--documents must be at least 1")
    if parallel < 1:
        raise ValueError("--parallel must be at least 1")
    cells = list(full_matrix() if cells is None else cells)
    started = time.time()
    phases: dict[str, float] = {}
    variants: list[dict[str, Any] | None] = [None, EXPRESS_PROFILE] if at_least_once else [None]
    standard_dir, *express_dirs = synth_local_variants(variants)
    phases["synth"] = round(time.time() - started, 1)
    # Redrive cells fail their jobs on purpose: their alerts go to the sink's file, not the console.
    with LocalCloud(
        state_dir or project.LOCAL_DIR / "chaos",
        time_scale=time_scale,
        alert_printer=alerts.discard,
        fresh=True,  # each run starts empty (the state of an earlier run is not replayed)
    ) as cloud:
        cloud.runtime.max_workers = max(cloud.runtime.max_workers, MAX_WORKERS_PER_FUNCTION)
        mark = time.time()
        stack = deploy(standard_dir, STACK_NAME, cloud.endpoint)
        express_stack = deploy(express_dirs[0], EXPRESS_STACK_NAME, cloud.endpoint) if express_dirs else None
        run = ChaosRun(
            cloud,
            stack,
            documents=documents,
            run_id=f"{time.strftime('%H%M%S')}{uuid.uuid4().hex[:4]}",
            job_timeout_seconds=max(120.0, 6000 * time_scale),
            job_folder=job_folder,
        )
        run.seed(run.base)
        phases["deploy"] = round(time.time() - mark, 1)
        mark = time.time()
        baseline, outcomes, once = _run_all(run, cells, express_stack, parallel, on_cell)
        phases["jobs"] = round(time.time() - mark, 1)
    counts = {status: sum(o.status == status for o in outcomes) for status in ("pass", "fail", "n/a")}
    passed = counts["fail"] == 0 and baseline.status == "pass" and (once is None or once["status"] == "pass")
    return {
        "passed": passed,
        "documents": documents,
        "definition": job_folder.name if job_folder is not None else None,
        "document_index": run.document_index,
        "time_scale": time_scale,
        "parallel": parallel,
        "points": sorted({cell.point for cell in cells}, key=POINTS.index),
        "modes": sorted({cell.mode for cell in cells}, key=MODES.index),
        "recoveries": sorted({cell.recovery for cell in cells}, key=RECOVERIES.index),
        "counts": counts,
        "repeated_model_calls": sum(o.repeated_model_calls for o in outcomes),
        "baseline": baseline.as_json(),
        "cells": [outcome.as_json() for outcome in outcomes],
        "at_least_once": once,
        "ignored_result_fields": list(IGNORED_RESULT_FIELDS),
        "ignored_report_fields": list(IGNORED_REPORT_FIELDS),
        "seconds": round(time.time() - started, 1),
        "phase_seconds": phases,
    }


def _run_all(
    run: ChaosRun,
    cells: list[Cell],
    express_stack: LocalStack | None,
    parallel: int,
    on_cell: Callable[[CellOutcome], None] | None,
) -> tuple[CellOutcome, list[CellOutcome], dict[str, Any] | None]:
    """The baseline, the cells (in ``cells``' order; n/a ones decided, not run) and the at-least-once cell."""
    outcomes: dict[Cell, CellOutcome] = {}
    runnable: list[Cell] = []
    for cell in cells:
        reason = not_applicable(cell, run.definition)
        if reason is None or is_probe(cell):
            runnable.append(cell)
            continue
        outcomes[cell] = CellOutcome(cell.point, cell.mode, cell.recovery, status="n/a", reason=reason)
        if on_cell:
            on_cell(outcomes[cell])
    # The slowest cells first (a crash inside a durable step waits out its in-progress record on every
    # attempt), so the run does not end on one long cell.
    runnable.sort(key=_expected_cost, reverse=True)

    def run_cell(slot: int, cell: Cell) -> CellOutcome:
        if slot < parallel and run.stopping.wait(slot * START_STAGGER_SECONDS):  # spread the cold starts
            raise KeyboardInterrupt
        begun = time.time()
        try:
            job, begun = run.start_cell(cell, slot)
            outcome = run.finish_cell(cell, job, begun)
        except Exception as error:  # a broken cell is a failed cell, not a crashed matrix
            outcome = CellOutcome(cell.point, cell.mode, cell.recovery, seconds=round(time.time() - begun, 1))
            outcome.checks = {"expected_path": f"the cell could not run: {type(error).__name__}: {error}"}
            outcome.settle()
        if on_cell:
            on_cell(outcome)
        return outcome

    with ThreadPoolExecutor(max_workers=parallel + (2 if express_stack else 1)) as pool:
        try:
            baseline_future = pool.submit(run.run_baseline)
            express_future = pool.submit(run.run_at_least_once, express_stack) if express_stack else None
            futures = {cell: pool.submit(run_cell, slot, cell) for slot, cell in enumerate(runnable)}
            outcomes |= {cell: future.result() for cell, future in futures.items()}
            baseline = baseline_future.result()
            once = express_future.result() if express_future else None
        except BaseException:  # Ctrl-C: stop waiting for jobs so the local cloud stops now
            run.stopping.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return baseline, [outcomes[cell] for cell in cells], once


def _expected_cost(cell: Cell) -> float:
    """A rough order of a cell's duration in function timeouts, to start the longest first."""
    in_step = cell.point in IN_STEP_POINTS
    if cell.recovery == "retry" or is_probe(cell):
        return 1.2 if (cell.mode == "hang" or in_step) else 0.2
    if cell.mode == "raise":
        return 0.2
    if cell.mode == "hang":
        return 5.0
    return 5.5 if in_step else 0.5


# ------------------------------------------------------------------------------------------ the table


def _cell_text(cell: dict[str, Any], notes: dict[str, int]) -> Text:
    if cell["status"] == "n/a":
        number = notes.setdefault(cell["reason"], len(notes) + 1)
        return Text(f"n/a ({number})", "dim")
    repeated = cell["repeated_model_calls"]
    if cell["status"] == "pass":
        return Text.assemble(("pass", "green"), f" · {repeated} rep · {cell['seconds']:.0f}s")
    failed = [name for name, problem in cell["checks"].items() if problem is not None]
    return Text.assemble(("FAIL", "bold red"), f" {', '.join(failed)}")


def print_matrix(summary: dict[str, Any], console: Console) -> None:
    columns = [(mode, recovery) for mode in summary["modes"] for recovery in summary["recoveries"]]
    by_key = {(c["point"], c["mode"], c["recovery"]): c for c in summary["cells"]}
    table = Table(
        title=f"docagent crash matrix: {summary['documents']} documents per job, fault at document "
        f"{summary['document_index']}, time scale {summary['time_scale']}",
        caption="cell: status · repeated model calls · seconds",
    )
    table.add_column("fault point", style="bold")
    for mode, recovery in columns:
        table.add_column(f"{mode} · {recovery}")
    notes: dict[str, int] = {}
    for point in summary["points"]:
        row = [Text(point)]
        for mode, recovery in columns:
            cell = by_key.get((point, mode, recovery))
            row.append(Text("not selected", "dim") if cell is None else _cell_text(cell, notes))
        table.add_row(*row)
    console.print(table)
    for reason, number in notes.items():
        console.print(Text.assemble("  ", (f"({number})", "dim"), f" n/a: {reason}"))
    baseline = summary["baseline"]
    console.print(
        f"baseline {baseline['job_id']}: {baseline['status']} ({baseline['final_status']}, "
        f"{baseline['model_calls']} model calls)" + (f": {baseline['reason']}" if baseline["reason"] else "")
    )
    once = summary["at_least_once"]
    if once is not None:
        console.print(
            Text.assemble(
                f"at-least-once (EXPRESS children, document {once['document_index']} delivered twice "
                "at once): ",
                ("pass", "green") if once["status"] == "pass" else ("FAIL", "bold red"),
                f": {once['deliveries']} deliveries, {once['document_model_calls']} model call(s) for the "
                f"document, {once['results']} results, {once['seconds']:.0f}s"
                + (f"; {once['reason']}" if once["reason"] else ""),
            )
        )
    for cell in summary["cells"]:
        if cell["status"] == "fail":
            console.print(
                Text.assemble(
                    ("FAIL", "red"),
                    f" {cell['point']} · {cell['mode']} · {cell['recovery']} (job {cell['job_id']}): "
                    f"{cell['reason']}",
                )
            )
    counts = summary["counts"]
    console.print(
        f"{counts['pass']} passed, {counts['fail']} failed, {counts['n/a']} not applicable; "
        f"{summary['repeated_model_calls']} repeated model calls; {summary['seconds']:.0f} s "
        f"(phases: {summary['phase_seconds']})"
    )
