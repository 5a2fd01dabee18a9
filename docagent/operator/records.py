"""A job's durable records, read for the operator's commands (status, list, redrive, inspect).

Everything here comes from what the services keep: the execution, its history and definition, the Map
Run and its ResultWriter files, the job's objects in S3 (the layout of functions/storage.py), the
idempotency records (the keys of functions/durable.py), the deployed functions' configuration. Nothing
reads a worker's memory, so the answers are the same after any crash.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from botocore.exceptions import ClientError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from docagent.operator.context import (
    EXIT_JOB_FAILED,
    EXIT_NOT_FOUND,
    EXIT_OK,
    OperatorContext,
    RefusedError,
)
from functions import durable, storage
from functions.models import JOB_ID_PATTERN

FAILED_STATUSES = frozenset({"FAILED", "TIMED_OUT", "ABORTED"})
NOT_FOUND_CODES = frozenset({"NoSuchKey", "404", "NotFound"})
DEFAULT_RESULT_PREFIX = "map-runs"
READ_WORKERS = 16

console = Console(stderr=True)


# ------------------------------------------------------------------------------------------- helpers


def wide_console() -> Console:
    """The terminal's width, or 140 columns when the output is not a terminal (a file, a pipe)."""
    out = Console()
    return out if out.is_terminal else Console(width=140)


def check_job_id(job_id: str) -> str:
    if not re.fullmatch(JOB_ID_PATTERN, job_id):
        raise RefusedError("InvalidJobId", f"{job_id!r} is not a job id (letters, digits, '-' and '_', 1-80)")
    return job_id


def execution_arn_for(state_machine_arn: str, job_id: str) -> str:
    """The execution name is the job id, so its ARN is known before it exists."""
    return f"{state_machine_arn.replace(':stateMachine:', ':execution:', 1)}:{job_id}"


def iso(value: Any) -> str | None:
    """An ISO-8601 UTC string for a datetime (or the value itself when it is already a string)."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return str(value.astimezone(dt.UTC).isoformat(timespec="seconds")).replace("+00:00", "Z")
    return str(value)


def as_datetime(value: Any) -> dt.datetime | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    text = str(value).replace("Z", "+00:00").replace(" ", "T", 1)
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def error_message(cause: str | None) -> str | None:
    """A Lambda failure's cause is ``{"errorType", "errorMessage"}`` JSON: the message reads better."""
    if not cause:
        return cause
    try:
        parsed = json.loads(cause)
    except ValueError:
        return cause
    if isinstance(parsed, dict) and "errorMessage" in parsed:
        return str(parsed["errorMessage"])
    return cause


def client_error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def compress_ids(ids: list[str], limit: int = 6) -> str:
    """``a, b, c ... (+n more)`` for a human line."""
    if len(ids) <= limit:
        return ", ".join(ids)
    return f"{', '.join(ids[:limit])} ... (+{len(ids) - limit} more)"


def states_from(definition: dict[str, Any], start: str, *, through_choices: bool = True) -> list[str]:
    """``start`` and every top-level state reachable after it (Next, Default and, unless
    ``through_choices`` is False, the Choice rules' Next), in flow order."""
    states = definition.get("States", {})
    order: list[str] = []
    queue = [start]
    while queue:
        name = queue.pop(0)
        if name in order or name not in states:
            continue
        order.append(name)
        state = states[name]
        following = [choice.get("Next") for choice in state.get("Choices", [])] if through_choices else []
        following += [state.get("Default"), state.get("Next")]
        queue += [name for name in following if name]
    return order


def conditional_states(definition: dict[str, Any], start: str) -> set[str]:
    """The states after ``start`` that run only when a Choice rule picks them (not on the default path)."""
    return set(states_from(definition, start)) - set(states_from(definition, start, through_choices=False))


def retry_policy(definition: dict[str, Any], state_name: str, error: str | None) -> dict[str, Any] | None:
    """The Retry rule of a state (top level or inside a Map's ItemProcessor) that matches ``error``."""
    for state in _all_states(definition):
        if state[0] != state_name:
            continue
        for rule in state[1].get("Retry", []):
            names = rule.get("ErrorEquals", [])
            if error in names or "States.ALL" in names:
                return {
                    "error_equals": names,
                    "max_attempts": int(rule.get("MaxAttempts", 3)),
                    "interval_seconds": rule.get("IntervalSeconds", 1),
                    "backoff_rate": rule.get("BackoffRate", 2.0),
                }
    return None


