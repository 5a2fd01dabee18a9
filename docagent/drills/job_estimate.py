"""How long a job of N documents takes at the account's quotas, and what it costs on-demand and on batch
inference: the estimate ``docagent preflight --documents N`` prints (docs/scale.md, "A million documents").
``add_to_preflight`` gives the operator's ``preflight`` command its ``--documents`` and ``--usage`` and this
estimate (the CLI registers it: the operator's commands do not import the drills).

On-demand, the review goes at the slowest of three paces, each from the quotas the config states
(stacks/config.py; ``docagent preflight --aws`` checks them against the account's): the model's quotas
(requests, and tokens per minute at ``quota_tokens_per_document`` a document), the Distributed Map's children
in flight (MaxConcurrency, at most 10,000) and the account's Lambda concurrency (less the job's own steps),
each child taking ``seconds_per_document``. On batch inference the model calls are Bedrock batch jobs: the
job's parts (functions/batch_inference/plan.py: records per batch job, and 5 GB of records, here at the
largest document the deployment takes), at most ``batch_jobs_in_flight`` at once, so the parts run in waves;
AWS states no speed for a batch job, only its timeout (24 h, after which what is not done goes on-demand), so
the batch time is an upper bound. Each is set against the job's own timeout (``job_timeout_seconds``: a job
past it ends TIMED_OUT). The cost is ``docagent cost``'s (docagent/drills/cost.py): with a measured
usage file (``docagent cost --save-usage``) the whole job, else the model alone (about 97 % of it,
docs/cost.md) and what the batch path adds per document.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from docagent import project
from docagent.drills.batch_figures import BATCH_SECONDS_PER_DOCUMENT
from docagent.drills.cost import UsageModel, cost_report
from docagent.operations.context import OperatorError
from docagent.operations.model_costs import cost_per_1000
from docagent.operations.preflight import definition_models
from functions.batch_inference.facts import BATCH_MAX_JOB_BYTES, BATCH_MIN_RECORDS, BATCH_TIMEOUT_HOURS_MIN
from functions.batch_inference.plan import record_bytes_bound
from functions.definition.job_spec import DEFINITION_FILE
from stacks.config import DocAgentConfig

# The most children a Distributed Map runs at once (as of 2026-12, AWS docs "Distributed Map state":
# MaxConcurrency up to 10,000; docs/scale.md, "Distributed Map").
MAP_MAX_CHILDREN = 10_000
# The job's own Lambda steps that may run beside the Map's children (the Map Run and one job-level step).
JOB_STEPS_IN_FLIGHT = 2


def load_usage(path: str | None) -> UsageModel | None:
    """A usage file written by ``docagent cost --save-usage``, or None (the model's cost alone)."""
    if path is None:
        return None
    try:
        saved = json.loads(Path(path).read_text())
        return UsageModel(
            tuple(saved["sizes"]),
            saved["per_document"],
            saved["per_job"],
            int(saved.get("documents_per_child", 1)),
        )
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise OperatorError(
            f"--usage {path}: not a usage file written by docagent cost --save-usage ({error})"
        ) from None


def _duration(seconds: float) -> str:
    hours = seconds / 3600
    return f"{hours:,.1f} h" if hours >= 1 else f"{seconds / 60:,.1f} min"


def on_demand_pace(config: DocAgentConfig) -> dict[str, float | str]:
    """Documents per minute on-demand, and which quota bounds it."""
    paces = {
        "bedrock_quotas": min(
            config.model_requests_per_minute,
            config.model_tokens_per_minute / config.quota_tokens_per_document,
        ),
        "map_concurrency": min(config.effective_max_concurrency, MAP_MAX_CHILDREN)
        * 60
        / config.seconds_per_document,
        "lambda_concurrency": max(1, config.lambda_concurrency - JOB_STEPS_IN_FLIGHT)
        * 60
        / config.seconds_per_document,
    }
    bound = min(paces, key=lambda name: paces[name])
    return {
        "documents_per_minute": round(paces[bound], 2),
        "bound_by": bound,
        **{k: round(v, 2) for k, v in paces.items()},
    }


def batch_jobs_needed(documents: int, config: DocAgentConfig) -> dict[str, int]:
    """Bedrock batch jobs of a job: at the records per job (documents of any size up to the 5 GB a job holds),
    and at the most if every document is as large as the deployment takes (the bytes then bound each job)."""
    per_job_at_most_size = max(1, BATCH_MAX_JOB_BYTES // record_bytes_bound(config.max_document_bytes))
    fewest = -(-documents // config.batch_records_per_job)
    most = -(-documents // min(config.batch_records_per_job, per_job_at_most_size))
    return {
        "batch_jobs": fewest,
        "waves": -(-fewest // config.batch_jobs_in_flight),
        "batch_jobs_at_largest_documents": most,
        "waves_at_largest_documents": -(-most // config.batch_jobs_in_flight),
    }


def job_estimate(
    documents: int, config: DocAgentConfig, usage: UsageModel | None, models: list[str] | None = None
) -> dict[str, Any]:
    """The time and cost of a job of ``documents`` documents, on-demand and on batch inference; ``per_1000``:
    1,000 documents' model cost for each of ``models`` (a definition's; default: the deployment's model_id
    and extra_model_ids) and each reading mode (docagent/operations/model_costs.py)."""
    if documents < 1:
        raise OperatorError("--documents must be at least 1")
    pace = on_demand_pace(config)
    rate = float(pace["documents_per_minute"])
    on_demand_seconds = documents / rate * 60
    children = min(config.effective_max_concurrency, MAP_MAX_CHILDREN, config.lambda_concurrency)
    # Writing the records before and reviewing from the outputs after: no model call, a second a document.
    batch_steps_seconds = 2 * documents * BATCH_SECONDS_PER_DOCUMENT / max(1, children)
    jobs = batch_jobs_needed(documents, config)
    batch_hours = jobs["waves"] * BATCH_TIMEOUT_HOURS_MIN
    batch_seconds = batch_steps_seconds + batch_hours * 3600
    # the model that reads every document: a cascade's first (its strong model comes on top for the
    # documents it is asked about, a share no one knows before the job: the figure is a floor)
    first = (models or [config.model_id])[0]
    priced = config if first == config.model_id else config.model_copy(update={"model_id": first})
    report = cost_report(documents, usage or UsageModel((0, 1), {}, {}), priced)
    modes = report["inference"]
    estimate: dict[str, Any] = {
        "documents": documents,
        "over_max_documents": documents > config.max_documents,
        "on_demand": {
            "seconds": round(on_demand_seconds),
            "duration": _duration(on_demand_seconds),
            "within_job_timeout": on_demand_seconds <= config.job_timeout_seconds,
            "pace": pace,
            "usd": modes["on_demand_usd"],
        },
        "batch": {
            "possible": documents >= BATCH_MIN_RECORDS,
            **jobs,
            "batch_jobs_in_flight": config.batch_jobs_in_flight,
            "records_per_batch_job": config.batch_records_per_job,
            "seconds_at_most": round(batch_seconds),
            "duration_at_most": _duration(batch_seconds),
            "within_job_timeout": batch_seconds <= config.job_timeout_seconds,
            "usd": modes["batch_usd"],
        },
        "job_timeout_seconds": config.job_timeout_seconds,
        "cost_measured": usage is not None,
        "cost_covers": ("the whole job (measured usage)" if usage is not None else "the model calls only")
        + (f", of {first} (the cascade's first model)" if models and len(models) > 1 else ""),
        "prices_as_of": report["prices_as_of"],
        "verdict": modes["verdict"],
        "per_1000": [row.model_dump() for row in cost_per_1000(models or config.model_ids())],
    }
    return {**estimate, "summary": summary_line(estimate)}


def summary_line(estimate: dict[str, Any]) -> str:
    """One line: the job's time and cost both ways."""
    on_demand, batch = estimate["on_demand"], estimate["batch"]
    pace = on_demand["pace"]
    line = (
        f"{estimate['documents']:,} documents: on-demand {on_demand['duration']} "
        f"({pace['documents_per_minute']:,} a minute, bound by {pace['bound_by']}), ${on_demand['usd']:,.2f}"
    )
    if batch["possible"]:
        line += (
            f"; batch {batch['batch_jobs']:,} batch job(s) in {batch['waves']:,} wave(s) of "
            f"{batch['batch_jobs_in_flight']}, at most {batch['duration_at_most']}, ${batch['usd']:,.2f}"
        )
    line += f" ({estimate['cost_covers']}, prices of {estimate['prices_as_of']})"
    late = [
        mode
        for mode, figures in (("on-demand", on_demand), ("batch", batch))
        if figures.get("within_job_timeout") is False and (mode == "on-demand" or batch["possible"])
    ]
    if late:
        timeout = estimate["job_timeout_seconds"]
        line += (
            f"; past job_timeout_seconds {timeout:,} ({' and '.join(late)}): raise it in cdk.json (at most a "
            "year), or split the job"
        )
    return line


def estimate_for_preflight(args: argparse.Namespace, config: DocAgentConfig) -> dict[str, Any]:
    """``preflight``'s estimate: ``--documents`` (default: the config's max_documents) and ``--usage``."""
    documents = config.max_documents if args.documents is None else args.documents
    folder = getattr(args, "definition", None) or default_definition_folder(config)
    models = definition_models(str(folder)) if folder else None
    return job_estimate(documents, config, load_usage(args.usage), models)


def default_definition_folder(config: DocAgentConfig) -> Path | None:
    """The folder of the deployment's default definition when it is an example (examples/NAME, which a
    deploy publishes), else None: a preflight without ``--definition`` estimates the jobs it runs."""
    folder = project.ROOT / "examples" / config.default_definition
    return folder if config.default_definition and (folder / DEFINITION_FILE).is_file() else None


def add_to_preflight(commands: Any, common: argparse.ArgumentParser) -> None:
    """The estimate's options on the operator's ``preflight`` (registered before this)."""
    del common
    parser = commands.choices["preflight"]
    parser.add_argument(
        "--documents",
        type=int,
        help="the job size to estimate: how long it takes at the stated quotas and what it costs, on-demand "
        "and on batch inference (default: the config's max_documents)",
    )
    parser.add_argument(
        "--usage",
        metavar="FILE",
        help="a usage file written by `docagent cost --save-usage`: the estimate prices the whole job, not "
        "the model calls alone",
    )
    parser.set_defaults(estimate=estimate_for_preflight)
