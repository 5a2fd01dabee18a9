"""``docagent start``.

``start`` validates a request completely before anything starts (no object is uploaded and no
execution is started for a request it refuses), then starts the execution named after the job id. A
second ``start`` of the same job with the same input returns the existing execution; with another
input it is refused (JobConflict), as prepare_job would refuse it.

Without ``--job-id`` the id is derived from the definition's version and the document set (names, sizes,
md5s), so starting the same inbox twice is one job: the first safeguard against a double run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import secrets
import shlex
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from botocore.exceptions import ClientError
from pydantic import ValidationError
from rich.text import Text

from docagent.kit import registry
from docagent.kit.registry import current_bundle
from docagent.localcloud.bedrock.labels import post_labels
from docagent.operations.context import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    OperatorContext,
    RefusedError,
    command,
    console,
    emit,
    target_arguments,
)
from docagent.operations.display import iso, wide_console
from docagent.operations.job_definitions import StartDefinition, start_definition
from docagent.operations.jobs import print_snapshot
from docagent.operations.progress import (
    exit_code_for,
    follow,
)
from docagent.operations.records import READ_WORKERS, JobRecords, check_job_id, client_error_code
from docagent.operations.reference import reference_warnings
from docagent.operations.sources import Document, Source, deployed_limits, read_source
from docagent.operations.start_estimate import dry_run, priced_start, source_payload
from functions import storage
from functions.logic.prepare_job import request_sha256
from functions.payloads.common import JOB_ID_RULE
from functions.payloads.job import JobRequest
from stacks import outputs as names


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    target = target_arguments()
    start = commands.add_parser(
        "start",
        parents=[common, target],
        help="validate a job's documents and start it (the execution is named after the job id)",
    )
    start.add_argument(
        "--job-id",
        help=f"the job id: {JOB_ID_RULE} (default: derived from the definition's version and the documents, "
        "so the same documents started twice are one job)",
    )
    source = start.add_mutually_exclusive_group(required=True)
    source.add_argument("--prefix", help="s3://bucket/prefix/ (or a prefix in the job bucket)")
    source.add_argument("--manifest", help="a file listing the documents: a JSON array of keys or s3:// URIs")
    source.add_argument(
        "--from-dir",
        help=f"upload this directory's files under {storage.incoming_prefix('JOB')} and review them",
    )
    start.add_argument(
        "--require-approval", action="store_true", help="wait for `docagent approve` before the actions"
    )
    definition = start.add_mutually_exclusive_group()
    definition.add_argument(
        "--definition",
        help="the published job definition to run (default: the deployment's default_definition)",
    )
    definition.add_argument(
        "--job", metavar="PATH", help="a definition folder: validate and publish it, then run the job with it"
    )
    start.add_argument(
        "--max-cost-usd",
        type=float,
        help="the job's budget in US dollars: no model call starts that would pass it (BudgetExceeded); "
        "`docagent budget JOB --max-usd N` raises it",
    )
    start.add_argument(
        "--dry-run",
        action="store_true",
        help="validate the request and list the documents, print the model cost estimate, and stop: nothing "
        "is uploaded, published or started",
    )
    start.add_argument("--wait", action="store_true", help="follow the job until it ends")
    start.add_argument(
        "--fault",
        help="crash drill: a fault spec as JSON, e.g. "
        '\'{"point": "before_store_result", "document_index": 3, "mode": "exit", "until_redrive": 1}\' '
        "(honoured only where fault injection is enabled)",
    )
    start.set_defaults(handler=cmd_start)


def _uploaded(ctx: OperatorContext, source: Source) -> dict[str, str]:
    """What is already under incoming/{job}/: key -> ETag (the md5 of a single-part upload)."""
    found: dict[str, str] = {}
    paginator = ctx.client("s3").get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=source.bucket, Prefix=source.prefix):
        for item in page.get("Contents", []):
            found[str(item["Key"])] = str(item.get("ETag", "")).strip('"')
    return found


def _check_upload_conflict(
    source: Source, job_id: str, existing: dict[str, str], job_exists: bool
) -> list[Document]:
    """The documents still to upload; JobConflict if incoming/{job}/ holds other documents, or (for a job
    that already started) lacks some of the directory's files."""
    wanted = {storage.uploaded_key(source.prefix or "", doc.name): doc for doc in source.documents}
    extra = sorted(set(existing) - set(wanted))
    changed = sorted(key for key, doc in wanted.items() if key in existing and existing[key] != doc.md5)
    missing = sorted(set(wanted) - set(existing)) if job_exists else []
    if extra or changed or missing:
        raise RefusedError(
            "JobConflict",
            f"job {job_id} already ran with other documents under s3://{source.bucket}/{source.prefix} "
            f"({len(changed)} changed, {len(extra)} not in the directory, {len(missing)} new): "
            "use a new job id",
            details={"changed": changed, "not_in_directory": extra, "new": missing},
        )
    return [doc for key, doc in wanted.items() if key not in existing]