def _all_states(definition: dict[str, Any]) -> Iterable[tuple[str, dict[str, Any]]]:
    for name, state in definition.get("States", {}).items():
        yield name, state
        processor = state.get("ItemProcessor") or state.get("Iterator")
        if processor:
            yield from _all_states(processor)


def map_state_name(definition: dict[str, Any]) -> str | None:
    for name, state in definition.get("States", {}).items():
        if state.get("Type") == "Map" and "ItemReader" in state:
            return str(name)
    return None


def documents_of_input(raw: Any) -> list[dict[str, Any]]:
    """The documents a Map Run child was given (one ``document``, or a batch's ``Items``)."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return []
    if not isinstance(value, dict):
        return []
    if isinstance(value.get("document"), dict):
        return [value["document"]]
    items = value.get("Items")
    if isinstance(items, list):
        return [item.get("document", item) for item in items if isinstance(item, dict)]
    if "document_id" in value:
        return [value]
    return []


@dataclass
class IdempotencyRecord:
    key: str
    status: str
    expiration: int | None
    in_progress_expiration_ms: int | None
    data: Any

    def expired_in_progress(self, at: dt.datetime) -> bool:
        if self.status != "INPROGRESS" or self.in_progress_expiration_ms is None:
            return False
        return self.in_progress_expiration_ms / 1000 < at.timestamp()

    def in_progress_until(self) -> str | None:
        if self.in_progress_expiration_ms is None:
            return None
        return iso(dt.datetime.fromtimestamp(self.in_progress_expiration_ms / 1000, dt.UTC))

    def summary(self, at: dt.datetime) -> dict[str, Any]:
        status = self.status
        if self.expired_in_progress(at):
            status = "INPROGRESS_EXPIRED"
        return {"key": self.key, "status": status, "in_progress_until": self.in_progress_until()}


@dataclass
class StateEntry:
    """One top-level state's run in the execution history (a redrive adds a new entry for a state)."""

    name: str
    entered_at: Any
    status: str = "running"  # running | succeeded | failed
    exited_at: Any = None
    attempts: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)
    after_redrive: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "state": self.name,
            "status": self.status,
            "entered_at": iso(self.entered_at),
            "exited_at": iso(self.exited_at),
            "attempts": self.attempts,
            "failures": self.failures,
            "redrive": self.after_redrive,
        }


# ---------------------------------------------------------------------------------------- the reader


