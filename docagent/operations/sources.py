"""Where ``docagent start`` finds a job's documents (--prefix, --manifest, --from-dir), checked before
anything is written: every missing or unreadable document is named in one refusal, and a job over the deployed
MAX_DOCUMENTS is refused. A document over MAX_DOCUMENT_BYTES is no refusal: the workflow rejects it in its own
result (DocumentTooLarge), as on every path, a console start included (docs/design.md, "Documents")."""

from __future__ import annotations

import argparse
import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from docagent.kit.samples import LABEL_SUFFIX
from docagent.localcloud.bedrock.labels import Label, LabelsInvalid, read_labels, read_recordings
from docagent.localcloud.bedrock.recordings import RECORDING_SUFFIX, Recording
from docagent.operations.context import OperatorContext, OperatorError, RefusedError
from docagent.operations.local_folder import (
    Skipped,
    folder_files,
    key_name_problem,
    streamed_md5,
    unsupported_format,
)
from docagent.operations.records import READ_WORKERS, client_error_code
from functions import s3_json, storage
from functions.logic.prepare_job import configured_sources, outside_sources
from functions.payloads.common import DEFAULT_MAX_DOCUMENT_BYTES, DEFAULT_MAX_DOCUMENTS
from functions.reading.documents import CONVERSE_FORMATS
from stacks import outputs as names
from stacks.config import DEFAULT_MODEL_ID

SHOWN_OFFENDERS = 10
# A prefix's documents come from its listing (key and size). Each is also read with HeadObject (the permission
# GetObject needs, and its encryption key) up to HEAD_ALL_DOCUMENTS; a larger prefix has an even sample of
# HEAD_SAMPLE read: a million HeadObjects from the operator's machine would take about 20 minutes, and a
# document the sample did not read that cannot be read is rejected by its own review (in its result), not
# lost (docs/scale.md, "A million documents").
HEAD_ALL_DOCUMENTS = 10_000
HEAD_SAMPLE = 1_000
LOCAL_MODEL_SUFFIXES = (LABEL_SUFFIX, RECORDING_SUFFIX)
LABEL_SKIPPED = "a label or recording for the local model (registered with a local cloud), not a document"


@dataclass
class Document:
    name: str  # an S3 key, or a path relative to --from-dir
    size: int
    md5: str | None = None
    path: Path | None = None


@dataclass
class Source:
    kind: str  # prefix | manifest | from_dir
    bucket: str
    prefix: str | None = None
    keys: list[str] | None = None
    documents: list[Document] = field(default_factory=list)
    # Over MAX_DOCUMENT_BYTES: started anyway, the job rejects each one (DocumentTooLarge, in its result).
    too_large: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)  # --from-dir: entries not uploaded, and why
    # --from-dir against a local cloud: the labels beside the documents, for the local Bedrock (labels.py).
    labels: list[Label] = field(default_factory=list)
    recordings: list[Recording] = field(default_factory=list)

    def request_fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {"bucket": self.bucket}
        if self.keys is not None:
            fields["documents"] = self.keys
        else:
            fields["prefix"] = self.prefix
        return fields


@dataclass(frozen=True)
class Limits:
    max_document_bytes: int
    max_documents: int
    source_locations: str = ""  # SOURCE_LOCATIONS (empty: the job bucket's incoming/ root)
    default_definition: str = ""  # DEFAULT_DEFINITION: what a request without a definition runs
    model_id: str = DEFAULT_MODEL_ID  # MODEL_ID: what a definition without ``models`` calls
    default_max_cost_usd: float = 0.0  # DEFAULT_MAX_COST_USD: a request's budget unless it sets one (0: none)


def deployed_limits(ctx: OperatorContext) -> Limits:
    """MAX_DOCUMENT_BYTES / MAX_DOCUMENTS / SOURCE_LOCATIONS as the deployed prepare_job function has them
    (the size limit only says which documents `start` reports as to be rejected; it refuses nothing)."""
    try:
        name = ctx.output(names.function_name_output(names.PREPARE_JOB))
        environment = (
            ctx.client("lambda").get_function_configuration(FunctionName=name).get("Environment") or {}
        ).get("Variables") or {}
    except (ClientError, OperatorError):  # no such function or output: the documented defaults apply
        environment = {}
    return Limits(
        max_document_bytes=int(environment.get("MAX_DOCUMENT_BYTES", DEFAULT_MAX_DOCUMENT_BYTES)),
        max_documents=int(environment.get("MAX_DOCUMENTS", DEFAULT_MAX_DOCUMENTS)),
        source_locations=str(environment.get("SOURCE_LOCATIONS", "")),
        default_definition=str(environment.get("DEFAULT_DEFINITION", "")),
        model_id=str(environment.get("MODEL_ID") or DEFAULT_MODEL_ID),
        default_max_cost_usd=float(environment.get("DEFAULT_MAX_COST_USD") or 0.0),
    )


