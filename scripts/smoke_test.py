"""Smoke test of a deployed docagent stack: one small real job, checked end to end, then cleaned up.

    .venv/bin/python scripts/smoke_test.py [--aws | --endpoint URL] [--stack-name DocAgent]
                                           [--timeout 900] [--keep] [--dry-run] [--json]

It finds the stack by its outputs (CloudFormation on AWS, or the local cloud's deploy record), then:

1. writes one customer (``CUST-9NNNN``, only if no such customer exists) to the reference table customers,
   so the documents are not rejected;
2. uploads three generated invoices for it under ``incoming/<job>/`` and starts the job (execution name =
   job id, input ``{"job_id", "prefix"}``, as the console would);
3. waits until the execution ends (at most ``--timeout`` seconds);
4. checks: the execution SUCCEEDED; the report counts 3 documents, 3 extracted; the job's ticket record
   exists (and, with the built-in ledger, the ledger holds it); none of the stack's alarms
   (``<stack>-*``) is in ALARM;
5. cleans up (unless ``--keep``): the uploaded documents, the job's records, its ledger ticket and index
   entry, the customer. The execution's history stays (Step Functions keeps it 90 days); a ticket in an
   external ticket system (an http destination) stays too.

``--dry-run`` reads the stack's outputs and prints every other call it would make, making none. Exit 0
when every check passed, 1 when one failed, 2 for bad input (no such stack, a local cloud that is down).
It calls real AWS with ``--aws`` (a few cents of Bedrock tokens); tests run it against the local cloud.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from botocore.exceptions import BotoCoreError, ClientError

from docagent.drills.synthetic import customer_id_for, generate_documents
from docagent.operations.context import OperatorContext, OperatorError, as_refusal, target_arguments
from docagent.operations.records import JobRecords, execution_arn_for
from functions import storage
from functions.actions.send import idempotency_key as action_idempotency_key
from stacks import outputs as names

DOCUMENTS = 3
POLL_SECONDS = 5.0
EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


@dataclass
class Calls:
    """Every AWS call goes through ``call``: made, or (dry run) printed and answered with ``dry``."""

    ctx: OperatorContext
    dry_run: bool
    out: Callable[[str], None]
    made: list[str] = field(default_factory=list)

    def call(self, service: str, operation: str, dry: Any = None, **params: Any) -> Any:
        shown = {k: (f"<{len(v)} bytes>" if isinstance(v, bytes) else v) for k, v in params.items()}
        line = f"{service}.{operation}({json.dumps(shown, default=str, sort_keys=True)})"
        self.made.append(line)
        if self.dry_run:
            self.out(f"would call {line}")
            return dry
        return getattr(self.ctx.client(service), operation)(**params)


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


def run(ctx: OperatorContext, args: argparse.Namespace, out: Callable[[str], None]) -> dict[str, Any]:
    calls = Calls(ctx, args.dry_run, out)
    run_id = f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{uuid.uuid4().hex[:6]}"
    job_id = f"smoke-{run_id}"
    bucket, table = ctx.bucket, ctx.output(names.REFERENCE_TABLE)
    prefix = storage.incoming_prefix(job_id)
    customer = _add_customer(calls, table)
    documents = generate_documents(DOCUMENTS, seed=1, customer_ids=[customer], noise_rate=0.0)
    keys = [storage.uploaded_key(prefix, f"{document.document_id}.txt") for document in documents]
    checks: list[Check] = []
    try:
        for key, document in zip(keys, documents, strict=True):
            calls.call("s3", "put_object", Bucket=bucket, Key=key, Body=document.text.encode())
        execution_arn = execution_arn_for(ctx.state_machine_arn, job_id)
        calls.call(
            "stepfunctions",
            "start_execution",
            stateMachineArn=ctx.state_machine_arn,
            name=job_id,
            input=json.dumps({"job_id": job_id, "prefix": prefix}),
        )
        status = _wait(calls, execution_arn, args.timeout)
        checks.append(Check("execution", status == "SUCCEEDED", f"{execution_arn}: {status}"))
        if not args.dry_run:
            checks += _check_records(ctx, job_id)
        checks.append(_check_alarms(calls, ctx.stack_name))
    finally:
        if not args.keep:
            _clean_up(calls, ctx, job_id=job_id, keys=keys, table=table, customer=customer)
    return {
        "job_id": job_id,
        "dry_run": args.dry_run,
        "ok": all(check.ok for check in checks),
        "checks": [check.__dict__ for check in checks],
        "calls": calls.made,
        "cleaned_up": not args.keep,
    }


def _add_customer(calls: Calls, table: str) -> str:
    """A customer id as the documents print it for the example's extractor (CUST-NNNNN), high in the range,
    written only where no such customer exists: a real row is never touched (nor deleted at clean-up)."""
    for _ in range(5):
        customer = customer_id_for(90_000 + random.SystemRandom().randrange(10_000))
        try:
            calls.call(
                "dynamodb",
                "put_item",
                TableName=table,
                Item={**_customer_key(customer), "customer_id": {"S": customer}, "name": {"S": "smoke test"}},
                ConditionExpression="attribute_not_exists(#key)",
                ExpressionAttributeNames={"#key": "key"},
            )
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise
            continue
        return customer
    raise OperatorError(f"the reference table {table} holds every id tried for the smoke test's customer")


def _customer_key(customer: str) -> dict[str, dict[str, str]]:
    """The row's keys in the reference table: the invoice example's lookup reads table customers."""
    return {"table": {"S": "customers"}, "key": {"S": customer}}


def _wait(calls: Calls, execution_arn: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while True:
        described = calls.call(
            "stepfunctions", "describe_execution", {"status": "SUCCEEDED"}, executionArn=execution_arn
        )
        status = str(described["status"])
        if status != "RUNNING" or time.monotonic() > deadline:
            return status
        time.sleep(POLL_SECONDS)


def _check_records(ctx: OperatorContext, job_id: str) -> list[Check]:
    records = JobRecords(ctx, job_id)
    report = records.report
    _, ticket = records.actions.get("ticket", (None, None))
    counts = f"{report.documents} documents, {report.extracted} extracted" if report else "no report"
    reasons = f" (rejected: {report.rejection_reasons})" if report and report.rejection_reasons else ""
    checks = [
        Check(
            "report",
            report is not None and (report.documents, report.extracted) == (DOCUMENTS, DOCUMENTS),
            counts + reasons,
        ),
        Check(
            "ticket",
            ticket is not None and ticket.outcome.outcome != "skipped",
            f"{ticket.target} record {ticket.outcome.reference}" if ticket else "none",
        ),
    ]
    if ticket is not None and ticket.target == "ledger":
        key = storage.ledger_key(ticket.outcome.idempotency_key)
        found = bool(records.keys(key))
        checks.append(Check("ledger", found, key))
    return checks


def _check_alarms(calls: Calls, stack_name: str) -> Check:
    answer = calls.call(
        "cloudwatch",
        "describe_alarms",
        {"MetricAlarms": []},
        AlarmNamePrefix=f"{stack_name}-",
        MaxRecords=100,
    )
    alarms = answer.get("MetricAlarms", [])
    firing = sorted(alarm["AlarmName"] for alarm in alarms if alarm.get("StateValue") == "ALARM")
    detail = f"in ALARM: {', '.join(firing)}" if firing else f"{len(alarms)} alarms, none in ALARM"
    return Check("alarms", not firing, detail)


def _clean_up(
    calls: Calls, ctx: OperatorContext, *, job_id: str, keys: list[str], table: str, customer: str
) -> None:
    job_keys = [] if calls.dry_run else JobRecords(ctx, job_id).keys(storage.job_prefix(job_id))
    idempotency_key = action_idempotency_key(job_id, "ticket")
    ledger = [storage.ledger_key(idempotency_key), storage.ledger_index_key(job_id, idempotency_key)]
    for key in [*keys, *job_keys, *ledger]:
        calls.call("s3", "delete_object", Bucket=ctx.bucket, Key=key)
    calls.call("dynamodb", "delete_item", TableName=table, Key=_customer_key(customer))


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="smoke_test.py",
        description=__doc__,
        parents=[target_arguments()],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--dry-run", action="store_true", help="print the calls it would make, make none")
    parser.add_argument("--keep", action="store_true", help="leave the job, its documents and customer")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for the job")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    out: Callable[[str], None] = (lambda line: None) if args.json else print
    try:
        ctx = OperatorContext.from_args(args)
        result = run(ctx, args, out)
    except (OperatorError, ClientError, BotoCoreError) as error:
        refusal = as_refusal(error)
        print(json.dumps({"error": str(refusal)}) if args.json else f"error: {refusal}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for check in result["checks"]:
            print(f"{'ok' if check['ok'] else 'FAILED':>6} {check['name']}: {check['detail']}")
        print("smoke test " + ("passed" if result["ok"] else "FAILED") + f" ({result['job_id']})")
    return EXIT_OK if result["ok"] else EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
