"""What ``docagent redrive`` would do, checked before it does it: the job's eligibility (docs/semantics.md R3,
M3, M4), the states and documents that run again, the deployed versions against the job's pinned ones, and a
fault drill still armed for the redrive. The console's job page shows the same plan (docagent/console)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from botocore.exceptions import ClientError

from docagent.kit.registry import definition_notes, pinned_view
from docagent.operations.display import as_datetime, iso, now
from docagent.operations.progress import FAILED_STATUSES
from docagent.operations.records import JobRecords
from docagent.operations.workflow_definition import conditional_states, map_state_name, states_from
from functions import storage
from stacks import outputs as names

REDRIVE_WINDOW = dt.timedelta(days=14)  # docs/semantics.md R3
HISTORY_LIMIT = 25_000
MAP_RUN_REDRIVE_LIMIT = 1_000  # docs/semantics.md M3
NEW_MAP_RUN_ERRORS = frozenset({"States.DataLimitExceeded", "States.Runtime"})  # docs/semantics.md M4
BLOCKING_DRIFT = ("model_id", "prompt_version", "prompt_sha256")


def deployed_versions(records: JobRecords, pinned: dict[str, Any]) -> dict[str, Any]:
    """What process_document would run with now: its environment, and the pinned prompt's file in its code."""
    configuration = records.function_configuration(names.function_name_output(names.PROCESS_DOCUMENT))
    environment = (configuration.get("Environment") or {}).get("Variables") or {}
    deployed: dict[str, Any] = {
        "function": configuration.get("FunctionName"),
        "model_id": environment.get("MODEL_ID"),
        "prompt_version": None,
        "code_version": environment.get("CODE_VERSION"),
        "prompt_sha256": None,
        "prompt_source": None,
    }
    version = str(pinned.get("prompt_version"))
    if pinned.get("definition"):
        # The prompts are the pinned definition's (an immutable bundle in the bucket), not a deployed file.
        deployed["prompt_version"] = pinned.get("prompt_version")
        deployed["prompt_sha256"] = pinned.get("prompt_sha256")
        deployed["prompt_source"] = f"the pinned definition {version} (published data, not deployed code)"
        return deployed
    # A job prepared before job definitions pinned a prompt file of the code package: no deployment of this
    # version ships one (its documents would be rejected DefinitionMissing).
    deployed["prompt_sha256"] = "missing"
    deployed["prompt_source"] = (
        f"prompt file {version}: jobs prepared before job definitions have no prompt in this version's code"
    )
    return deployed


def version_check(records: JobRecords) -> dict[str, Any]:
    pinned = records.manifest.versions.model_dump(mode="json") if records.manifest else None
    if not pinned:
        return {
            "pinned": None,
            "deployed": None,
            "differences": [],
            "drift": False,
            "note": "the job was never prepared: a redrive pins the deployed versions",
        }
    deployed = deployed_versions(records, pinned)
    differences = []
    for name in (*BLOCKING_DRIFT, "code_version"):
        if deployed.get(name) is None:
            continue
        if deployed[name] != pinned.get(name):
            differences.append(
                {
                    "field": name,
                    "pinned": pinned.get(name),
                    "deployed": deployed[name],
                    "blocking": name in BLOCKING_DRIFT,
                }
            )
    unknown = deployed["prompt_sha256"] is None
    return {
        "pinned": pinned,
        "deployed": deployed,
        "definition": pinned_view(records.ctx.client("s3"), records.ctx.bucket, records.manifest.versions)
        if records.manifest
        else None,
        "differences": differences,
        "drift": any(difference["blocking"] for difference in differences) or unknown,
        "note": "the deployed prompt could not be read: treated as drift" if unknown else None,
    }


def _estimated_events(definition: dict[str, Any], states: list[str]) -> int:
    """An upper bound of the history events a redrive adds: every attempt of every state that runs."""
    total = 2  # ExecutionRedriven, and the closing event
    for name in states:
        state = definition.get("States", {}).get(name, {})
        if state.get("Type") == "Task":
            retries = sum(int(rule.get("MaxAttempts", 3)) for rule in state.get("Retry", []))
            total += 2 + 3 * (1 + retries)
        elif state.get("Type") == "Map":
            total += 8
        else:
            total += 2
    return total


