"""``docagent redrive``: redrive a failed job from where it stopped.

It checks eligibility first (docs/semantics.md R3, M3, M4), says what will run again, refuses a redrive that
would run another model or prompt than the job pinned (unless --allow-version-drift, which records the drift
in the job's drift.json), warns when a fault drill is still armed for the redrive (it would fail again), then
redrives and, with --wait, follows it. The plan (what is checked, what runs again) is redrive_plan.py's; this
module redrives by it, records a drift it was allowed, and prints it.
"""

from __future__ import annotations

import argparse
import getpass
import hashlib
import uuid
from typing import Any

from botocore.exceptions import ClientError
from rich.table import Table
from rich.text import Text

from docagent.operations.context import (
    EXIT_BAD_REQUEST,
    EXIT_JOB_FAILED,
    EXIT_OK,
    OperatorContext,
    command,
    emit,
    target_arguments,
)
from docagent.operations.display import iso, now, wide_console
from docagent.operations.inspect_print import flow_text
from docagent.operations.model_breaker import clear_model_breaker
from docagent.operations.progress import FAILED_STATUSES, follow
from docagent.operations.records import JobRecords, client_error_code
from docagent.operations.redrive_plan import plan_reason, plan_redrive
from functions import storage


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
        plan_reason(
            "AlreadyRedriven",
            f"the job was already redriven (redrive {count} at {iso(described.get('redriveDate'))}) and is "
            f"{described.get('status')}: follow it with `docagent status {records.job_id} --watch`",
        )
    ]


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