def check_sources(ctx: OperatorContext, bucket: str, wanted: list[str], limits: Limits) -> None:
    """OutsideSourceLocations naming every key (or the prefix) that no configured source location holds, as
    PrepareJob would refuse it once started (docs/design.md, "Source locations")."""
    sources = configured_sources(limits.source_locations, ctx.bucket)
    outside = outside_sources(bucket, wanted, sources)
    if not outside:
        return
    configured = [f"s3://{source_bucket}/{prefix}" for source_bucket, prefix in sources]
    named = [f"s3://{bucket}/{key}" for key in outside]
    shown = ", ".join(named[:SHOWN_OFFENDERS])
    more = f" (+{len(named) - SHOWN_OFFENDERS} more)" if len(named) > SHOWN_OFFENDERS else ""
    raise RefusedError(
        "OutsideSourceLocations",
        f"{shown}{more} {'is' if len(named) == 1 else 'are'} outside the configured source locations "
        f"({', '.join(configured)}): put the documents under one of them, or add the location to "
        "source_locations in cdk.json and deploy (that grants the functions read access to it)",
        details={"outside": named, "source_locations": configured},
    )


def parse_s3_location(text: str, default_bucket: str) -> tuple[str, str]:
    """(bucket, prefix ending in '/') from ``s3://bucket/prefix/`` or a prefix in the job bucket."""
    if text.startswith("s3://"):
        bucket, _, prefix = text[len("s3://") :].partition("/")
    else:
        bucket, prefix = default_bucket, text
    if not bucket:
        raise RefusedError("InvalidPrefix", f"{text!r} names no bucket (s3://bucket/prefix/)")
    if not prefix.strip("/"):
        raise RefusedError("InvalidPrefix", f"{text!r} names no prefix: give the folder of the documents")
    return bucket, prefix if prefix.endswith("/") else f"{prefix}/"


@dataclass
class Problems:
    """Every kind of bad document found, so one refusal names them all (missing, unreadable)."""

    found: list[tuple[str, str, list[str], str]] = field(default_factory=list)

    def add(self, error_type: str, what: str, offenders: list[str], hint: str) -> None:
        if offenders:
            self.found.append((error_type, what, offenders, hint))

    def refuse(self) -> None:
        """One refusal naming every kind found (its error type if one kind, else InvalidDocuments)."""
        if not self.found:
            return
        lines = []
        for _, what, offenders, hint in self.found:
            shown = ", ".join(offenders[:SHOWN_OFFENDERS])
            more = f" (+{len(offenders) - SHOWN_OFFENDERS} more)" if len(offenders) > SHOWN_OFFENDERS else ""
            lines.append(f"{len(offenders)} document(s) {what}: {shown}{more}. {hint}")
        error_type = self.found[0][0] if len(self.found) == 1 else "InvalidDocuments"
        raise RefusedError(
            error_type,
            " ".join(lines),
            details={
                "documents": [offender for _, _, offenders, _ in self.found for offender in offenders],
                "problems": {kind: offenders for kind, _, offenders, _ in self.found},
            },
        )


def _too_many(documents: list[Document], limits: Limits) -> None:
    if len(documents) > limits.max_documents:
        raise RefusedError(
            "TooManyDocuments",
            f"{len(documents)} documents is more than the deployed MAX_DOCUMENTS={limits.max_documents}: "
            "split the job",
        )


def _head_all(ctx: OperatorContext, bucket: str, keys: list[str]) -> dict[str, dict[str, Any] | str]:
    """HeadObject every key (it needs the same permission as GetObject): metadata, or an error code."""
    s3 = ctx.client("s3")

    def head(key: str) -> dict[str, Any] | str:
        try:
            response: dict[str, Any] = s3.head_object(Bucket=bucket, Key=key)
        except ClientError as error:
            return "missing" if s3_json.is_not_found(error) else client_error_code(error) or "error"
        return response

    if not keys:
        return {}
    with ThreadPoolExecutor(max_workers=min(READ_WORKERS, len(keys))) as pool:
        return dict(zip(keys, pool.map(head, keys), strict=True))


def _check_bucket(ctx: OperatorContext, bucket: str, named_by: str) -> None:
    """BucketNotFound naming the bucket (a HeadObject in a missing bucket would look like a missing key)."""
    try:
        ctx.client("s3").head_bucket(Bucket=bucket)
    except ClientError as error:
        if s3_json.is_not_found(error) or client_error_code(error) == "NoSuchBucket":
            raise RefusedError("BucketNotFound", f"bucket {bucket} ({named_by}) does not exist") from None
        if client_error_code(error) not in {"403", "AccessDenied"}:  # without ListBucket, HeadObject tells
            raise