class JobRecords:
    """Lazily read records of one job; each property reads once."""

    def __init__(self, ctx: OperatorContext, job_id: str) -> None:
        self.ctx = ctx
        self.job_id = check_job_id(job_id)
        self.execution_arn = execution_arn_for(ctx.state_machine_arn, job_id)
        self.read_at = now()

    # -- Step Functions ----------------------------------------------------------------------------

    @cached_property
    def description(self) -> dict[str, Any] | None:
        try:
            described: dict[str, Any] = self.ctx.client("stepfunctions").describe_execution(
                executionArn=self.execution_arn
            )
        except ClientError as error:
            if client_error_code(error) in {"ExecutionDoesNotExist", "ResourceNotFound"}:
                return None
            raise
        described.pop("ResponseMetadata", None)
        return described

    def require_execution(self) -> dict[str, Any]:
        if self.description is None:
            raise RefusedError(
                "JobNotFound",
                f"job {self.job_id} has no execution on {self.ctx.state_machine_arn.rsplit(':', 1)[-1]} "
                f"({self.ctx.where})",
                EXIT_NOT_FOUND,
            )
        return self.description

    def refresh(self) -> None:
        for name in ("description", "history", "map_run", "map_run_files", "result_ids"):
            self.__dict__.pop(name, None)

    @property
    def status(self) -> str:
        return str(self.require_execution()["status"])

    @cached_property
    def definition(self) -> dict[str, Any]:
        states = self.ctx.client("stepfunctions")
        try:
            described = states.describe_state_machine_for_execution(executionArn=self.execution_arn)
        except ClientError:
            described = states.describe_state_machine(stateMachineArn=self.ctx.state_machine_arn)
        parsed: dict[str, Any] = json.loads(described["definition"])
        return parsed

    @cached_property
    def history(self) -> list[dict[str, Any]]:
        if self.description is None:
            return []
        events: list[dict[str, Any]] = []
        paginator = self.ctx.client("stepfunctions").get_paginator("get_execution_history")
        for page in paginator.paginate(executionArn=self.execution_arn, PaginationConfig={"PageSize": 1000}):
            events += page.get("events", [])
        return events

    def timeline(self) -> list[StateEntry]:
        """The top-level states in the order they ran, with attempts and failures."""
        top_level = set(self.definition.get("States", {}))
        entries: list[StateEntry] = []
        redrives = 0
        current: StateEntry | None = None
        for event in self.history:
            kind = str(event.get("type", ""))
            entered = event.get("stateEnteredEventDetails")
            exited = event.get("stateExitedEventDetails")
            if kind == "ExecutionRedriven":
                redrives += 1
            elif kind.endswith("StateEntered") and entered and entered.get("name") in top_level:
                current = StateEntry(str(entered["name"]), event.get("timestamp"), after_redrive=redrives)
                entries.append(current)
            elif kind.endswith("StateExited") and exited and current and exited.get("name") == current.name:
                current.status, current.exited_at = "succeeded", event.get("timestamp")
            elif current is None:
                continue
            elif kind in {"TaskScheduled", "MapRunStarted"}:
                current.attempts += 1
            elif kind in {"TaskFailed", "TaskTimedOut", "MapRunFailed", "TaskSubmitFailed"}:
                details: dict[str, Any] = (
                    next((v for k, v in event.items() if k.endswith("EventDetails")), {}) or {}
                )
                error = details.get("error") or ("States.Timeout" if kind == "TaskTimedOut" else None)
                current.failures.append(
                    {
                        "error": error,
                        "cause": error_message(details.get("cause")),
                        "at": iso(event.get("timestamp")),
                    }
                )
            elif kind.endswith("StateFailed") or kind in {"ExecutionFailed", "ExecutionTimedOut"}:
                if current.status == "running":
                    current.status, current.exited_at = "failed", event.get("timestamp")
            elif kind == "ExecutionAborted" and current.status == "running":
                current.status, current.exited_at = "aborted", event.get("timestamp")
        return entries

    def redrives(self) -> list[dict[str, Any]]:
        """ExecutionRedriven and MapRunRedriven events: who resumed the job, and when."""
        found: list[dict[str, Any]] = []
        for event in self.history:
            if event.get("type") == "ExecutionRedriven":
                details = event.get("executionRedrivenEventDetails") or {}
                found.append(
                    {
                        "kind": "execution",
                        "at": iso(event.get("timestamp")),
                        "count": details.get("redriveCount"),
                    }
                )
            elif event.get("type") == "MapRunRedriven":
                details = event.get("mapRunRedrivenEventDetails") or {}
                found.append(
                    {
                        "kind": "map_run",
                        "at": iso(event.get("timestamp")),
                        "count": details.get("redriveCount"),
                    }
                )
        return found

    def map_run_started(self) -> bool:
        return any(event.get("type") == "MapRunStarted" for event in self.history)

    def map_run_failure(self) -> dict[str, Any] | None:
        for event in reversed(self.history):
            if event.get("type") == "MapRunFailed":
                details = event.get("mapRunFailedEventDetails") or {}
                return {"error": details.get("error"), "cause": details.get("cause")}
            if event.get("type") in {"MapRunStarted", "MapRunRedriven", "MapRunSucceeded"}:
                return None
        return None

    def current_state(self) -> str | None:
        entries = self.timeline()
        return entries[-1].name if entries else None

    @cached_property
    def map_run(self) -> dict[str, Any] | None:
        if self.description is None:
            return None
        states = self.ctx.client("stepfunctions")
        runs = states.list_map_runs(executionArn=self.execution_arn).get("mapRuns", [])
        if not runs:
            return None
        latest = max(runs, key=lambda run: run.get("startDate") or dt.datetime.min.replace(tzinfo=dt.UTC))
        described: dict[str, Any] = states.describe_map_run(mapRunArn=latest["mapRunArn"])
        described.pop("ResponseMetadata", None)
        return described

    def map_run_counts(self) -> dict[str, int] | None:
        if self.map_run is None:
            return None
        counts = self.map_run.get("itemCounts") or {}
        return {str(name): int(value) for name, value in counts.items()}

    def result_writer_prefix(self) -> str:
        name = map_state_name(self.definition)
        state = self.definition.get("States", {}).get(name or "", {})
        prefix = ((state.get("ResultWriter") or {}).get("Parameters") or {}).get("Prefix")
        return str(prefix or DEFAULT_RESULT_PREFIX).rstrip("/")

    @cached_property
    def map_run_files(self) -> dict[str, list[dict[str, Any]]] | None:
        """The ResultWriter entries by group (SUCCEEDED, FAILED, PENDING); None when none were written."""
        if self.map_run is None:
            return None
        run_id = str(self.map_run["mapRunArn"]).rsplit(":", 1)[-1]
        manifest = self.read_json(f"{self.result_writer_prefix()}/{run_id}/manifest.json")
        if manifest is None:
            return None
        bucket = manifest.get("DestinationBucket") or self.ctx.bucket
        groups: dict[str, list[dict[str, Any]]] = {"SUCCEEDED": [], "FAILED": [], "PENDING": []}
        for group, files in (manifest.get("ResultFiles") or {}).items():
            for file in files:
                entries = self.read_json(file["Key"], bucket=bucket)
                groups.setdefault(group, []).extend(entries or [])
        return groups

    def map_run_entries_by_document(self) -> dict[str, dict[str, Any]]:
        """Per document id: the latest ResultWriter entry of its child (status, error, cause, redrives)."""
        by_document: dict[str, dict[str, Any]] = {}
        for group, entries in (self.map_run_files or {}).items():
            for entry in entries:
                for document in documents_of_input(entry.get("Input")):
                    document_id = document.get("document_id")
                    if not document_id:
                        continue
                    by_document[str(document_id)] = {
                        "group": group,
                        "status": entry.get("Status"),
                        "error": entry.get("Error"),
                        "cause": error_message(entry.get("Cause")),
                        "redrive_count": int(entry.get("RedriveCount") or 0),
                        "execution_arn": entry.get("ExecutionArn"),
                        "started_at": entry.get("StartDate"),
                        "stopped_at": entry.get("StopDate"),
                    }
        return by_document

    def child_history(self, execution_arn: str | None) -> list[dict[str, Any]] | None:
        """A Distributed Map child's own history (AWS keeps it; a local cloud may not)."""
        if not execution_arn:
            return None
        try:
            events: list[dict[str, Any]] = self.ctx.client("stepfunctions").get_execution_history(
                executionArn=execution_arn, maxResults=1000
            )["events"]
        except ClientError:
            return None
        return events

    # -- S3 ----------------------------------------------------------------------------------------

    def read_json(self, key: str, *, bucket: str | None = None) -> Any:
        try:
            body = self.ctx.client("s3").get_object(Bucket=bucket or self.ctx.bucket, Key=key)["Body"].read()
        except ClientError as error:
            if client_error_code(error) in NOT_FOUND_CODES:
                return None
            raise
        return json.loads(body)

    def keys(self, prefix: str) -> list[str]:
        found: list[str] = []
        paginator = self.ctx.client("s3").get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.ctx.bucket, Prefix=prefix):
            found += [str(item["Key"]) for item in page.get("Contents", [])]
        return found

    def read_many(self, keys: list[str]) -> list[Any]:
        if not keys:
            return []
        self.ctx.client("s3")  # create the client before the threads share it
        with ThreadPoolExecutor(max_workers=min(READ_WORKERS, len(keys))) as pool:
            return list(pool.map(self.read_json, keys))

    @cached_property
    def request(self) -> dict[str, Any] | None:
        return self.read_json(storage.request_key(self.job_id))  # type: ignore[no-any-return]

    @cached_property
    def manifest(self) -> dict[str, Any] | None:
        return self.read_json(storage.manifest_key(self.job_id))  # type: ignore[no-any-return]

    def entries(self) -> list[dict[str, Any]]:
        return list((self.manifest or {}).get("entries", []))

    @cached_property
    def report(self) -> dict[str, Any] | None:
        return self.read_json(storage.report_key(self.job_id))  # type: ignore[no-any-return]

    @cached_property
    def ticket(self) -> dict[str, Any] | None:
        return self.read_json(storage.ticket_key(self.job_id))  # type: ignore[no-any-return]

    @cached_property
    def ticket_attempt(self) -> dict[str, Any] | None:
        return self.read_json(storage.ticket_attempt_key(self.job_id))  # type: ignore[no-any-return]

    @cached_property
    def approval(self) -> dict[str, Any] | None:
        return self.read_json(storage.approval_key(self.job_id))  # type: ignore[no-any-return]

    @cached_property
    def drift(self) -> dict[str, Any] | None:
        return self.read_json(drift_key(self.job_id))  # type: ignore[no-any-return]

    @cached_property
    def result_ids(self) -> set[str]:
        prefix = storage.results_prefix(self.job_id)
        names = (key[len(prefix) :] for key in self.keys(prefix))
        return {name[: -len(".json")] for name in names if name.endswith(".json") and "/" not in name}

    @cached_property
    def results(self) -> dict[str, dict[str, Any]]:
        ids = sorted(self.result_ids)
        loaded = self.read_many([storage.result_key(self.job_id, document_id) for document_id in ids])
        return {document_id: result for document_id, result in zip(ids, loaded, strict=True) if result}

    @cached_property
    def model_calls(self) -> dict[str, list[dict[str, Any]]]:
        """The journal: per document, every model call really made, oldest first."""
        prefix = f"{storage.job_prefix(self.job_id)}model-calls/"
        keys = sorted(self.keys(prefix))
        calls: dict[str, list[dict[str, Any]]] = {}
        for key, record in zip(keys, self.read_many(keys), strict=True):
            if record:
                calls.setdefault(key[len(prefix) :].split("/", 1)[0], []).append(record)
        return calls

    # -- DynamoDB ----------------------------------------------------------------------------------

    def idempotency_records(self, keys: list[str]) -> dict[str, IdempotencyRecord]:
        table = self.ctx.output("IdempotencyTableName")
        dynamodb = self.ctx.client("dynamodb")
        found: dict[str, IdempotencyRecord] = {}
        unique = sorted(set(keys))
        for start in range(0, len(unique), 100):
            request: dict[str, Any] = {
                table: {"Keys": [{"id": {"S": key}} for key in unique[start : start + 100]]}
            }
            for _ in range(10):
                response = dynamodb.batch_get_item(RequestItems=request)
                for item in response.get("Responses", {}).get(table, []):
                    record = _idempotency_record(item)
                    found[record.key] = record
                request = response.get("UnprocessedKeys") or {}
                if not request:
                    break
                time.sleep(0.1)
        return found

    # -- Lambda ------------------------------------------------------------------------------------

    def function_configuration(self, output_name: str) -> dict[str, Any]:
        name = self.ctx.output(output_name)
        configuration: dict[str, Any] = self.ctx.client("lambda").get_function_configuration(
            FunctionName=name
        )
        return configuration


