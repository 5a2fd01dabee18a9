"""ResultWriter for a Distributed Map: the documented result files (docs/semantics.md D5).

moto writes only an empty manifest. Here the Map Run's children are written as manifest.json plus
SUCCEEDED_0 / FAILED_0 / PENDING_0 under the Map Run's folder, in the shape AWS documents, also when the
Map Run fails (its FAILED and PENDING children included).
"""

from __future__ import annotations

import datetime
import json
from typing import Any

from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import FailureEventException
from moto.stepfunctions.parser.asl.component.state.exec.state_map.result_writer.resource_eval.resource_eval_s3 import (  # noqa: E501
    ResourceEvalS3,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.state_map import StateMap
from moto.stepfunctions.parser.asl.eval.environment import Environment

from docagent.localcloud.stepfunctions.map_run_memory import ChildOutcome, MapRunMemory, memory_for_map_run


def _iso(moment: datetime.datetime | None) -> str | None:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z") if moment else None


def result_entry(memory: MapRunMemory, outcome: ChildOutcome) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "ExecutionArn": memory.child_execution_arn(outcome.index),
        "Name": memory.child_execution_arn(outcome.index).rsplit(":", 1)[-1],
        "StateMachineArn": memory.state_machine_arn,
        "Status": outcome.status,
        "Input": json.dumps(outcome.input),
        "InputDetails": {"Included": True},
        "RedriveCount": outcome.redrive_count,
    }
    if outcome.status == "PENDING":
        return entry
    entry["StartDate"] = _iso(outcome.started)
    entry["StopDate"] = _iso(outcome.stopped)
    if outcome.status == "SUCCEEDED":
        entry["Output"] = json.dumps(outcome.output)
        entry["OutputDetails"] = {"Included": True}
        entry["RedriveStatus"] = "NOT_REDRIVABLE"
        entry["RedriveStatusReason"] = "Execution is SUCCEEDED and cannot be redriven"
    else:
        entry["Error"] = outcome.error
        entry["Cause"] = outcome.cause
        entry["RedriveStatus"] = "REDRIVABLE"
    return entry


def write_result_files(memory: MapRunMemory, s3_client: Any, bucket: str, prefix: str) -> str:
    """manifest.json plus SUCCEEDED_0 / FAILED_0 / PENDING_0 (docs/semantics.md D5); returns the manifest
    key."""
    folder = f"{prefix}{memory.map_run_arn.rsplit(':', 1)[-1]}/"
    groups: dict[str, list[dict[str, Any]]] = {"SUCCEEDED": [], "FAILED": [], "PENDING": []}
    for index in sorted(memory.outcomes):
        outcome = memory.outcomes[index]
        group = (
            "SUCCEEDED"
            if outcome.status == "SUCCEEDED"
            else "PENDING"
            if outcome.status in ("PENDING", "RUNNING")
            else "FAILED"
        )
        groups[group].append(result_entry(memory, outcome))
    files: dict[str, list[dict[str, Any]]] = {"FAILED": [], "PENDING": [], "SUCCEEDED": []}
    for group, entries in groups.items():
        if entries:
            body = json.dumps(entries).encode()
            key = f"{folder}{group}_0.json"
            s3_client.put_object(Bucket=bucket, Key=key, Body=body)
            files[group].append({"Key": key, "Size": len(body)})
    manifest_key = f"{folder}manifest.json"
    manifest = {"DestinationBucket": bucket, "MapRunArn": memory.map_run_arn, "ResultFiles": files}
    s3_client.put_object(Bucket=bucket, Key=manifest_key, Body=json.dumps(manifest, indent=2).encode())
    return manifest_key


def _handle_put_object(env: Environment, resource_runtime_part: Any, state_credentials: Any) -> None:
    parameters = env.stack.pop()
    env.stack.pop()
    record = env.map_run_record_pool_manager.get_all().pop()
    memory = memory_for_map_run(record.map_run_arn)
    if memory is None:
        raise KeyError(record.map_run_arn)
    prefix = parameters.get("Prefix", "")
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    s3_client = ResourceEvalS3._get_s3_client(resource_runtime_part, state_credentials)
    key = write_result_files(memory, s3_client, parameters["Bucket"], prefix)
    env.stack.append(
        {"MapRunArn": memory.map_run_arn, "ResultWriterDetails": {"Bucket": parameters["Bucket"], "Key": key}}
    )


def _state_map_eval_execution(self: StateMap, env: Environment) -> None:
    """A failed Map Run still writes its result files (FAILED and PENDING children included); one that failed
    before any child started (its ItemReader could not read the items) has none to write."""
    try:
        _original_state_map_eval_execution(self, env)
    except FailureEventException:
        records = env.map_run_record_pool_manager.get_all()
        if self.result_writer is not None and records and memory_for_map_run(records[-1].map_run_arn):
            env.stack.append(None)  # the slot ResultWriter's handler discards
            self.result_writer.eval(env)
            env.stack.pop()
        raise


_original_state_map_eval_execution = StateMap._eval_execution


def install() -> None:
    ResourceEvalS3._handle_put_object = staticmethod(_handle_put_object)  # type: ignore[method-assign]
    StateMap._eval_execution = _state_map_eval_execution  # type: ignore[method-assign]
