"""Where an evaluation's results come from: a job that already ran (``--from-job``, local or ``--aws``), or a
new job of the labelled documents through the real pipeline on a local cloud (``--samples`` alone).

Everything is read through the operator's one reader of a job's records (docagent/operations/records.py): the
results, the versions they were pinned to, and the journal of model calls (priced with
docagent/drills/prices.py).
"""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from docagent.drills import prices
from docagent.evaluation.figures import DefinitionVersion, RunUsage
from docagent.evaluation.labelled_sets import Definition, LabelledSample, definition_version
from docagent.evaluation.scoring import Extraction
from docagent.localcloud.bedrock.backends import ModelChoice
from docagent.localcloud.bedrock.labels import Label, document_sha256
from docagent.operations.context import EXIT_NOT_FOUND, OperatorContext, RefusedError
from docagent.operations.records import JobRecords, check_job_id, extracted_fields
from functions.payloads.document import DocumentResult
from functions.payloads.job import JobVersions


@dataclass
class JobResults:
    job_id: str
    status: str
    results: dict[str, Extraction]  # by sample name
    version: DefinitionVersion
    usage: RunUsage


if TYPE_CHECKING:
    from docagent.drills.job_folder import JobFolder


def results_of_job(
    ctx: OperatorContext, job_id: str, definition: Definition, samples: list[LabelledSample]
) -> JobResults:
    """The job's results matched to the samples by key: a result whose S3 key is the sample's path, or ends
    with ``/`` and it (a ``start --from-dir`` upload, or a prefix holding the set)."""
    records = JobRecords(ctx, check_job_id(job_id))
    described = records.description
    results = records.results
    if described is None and not results:
        raise RefusedError("JobNotFound", f"job {job_id} not found at {ctx.where}", EXIT_NOT_FOUND)
    matched = match_results(list(results.values()), samples, definition)
    pinned: JobVersions | None = next(iter(results.values())).versions if results else None
    return JobResults(
        job_id=job_id,
        status=str(described.get("status")) if described else "UNKNOWN",
        results=matched,
        version=definition_version(definition, pinned),
        usage=usage_of(records),
    )


def match_results(
    results: list[DocumentResult], samples: list[LabelledSample], definition: Definition
) -> dict[str, Extraction]:
    only_class = next(iter(definition.classes)) if len(definition.classes) == 1 else None
    matched: dict[str, Extraction] = {}
    for sample in samples:
        found = [r for r in results if r.key == sample.name or r.key.endswith("/" + sample.name)]
        if len(found) > 1:
            raise RefusedError(
                "AmbiguousSample",
                f"{sample.name} matches {len(found)} documents of the job "
                f"({', '.join(r.key for r in found)})",
            )
        if found:
            result = found[0]
            class_name, fields = extracted_fields(result)
            matched[sample.name] = Extraction(
                key=result.key,
                document_id=result.document_id,
                status=result.status,
                class_name=class_name or (only_class if fields is not None else None),
                fields=fields,
                confidence={path: evidence.confidence for path, evidence in result.evidence.items()},
            )
    return matched


def usage_of(records: JobRecords) -> RunUsage:
    """Every model call the journal holds (retries and redrives included), with its cost on Bedrock."""
    calls = [call for per_document in records.model_calls.values() for call in per_document]
    model_ids = sorted({call.model_id for call in calls})
    input_tokens = sum(call.input_tokens for call in calls)
    output_tokens = sum(call.output_tokens for call in calls)
    cost: float | None = 0.0
    note = None
    try:
        for model_id in model_ids:
            price = prices.model_price(model_id)
            mine = [call for call in calls if call.model_id == model_id]
            cost = (cost or 0.0) + (
                sum(c.input_tokens for c in mine) / 1000 * price.input_per_1000
                + sum(c.output_tokens for c in mine) / 1000 * price.output_per_1000
            )
    except LookupError as error:
        cost, note = None, str(error)
    return RunUsage(
        model_calls=len(calls),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        model_ids=model_ids,
        cost_usd=None if cost is None else round(cost, 6),
        prices_as_of=prices.PRICES_AS_OF,
        price_note=note,
    )


def sample_label(sample: LabelledSample) -> Label:
    """A labelled sample as the local Bedrock's label of its document."""
    if not isinstance(sample.label, dict):
        raise RefusedError("LabelledSetInvalid", f"{sample.name}: a label is a JSON object")
    return Label(
        sha256=document_sha256(sample.path.read_bytes()),
        class_name=sample.class_name,
        fields=sample.label,
        source=sample.name,
    )


def run_local(
    definition: Definition,
    samples: list[LabelledSample],
    *,
    model_faults: str | None = None,
    show_progress: bool = True,
    job_folder: JobFolder | None = None,
    model: ModelChoice | None = None,
) -> JobResults:
    """A new job of the samples' documents on a fresh in-process local cloud, as ``docagent demo`` starts
    one: the synthesized app deployed, the documents uploaded as ``start --from-dir`` does, the job followed
    to its end, then read back like any other job. With ``job_folder`` (``--job PATH``) the job runs that
    definition on its samples, as ``docagent demo --job`` does (without a crash)."""
    from docagent.drills.demo import default_time_scale, demo_cloud, follow, synthesized
    from docagent.drills.demo_corpus import seed_references
    from docagent.drills.local_job import LocalJob
    from docagent.localcloud.bedrock.converse_api import parse_model_faults
    from docagent.localcloud.bedrock.labels import post_labels
    from docagent.localcloud.deploy import deploy
    from docagent.operations.sources import deployed_limits, source_from_dir
    from docagent.operations.start_job import build_request
    from functions import storage
    from stacks import outputs as names

    try:
        faults = parse_model_faults(model_faults) if model_faults else None
    except ValueError as error:
        raise RefusedError("BadModelFaults", str(error)) from None
    job_id = f"eval-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    out_dir = synthesized({})
    with (
        demo_cloud(default_time_scale(len(samples)), keep=False, model_faults=faults, model=model) as where,
        tempfile.TemporaryDirectory(prefix="docagent-eval-") as staging,
    ):
        stack = deploy(out_dir, names.STACK_NAME, where.endpoint)
        job = LocalJob.on(where.endpoint, stack, job_id)
        if job_folder is not None:  # its definition published, its labels and references loaded
            prefix = storage.incoming_prefix(job_id)
            job_folder.seed(job, prefix)
            job.start({"job_id": job_id, "prefix": prefix, **job_folder.request()})
            follow(job, len(samples), show_progress, description="evaluating")
            return results_of_job(job.ctx, job_id, definition, samples)
        seed_references(job)
        # The local Bedrock answers each document from its label (docagent/localcloud/bedrock/labels.py).
        post_labels(where.endpoint, [sample_label(sample) for sample in samples])
        for sample in samples:  # the documents without their labels: what `start --from-dir` uploads
            target = Path(staging) / sample.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(sample.path, target)
        source = source_from_dir(job.ctx, staging, job_id, deployed_limits(job.ctx))
        for document in source.documents:
            assert document.path is not None
            key = storage.uploaded_key(source.prefix or "", document.name)
            job.s3.put_object(Bucket=source.bucket, Key=key, Body=document.path.read_bytes())
        request, _ = build_request(job_id, source, {})
        job.start(request)
        follow(job, len(samples), show_progress, description="evaluating")
        return results_of_job(job.ctx, job_id, definition, samples)