def _idempotency_record(item: dict[str, Any]) -> IdempotencyRecord:
    def number(name: str) -> int | None:
        value = item.get(name, {}).get("N")
        return None if value is None else int(float(value))

    raw = item.get("data", {}).get("S")
    try:
        data = json.loads(raw) if raw else None
    except ValueError:
        data = raw
    return IdempotencyRecord(
        key=item["id"]["S"],
        status=item.get("status", {}).get("S", ""),
        expiration=number("expiration"),
        in_progress_expiration_ms=number("in_progress_expiration"),
        data=data,
    )


def document_step_key(step: durable.StepName, job_id: str, document_id: str) -> str:
    return durable.record_key(step, {"job_id": job_id, "document_id": document_id})


def job_step_key(step: durable.StepName, job_id: str) -> str:
    if step == "prepare":
        return durable.record_key("prepare", {"job_id": job_id}, key_field="job_id")
    return durable.record_key(step, {"job_id": job_id})


def drift_key(job_id: str) -> str:
    """jobs/{job_id}/drift.json: every redrive allowed to run with versions other than the pinned ones."""
    return f"{storage.job_prefix(job_id)}drift.json"


# ----------------------------------------------------------------------------------- progress, status


@dataclass
class Snapshot:
    """What `status` shows: the execution, its current state and the documents' progress."""

    job_id: str
    execution_arn: str
    status: str
    current_state: str | None
    error: str | None
    cause: str | None
    started_at: Any
    stopped_at: Any
    redrive_count: int
    redrive_date: Any
    documents: dict[str, int]
    map_run: dict[str, Any] | None
    approval: str | None

    def elapsed_seconds(self) -> float | None:
        started = as_datetime(self.started_at)
        if started is None:
            return None
        stopped = as_datetime(self.stopped_at) or now()
        return round((stopped - started).total_seconds(), 1)

    def as_json(self) -> dict[str, Any]:
        return {
            "job_id": self.job_id,
            "execution_arn": self.execution_arn,
            "status": self.status,
            "current_state": self.current_state,
            "error": self.error,
            "cause": self.cause,
            "started_at": iso(self.started_at),
            "stopped_at": iso(self.stopped_at),
            "elapsed_seconds": self.elapsed_seconds(),
            "redrive_count": self.redrive_count,
            "redrive_date": iso(self.redrive_date),
            "documents": self.documents,
            "map_run": self.map_run,
            "approval": self.approval,
        }


