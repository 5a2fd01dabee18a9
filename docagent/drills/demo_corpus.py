"""The demo's corpus on a local cloud: generated invoices with their ground truth, rendered in a mix of
formats, uploaded and labelled for the local model, the customers loaded; and the job's extraction scored
against that truth."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from docagent.drills.corpus_cache import rendered_corpus
from docagent.drills.document_files import DEFAULT_FORMATS, CorpusFormat
from docagent.drills.local_job import LocalJob
from docagent.drills.synthetic import (
    CUSTOMERS_CSV,
    CUSTOMERS_KEY,
    CUSTOMERS_TABLE,
    generate_customers,
    generate_documents,
)
from docagent.drills.uploads import put_objects
from docagent.localcloud.bedrock.labels import Label, label_digests, post_labels
from docagent.operations.records import extracted_fields
from docagent.operations.reference import load_file
from functions import storage
from functions.payloads.document import DocumentResult
from stacks import outputs as names

# The class of the invoice example (examples/invoices/job.json): the generated documents' labels are of it.
INVOICE_CLASS = "invoice"


SCORED_FIELDS = ("customer_id", "invoice_number", "invoice_date", "amount", "currency", "category")


@dataclass(frozen=True)
class Truth:
    """What a seeded document really says, and the format it was rendered in."""

    format: str
    facts: dict[str, Any]


def seed_inputs(
    job: LocalJob, documents: int, prefix: str, formats: Sequence[CorpusFormat] = DEFAULT_FORMATS
) -> dict[str, Truth]:
    """Upload generated documents, rendered in the mix of ``formats``, and customers; the truth by S3 key.
    Each document's truth is registered as its label with the local Bedrock (the generator knows it), so the
    local model answers what a perfect model would (docagent/localcloud/bedrock/labels.py)."""
    customers = generate_customers()
    generated = generate_documents(documents, seed=7, customer_ids=[c.customer_id for c in customers])
    rendered = rendered_corpus(generated, formats, seed=7)
    put_objects(job.s3, job.bucket, [(storage.uploaded_key(prefix, d.file_name), d.data) for d in rendered])
    if job.ctx.endpoint is not None:
        labels = [
            Label(
                sha256=digest,
                class_name=INVOICE_CLASS,
                fields=document.truth.model_dump(mode="json"),
                source=document.file_name,
            )
            for document in rendered
            for digest in label_digests(document.data)  # a photo: its file's and its converted page's
        ]
        post_labels(job.ctx.endpoint, labels)
    seed_references(job)
    return {
        storage.uploaded_key(prefix, document.file_name): Truth(
            document.format, document.truth.model_dump(mode="json")
        )
        for document in rendered
    }


def seed_references(job: LocalJob) -> None:
    """The invoice example's reference table customers (the generated documents' customers), loaded as
    `docagent reference load examples/invoices/references/customers.csv --table customers --key
    customer_id` loads it."""
    table_name = job.ctx.output(names.REFERENCE_TABLE)
    load_file(job.dynamodb, table_name, CUSTOMERS_TABLE, CUSTOMERS_CSV, CUSTOMERS_KEY)


def extraction_accuracy(results: list[DocumentResult], truth: dict[str, Truth]) -> float:
    """Share of scored fields, over every document with ground truth, that the job extracted correctly."""
    correct, total = _scored(results, truth)
    return round(correct / total, 4) if total else 0.0


def extraction_accuracy_by_format(results: list[DocumentResult], truth: dict[str, Truth]) -> dict[str, float]:
    """extraction_accuracy per rendered format (one entry per format in the corpus)."""
    by_format: dict[str, float] = {}
    for fmt in sorted({item.format for item in truth.values()}):
        correct, total = _scored(results, {key: item for key, item in truth.items() if item.format == fmt})
        by_format[fmt] = round(correct / total, 4) if total else 0.0
    return by_format


def _scored(results: list[DocumentResult], truth: dict[str, Truth]) -> tuple[int, int]:
    by_key = {result.key: result for result in results}
    correct = total = 0
    for key, expected in truth.items():
        found = by_key.get(key)
        facts = (extracted_fields(found)[1] if found is not None else None) or {}
        for name in SCORED_FIELDS:
            total += 1
            correct += str(facts.get(name)) == str(expected.facts[name])
    return correct, total
