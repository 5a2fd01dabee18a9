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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from docagent.drills import prices
from docagent.evaluation.figures import DefinitionVersion, ModelUsage, RunUsage
from docagent.evaluation.labelled_sets import Definition, LabelledSample, definition_version
from docagent.evaluation.scoring import Extraction
from docagent.evaluation.splits import SplitFigures, split_figures
from docagent.kit.samples import SectionLabel
from docagent.localcloud.bedrock.backends import ModelChoice
from docagent.localcloud.bedrock.labels import Label, document_sha256, packet_labels
from docagent.operations.context import EXIT_NOT_FOUND, OperatorContext, RefusedError
from docagent.operations.records import JobRecords, check_job_id, extracted_fields
from functions import storage
from functions.definition.job_spec import DefinitionBundle, JobDefinition
from functions.inference.evidence import split
from functions.payloads.document import DocumentResult
from functions.payloads.job import JobVersions


@dataclass
class JobResults:
    job_id: str
    status: str
    results: dict[str, Extraction]  # by sample name
    version: DefinitionVersion
    usage: RunUsage
    # A cascade's documents as its cheap model alone extracted them (the journalled extract calls), by sample
    # name: None when no result names a cascade (docagent/evaluation/cascade.py).
    first_model: dict[str, Extraction] | None = None
    # The packets' split against their labelled sections (docagent/evaluation/splits.py): None when the set
    # labels no packet.
    splits: SplitFigures | None = None


if TYPE_CHECKING:
    from docagent.drills.job_folder import JobFolder
    from docagent.drills.local_job import LocalJob


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
    sections = {
        (result.document_id, section.section_id): DocumentResult.model_validate(found)
        for result in results.values()
        for section in result.sections or []
        if (
            found := records.read_json(
                storage.section_result_key(job_id, result.document_id, section.section_id)
            )
        )
    }
    matched = match_results(list(results.values()), samples, definition, sections)
    pinned: JobVersions | None = next(iter(results.values())).versions if results else None
    return JobResults(
        job_id=job_id,
        status=str(described.get("status")) if described else "UNKNOWN",
        results=matched,
        version=definition_version(definition, pinned),
        usage=usage_of(records),
        first_model=first_model_extractions(records, matched),
        splits=split_figures(samples, list(results.values())),
    )


def first_model_extractions(
    records: JobRecords, matched: dict[str, Extraction]
) -> dict[str, Extraction] | None:
    """Each matched document of a cascade as its first (cheap) model's extract call gave it, before the strong
    model's: its fields from the journal, quotes taken out (no call or no fields: none extracted)."""
    results = records.results
    if not any(result.cascade is not None for result in results.values()):
        return None
    first: dict[str, Extraction] = {}
    for name, extraction in matched.items():
        calls = records.model_calls.get(extraction.document_id or "", [])
        call = next((c for c in reversed(calls) if c.purpose == "extract"), None)
        fields = None if call is None or call.fields is None else split(call.fields)[0]
        first[name] = extraction.model_copy(
            update={"fields": fields, "status": "first model", "confidence": {}, "evidence": {}}
        )
    return first


def match_results(
    results: list[DocumentResult],
    samples: list[LabelledSample],
    definition: Definition,
    sections: Mapping[tuple[str, str], DocumentResult] | None = None,
) -> dict[str, Extraction]:
    """Each sample's result: the document's whose key is its path (or ends with it), or of a packet's
    section, the section's (``sections``: by document and section id) whose pages are the sample's."""
    only_class = next(iter(definition.classes)) if len(definition.classes) == 1 else None
    matched: dict[str, Extraction] = {}
    for sample in samples:
        name = sample.document
        found = [r for r in results if r.key == name or r.key.endswith("/" + name)]
        if len(found) > 1:
            raise RefusedError(
                "AmbiguousSample",
                f"{sample.name} matches {len(found)} documents of the job "
                f"({', '.join(r.key for r in found)})",
            )
        case = None
        if found and sample.pages is not None:
            packet = found[0]
            if packet.case is not None and packet.case.status != "extracted":  # functions/checks/cases.py
                case = f"{packet.case.status}: {packet.case.reason}"
            found = [
                section
                for (document_id, _), section in (sections or {}).items()
                if document_id == packet.document_id and section.pages == sample.pages
            ]
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
                case=case,
                evidence=result.evidence,
                failed_checks=[check.name for check in result.checks if not check.passed],
            )
    return matched