def snapshot(records: JobRecords) -> Snapshot:
    records.refresh()
    described = records.require_execution()
    counts = records.map_run_counts()
    stored = len(records.result_ids)
    if counts is not None:
        total = counts.get("total", 0)
        failed = counts.get("failed", 0) + counts.get("timedOut", 0) + counts.get("aborted", 0)
        running = counts.get("running", 0)
        succeeded = max(counts.get("succeeded", 0), 0)
    else:
        total = len(records.entries()) if records.manifest else 0
        failed = running = 0
        succeeded = stored
    pending = max(total - succeeded - failed - running, 0)
    map_run = None
    if records.map_run is not None:
        map_run = {
            "map_run_arn": records.map_run.get("mapRunArn"),
            "status": records.map_run.get("status"),
            "redrive_count": int(records.map_run.get("redriveCount") or 0),
        }
    approval = (records.approval or {}).get("status") if records.approval else None
    return Snapshot(
        job_id=records.job_id,
        execution_arn=records.execution_arn,
        status=str(described["status"]),
        current_state=records.current_state(),
        error=described.get("error"),
        cause=error_message(described.get("cause")),
        started_at=described.get("startDate"),
        stopped_at=described.get("stopDate"),
        redrive_count=int(described.get("redriveCount") or 0),
        redrive_date=described.get("redriveDate"),
        documents={
            "total": total,
            "succeeded": succeeded,
            "failed": failed,
            "running": running,
            "pending": pending,
            "results_stored": stored,
        },
        map_run=map_run,
        approval=approval,
    )


