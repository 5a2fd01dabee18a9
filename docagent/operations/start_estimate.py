"""What ``docagent start`` estimates before anything starts: the documents' model cost for the definition's
models and reading (docagent/operations/model_costs.py), and the refusal of a job whose estimate is above its
budget (``EstimateOverBudget``, docs/design.md "Budget"). ``--dry-run`` prints the estimate and stops there.
"""

from __future__ import annotations

import argparse
from typing import Any

from botocore.exceptions import ClientError
from rich.text import Text

from docagent.kit.loader import DefinitionInvalid, read_bundle
from docagent.kit.registry import current_bundle
from docagent.operations.context import EXIT_OK, OperatorContext, RefusedError, emit
from docagent.operations.display import wide_console
from docagent.operations.json_shapes import StartEstimate
from docagent.operations.model_costs import cost_per_1000, job_model_usd, lines
from docagent.operations.sources import Limits, Source, deployed_limits
from functions.definition.job_spec import JobDefinition


def _definition(ctx: OperatorContext, job_folder: str | None, name: str) -> JobDefinition | None:
    """The definition the job runs: the --job folder (as validated), else the published one; None when it
    cannot be read (PrepareJob refuses such a job)."""
    try:
        if job_folder:
            return read_bundle(job_folder).definition
        bundle = current_bundle(ctx.client("s3"), ctx.bucket, name) if name else None
    except (ClientError, DefinitionInvalid):
        return None
    return None if bundle is None else bundle.definition


def start_estimate(
    ctx: OperatorContext, request: dict[str, Any], documents: int, limits: Limits, job_folder: str | None
) -> StartEstimate:
    """The job's model cost: the definition's models (``models: [cheap, strong]``, else the deployment's
    model_id) by reading mode per 1,000 documents, and the first model reading these documents its way."""
    definition = _definition(ctx, job_folder, str(request.get("definition") or limits.default_definition))
    models = list(definition.models) if definition is not None and definition.models else [limits.model_id]
    read = definition.read if definition is not None else "auto"
    budget = request.get("options", {}).get("max_cost_usd")
    if budget is None and limits.default_max_cost_usd > 0:
        budget = limits.default_max_cost_usd
    return StartEstimate(
        documents=documents,
        models=models,
        read=read,
        model_usd=job_model_usd(documents, models[0], read),
        max_cost_usd=budget,
        per_1000=cost_per_1000(models),
    )


def refuse_over_budget(estimate: StartEstimate) -> None:
    """EstimateOverBudget (exit 2) when the estimate is above the job's budget: nothing has started yet."""
    if (
        estimate.max_cost_usd is None
        or estimate.model_usd is None
        or estimate.model_usd <= estimate.max_cost_usd
    ):
        return
    raise RefusedError(
        "EstimateOverBudget",
        f"the job's estimated model cost ${estimate.model_usd:,.4f} ({estimate.documents:,} documents, "
        f"{estimate.models[0]}, read {estimate.read}) is above its budget max_cost_usd "
        f"${estimate.max_cost_usd:,.4f}: "
        "raise --max-cost-usd, start fewer documents, or use a cheaper model; nothing was started",
        details={"estimate_usd": estimate.model_usd, "max_cost_usd": estimate.max_cost_usd},
    )


def estimate_lines(estimate: StartEstimate) -> list[str]:
    """The human view of the estimate."""
    total = "no dated price" if estimate.model_usd is None else f"${estimate.model_usd:,.4f} on-demand"
    budget = "no budget" if estimate.max_cost_usd is None else f"budget ${estimate.max_cost_usd:,.4f}"
    head = (
        f"estimate {estimate.documents:,} documents read {estimate.read} by {estimate.models[0]}: {total} "
        f"({budget}; a cascade's strong model comes on top for the documents it is asked about)"
    )
    return [head, *(f"  {line}" for line in lines(estimate.per_1000))]


def source_payload(source: Source, uploaded: int) -> dict[str, Any]:
    """``start``'s ``source`` (StartSource): where the documents are, how many, what was uploaded."""
    return {
        "kind": source.kind,
        "bucket": source.bucket,
        "prefix": source.prefix,
        "documents": len(source.documents),
        "bytes": sum(doc.size for doc in source.documents),
        "uploaded": uploaded,
        "skipped": [item.as_json() for item in source.skipped],
        "too_large": source.too_large,
    }


def priced_start(
    ctx: OperatorContext, args: argparse.Namespace, request: dict[str, Any], source: Source
) -> StartEstimate:
    """A new job's model cost before it starts; over its budget it is refused (EstimateOverBudget) unless this
    is a --dry-run, which reports it."""
    estimate = start_estimate(ctx, request, len(source.documents), deployed_limits(ctx), args.job)
    if not args.dry_run:
        refuse_over_budget(estimate)
    return estimate


def dry_run(
    args: argparse.Namespace, fields: dict[str, Any], source: Source, where: str, estimate: StartEstimate
) -> int:
    """``--dry-run``: the validated request, its documents and the estimate; nothing uploaded or started (a
    job over its budget is reported, not refused: exit 0)."""
    payload: dict[str, Any] = {
        **fields,
        "execution_arn": None,
        "started": False,
        "status": None,
        "started_at": None,
        "source": source_payload(source, 0),
        "final": None,
        "dry_run": True,
        "estimate": estimate.model_dump(),
    }
    job_id = fields["job_id"]

    def human() -> None:
        out = wide_console()
        out.print(
            Text.assemble(
                "job ",
                (job_id, "bold"),
                f" would start {len(source.documents)} documents from {where} (--dry-run: "
                "nothing uploaded or started)",
            )
        )
        for line in estimate_lines(estimate):
            out.print(Text(f"  {line}"))

    emit(args, payload, human)
    return EXIT_OK