def usage_of(records: JobRecords) -> RunUsage:
    """Every model call the journal holds (retries and redrives included), with its cost on Bedrock, in all
    and by model."""
    calls = [call for per_document in records.model_calls.values() for call in per_document]
    model_ids = sorted({call.model_id for call in calls})
    by_model: dict[str, ModelUsage] = {}
    note = None
    for model_id in model_ids:
        mine = [call for call in calls if call.model_id == model_id]
        input_tokens, output_tokens = sum(c.input_tokens for c in mine), sum(c.output_tokens for c in mine)
        try:
            price = prices.model_price(model_id)
            cost: float | None = round(
                input_tokens / 1000 * price.input_per_1000 + output_tokens / 1000 * price.output_per_1000, 6
            )
        except LookupError as error:
            cost, note = None, str(error)
        by_model[model_id] = ModelUsage(
            model_calls=len(mine), input_tokens=input_tokens, output_tokens=output_tokens, cost_usd=cost
        )
    costs = [usage.cost_usd for usage in by_model.values()]
    return RunUsage(
        model_calls=len(calls),
        input_tokens=sum(call.input_tokens for call in calls),
        output_tokens=sum(call.output_tokens for call in calls),
        model_ids=model_ids,
        cost_usd=None if None in costs else round(sum(cost or 0.0 for cost in costs), 6),
        prices_as_of=prices.PRICES_AS_OF,
        price_note=note,
        by_model=by_model,
    )


def sample_label(sample: LabelledSample) -> Label:
    """A labelled sample as the local Bedrock's label of its document."""
    if not isinstance(sample.label, dict):
        raise RefusedError("LabelledSetInvalid", f"{sample.name}: a label is a JSON object")
    return Label(
        sha256=document_sha256(sample.path.read_bytes()),
        class_name=sample.class_name,
        no_class=sample.class_name is None,
        fields=sample.label,
        source=sample.name,
    )


def samples_labels(samples: list[LabelledSample]) -> list[Label]:
    """The local Bedrock's labels of the samples: each document's, and each packet's by its sections
    (docagent/localcloud/bedrock/labels.py ``packet_labels``)."""
    labels = [sample_label(sample) for sample in samples if sample.pages is None]
    packets: dict[Path, list[SectionLabel]] = {}
    for sample in samples:
        if sample.pages is not None and isinstance(sample.label, dict):
            packets.setdefault(sample.path, []).append(
                SectionLabel(sample.class_name, sample.pages, sample.label)
            )
    for path, sections in packets.items():
        labels += packet_labels(path.read_bytes(), sections, str(path))
    return labels