def exit_code_for(status: str) -> int:
    return EXIT_JOB_FAILED if status in FAILED_STATUSES else EXIT_OK


def progress_bar(show: bool) -> Progress:
    """The documents bar every command that follows a job shows on stderr (hidden when not ``show``)."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        console=console,
        disable=not show,
        transient=False,
    )


def follow(
    records: JobRecords, *, show: bool, interval: float = 0.5, description: str | None = None
) -> Snapshot:
    """Poll until the execution is no longer RUNNING, with a live progress bar on stderr when ``show``."""
    with progress_bar(show) as progress:
        task = progress.add_task(description or records.job_id, total=None, detail="")
        hinted = False
        while True:
            current = snapshot(records)
            documents = current.documents
            progress.update(
                task,
                total=documents["total"] or None,
                completed=documents["succeeded"],
                detail=progress_detail(current),
            )
            if current.status != "RUNNING":
                return current
            if show and not hinted and current.current_state == "RequestApproval":
                console.print(f"waiting for approval: `docagent approve {records.job_id}` or `reject`")
                hinted = True
            time.sleep(interval)


def progress_detail(current: Snapshot) -> str:
    documents = current.documents
    parts = [f"[green]{documents['succeeded']} ok[/green]"]
    if documents["failed"]:
        parts.append(f"[red]{documents['failed']} failed[/red]")
    parts.append(f"{documents['running']} running · {documents['pending']} pending")
    state = current.current_state or "-"
    parts.append(f"{current.status} in {state}" if current.status == "RUNNING" else current.status)
    if current.redrive_count:
        parts.append(f"redrives {current.redrive_count}")
    return " · ".join(parts)