def _normalised_sha(request: dict[str, Any], bucket: str) -> str | None:
    try:
        parsed = JobRequest.model_validate(request)
    except ValidationError:
        return None
    return request_sha256(parsed.model_copy(update={"bucket": parsed.bucket or bucket}))


def _differences(mine: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    return sorted(
        name for name in set(mine) | set(theirs) if name != "job_id" and mine.get(name) != theirs.get(name)
    )


def _conflict(job_id: str, mine: dict[str, Any], theirs: Any, where: str) -> RefusedError:
    differing = _differences(mine, theirs) if isinstance(theirs, dict) else ["input"]
    return RefusedError(
        "JobConflict",
        f"job {job_id} already ran with different input ({where}; differs in: {', '.join(differing)}): "
        "use a new job id",
        details={"differs_in": differing},
    )


# The placeholder job id a --from-dir source is read under before the job id is derived from it.
PENDING_JOB_ID = "pending"


def derived_job_id(definition: str | None, source: Source, options: dict[str, Any]) -> str:
    """``NAME-HASH``: the definition's name, and 16 hex digits of the sha256 of its version, the documents
    (name, size, md5; for --prefix and --manifest their bucket and keys) and the options."""
    name, _, _ = (definition or "job").partition("@")
    fingerprint = {
        "definition": definition,
        "source": [source.kind, source.bucket, None if source.kind == "from_dir" else source.prefix],
        "documents": sorted([doc.name, doc.size, doc.md5] for doc in source.documents),
        "options": options,
    }
    digest = hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()[:16]
    return check_job_id(f"{name[:63]}-{digest}")


def _definition_label(ctx: OperatorContext, definition: StartDefinition | None) -> str | None:
    """The version a new job would pin: the named one, else the deployment's default definition's current."""
    if definition is not None:
        return definition.version
    name = deployed_limits(ctx).default_definition
    pointer = registry.get_pointer(ctx.client("s3"), ctx.bucket, name) if name else None
    return registry.label(name, pointer.sha256) if name and pointer else name


def _job_and_source(
    ctx: OperatorContext, args: argparse.Namespace, options: dict[str, Any]
) -> tuple[JobRecords, Source, StartDefinition | None]:
    """The job (named, or derived from its documents), its validated source and its definition."""
    if args.job_id is None:  # read the documents first: the job id is derived from them
        source = read_source(ctx, args, PENDING_JOB_ID)
        definition = start_definition(ctx, args, new_job=True)
        job_id = derived_job_id(_definition_label(ctx, definition), source, options)
        if source.kind == "from_dir":
            source.prefix = storage.incoming_prefix(job_id)
        return JobRecords(ctx, job_id), source, definition
    job_id = check_job_id(args.job_id)
    source = read_source(ctx, args, job_id)
    records = JobRecords(ctx, job_id)
    new_job = records.description is None and records.request is None
    return records, source, start_definition(ctx, args, new_job=new_job)


@command
def cmd_start(args: argparse.Namespace) -> int:
    if args.job_id is not None:
        check_job_id(args.job_id)  # a bad id is refused before anything is asked of a deployment
    ctx = OperatorContext.from_args(args)
    options = job_options(args)
    records, source, definition = _job_and_source(ctx, args, options)
    job_id, derived = records.job_id, args.job_id is None
    existing = records.description
    request, sha = build_request(job_id, source, options, definition.name if definition else None)
    if existing is not None:
        theirs = json.loads(existing.get("input") or "null")
        if not isinstance(theirs, dict) or _normalised_sha(theirs, ctx.bucket) != sha:
            raise _conflict(job_id, request, theirs, f"execution {existing['status']}")
    stored = records.request
    if stored is not None and stored.request_sha256 != sha:
        where = storage.request_key(job_id)
        raise _conflict(job_id, request, stored.request.model_dump(mode="json", exclude_none=True), where)

    warnings = [] if existing is not None else _reference_warnings(ctx, request)
    if warnings and not args.json:
        for warning in warnings:
            console.print(f"warning: {warning}", style="yellow", markup=False)
    new_job = existing is None and stored is None
    estimate = priced_start(ctx, args, request, source) if new_job or args.dry_run else None
    if args.dry_run and estimate is not None:
        return dry_run(
            args,
            {"job_id": job_id, "job_id_derived": derived, "request": request, "request_sha256": sha}
            | {"warnings": warnings, "definition": definition.version if definition else None},
            source,
            _source_text(source),
            estimate,
        )
    uploaded = 0
    if source.kind == "from_dir":
        job_exists = existing is not None or records.request is not None
        to_upload = _check_upload_conflict(source, job_id, _uploaded(ctx, source), job_exists)
        if existing is None:
            _upload(ctx, source, to_upload, _resume_command(args, job_id))
            uploaded = len(to_upload)

    started = False
    if existing is None:
        if (source.labels or source.recordings) and ctx.endpoint is not None:  # the local Bedrock's answers
            post_labels(ctx.endpoint, source.labels, source.recordings)
        started = _start_execution(ctx, records, request, sha)
    records.refresh()
    described = records.require_execution()
    payload: dict[str, Any] = {
        "job_id": job_id,
        "job_id_derived": derived,
        "execution_arn": records.execution_arn,
        "started": started,
        "status": described["status"],
        "started_at": iso(described.get("startDate")),
        "request": request,
        "request_sha256": sha,
        "source": source_payload(source, uploaded),
        "final": None,
        "warnings": warnings,
        "definition": definition.version if definition else None,
        "dry_run": bool(args.dry_run),
        "estimate": None if estimate is None else estimate.model_dump(),
    }
    if not args.json:
        _print_started(payload, source, records, definition)
    code = EXIT_OK
    if args.wait:
        final = follow(records, show=not args.json)
        payload["final"] = final.as_json()
        code = exit_code_for(final.status)
        if not args.json:
            print_snapshot(final)
    if args.json:
        emit(args, payload, lambda: None)
    return code


def _print_started(
    payload: dict[str, Any], source: Source, records: JobRecords, definition: StartDefinition | None
) -> None:
    """The human answer of a start: the job, its source, its definition, what was skipped."""
    job_id, started, uploaded = payload["job_id"], payload["started"], payload["source"]["uploaded"]
    described = records.require_execution()
    human = wide_console()
    verb = "started" if started else "already started with the same input:"
    human.print(
        Text.assemble(
            "job ",
            (job_id, "bold"),
            f" {verb} {len(source.documents)} documents ({payload['source']['bytes']} bytes) from "
            f"{_source_text(source)}" + (f", {uploaded} uploaded" if uploaded else ""),
            f"; status {described['status']}\n  execution {records.execution_arn}",
        )
    )
    if definition is not None:
        human.print(Text(f"  definition {definition.version}{definition.note}"))
    for item in source.skipped:
        human.print(Text.assemble(("  skipped ", "yellow"), f"{item.path}: {item.reason}"))
    if source.too_large:
        human.print(
            Text(
                f"  {len(source.too_large)} document(s) over MAX_DOCUMENT_BYTES: the job rejects each "
                "(DocumentTooLarge, in its result; `--json` names them in source.too_large)"
            )
        )


def _reference_warnings(ctx: OperatorContext, request: dict[str, Any]) -> list[str]:
    """Before a new job: each reference table its definition's lookup checks read that is empty
    (docs/deploying.md, "Deploying to your account"). Nothing when the definition is not published (PrepareJob
    refuses the job then) or the deployment has no reference table."""
    name = request.get("definition") or deployed_limits(ctx).default_definition
    if not name or not ctx.outputs.get(names.REFERENCE_TABLE):
        return []
    try:
        bundle = current_bundle(ctx.client("s3"), ctx.bucket, name)
        if bundle is None:
            return []
        return reference_warnings(ctx.client("dynamodb"), ctx.outputs[names.REFERENCE_TABLE], bundle)
    except ClientError as error:
        return [f"could not check the reference tables of definition {name} ({client_error_code(error)})"]


def job_options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {"require_approval": bool(args.require_approval)}
    if getattr(args, "max_cost_usd", None) is not None:
        options["max_cost_usd"] = args.max_cost_usd
    if args.fault:
        try:
            options["fault"] = json.loads(args.fault)
        except ValueError as error:
            raise RefusedError("InvalidJobRequest", f"--fault is not JSON: {error}") from None
    return options


def build_request(
    job_id: str, source: Source, options: dict[str, Any], definition: str | None = None
) -> tuple[dict[str, Any], str]:
    """The execution input and its sha256 as prepare_job computes it (the idempotency of a job)."""
    request: dict[str, Any] = {"job_id": job_id, **source.request_fields(), "options": options}
    if definition is not None:
        request["definition"] = definition
    try:
        return request, request_sha256(JobRequest.model_validate(request))
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in issue['loc'])}: {issue['msg']}" for issue in error.errors()
        )
        raise RefusedError("InvalidJobRequest", f"invalid job request: {problems}") from None