def _documents_from_heads(heads: dict[str, dict[str, Any] | str]) -> list[Document]:
    """The documents that exist, once every missing and unreadable one is refused together."""
    documents = [
        Document(name=key, size=int(head.get("ContentLength", 0)))
        for key, head in heads.items()
        if isinstance(head, dict)
    ]
    problems = Problems()
    problems.add(
        "DocumentMissing",
        "do not exist",
        [key for key, head in heads.items() if head == "missing"],
        "Fix the list, or upload them first.",
    )
    problems.add(
        "DocumentUnreadable",
        "cannot be read",
        [f"{key} ({head})" for key, head in heads.items() if isinstance(head, str) and head != "missing"],
        "Check the bucket's permissions and encryption keys.",
    )
    problems.refuse()
    return documents


def source_from_prefix(ctx: OperatorContext, text: str, limits: Limits) -> Source:
    bucket, prefix = parse_s3_location(text, ctx.bucket)
    check_sources(ctx, bucket, [prefix], limits)
    sizes: dict[str, int] = {}
    try:
        for page in ctx.client("s3").get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            sizes.update((str(item["Key"]), int(item.get("Size", 0))) for item in page.get("Contents", []))
            if len(sizes) > limits.max_documents * 2:
                break
    except ClientError as error:
        code = client_error_code(error)
        if code == "NoSuchBucket":
            raise RefusedError("BucketNotFound", f"bucket {bucket} does not exist") from None
        raise RefusedError("PrefixUnreadable", f"cannot list s3://{bucket}/{prefix}: {code}") from None
    if not sizes:
        raise RefusedError(
            "PrefixNotFound", f"s3://{bucket}/{prefix} does not exist: nothing is stored under that prefix"
        )
    documents = [key for key in sizes if not key.endswith("/")]
    if not documents:
        raise RefusedError(
            "NoDocuments",
            f"s3://{bucket}/{prefix} holds only folder markers: the job would have no documents",
        )
    _refuse_misnamed("", documents, f"document(s) under s3://{bucket}/{prefix}")
    listed = [Document(key, sizes[key]) for key in documents]
    _too_many(listed, limits)
    _documents_from_heads(_head_all(ctx, bucket, head_sample(documents)))  # refuses what cannot be read
    source = Source("prefix", bucket, prefix=prefix)
    source.documents = listed
    return source


def head_sample(keys: list[str]) -> list[str]:
    """The keys ``start`` reads before it starts a prefix's job: all of them up to HEAD_ALL_DOCUMENTS, else
    HEAD_SAMPLE spread evenly over the listing (first and last included)."""
    if len(keys) <= HEAD_ALL_DOCUMENTS:
        return keys
    step = (len(keys) - 1) / (HEAD_SAMPLE - 1)
    return [keys[round(n * step)] for n in range(HEAD_SAMPLE)]


