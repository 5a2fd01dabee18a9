"""A job's actual cost as the operator reads it (docagent/operations/spend.py): the journalled calls priced
with the one dated table, per document, per class and per job."""

from __future__ import annotations

from docagent.operations.json_shapes import BudgetExceededView
from docagent.operations.spend import PACKET, UNCLASSIFIED, actual_cost, next_step
from functions import spend
from functions.payloads.common import CallPurpose
from functions.payloads.model_calls import ModelCallRecord

MODEL = "us.anthropic.claude-haiku-4-5-20251001-v1:0"


def _call(
    document_id: str, purpose: CallPurpose, class_name: str | None, tokens: tuple[int, int]
) -> ModelCallRecord:
    return ModelCallRecord(
        call_id=f"{document_id}-{purpose}",
        job_id="job",
        document_id=document_id,
        purpose=purpose,
        class_name=class_name,
        provider="aws.bedrock",
        model_id=MODEL,
        prompt_version="v1",
        prompt_sha256="0" * 64,
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        outcome="ok",
        retry_count=0,
        started_at="2026-12-02T00:00:00Z",
        finished_at="2026-12-02T00:00:01Z",
        duration_ms=1000,
    )


def test_the_journal_is_priced_per_document_per_class_and_per_job() -> None:
    calls = {
        "a": [_call("a", "classify", None, (1000, 10)), _call("a", "extract", "claim-form", (1500, 200))],
        "b": [
            _call("b", "classify", None, (1000, 10)),
            _call("b", "extract", "repair-estimate", (1200, 150)),
        ],
        "c": [_call("c", "classify", None, (900, 12))],  # rejected after its classification
    }
    figures = actual_cost(calls)
    a = spend.call_cost_nano(MODEL, 1000, 10) + spend.call_cost_nano(MODEL, 1500, 200)
    b = spend.call_cost_nano(MODEL, 1000, 10) + spend.call_cost_nano(MODEL, 1200, 150)
    c = spend.call_cost_nano(MODEL, 900, 12)
    assert figures["by_document"] == {"a": spend.to_usd(a), "b": spend.to_usd(b), "c": spend.to_usd(c)}
    assert figures["by_class"] == {
        UNCLASSIFIED: spend.to_usd(c),
        "claim-form": spend.to_usd(a),
        "repair-estimate": spend.to_usd(b),
    }
    assert figures["model_cost_usd"] == spend.to_usd(a + b + c)
    assert (figures["model_calls"], figures["input_tokens"], figures["output_tokens"]) == (5, 5600, 382)
    assert figures["unpriced_models"] == []


def _section_call(purpose: CallPurpose, class_name: str | None, section: str, tokens: int) -> ModelCallRecord:
    call = _call("p", purpose, class_name, (tokens, 10))
    return call.model_copy(update={"section_id": section, "call_id": f"p-{purpose}-{section}"})


def test_a_packets_calls_go_to_each_sections_class_and_its_page_classification_to_the_packet() -> None:
    calls = {
        "p": [
            _section_call("classify-pages", None, "w0001", 3000),
            _section_call("extract", "claim-form", "s0001-0001", 1500),
            _section_call("extract", "repair-estimate", "s0002-0003", 1200),
            _section_call("escalate", "claim-form", "s0001-0001", 700),
        ]
    }
    figures = actual_cost(calls)
    claim = spend.call_cost_nano(MODEL, 1500, 10) + spend.call_cost_nano(MODEL, 700, 10)
    estimate = spend.call_cost_nano(MODEL, 1200, 10)
    pages = spend.call_cost_nano(MODEL, 3000, 10)
    assert figures["by_class"] == {
        PACKET: spend.to_usd(pages),
        "claim-form": spend.to_usd(claim),
        "repair-estimate": spend.to_usd(estimate),
    }
    assert figures["by_document"] == {"p": spend.to_usd(claim + estimate + pages)}


def test_a_model_with_no_dated_price_is_named_not_guessed() -> None:
    call = _call("a", "extract", "invoice", (100, 10)).model_copy(update={"model_id": "some-new-model"})
    figures = actual_cost({"a": [call]})
    assert figures["model_cost_usd"] == 0 and figures["unpriced_models"] == ["some-new-model"]


def test_the_next_step_of_a_job_the_budget_stopped_says_how_to_continue() -> None:
    step = next_step(
        "job-7",
        BudgetExceededView(
            **{
                "error": "BudgetExceeded",
                "spent_usd": 0.19,
                "max_cost_usd": 0.2,
                "documents_done": 60,
                "documents_pending": 140,
                "commands": [],
            }
        ),
    )
    assert "60 documents done, 140 pending" in step
    assert "`docagent budget job-7 --max-usd N`, then `docagent redrive job-7`" in step
