"""docagent eval's reading of a job: results matched to samples by key, usage priced from the journal."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel

from docagent.drills.synthetic import ExtractedFacts
from docagent.evaluation import labelled_sets as samples
from docagent.evaluation import runs
from docagent.evaluation.labelled_sets import LabelledSample
from docagent.operations.context import RefusedError
from docagent.operations.records import extracted_fields
from functions.payloads.document import DocumentResult
from functions.payloads.job import JobVersions
from functions.payloads.model_calls import ModelCallRecord

VERSIONS = JobVersions(
    model_id="m", prompt_version="v2", prompt_sha256="0" * 64, code_version="c", created_at="t"
)
FACTS = ExtractedFacts(
    customer_id="CUST-00001",
    invoice_number="F1",
    invoice_date="2026-03-14",
    amount="12.50",
    currency="EUR",
    category="travel",
    summary="s",
)
INVOICES = samples.invoice_definition()


INVOICE = next(iter(INVOICES.classes))


def result(key: str, facts: ExtractedFacts | None = FACTS) -> DocumentResult:
    """A result of the invoice example: its fields (the kit's shape), or facts where the model has no
    ``fields`` yet (the shape before the kit)."""
    fields = None if facts is None else facts.model_dump(mode="json")
    extracted: dict[str, object] = (
        {"class_name": INVOICE if fields else None, "fields": fields}
        if "fields" in DocumentResult.model_fields
        else {"facts": fields, "customer": {"customer_id": "CUST-00001", "name": "Ada"} if fields else None}
    )
    return DocumentResult.model_validate(
        {
            "job_id": "job-1",
            "document_id": key.replace("/", "_"),
            "key": key,
            "index": 0,
            "status": "rejected" if facts is None else "extracted",
            **extracted,
            "error": None if facts else "ModelReplyInvalid",
            "versions": VERSIONS,
            "processed_at": "t",
        }
    )


def sample(name: str) -> LabelledSample:
    return LabelledSample(name=name, path=f"/set/{name}", class_name=INVOICE, label={})


def test_results_match_samples_by_their_key_or_its_tail():
    found = runs.match_results(
        [result("incoming/job-1/a.pdf"), result("b/c.txt", facts=None), result("elsewhere/d.pdf")],
        [sample("a.pdf"), sample("b/c.txt"), sample("z.pdf")],
        INVOICES,
    )
    assert sorted(found) == ["a.pdf", "b/c.txt"]
    assert found["a.pdf"].fields == FACTS.model_dump(mode="json") and found["a.pdf"].class_name == INVOICE
    assert (found["b/c.txt"].status, found["b/c.txt"].class_name, found["b/c.txt"].fields) == (
        "rejected",
        None,
        None,
    )
    with pytest.raises(RefusedError, match=r"a\.pdf matches 2 documents"):
        runs.match_results([result("x/a.pdf"), result("y/a.pdf")], [sample("a.pdf")], INVOICES)


class KitResult(BaseModel):
    """The fields a reader takes from the kit's DocumentResult."""

    class_name: str | None
    fields: dict[str, Any] | None


def test_extracted_fields_are_the_kits_class_and_fields():
    assert extracted_fields(KitResult(class_name="letter", fields={"a": 1})) == ("letter", {"a": 1})
    assert extracted_fields(KitResult(class_name=None, fields=None)) == (None, None)
    before_the_kit = result("a.pdf")  # this branch's model: facts, no class
    assert extracted_fields(before_the_kit)[1] == FACTS.model_dump(mode="json")


def call(model_id: str, tokens_in: int, tokens_out: int) -> ModelCallRecord:
    return ModelCallRecord(
        call_id="c",
        job_id="job-1",
        document_id="d",
        provider="bedrock",
        model_id=model_id,
        prompt_version="v2",
        prompt_sha256="0" * 64,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        outcome="ok",
        retry_count=0,
        started_at="t",
        finished_at="t",
        duration_ms=1,
    )


def test_usage_counts_every_journalled_call_and_prices_it():
    haiku = "us.anthropic.claude-haiku-4-5-20251001-v1:0"  # $0.0011 / $0.0055 per 1,000 (prices.py)
    records = SimpleNamespace(model_calls={"a": [call(haiku, 1000, 100)], "b": [call(haiku, 2000, 0)] * 2})
    usage = runs.usage_of(records)  # type: ignore[arg-type]
    assert (usage.model_calls, usage.input_tokens, usage.output_tokens) == (3, 5000, 100)
    assert usage.cost_usd == pytest.approx(5 * 0.0011 + 0.1 * 0.0055)
    unknown = runs.usage_of(SimpleNamespace(model_calls={"a": [call("acme-model", 10, 10)]}))  # type: ignore[arg-type]
    assert unknown.cost_usd is None and "no price for model 'acme-model'" in (unknown.price_note or "")
