"""OpenTelemetry GenAI semantic-convention attributes for each model call: trace, log and metric."""

from __future__ import annotations

from typing import Any

from functions.observability import MetricUnit, logger, metrics, tracer


def genai_attributes(
    *, system: str, operation: str, model_id: str, input_tokens: int, output_tokens: int
) -> dict[str, Any]:
    return {
        "gen_ai.system": system,
        "gen_ai.operation.name": operation,
        "gen_ai.request.model": model_id,
        "gen_ai.usage.input_tokens": input_tokens,
        "gen_ai.usage.output_tokens": output_tokens,
    }


def record_model_call(attributes: dict[str, Any], *, outcome: str, duration_ms: int, call_id: str) -> None:
    """X-Ray annotation keys allow only letters, digits and '_', so annotations use '_' and the metadata
    (free-form) keeps the dotted OpenTelemetry names; logs carry the dotted names as keys."""
    for name, value in attributes.items():
        tracer.put_annotation(key=name.replace(".", "_"), value=value)
    tracer.put_metadata(key="gen_ai", value={**attributes, "call_id": call_id, "outcome": outcome})
    logger.info(
        "model call",
        extra={**attributes, "model_call_id": call_id, "outcome": outcome, "duration_ms": duration_ms},
    )
    metrics.add_metric(name="ModelCalls", unit=MetricUnit.Count, value=1)
    metrics.add_metric(
        name="ModelInputTokens", unit=MetricUnit.Count, value=attributes["gen_ai.usage.input_tokens"]
    )
    metrics.add_metric(
        name="ModelOutputTokens", unit=MetricUnit.Count, value=attributes["gen_ai.usage.output_tokens"]
    )
    if outcome != "ok":
        metrics.add_metric(name="ModelCallsRejected", unit=MetricUnit.Count, value=1)
