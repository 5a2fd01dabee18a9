"""docagent cost prices a job both ways; the demo's model cost follows each call's mode (docs/batch.md)."""

from __future__ import annotations

import pytest

from docagent.drills import prices
from docagent.drills.batch_figures import model_calls_by_mode
from docagent.drills.cost import UsageModel, cost_report
from docagent.operations.spend import actual_cost
from functions.batch_inference.facts import BATCH_MAX_RECORDS, BATCH_MIN_RECORDS
from functions.payloads.model_calls import ModelCallRecord
from stacks.config import load_config
from tests.unit.test_cost import usage


def call(document_id: str, inference: str, model_id: str = "m") -> ModelCallRecord:
    return ModelCallRecord.model_validate({
        "call_id": f"c-{document_id}", "job_id": "j", "document_id": document_id, "provider": "aws.bedrock",
        "model_id": model_id, "prompt_version": "extract-v2", "prompt_sha256": "0" * 64, "input_tokens": 2000,
        "output_tokens": 200, "outcome": "ok", "retry_count": 0, "started_at": "t", "finished_at": "t",
        "duration_ms": 1, "inference": inference,
    })  # fmt: skip


def test_a_batch_call_costs_half_an_on_demand_one():
    model_id = "anthropic.claude-3-haiku-20240307-v1:0"
    journal = {"a": [call("a", "batch", model_id)], "b": [call("b", "on_demand", model_id)]}
    figures = actual_cost(journal)
    on_demand = 2000 / 1000 * 0.00025 + 200 / 1000 * 0.00125
    assert figures["by_document"] == {"a": pytest.approx(on_demand / 2), "b": pytest.approx(on_demand)}
    assert model_calls_by_mode(journal) == {"batch": 1, "on_demand": 1}
    assert actual_cost({"a": [call("a", "batch")]})["unpriced_models"] == ["m"]


@pytest.mark.parametrize(
    "documents", [BATCH_MIN_RECORDS - 1, 1000, BATCH_MAX_RECORDS, BATCH_MAX_RECORDS + 1, 1_000_000]
)
def test_cost_prices_both_modes_and_says_when_batch_pays_off(env, documents):
    model = UsageModel.fit((10, usage(10)), (30, usage(30)))
    config = load_config({"model_id": "us.anthropic.claude-haiku-4-5-20251001-v1:0"})
    report = cost_report(documents, model, config)
    modes = report["inference"]
    bedrock = report["by_service"]["bedrock"]["usd"]
    assert modes["on_demand_usd"] == pytest.approx(report["total_usd"], abs=1e-3)
    assert modes["batch_model_saving_usd"] == pytest.approx(bedrock / 2, abs=1e-3)
    assert 0 < modes["batch_added_usd"] < modes["batch_model_saving_usd"]
    if documents < BATCH_MIN_RECORDS:  # over one batch job's records, the job is split: still batch
        assert modes["batch_usd"] is None and not modes["batch_pays_off"]
        assert "runs on-demand" in modes["verdict"]
    else:
        expected = report["total_usd"] - bedrock / 2 + modes["batch_added_usd"]
        assert modes["batch_usd"] == pytest.approx(expected, abs=1e-3)
        assert modes["batch_pays_off"] and modes["verdict"].startswith("batch pays off")
        assert modes["batch_usd"] < 0.6 * modes["on_demand_usd"]  # the model is ~97 % of the cost
    assert prices.PRICES_AS_OF
