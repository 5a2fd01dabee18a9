"""Realistic inputs of the grounding check (functions/evidence/grounding.py), for its benchmark (``python -m
tests.grounding_corpus [DOCUMENTS] [REPEAT] [--no-boxes]``, docs/performance.md "Grounding, fifth pass") and
the equivalence test of ``locate_value`` (tests/unit/test_value_location_equivalence.py), made without a
cloud: the demo's invoices rendered as `docagent demo` renders them (docagent/drills/demo_corpus.py), the
claims example's samples (PDFs, Word files, a scan, a photo, a packet), each extraction the local model's
reply to the pipeline's prompt (its fields the label's, its evidence
docagent/localcloud/bedrock/evidence.py's ``with_evidence``)."""

from __future__ import annotations

import json
import resource
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docagent import project
from docagent.drills.corpus_cache import rendered_corpus
from docagent.drills.demo_corpus import INVOICE_CLASS
from docagent.drills.document_files import DEFAULT_FORMATS
from docagent.drills.synthetic import generate_customers, generate_documents
from docagent.kit.loader import read_bundle
from docagent.localcloud.bedrock.evidence import with_evidence
from functions.definition.job_spec import ClassBundle
from functions.evidence.grounded_decision import evidence_of
from functions.inference.cascade import to_escalate
from functions.inference.evidence import asked_quotes, evidence_prompt, extracted_with_evidence, split
from functions.payloads.model_calls import ExtractionRecord
from functions.reading import page_texts
from functions.reading.documents import detect_format


@dataclass(frozen=True)
class Extraction:
    """One document's extraction as the ProcessDocument step grounds it."""

    name: str
    class_bundle: ClassBundle
    record: ExtractionRecord
    pages: page_texts.PageTexts | None


def extraction(name: str, data: bytes, fields: dict[str, Any], class_bundle: ClassBundle) -> Extraction:
    """The local model's reply for a document whose label is ``fields``, as the pipeline keeps it."""
    pages = page_texts.document_page_texts(data, detect_format(data))
    printed = pages is not None and pages.printed
    quoted = asked_quotes(evidence_prompt(dict(class_bundle.schema_) if printed else None))
    reply = with_evidence(json.dumps(fields), list(pages or []), None, quoted)
    record = ExtractionRecord(
        call_id=name, ok=True, fields=extracted_with_evidence(reply, class_bundle), model_id="local"
    )
    return Extraction(name, class_bundle, record, pages)


def demo_extractions(documents: int = 100) -> list[Extraction]:
    """The demo's first ``documents`` invoices (seed 7, its mix of formats)."""
    customers = [customer.customer_id for customer in generate_customers()]
    rendered = rendered_corpus(
        generate_documents(documents, seed=7, customer_ids=customers), DEFAULT_FORMATS, 7
    )
    invoice = read_bundle(project.ROOT / "examples" / "invoices").class_bundle(INVOICE_CLASS)
    return [
        extraction(document.file_name, document.data, document.truth.model_dump(mode="json"), invoice)
        for document in rendered
    ]


def example_extractions() -> list[Extraction]:
    """The claims example's labelled samples (a packet's sections each against the whole packet's pages)."""
    root = project.ROOT / "examples" / "claims"
    bundle = read_bundle(root)
    found = []
    for label in sorted((root / "samples").rglob("*.label.json")):
        data = next(path for path in label.parent.glob(label.name.replace(".label.json", ".*"))
                    if not path.name.endswith(".json")).read_bytes()  # fmt: skip
        labelled = json.loads(label.read_text())
        sections = labelled.get("sections") or [{"class": label.parent.name, "fields": labelled}]
        for section in sections:
            class_bundle = bundle.class_bundle(section["class"])
            found.append(extraction(label.name, data, section["fields"], class_bundle))
    return found


def ground_twice(extractions: list[Extraction], *, boxes: bool = True) -> None:
    """What a ProcessDocument step grounds of each document: the cheap model's extraction (the cascade's
    ``to_escalate``), then the fields it goes on with (``evidence_of``), on its texts as a run reads them
    (a PageTexts of their own: nothing a run before grounded on them); its texts released after."""
    for item in extractions:
        pages = item.pages
        if pages is not None:
            pages = page_texts.PageTexts(list(pages), ocr=pages.ocr, pdf=pages.pdf if boxes else None)
        to_escalate(item.record, item.class_bundle, pages)
        fields, quotes = split(item.record.fields or {})
        evidence_of(item.class_bundle, fields, quotes, pages, [])
        page_texts.release()


def cpu_seconds(extractions: list[Extraction], *, boxes: bool = True) -> float:
    before = resource.getrusage(resource.RUSAGE_SELF)
    ground_twice(extractions, boxes=boxes)
    after = resource.getrusage(resource.RUSAGE_SELF)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main(argv: list[str]) -> None:
    numbers = [int(arg) for arg in argv if not arg.startswith("--")]
    documents = numbers[0] if numbers else 100
    repeat = numbers[1] if len(numbers) > 1 else 5
    boxes = "--no-boxes" not in argv  # without a PDF's character boxes (pypdfium2): the grounding alone
    extractions = demo_extractions(documents) + example_extractions()
    fields = sum(len(split(item.record.fields or {})[0]) for item in extractions)
    ground_twice(extractions)  # warm: imports, first reads
    runs = [cpu_seconds(extractions, boxes=boxes) for _ in range(repeat)]
    print(
        f"{len(extractions)} extractions, {fields} top-level fields: "
        f"ground twice{'' if boxes else ' (no boxes)'} "
        f"{statistics.median(runs):.3f} CPU-s median of {repeat} ({', '.join(f'{run:.3f}' for run in runs)})"
    )


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main(sys.argv[1:])