def _manifest_lines(path: Path) -> tuple[str | None, list[str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RefusedError("ManifestNotFound", f"manifest file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise RefusedError("ManifestUnreadable", f"cannot read manifest file {path}: {error}") from None
    stripped = text.strip()
    if stripped.startswith(("[", "{")):
        try:
            data = json.loads(stripped)
        except ValueError as error:
            raise RefusedError("ManifestUnreadable", f"{path} is not valid JSON: {error}") from None
        bucket = None
        if isinstance(data, dict):
            bucket, data = data.get("bucket"), data.get("documents")
        if not isinstance(data, list) or not all(isinstance(item, str) for item in data):
            raise RefusedError(
                "ManifestUnreadable",
                f'{path} must be a JSON array of keys, or {{"bucket": ..., "documents": [keys]}}',
            )
        return bucket, [item.strip() for item in data if item.strip()]
    lines = [line.strip() for line in stripped.splitlines()]
    return None, [line for line in lines if line and not line.startswith("#")]


def source_from_manifest(ctx: OperatorContext, file: str, limits: Limits) -> Source:
    bucket, entries = _manifest_lines(Path(file))
    if not entries:
        raise RefusedError("NoDocuments", f"manifest {file} lists no documents")
    buckets: set[str] = set()
    keys: list[str] = []
    for entry in entries:
        if entry.startswith("s3://"):
            entry_bucket, _, key = entry[len("s3://") :].partition("/")
            buckets.add(entry_bucket)
        else:
            key = entry
        if not key or key.endswith("/"):
            raise RefusedError("InvalidJobRequest", f"manifest entry {entry!r} is not an object key")
        keys.append(key)
    if bucket:
        buckets.add(bucket)
    if len(buckets) > 1:
        raise RefusedError(
            "InvalidJobRequest", f"a job reads one bucket; the manifest names {sorted(buckets)}"
        )
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    if duplicates:
        raise RefusedError(
            "InvalidJobRequest",
            f"the manifest lists the same document more than once: {', '.join(duplicates[:SHOWN_OFFENDERS])}",
            details={"documents": duplicates},
        )
    _refuse_misnamed("", keys, f"document(s) of manifest {file}")
    chosen = buckets.pop() if buckets else ctx.bucket
    check_sources(ctx, chosen, keys, limits)
    _too_many([Document(key, 0) for key in keys], limits)
    _check_bucket(ctx, chosen, f"named by manifest {file}" if buckets else "the job bucket")
    source = Source("manifest", chosen, keys=keys)
    source.documents = _documents_from_heads(_head_all(ctx, chosen, keys))
    return source


def _refuse_misnamed(prefix: str, names: list[str], what: str) -> None:
    """Refuse the start (``BadFileName``) naming each name ``key_name_problem`` finds a problem with."""
    misnamed = [f"{name!r} ({problem})" for name in names if (problem := key_name_problem(prefix, name))]
    if misnamed:
        raise RefusedError(
            "BadFileName",
            f"{len(misnamed)} {what} cannot be named in S3 and shown: "
            f"{', '.join(misnamed[:SHOWN_OFFENDERS])}. Rename them; nothing was uploaded.",
            details={"documents": misnamed},
        )


def source_from_dir(ctx: OperatorContext, directory: str, job_id: str, limits: Limits) -> Source:
    root = Path(directory)
    if not root.is_dir():
        raise RefusedError("DirectoryNotFound", f"{directory} is not a directory")
    prefix = storage.incoming_prefix(job_id)
    check_sources(ctx, ctx.bucket, [prefix], limits)
    files, skipped = folder_files(root)
    # NAME.label.json (or NAME.recording.json) beside NAME.EXT is for the local model, not a document.
    skipped += [Skipped(name, LABEL_SKIPPED) for name, _ in files if name.endswith(LOCAL_MODEL_SUFFIXES)]
    labelled = len(files)
    files = [(name, path) for name, path in files if not name.endswith(LOCAL_MODEL_SUFFIXES)]
    labels: list[Label] = []
    recordings: list[Recording] = []
    if ctx.endpoint is not None and labelled > len(files):
        try:
            labels, recordings = read_labels(root), read_recordings(root)
        except LabelsInvalid as invalid:
            details = {"problems": invalid.problems}
            raise RefusedError("LabelsInvalid", str(invalid), details=details) from None
    if not files:
        why = f" ({len(skipped)} skipped: {', '.join(item.path for item in skipped[:SHOWN_OFFENDERS])})"
        raise RefusedError(
            "NoDocuments",
            f"{directory} holds no files{why if skipped else ''}: the job would have no documents",
            details={"skipped": [item.as_json() for item in skipped]},
        )
    _refuse_misnamed(prefix, [relative for relative, _ in files], f"file(s) of {directory}")
    _too_many([Document(relative, 0) for relative, _ in files], limits)
    documents: list[Document] = []
    unreadable: list[str] = []
    for relative, path in files:
        try:
            size = path.stat().st_size
            # A file over the limit is uploaded unread (its md5 streamed) and rejected by the job, in its own
            # result: DocumentTooLarge. Only a file the model may read has its format checked here.
            oversized = size > limits.max_document_bytes
            data = b"" if oversized else path.read_bytes()
            md5 = streamed_md5(path) if oversized else hashlib.md5(data, usedforsecurity=False).hexdigest()
        except OSError as error:
            unreadable.append(f"{relative} ({error.strerror or error})")
            continue
        problem = None if oversized else unsupported_format(data)
        if problem is not None:
            unreadable.append(f"{relative} ({problem})")
            continue
        documents.append(Document(name=relative, size=size, md5=md5, path=path))
    problems = Problems()
    problems.add(
        "DocumentUnreadable",
        f"are not in a format the model reads ({', '.join(CONVERSE_FORMATS)}; detected from the content)",
        unreadable,
        "Convert or remove them.",
    )
    problems.refuse()
    return Source(
        "from_dir",
        ctx.bucket,
        prefix=prefix,
        documents=documents,
        skipped=skipped,
        labels=labels,
        recordings=recordings,
    )


def read_source(ctx: OperatorContext, args: argparse.Namespace, job_id: str) -> Source:
    """The validated documents of --prefix, --manifest or --from-dir (nothing is written)."""
    limits = deployed_limits(ctx)
    if args.prefix:
        source = source_from_prefix(ctx, args.prefix, limits)
    elif args.manifest:
        source = source_from_manifest(ctx, args.manifest, limits)
    else:
        source = source_from_dir(ctx, args.from_dir, job_id, limits)
    source.too_large = [doc.name for doc in source.documents if doc.size > limits.max_document_bytes]
    return source