def plan_reason(code: str, message: str) -> dict[str, str]:
    return {"code": code, "message": message}


def eligibility(
    records: JobRecords, failed_state: str | None, will_states: list[str]
) -> list[dict[str, str]]:
    """Why the job cannot be redriven (docs/semantics.md R3, M3); empty when it can."""
    described = records.require_execution()
    status = str(described["status"])
    reasons: list[dict[str, str]] = []
    if status == "SUCCEEDED":
        reasons.append(plan_reason("Succeeded", "the job succeeded: there is nothing to redrive"))
    elif status == "RUNNING":
        reasons.append(plan_reason("Running", "the job is still running: only a closed job can be redriven"))
    stopped = as_datetime(described.get("stopDate"))
    if status != "RUNNING" and stopped is not None and now() - stopped > REDRIVE_WINDOW:
        reasons.append(
            plan_reason("TooOld", f"the job closed {iso(stopped)}, more than 14 days ago: start a new job")
        )
    machine = records.ctx.client("stepfunctions").describe_state_machine(
        stateMachineArn=str(described.get("stateMachineArn") or records.ctx.state_machine_arn)
    )
    if machine.get("type") == "EXPRESS":
        reasons.append(plan_reason("Express", "Express executions cannot be redriven"))
    events = len(records.history)
    estimate = _estimated_events(records.definition, will_states)
    if events >= HISTORY_LIMIT - 1:
        reasons.append(plan_reason("HistoryLimit", f"the history has {events} events; the limit is 24,999"))
    elif events + estimate >= HISTORY_LIMIT:
        reasons.append(
            plan_reason(
                "HistoryNearLimit",
                f"the history has {events} events and the redrive may add up to {estimate}: it would cross "
                "the 25,000-event limit mid-run; start a new job for the unfinished documents",
            )
        )
    map_redrives = int((records.map_run or {}).get("redriveCount") or 0)
    if failed_state == map_state_name(records.definition) and map_redrives >= MAP_RUN_REDRIVE_LIMIT:
        reasons.append(
            plan_reason(
                "MapRunRedriveLimit",
                f"the Map Run was redriven {map_redrives} times; at 1,000 another redrive fails with "
                "States.Runtime: start a new job for the unfinished documents",
            )
        )
    if not reasons and described.get("redriveStatus") == "NOT_REDRIVABLE":
        reasons.append(
            plan_reason(
                "NotRedrivable", f"Step Functions says NOT_REDRIVABLE: {described.get('redriveStatusReason')}"
            )
        )
    return reasons


def rerun_everything(records: JobRecords, failed_state: str | None, will_states: list[str]) -> str | None:
    """Why a redrive would run every document again (docs/semantics.md M4), or None."""
    map_name = map_state_name(records.definition)
    if failed_state is None or map_name not in will_states:
        return None
    if will_states.index(map_name) > 0:
        return f"the job failed in {failed_state}, before its Map Run started"
    if not records.map_run_started():
        return "the Map Run never started (its item reader failed)"
    failure = records.map_run_failure() or {}
    if failure.get("error") in NEW_MAP_RUN_ERRORS:
        return f"the Map Run failed with {failure['error']}: a new Map Run starts"
    return None


def documents_to_run(records: JobRecords, rerun_all: bool) -> list[dict[str, Any]]:
    """The documents whose children run again: those that did not succeed (M1), or all of them (M4)."""
    results = records.result_ids
    by_document = records.map_run_entries_by_document()
    documents = []
    for entry in records.entries():
        document_id = entry.document_id
        child = by_document.get(document_id)
        if not rerun_all and child is not None and child["group"] == "SUCCEEDED":
            continue
        if not rerun_all and child is None and document_id in results:
            continue  # no result file names it, but it is committed
        documents.append(
            {
                "document_id": document_id,
                "index": entry.index,
                "key": entry.key,
                "last_status": child["status"] if child else None,
                "error": child["error"] if child else None,
                "has_result": document_id in results,
            }
        )
    return documents


