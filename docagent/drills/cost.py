"""``docagent cost --documents N``: what a job of N documents costs on AWS.

Usage is counted, not guessed: two clean jobs of different sizes run on the local cloud, which counts every
request by service and operation, every Lambda invocation and the state transitions; the difference between
them is the usage per document, the rest the usage per job (so a 100,000-document job is not charged a small
job's fixed costs 100,000 times). Prices come from the dated table in ``docagent/drills/prices.py``; the
model's tokens and each function's duration, which a local run cannot know, from the deployment config and
stated assumptions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from docagent import project
from docagent.drills import prices
from docagent.drills.batch_figures import inference_modes
from functions.reading.images import BEST_PIXELS, PIXELS_PER_TOKEN
from functions.reading.pdf_layers import TEXT_TOKENS_PER_PAGE, VISUAL_TOKENS_PER_PAGE
from stacks.config import DocAgentConfig, load_config

MEASURE_SIZES = (10, 30)
AGGREGATE_FUNCTIONS = frozenset({"PrepareJob", "BuildReport", "VerifyJob"})
# What a Distributed Map child costs once per child, whatever its number of documents (docs/scale.md,
# "Batching"): its state transition and its ProcessDocument request; with K documents per child, 1/K each.
PER_CHILD_COUNTERS = ("state_transitions", "invocations:ProcessDocument")


def flatten(usage: dict[str, Any]) -> dict[str, float]:
    """One job's usage as flat counters: ``requests:<service>:<operation>``, ``invocations:<function>``,
    ``state_transitions``, ``stored_bytes``."""
    counters: dict[str, float] = {
        "state_transitions": float(usage["state_transitions"]),
        "stored_bytes": float(usage["stored_bytes"]),
    }
    for service, operations in usage["requests"].items():
        for operation, count in operations.items():
            counters[f"requests:{service}:{operation}"] = float(count)
    for function, figures in usage["lambda"].items():
        counters[f"invocations:{function}"] = float(figures["invocations"])
    return counters


@dataclass(frozen=True)
class UsageModel:
    """Usage of a job as ``per_job + documents * per_document``, fitted on two measured sizes."""

    sizes: tuple[int, int]
    per_document: dict[str, float]
    per_job: dict[str, float]
    documents_per_child: int = 1  # K of the measured jobs

    @classmethod
    def fit(cls, small: tuple[int, dict[str, Any]], large: tuple[int, dict[str, Any]]) -> UsageModel:
        (n1, usage1), (n2, usage2) = small, large
        if n2 <= n1:
            raise ValueError("the second measured job must be larger than the first")
        a, b = flatten(usage1), flatten(usage2)
        per_document, per_job = {}, {}
        for key in sorted(a.keys() | b.keys()):
            slope = max(0.0, (b.get(key, 0.0) - a.get(key, 0.0)) / (n2 - n1))
            per_document[key] = round(slope, 4)
            per_job[key] = round(max(0.0, a.get(key, 0.0) - n1 * slope), 4)
        return cls((n1, n2), per_document, per_job)

    def at(self, documents: int) -> dict[str, float]:
        return {
            key: self.per_job.get(key, 0.0) + documents * self.per_document.get(key, 0.0)
            for key in self.per_document.keys() | self.per_job.keys()
        }

    def batched(self, documents_per_child: int) -> UsageModel:
        """The usage with K documents per child: the per-child counters per document scaled by measured K / K
        (the child's own transition and request; its S3 and DynamoDB requests are per document either way)."""
        scale = self.documents_per_child / documents_per_child
        per_document = {
            key: round(value * scale, 4) if key in PER_CHILD_COUNTERS else value
            for key, value in self.per_document.items()
        }
        return UsageModel(self.sizes, per_document, self.per_job, documents_per_child)

    def to_json(self) -> dict[str, Any]:
        return {
            "sizes": list(self.sizes),
            "per_document": self.per_document,
            "per_job": self.per_job,
            "documents_per_child": self.documents_per_child,
        }


def _sum(counters: dict[str, float], prefix: str, operations: frozenset[str] | None = None) -> float:
    return sum(
        value
        for key, value in counters.items()
        if key.startswith(prefix) and (operations is None or key.rsplit(":", 1)[-1] in operations)
    )


def price_job(documents: int, model: UsageModel, config: DocAgentConfig) -> dict[str, dict[str, Any]]:
    """Cost by service of a job of ``documents`` documents: {service: {"usd", and the quantities priced}},
    with the model's documents per child (a ProcessDocument invocation then lasts K documents)."""
    usage = model.at(documents)
    transitions = usage.get("state_transitions", 0.0)
    invocations = {
        key.split(":", 1)[1]: value for key, value in usage.items() if key.startswith("invocations:")
    }
    gb_seconds = 0.0
    for function, count in invocations.items():
        seconds = (
            config.seconds_per_document * model.documents_per_child
            if function == "ProcessDocument"
            else prices.ASSUMED_SECONDS_PER_JOB_STEP
        )
        memory = config.aggregate_memory_mb if function in AGGREGATE_FUNCTIONS else config.function_memory_mb
        gb_seconds += count * seconds * memory / 1024
    lambda_requests = sum(invocations.values())
    ddb_writes = _sum(usage, "requests:dynamodb:", prices.DYNAMODB_WRITE_OPERATIONS)
    ddb_reads = _sum(usage, "requests:dynamodb:", prices.DYNAMODB_READ_OPERATIONS)
    s3_writes = _sum(usage, "requests:s3:", prices.S3_WRITE_OR_LIST_OPERATIONS)
    s3_reads = _sum(usage, "requests:s3:", prices.S3_READ_OPERATIONS)
    stored_gb = usage.get("stored_bytes", 0.0) / 1e9
    model_price = prices.model_price(config.model_id)
    input_tokens = documents * config.model_input_tokens_per_document
    output_tokens = documents * prices.ASSUMED_OUTPUT_TOKENS_PER_DOCUMENT
    return {
        "stepfunctions": {
            "usd": transitions * prices.STEP_FUNCTIONS_PER_TRANSITION,
            "state_transitions": round(transitions),
        },
        "lambda": {
            "usd": lambda_requests * prices.LAMBDA_PER_REQUEST + gb_seconds * prices.LAMBDA_PER_GB_SECOND,
            "requests": round(lambda_requests),
            "gb_seconds": round(gb_seconds, 1),
        },
        "dynamodb": {
            "usd": ddb_writes * prices.DYNAMODB_PER_WRITE + ddb_reads * prices.DYNAMODB_PER_READ,
            "write_units": round(ddb_writes),
            "read_units": round(ddb_reads),
        },
        "s3": {
            "usd": s3_writes * prices.S3_PER_WRITE_OR_LIST
            + s3_reads * prices.S3_PER_READ
            + stored_gb * prices.S3_PER_GB_MONTH,
            "write_and_list_requests": round(s3_writes),
            "read_requests": round(s3_reads),
            "stored_gb_month": round(stored_gb, 4),
        },
        "bedrock": {
            "usd": input_tokens / 1000 * model_price.input_per_1000
            + output_tokens / 1000 * model_price.output_per_1000,
            "model_id": config.model_id,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
        },
    }


def cost_report(documents: int, model: UsageModel, config: DocAgentConfig) -> dict[str, Any]:
    by_service = price_job(documents, model, config)
    per_1000 = price_job(1000, model, config)
    for service, figures in by_service.items():
        figures["usd"] = round(figures["usd"], 4)
        figures["per_1000_usd"] = round(per_1000[service]["usd"], 4)
    return {
        "documents": documents,
        "per_1000_usd": round(sum(figures["usd"] for figures in per_1000.values()), 4),
        "total_usd": round(sum(figures["usd"] for figures in by_service.values()), 4),
        "by_service": by_service,
        "prices_as_of": prices.PRICES_AS_OF,
        "region": prices.REGION,
        "assumptions": {
            "input_tokens_per_document": config.model_input_tokens_per_document,
            "output_tokens_per_document": prices.ASSUMED_OUTPUT_TOKENS_PER_DOCUMENT,
            "process_document_seconds": config.seconds_per_document * model.documents_per_child,
            "documents_per_child": model.documents_per_child,
            "job_step_seconds": prices.ASSUMED_SECONDS_PER_JOB_STEP,
            "storage_months": 1,
        },
        "per_page": page_costs(config.model_id),
        "measured": model.to_json(),
        "inference": inference_modes(
            {
                "documents": documents,
                "total_usd": sum(f["usd"] for f in by_service.values()),
                "by_service": by_service,
            },
            config.function_memory_mb,
        ),
    }


def page_costs(model_id: str) -> dict[str, dict[str, float | int]]:
    """The model's input tokens and price of one page by how it is read (functions/reading/pdf_layers.py,
    functions/reading/images.py; the documented figures, not a measurement): a PDF page read as text, a PDF
    page read visually (citations), an image page at the size it is sent (1.15 MP at most: width x height /
    750)."""
    price = prices.model_price(model_id)
    tokens = {
        "text": TEXT_TOKENS_PER_PAGE,
        "visual": VISUAL_TOKENS_PER_PAGE,
        "image": -(-BEST_PIXELS // PIXELS_PER_TOKEN),
    }
    return {
        mode: {"input_tokens": count, "usd_per_1000_pages": round(count * price.input_per_1000, 4)}
        for mode, count in tokens.items()
    }


def deployed_config() -> DocAgentConfig:
    """The deployment's config (cdk.json): model id, memory, tokens per document."""
    context = json.loads((project.ROOT / "cdk.json").read_text())["context"]
    return load_config(context.get("docagent"))


def measure(sizes: tuple[int, int] = MEASURE_SIZES) -> UsageModel:
    """Run two clean local jobs (real timeouts: no retry caused by a compressed clock on a busy machine) and
    fit the usage per document and per job."""
    from docagent.drills.demo import run_demo  # noqa: PLC0415 (the local cloud only when measuring)

    runs = []
    for size in sizes:
        summary = run_demo(documents=size, time_scale=1.0, show_progress=False, crash=None)
        if summary["status"] != "SUCCEEDED":
            raise RuntimeError(
                f"the {size}-document measuring job ended {summary['status']}: {summary['error']}"
            )
        runs.append((size, summary["usage"]))
    return UsageModel.fit(runs[0], runs[1])