def _source_text(source: Source) -> str:
    if source.kind == "manifest":
        return f"a manifest (s3://{source.bucket})"
    return f"s3://{source.bucket}/{source.prefix}"


def _resume_command(args: argparse.Namespace, job_id: str) -> str:
    """The ``docagent start`` that resumes this one: the same job id, directory and options."""
    words = ["docagent", "start", "--job-id", job_id, "--from-dir", str(args.from_dir)]
    words += ["--require-approval"] if args.require_approval else []
    words += ["--definition", args.definition] if getattr(args, "definition", None) else []
    words += ["--job", str(args.job)] if getattr(args, "job", None) else []
    words += ["--fault", args.fault] if args.fault else []
    max_cost = getattr(args, "max_cost_usd", None)
    words += ["--max-cost-usd", str(max_cost)] if max_cost is not None else []
    words += ["--wait"] if args.wait else []
    return shlex.join(words)


def _upload(ctx: OperatorContext, source: Source, documents: list[Document], resume: str) -> None:
    """Upload the documents (the directory's files as read and checked). Ctrl-C stops it before the job
    starts: a refusal (exit 130) that says how to resume; the rerun uploads only what is not there yet."""
    s3 = ctx.client("s3")

    def put(doc: Document) -> None:
        assert doc.path is not None
        key = storage.uploaded_key(source.prefix or "", doc.name)
        s3.put_object(Bucket=source.bucket, Key=key, Body=doc.path.read_bytes())

    if not documents:
        return
    pool = ThreadPoolExecutor(max_workers=min(READ_WORKERS, len(documents)))
    try:
        list(pool.map(put, documents))
    except KeyboardInterrupt:
        # No new upload begins, and the ones in flight end before the refusal: what it reports is settled.
        pool.shutdown(wait=True, cancel_futures=True)
        raise RefusedError(
            "UploadInterrupted",
            f"the upload to s3://{source.bucket}/{source.prefix} stopped (Ctrl-C); the job was not started. "
            "Resume with the same command, which uploads only the files not uploaded yet, then starts the "
            f"job: {resume}",
            EXIT_INTERRUPTED,
            {"resume": resume},
        ) from None
    pool.shutdown()