def run_local(
    definition: Definition,
    samples: list[LabelledSample],
    *,
    model_faults: str | None = None,
    show_progress: bool = True,
    job_folder: JobFolder | None = None,
    model: ModelChoice | None = None,
    models: tuple[str, str] | None = None,
    alone: bool = False,
) -> JobResults:
    """A new job of the samples' documents on a fresh in-process local cloud, as ``docagent demo`` starts
    one: the synthesized app deployed, the documents uploaded as ``start --from-dir`` does, the job followed
    to its end, then read back like any other job. With ``job_folder`` (``--job PATH``) the job runs that
    definition on its samples, as ``docagent demo --job`` does (without a crash). With ``models`` (cheap,
    strong) the definition runs as if its job.json named them (docagent/evaluation/cascade.py); ``alone``:
    as if it named none (the deployment's model_id alone: the strong model of a default cascade)."""
    from docagent.drills.demo import follow
    from docagent.drills.demo_cloud import default_time_scale, demo_cloud, synthesized
    from docagent.drills.demo_corpus import seed_references
    from docagent.drills.local_job import LocalJob
    from docagent.localcloud.bedrock.labels import post_labels
    from docagent.localcloud.bedrock.model_faults import parse_model_faults
    from docagent.localcloud.deploy import deploy
    from docagent.operations.sources import deployed_limits, source_from_dir
    from docagent.operations.start_job import build_request
    from stacks import outputs as names

    try:
        faults = parse_model_faults(model_faults) if model_faults else None
    except ValueError as error:
        raise RefusedError("BadModelFaults", str(error)) from None
    job_id = f"eval-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    out_dir = synthesized({} if models is None else allowing(models))
    with (
        demo_cloud(default_time_scale(len(samples)), keep=False, model_faults=faults, model=model) as where,
        tempfile.TemporaryDirectory(prefix="docagent-eval-") as staging,
    ):
        stack = deploy(out_dir, names.STACK_NAME, where.endpoint)
        job = LocalJob.on(where.endpoint, stack, job_id)
        if job_folder is not None:  # its definition published, its labels and references loaded
            prefix = storage.incoming_prefix(job_id)
            job_folder.seed(job, prefix)
            if models is not None or alone:
                publish_with_models(job, job_folder.bundle, models)
            job.start({"job_id": job_id, "prefix": prefix, **job_folder.request()})
            follow(job, len(samples), show_progress, description="evaluating")
            return results_of_job(job.ctx, job_id, definition, samples)
        seed_references(job)
        if models is not None or alone:
            publish_with_models(job, None, models)
        # The local Bedrock answers each document from its label (docagent/localcloud/bedrock/labels.py).
        post_labels(where.endpoint, samples_labels(samples))
        for name, path in {sample.document: sample.path for sample in samples}.items():
            target = (
                Path(staging) / name
            )  # the documents without their labels: what `start --from-dir` uploads
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        source = source_from_dir(job.ctx, staging, job_id, deployed_limits(job.ctx))
        for document in source.documents:
            assert document.path is not None
            key = storage.uploaded_key(source.prefix or "", document.name)
            job.s3.put_object(Bucket=source.bucket, Key=key, Body=document.path.read_bytes())
        request, _ = build_request(job_id, source, {})
        job.start(request)
        follow(job, len(samples), show_progress, description="evaluating")
        return results_of_job(job.ctx, job_id, definition, samples)


def allowing(models: tuple[str, str]) -> dict[str, list[str]]:
    """The local deployment's overrides that let its functions call ``models`` too (cdk.json's
    ``extra_model_ids`` and them): a cascade's cheap model is refused before any call otherwise
    (ModelNotAllowed, MODELS_ALLOWED)."""
    from docagent.localcloud.synth import local_context
    from stacks.config import CONTEXT_KEY

    named = local_context()[CONTEXT_KEY].get("extra_model_ids") or []
    return {"extra_model_ids": list(dict.fromkeys([*named, *models]))}


def publish_with_models(
    job: LocalJob, bundle: DefinitionBundle | None, models: tuple[str, str] | None
) -> None:
    """Publish ``bundle`` (None: the deployment's default definition as published) naming ``models`` (None:
    none, the deployment's model_id alone): the version new jobs of the local cloud pin."""
    from docagent.kit.registry import current_bundle, publish
    from docagent.operations.sources import deployed_limits

    if bundle is None:
        name = deployed_limits(job.ctx).default_definition
        bundle = current_bundle(job.s3, job.bucket, name)
        if bundle is None:
            raise RefusedError("DefinitionMissing", f"the local cloud has no definition {name!r} published")
    definition = JobDefinition.model_validate(
        {
            **bundle.definition.model_dump(mode="json", by_alias=True),
            "models": None if models is None else list(models),
        }
    )
    publish(job.s3, job.bucket, bundle.model_copy(update={"definition": definition}), by="docagent eval")