def plan_redrive(records: JobRecords, *, allow_version_drift: bool) -> dict[str, Any]:
    described = records.require_execution()
    status = str(described["status"])
    definition = records.definition
    timeline = records.timeline()
    failed_state = timeline[-1].name if timeline and status in FAILED_STATUSES else None
    will_states = states_from(definition, failed_state) if failed_state else []
    reasons = eligibility(records, failed_state, will_states)
    warnings: list[str] = []
    fault = armed_fault(records) if failed_state else None
    if fault is not None:
        warnings.append(fault["warning"])

    rerun_reason = rerun_everything(records, failed_state, will_states)
    if rerun_reason:
        warnings.append(
            f"{rerun_reason}: the redrive runs every document again; documents with a stored result "
            "return it without new model calls"
        )
    map_name = map_state_name(definition)
    documents = documents_to_run(records, bool(rerun_reason)) if map_name in will_states else []

    versions: dict[str, Any] = version_check(records) if failed_state else {"differences": [], "drift": False}
    if versions["drift"] and not allow_version_drift:
        changed = ", ".join(
            f"{d['field']} {d['pinned']} → {d['deployed']}" for d in versions["differences"] if d["blocking"]
        )
        reasons.append(
            plan_reason(
                "VersionDrift",
                "the deployed process_document differs from the job's pinned versions "
                f"({changed or versions.get('note')}): redeploy the pinned versions, or pass "
                f"--allow-version-drift (recorded in {storage.drift_key(records.job_id)})",
            )
        )
    refusal, note = definition_notes(versions.get("definition"))
    reasons += [plan_reason("DefinitionMissing", refusal)] if refusal else []
    warnings += [note] if note else []
    if any(not difference["blocking"] for difference in versions["differences"]):
        warnings.append(
            "the deployed code version differs from the job's: the redrive runs the deployed code "
            "(with the pinned model and prompt)"
        )
    map_run = records.map_run
    return {
        "job_id": records.job_id,
        "execution_arn": records.execution_arn,
        "status": status,
        "eligible": not reasons,
        "reasons": reasons,
        "warnings": warnings,
        "failed_state": failed_state,
        "error": described.get("error"),
        "redrive_count": int(described.get("redriveCount") or 0),
        "history_events": len(records.history),
        "map_run": None
        if map_run is None
        else {
            "map_run_arn": map_run.get("mapRunArn"),
            "status": map_run.get("status"),
            "redrive_count": int(map_run.get("redriveCount") or 0),
        },
        "rerun_all": bool(rerun_reason),
        "will_run": {
            "states": will_states,
            "conditional_states": sorted(conditional_states(definition, failed_state))
            if failed_state
            else [],
            "documents": documents,
            "document_count": len(documents),
            "documents_with_results": sum(1 for document in documents if document["has_result"]),
        },
        "versions": versions,
        "armed_fault": fault,
    }


def armed_fault(records: JobRecords) -> dict[str, Any] | None:
    """The job's fault drill (its request's ``options.fault``) when it still fires after the next redrive:
    deployed with fault injection enabled and not limited to fewer redrives (``until_redrive``). Such a
    redrive fails again at the same point."""
    if records.request is None or records.request.request.options.fault is None:
        return None
    fault = records.request.request.options.fault
    next_redrive = int((records.description or {}).get("redriveCount") or 0) + 1
    if fault.until_redrive is not None and next_redrive >= fault.until_redrive:
        return None
    try:
        configuration = records.function_configuration(names.function_name_output(names.PROCESS_DOCUMENT))
    except ClientError:
        configuration = {}
    environment = (configuration.get("Environment") or {}).get("Variables") or {}
    if str(environment.get("FAULT_INJECTION_ENABLED", "")).lower() != "true":
        return None
    limit = "on every redrive" if fault.until_redrive is None else f"until redrive {fault.until_redrive}"
    retries = (
        f", on the first {fault.until_retry} attempt(s) of each" if fault.until_retry is not None else ""
    )
    times = "" if fault.times is None else f", at most {fault.times} time(s) in all (attempts and redrives)"
    meets = "meets it again" if fault.times is None else "meets it again unless those firings are used up"
    where = f" at document {fault.document_index}" if fault.document_index is not None else ""
    return {
        **fault.model_dump(mode="json"),
        "next_redrive": next_redrive,
        "warning": f"a fault drill is still armed: {fault.mode} at {fault.point}{where}, {limit}{retries}"
        f"{times}; redrive {next_redrive} {meets} (start a new job without --fault to run clean)",
    }