def _trace_header() -> str:
    """A fresh X-Ray trace header (``Root=1-<epoch seconds, 8 hex>-<24 hex>``) for one StartExecution."""
    return f"Root=1-{int(time.time()):08x}-{secrets.token_hex(12)}"


def _start_execution(ctx: OperatorContext, records: JobRecords, request: dict[str, Any], sha: str) -> bool:
    """StartExecution named after the job: True only for the call that created the execution. Concurrent
    starts with the same input all get the one execution (StartExecution is idempotent for the same name and
    input while it runs, and ExecutionAlreadyExists once it closed); each passes its own trace header, and the
    execution keeps the header of the start that created it (DescribeExecution ``traceHeader``)."""
    header = _trace_header()
    try:
        ctx.client("stepfunctions").start_execution(
            stateMachineArn=ctx.state_machine_arn,
            name=records.job_id,
            input=json.dumps(request),
            traceHeader=header,
        )
    except ClientError as error:
        if client_error_code(error) != "ExecutionAlreadyExists":
            raise
        records.refresh()
        theirs = json.loads((records.require_execution().get("input")) or "null")
        if not isinstance(theirs, dict) or _normalised_sha(theirs, ctx.bucket) != sha:
            raise _conflict(records.job_id, request, theirs, "a concurrent start") from None
        return False
    records.refresh()
    kept = records.require_execution().get("traceHeader")
    return kept is None or kept == header  # an endpoint that keeps no header cannot tell: the old answer
