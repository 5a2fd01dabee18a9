"""``docagent redrive``: redrive a failed job from where it stopped.

It checks eligibility first (docs/semantics.md R3, M3, M4), says what will run again, refuses a redrive that
would run another model or prompt than the job pinned (unless --allow-version-drift, which records the drift
in the job's drift.json), warns when a fault drill is still armed for the redrive (it would fail again), then
redrives and, with --wait, follows it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import getpass
import hashlib
import uuid
from typing import Any

from botocore.exceptions import ClientError
from rich.table import Table
from rich.text import Text

from docagent.kit.registry import definition_notes, pinned_view
from docagent.operations.context import (
    EXIT_BAD_REQUEST,
    EXIT_JOB_FAILED,
    EXIT_OK,
    OperatorContext,
    command,
    emit,
    target_arguments,
)
from docagent.operations.display import as_datetime, iso, now, wide_console
from docagent.operations.inspect_print import flow_text
from docagent.operations.model_breaker import clear_model_breaker
from docagent.operations.progress import FAILED_STATUSES, follow
from docagent.operations.records import JobRecords, client_error_code
from docagent.operations.workflow_definition import conditional_states, map_state_name, states_from
from functions import storage
from stacks import outputs as names

REDRIVE_WINDOW = dt.timedelta(days=14)  # docs/semantics.md R3
HISTORY_LIMIT = 25_000
MAP_RUN_REDRIVE_LIMIT = 1_000  # docs/semantics.md M3
NEW_MAP_RUN_ERRORS = frozenset({"States.DataLimitExceeded", "States.Runtime"})  # docs/semantics.md M4
BLOCKING_DRIFT = ("model_id", "prompt_version", "prompt_sha256")


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    redrive = commands.add_parser(
        "redrive",
        parents=[common, target_arguments()],
        help="redrive a failed job from where it stopped (only unfinished work runs again)",
    )
    redrive.add_argument("job_id", metavar="JOB")
    redrive.add_argument(
        "--dry-run", action="store_true", help="check and show what would run; change nothing"
    )
    redrive.add_argument("--wait", action="store_true", help="follow the redriven job until it ends")
    redrive.add_argument(
        "--allow-version-drift",
        action="store_true",
        help="redrive although the deployed model or prompt differs from the job's pinned versions "
        f"(recorded in {storage.drift_key('JOB')})",
    )
    redrive.set_defaults(handler=cmd_redrive)


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


def _reason(code: str, message: str) -> dict[str, str]:
    return {"code": code, "message": message}


def eligibility(
    records: JobRecords, failed_state: str | None, will_states: list[str]
) -> list[dict[str, str]]:
    """Why the job cannot be redriven (docs/semantics.md R3, M3); empty when it can."""
    described = records.require_execution()
    status = str(described["status"])
    reasons: list[dict[str, str]] = []
    if status == "SUCCEEDED":
        reasons.append(_reason("Succeeded", "the job succeeded: there is nothing to redrive"))
    elif status == "RUNNING":
        reasons.append(_reason("Running", "the job is still running: only a closed job can be redriven"))
    stopped = as_datetime(described.get("stopDate"))
    if status != "RUNNING" and stopped is not None and now() - stopped > REDRIVE_WINDOW:
        reasons.append(
            _reason("TooOld", f"the job closed {iso(stopped)}, more than 14 days ago: start a new job")
        )
    machine = records.ctx.client("stepfunctions").describe_state_machine(
        stateMachineArn=str(described.get("stateMachineArn") or records.ctx.state_machine_arn)
    )
    if machine.get("type") == "EXPRESS":
        reasons.append(_reason("Express", "Express executions cannot be redriven"))
    events = len(records.history)
    estimate = _estimated_events(records.definition, will_states)
    if events >= HISTORY_LIMIT - 1:
        reasons.append(_reason("HistoryLimit", f"the history has {events} events; the limit is 24,999"))
    elif events + estimate >= HISTORY_LIMIT:
        reasons.append(
            _reason(
                "HistoryNearLimit",
                f"the history has {events} events and the redrive may add up to {estimate}: it would cross "
                "the 25,000-event limit mid-run; start a new job for the unfinished documents",
            )
        )
    map_redrives = int((records.map_run or {}).get("redriveCount") or 0)
    if failed_state == map_state_name(records.definition) and map_redrives >= MAP_RUN_REDRIVE_LIMIT:
        reasons.append(
            _reason(
                "MapRunRedriveLimit",
                f"the Map Run was redriven {map_redrives} times; at 1,000 another redrive fails with "
                "States.Runtime: start a new job for the unfinished documents",
            )
        )
    if not reasons and described.get("redriveStatus") == "NOT_REDRIVABLE":
        reasons.append(
            _reason(
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
            _reason(
                "VersionDrift",
                "the deployed process_document differs from the job's pinned versions "
                f"({changed or versions.get('note')}): redeploy the pinned versions, or pass "
                f"--allow-version-drift (recorded in {storage.drift_key(records.job_id)})",
            )
        )
    refusal, note = definition_notes(versions.get("definition"))
    reasons += [_reason("DefinitionMissing", refusal)] if refusal else []
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


def record_drift(records: JobRecords, plan: dict[str, Any], outcome: str) -> str:
    """Append this redrive's version drift to the job's drift.json (before the redrive, then its outcome)."""
    key = storage.drift_key(records.job_id)
    existing = records.read_json(key) or {"job_id": records.job_id, "events": []}
    versions = plan["versions"]
    event = {
        "recorded_at": iso(now()),
        "action": "redrive",
        "execution_redrive": plan["redrive_count"] + 1,
        "allowed_by": getpass.getuser(),
        "flag": "--allow-version-drift",
        "pinned": versions["pinned"],
        "deployed": versions["deployed"],
        "differences": versions["differences"],
        "outcome": outcome,
    }
    events = existing.setdefault("events", [])
    if events and events[-1].get("execution_redrive") == event["execution_redrive"]:
        events[-1] = event
    else:
        events.append(event)
    records.ctx.write_json(key, existing)
    records.__dict__.pop("drift", None)
    return key


def _client_token(job_id: str) -> str:
    """This command's own client token (at most 64 characters): an SDK retry of its call is the same redrive
    (docs/semantics.md R7), and a concurrent command's call, with another token, is refused while the job runs
    again, which is how only the command that redrove says so."""
    return f"docagent-{hashlib.sha256(job_id.encode()).hexdigest()[:16]}-{uuid.uuid4().hex}"


def already_redriven(records: JobRecords, since: int) -> bool:
    """The job was redriven after ``since`` redrives (by another command) and runs or ran again."""
    records.refresh()
    described = records.require_execution()
    return int(described.get("redriveCount") or 0) > since and described.get("status") != "FAILED"


def _mark_already_redriven(plan: dict[str, Any], records: JobRecords) -> None:
    described = records.require_execution()
    count = int(described.get("redriveCount") or 0)
    plan.update(
        {
            "eligible": False,
            "already_redriven": True,
            "status": described.get("status"),
            "redrive_count": count,
            "redrive_date": iso(described.get("redriveDate")),
            "error": None,
            "exit_code": EXIT_OK,
        }
    )
    plan["reasons"] = [
        _reason(
            "AlreadyRedriven",
            f"the job was already redriven (redrive {count} at {iso(described.get('redriveDate'))}) and is "
            f"{described.get('status')}: follow it with `docagent status {records.job_id} --watch`",
        )
    ]


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
    where = f" at document {fault.document_index}" if fault.document_index is not None else ""
    return {
        **fault.model_dump(mode="json"),
        "next_redrive": next_redrive,
        "warning": f"a fault drill is still armed: {fault.mode} at {fault.point}{where}, {limit}{retries}; "
        f"redrive {next_redrive} meets it again (start a new job without --fault to run clean)",
    }


@command
def cmd_redrive(args: argparse.Namespace) -> int:
    records = JobRecords(OperatorContext.from_args(args), args.job_id)
    code, plan = redrive_job(records, dry_run=args.dry_run, allow_version_drift=args.allow_version_drift)
    if not plan["redriven"]:
        emit(args, plan, lambda: _print_plan(plan))
        return code
    if not args.json:
        _print_plan(plan)
    if args.wait:
        final = follow(records, show=not args.json, description=f"{records.job_id} (redriven)")
        plan["final"] = final.as_json()
        code = EXIT_JOB_FAILED if final.status in FAILED_STATUSES else EXIT_OK
        if not args.json:
            wide_console().print(
                f"job {records.job_id}: {final.status}" + (f" ({final.error})" if final.error else "")
            )
    if args.json:
        emit(args, plan, lambda: None)
    return code


def redrive_job(
    records: JobRecords, *, dry_run: bool, allow_version_drift: bool
) -> tuple[int, dict[str, Any]]:
    """Plan the job's redrive and, unless ``dry_run`` or refused, redrive it once: (exit code, the plan as
    ``--json`` prints it, ``redriven`` true when this call redrove it). A job already redriven by another
    caller (a second click, a concurrent command) is ``already_redriven`` and exit 0: nothing is sent twice.
    The console redrives through this function too."""
    ctx = records.ctx
    plan = plan_redrive(records, allow_version_drift=allow_version_drift)
    plan.update(
        {
            "dry_run": bool(dry_run),
            "redriven": False,
            "already_redriven": False,
            "redrive_date": None,
            "drift_recorded": None,
            "final": None,
        }
    )
    codes = [reason["code"] for reason in plan["reasons"]]
    if codes == ["Running"] and plan["redrive_count"] > 0:  # running again after a redrive: nothing to do
        _mark_already_redriven(plan, records)
        return EXIT_OK, plan
    if not plan["eligible"]:
        plan["error"] = "; ".join(reason["message"] for reason in plan["reasons"])
        plan["exit_code"] = EXIT_BAD_REQUEST
        return EXIT_BAD_REQUEST, plan
    if dry_run:
        return EXIT_OK, plan
    if plan["versions"].get("drift"):
        plan["drift_recorded"] = record_drift(records, plan, "redriving")
    try:
        plan["model_breaker_cleared"] = clear_model_breaker(records)
        response = ctx.client("stepfunctions").redrive_execution(
            executionArn=records.execution_arn,
            clientToken=_client_token(records.job_id),
        )
    except ClientError as error:
        if plan["drift_recorded"]:
            record_drift(records, plan, f"refused: {client_error_code(error)}")
        if client_error_code(error) == "ExecutionNotRedrivable" and already_redriven(
            records, plan["redrive_count"]
        ):
            _mark_already_redriven(plan, records)  # a concurrent command redrove it first
            return EXIT_OK, plan
        message = error.response.get("Error", {}).get("Message", str(error))
        plan.update(
            {
                "eligible": False,
                "error": f"Step Functions refused the redrive: {message}",
                "exit_code": EXIT_BAD_REQUEST,
            }
        )
        plan["reasons"].append({"code": client_error_code(error) or "RedriveRefused", "message": message})
        return EXIT_BAD_REQUEST, plan
    if plan["drift_recorded"]:
        record_drift(records, plan, "redriven")
    plan["redriven"] = True
    plan["redrive_date"] = iso(response.get("redriveDate"))
    return EXIT_OK, plan


def _print_plan(plan: dict[str, Any]) -> None:
    out = wide_console()
    job = plan["job_id"]
    if plan.get("already_redriven"):
        out.print(
            Text.assemble((f"job {job}: already redriven", "green"), f" ({plan['reasons'][0]['message']})")
        )
        return
    if plan["eligible"]:
        verb = "would redrive" if plan["dry_run"] else ("redriven" if plan["redriven"] else "can redrive")
        out.print(
            Text.assemble((f"job {job}: {verb}", "green"), f" from {plan['failed_state']} ({plan['error']})")
        )
    else:
        out.print(Text.assemble((f"job {job} cannot be redriven", "red"), f" ({plan['status']}):"))
        for reason in plan["reasons"]:
            out.print(Text.assemble("  ", (reason["code"], "red"), f": {reason['message']}"))
    for warning in plan["warnings"]:
        out.print(Text.assemble("  ", ("note", "yellow"), f": {warning}"))
    will = plan["will_run"]
    if will["states"]:
        out.print(f"  states that run again: {flow_text(will['states'], will['conditional_states'])}")
    if plan["failed_state"] and will["documents"]:
        table = Table(title=f"documents that run again ({will['document_count']})", title_justify="left")
        for column in ("document", "#", "last status", "error", "stored result"):
            table.add_column(column)
        for document in will["documents"]:
            table.add_row(
                document["document_id"],
                str(document["index"]),
                str(document["last_status"] or "-"),
                str(document["error"] or ""),
                "yes (returned as is)" if document["has_result"] else "no",
            )
        out.print(table)
    elif plan["failed_state"]:
        out.print("  documents that run again: none")
    for difference in plan["versions"].get("differences", []):
        marker = ("drift", "red") if difference["blocking"] else ("changed", "yellow")
        out.print(
            Text.assemble(
                "  ",
                marker,
                f" {difference['field']}: pinned {difference['pinned']}, deployed {difference['deployed']}",
            )
        )
    if plan.get("drift_recorded"):
        out.print(f"  drift recorded in {plan['drift_recorded']}")
    if plan.get("redrive_date"):
        out.print(f"  redriven at {plan['redrive_date']}")
