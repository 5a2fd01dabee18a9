"""A job's durable records, read for the operator's commands (status, list, redrive, inspect).

Everything here comes from what the services keep: the execution, its history and definition, the Map
Run and its ResultWriter files, the job's objects in S3 (the layout of functions/storage.py), the
idempotency records (the keys of functions/durability/durable.py), the deployed functions' configuration.
Nothing reads a worker's memory, so the answers are the same after any crash.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from typing import Any, TypeVar

from botocore.exceptions import ClientError
from pydantic import BaseModel

from docagent.operations import execution_history
from docagent.operations.context import EXIT_NOT_FOUND, OperatorContext, RefusedError
from docagent.operations.display import error_message, now
from docagent.operations.execution_history import StateEntry
from docagent.operations.map_run_children import document_outcome, documents_of_input
from docagent.operations.step_records import IdempotencyRecord, idempotency_record_of
from docagent.operations.workflow_definition import result_writer_prefix
from functions import s3_json, storage
from functions.actions.payloads import ActionAttempt, ActionDone
from functions.definition.job_spec import DefinitionBundle
from functions.payloads.approval import ApprovalRecord
from functions.payloads.common import JOB_ID_PATTERN, JOB_ID_RULE
from functions.payloads.document import DocumentResult
from functions.payloads.fan_in import FAN_IN_MAP_LABELS, map_run_label
from functions.payloads.job import JobManifest, ManifestEntry, StoredRequest
from functions.payloads.model_calls import ModelCallRecord
from functions.payloads.report import Report
from functions.reviews import ReviewDecision, ReviewWaitRecord

READ_WORKERS = 16
M = TypeVar("M", bound=BaseModel)


def extracted_fields(result: BaseModel) -> tuple[str | None, dict[str, Any] | None]:
    """A result's class and extracted fields (``class_name``, ``fields``: the kit's DocumentResult), as JSON.
    A result written before the kit has ``facts`` of the invoice review and no class (read as fields of no
    class, for results already stored)."""
    dumped = result.model_dump(mode="json")
    fields = dumped.get("fields", dumped.get("facts"))
    return dumped.get("class_name"), fields if isinstance(fields, dict) else None


def check_job_id(job_id: str) -> str:
    if not re.fullmatch(JOB_ID_PATTERN, job_id):
        raise RefusedError("InvalidJobId", f"{job_id!r} is not a job id ({JOB_ID_RULE})")
    return job_id


def execution_arn_for(state_machine_arn: str, job_id: str) -> str:
    """The execution name is the job id, so its ARN is known before it exists."""
    return f"{state_machine_arn.replace(':stateMachine:', ':execution:', 1)}:{job_id}"


def client_error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


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
        for name in (
            "description",
            "history",
            "map_run",
            "map_run_files",
            "result_ids",
            "results",
            "reviews",
            "model_calls",
        ):
            self.__dict__.pop(name, None)
        if self.__dict__.get("manifest", ...) is None:  # not sealed when last read: read it again
            for name in ("manifest", "_entries"):
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
        return execution_history.timeline(self.history, set(self.definition.get("States", {})))

    def redrives(self) -> list[dict[str, Any]]:
        """ExecutionRedriven and MapRunRedriven events: who resumed the job, and when."""
        return execution_history.redrives(self.history)

    def map_run_started(self) -> bool:
        return any(event.get("type") == "MapRunStarted" for event in self.history)

    def map_run_failure(self) -> dict[str, Any] | None:
        return execution_history.map_run_failure(self.history)

    def current_state(self) -> str | None:
        entries = self.timeline()
        return entries[-1].name if entries else None

    @cached_property
    def map_run(self) -> dict[str, Any] | None:
        if self.description is None:
            return None
        states = self.ctx.client("stepfunctions")
        runs = [
            run
            for run in states.list_map_runs(executionArn=self.execution_arn).get("mapRuns", [])
            if map_run_label(run["mapRunArn"]) not in FAN_IN_MAP_LABELS  # the report's and verification's
        ]
        if not runs:
            return None
        latest = max(runs, key=lambda run: run.get("startDate") or dt.datetime.min.replace(tzinfo=dt.UTC))
        described: dict[str, Any] = states.describe_map_run(mapRunArn=latest["mapRunArn"])
        described.pop("ResponseMetadata", None)
        return described

    def document_counts(self) -> dict[str, int]:
        """``total``, ``succeeded``, ``failed``, ``running``, ``pending``, ``results_stored``: one computation
        for ``status``, ``list`` and ``inspect``. Once the Map Run closed, each document by
        :func:`document_outcome` from the durable records (its stored result, its child's ResultWriter entry);
        while it runs, the Map Run's item counts; before it starts, the manifest and the stored results."""
        stored = self.result_ids
        counts = self.map_run_counts()
        closed = self.map_run is not None and self.map_run.get("status") != "RUNNING"
        if closed and self.map_run_files is not None and self.entries():
            children = self.map_run_entries_by_document()
            outcomes = [
                document_outcome(entry.document_id in stored, children.get(entry.document_id))
                for entry in self.entries()
            ]
            return {
                "total": len(outcomes),
                "succeeded": outcomes.count("succeeded"),
                "failed": outcomes.count("failed"),
                "running": 0,
                "pending": outcomes.count("pending"),
                "results_stored": len(stored),
            }
        if counts is not None:
            total = counts.get("total", 0)
            failed = counts.get("failed", 0) + counts.get("timedOut", 0) + counts.get("aborted", 0)
            running = counts.get("running", 0)
            succeeded = max(counts.get("succeeded", 0), 0)
        else:
            total = self.manifest.count if self.manifest else 0
            failed = running = 0
            succeeded = len(stored)
        return {
            "total": total,
            "succeeded": succeeded,
            "failed": failed,
            "running": running,
            "pending": max(total - succeeded - failed - running, 0),
            "results_stored": len(stored),
        }

    def map_run_counts(self) -> dict[str, int] | None:
        if self.map_run is None:
            return None
        counts = self.map_run.get("itemCounts") or {}
        return {str(name): int(value) for name, value in counts.items()}

    @cached_property
    def map_run_files(self) -> dict[str, list[dict[str, Any]]] | None:
        """The ResultWriter entries by group (SUCCEEDED, FAILED, PENDING); None when none were written."""
        if self.map_run is None:
            return None
        prefix = result_writer_prefix(self.definition)
        manifest = self.read_json(storage.map_run_manifest_key(str(self.map_run["mapRunArn"]), prefix))
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
        """The parsed object in the job bucket (or ``bucket``), or None when it does not exist."""
        return self.ctx.read_json(key, bucket=bucket)

    def keys(self, prefix: str) -> list[str]:
        objects = s3_json.list_objects(prefix, bucket=self.ctx.bucket, client=self.ctx.client("s3"))
        return [str(item["Key"]) for item in objects]

    def read_many(self, keys: list[str]) -> list[Any]:
        if not keys:
            return []
        self.ctx.client("s3")  # create the client before the threads share it
        with ThreadPoolExecutor(max_workers=min(READ_WORKERS, len(keys))) as pool:
            return list(pool.map(self.read_json, keys))

    def _read_model(self, model: type[M], key: str) -> M | None:
        data = self.read_json(key)
        return None if data is None else model.model_validate(data)

    @cached_property
    def request(self) -> StoredRequest | None:
        return self._read_model(StoredRequest, storage.request_key(self.job_id))

    @cached_property
    def manifest(self) -> JobManifest | None:
        return self._read_model(JobManifest, storage.manifest_key(self.job_id))

    @cached_property
    def bundle(self) -> DefinitionBundle | None:
        """The job definition the job pinned (JobVersions.definition, definition_sha256), None for a job
        prepared before definitions existed, or when its bundle is gone."""
        versions = self.manifest.versions if self.manifest else None
        if versions is None or versions.definition is None or versions.definition_sha256 is None:
            return None
        return self._read_model(
            DefinitionBundle, storage.definition_key(versions.definition, versions.definition_sha256)
        )

    def entries(self) -> list[ManifestEntry]:
        """Every document of the job: inline in older manifests, else read from the manifest's parts."""
        return self._entries

    @cached_property
    def _entries(self) -> list[ManifestEntry]:
        if self.manifest is None:
            return []
        return s3_json.manifest_entries(self.manifest, bucket=self.ctx.bucket, client=self.ctx.client("s3"))

    @cached_property
    def report(self) -> Report | None:
        return self._read_model(Report, storage.report_key(self.job_id))

    @cached_property
    def actions(self) -> dict[str, tuple[ActionAttempt | None, ActionDone | None]]:
        """The job's actions that left a record, by name: (attempt.json, done.json), in name order."""
        root = storage.actions_root(self.job_id)
        names = sorted({key[len(root) :].split("/", 1)[0] for key in self.keys(root)})
        return {
            name: (
                self._read_model(ActionAttempt, storage.action_attempt_key(self.job_id, name)),
                self._read_model(ActionDone, storage.action_done_key(self.job_id, name)),
            )
            for name in names
        }

    @cached_property
    def approval(self) -> ApprovalRecord | None:
        return self._read_model(ApprovalRecord, storage.approval_key(self.job_id))

    @cached_property
    def reviews(self) -> dict[str, ReviewDecision]:
        """The reviewers' decisions, by review item (a document's id, a packet's section's
        ``{document_id}#{section_id}``: jobs/{job}/reviews/, docs/design.md "Review")."""
        prefix = storage.reviews_prefix(self.job_id)
        keys = sorted(key for key in self.keys(prefix) if storage.review_item_of_key(prefix, key) is not None)
        loaded = self.read_many(keys)
        return {
            decision.item_id: decision
            for decision in (ReviewDecision.model_validate(data) for data in loaded if data)
        }

    def review_wait_record(self) -> ReviewWaitRecord | None:
        """review-wait.json (docs/design.md "Review"), read now: None when the job never waited."""
        return self._read_model(ReviewWaitRecord, storage.review_wait_key(self.job_id))

    def review_wait(self) -> dict[str, Any] | None:
        """The job's wait for its review queue, read now, with how many queued items have a decision
        (one listing of reviews/): None when it never waited."""
        record = self.review_wait_record()
        if record is None:
            return None
        decided = s3_json.list_review_items(self.job_id, bucket=self.ctx.bucket, client=self.ctx.client("s3"))
        undecided = record.undecided(set(decided))
        return {
            "status": record.status,
            "documents": len(record.documents),
            "decided": len(record.documents) - len(undecided),
            "undecided": undecided,
            "requested_at": record.requested_at,
            "released_by": record.released_by,
            "released_at": record.released_at,
        }

    def review(self, item: str) -> ReviewDecision | None:
        """One review item's decision (a document, or ``{document_id}#{section_id}``), read now (not cached:
        the console shows it right after it is made)."""
        return self._read_model(ReviewDecision, storage.review_item_key(self.job_id, item))

    def section_result(self, document_id: str, section_id: str) -> DocumentResult | None:
        """A packet's section's stored result (functions/reading/sections.py), read now."""
        key = storage.section_result_key(self.job_id, document_id, section_id)
        return self._read_model(DocumentResult, key)

    def document_bytes(self, entry: ManifestEntry, limit: int) -> bytes | None:
        """The document as the job read it (its pinned version, else its key), at most ``limit`` bytes;
        None when it is gone."""
        request: dict[str, Any] = {
            "Bucket": self.source_bucket,
            "Key": entry.key,
            "Range": f"bytes=0-{limit - 1}",
        }
        if entry.version_id:
            request["VersionId"] = entry.version_id
        try:
            body: bytes = self.ctx.client("s3").get_object(**request)["Body"].read()
        except ClientError as error:
            if s3_json.is_not_found(error) or client_error_code(error) in {"InvalidRange", "NoSuchVersion"}:
                return None
            raise
        return body

    @property
    def source_bucket(self) -> str:
        """The bucket the job's documents came from (its manifest's, else the job bucket)."""
        return self.manifest.job.source_bucket if self.manifest is not None else self.ctx.bucket

    @cached_property
    def drift(self) -> dict[str, Any] | None:
        """``{"job_id", "events"}``: the redrives allowed to run with other versions than the pinned ones
        (the operator's own record, written by redrive --allow-version-drift)."""
        data = self.read_json(storage.drift_key(self.job_id))
        return None if data is None else dict(data)

    @cached_property
    def result_ids(self) -> set[str]:
        return set(storage.result_ids_of(self.job_id, self.keys(storage.results_prefix(self.job_id))))

    @cached_property
    def results(self) -> dict[str, DocumentResult]:
        ids = sorted(self.result_ids)
        loaded = self.read_many([storage.result_key(self.job_id, document_id) for document_id in ids])
        return {
            document_id: DocumentResult.model_validate(result)
            for document_id, result in zip(ids, loaded, strict=True)
            if result
        }

    @cached_property
    def model_calls(self) -> dict[str, list[ModelCallRecord]]:
        """The journal: per document, every model call really made, oldest first."""
        keys = sorted(self.keys(storage.model_calls_root(self.job_id)))
        calls: dict[str, list[ModelCallRecord]] = {}
        for key, record in zip(keys, self.read_many(keys), strict=True):
            if record:
                document_id = storage.model_call_document(self.job_id, key)
                calls.setdefault(document_id, []).append(ModelCallRecord.model_validate(record))
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
                    record = idempotency_record_of(item)
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
