"""The two model calls a document's way makes, as CallSpecs (functions/inference/calls.py): its
classification and its extraction, shared by the real-time path (functions/logic/process_document.py), the
batch path's records (functions/batch_inference/input_records.py) and the experiment's batch handler."""

from __future__ import annotations

from pydantic import JsonValue

from functions.definition.job_spec import DefinitionBundle
from functions.inference.calls import CallSpec
from functions.inference.evidence import extracted_with_evidence, with_evidence_prompt
from functions.inference.instructions import classify_instruction, extract_instruction
from functions.inference.prompts import CLASS_KEY, classified, classify_prompt, extract_prompt
from functions.payloads.job import JobVersions
from functions.reading.documents import DocumentInput
from functions.reading.page_texts import page_texts


def classify_spec(bundle: DefinitionBundle, versions: JobVersions, document: DocumentInput) -> CallSpec:
    """The classification of a document: its prompts, and its reply read as ``{"class": NAME or null}``."""
    return CallSpec(
        purpose="classify",
        class_name=None,
        system=classify_prompt(bundle),
        user=classify_instruction(document.name),
        prompt_version=versions.prompt_version,
        read=lambda reply: {CLASS_KEY: classified(reply)},
    )


def extract_spec(
    bundle: DefinitionBundle,
    class_name: str,
    versions: JobVersions,
    document: DocumentInput,
    *,
    has_page_texts: bool | None = None,
) -> CallSpec:
    """The extraction of a document of ``class_name``: its prompts, its reply read as the class's fields.
    ``has_page_texts``: the grounding reads the document's pages as printed (a text layer, no page read
    by OCR; None: read them to know), so a value printed as it is needs its page only
    (functions/inference/evidence.py); otherwise every value is quoted. The batch path's records
    (functions/batch_inference/input_records.py) ask the same."""
    class_bundle = bundle.class_bundle(class_name)
    if has_page_texts is None:
        has_page_texts = page_texts(document.data, document.format) is not None
    schema = dict(class_bundle.schema_) if has_page_texts else None
    return CallSpec(
        purpose="extract",
        class_name=class_name,
        system=with_evidence_prompt(extract_prompt(class_name, class_bundle), schema),
        user=extract_instruction(class_name, document.name),
        prompt_version=versions.prompt_version,
        read=lambda reply: extracted_with_evidence(reply, class_bundle),
    )


def unknown_class_reason(bundle: DefinitionBundle, named: JsonValue) -> str:
    known = ", ".join(sorted(bundle.classes))
    answer = "none of them" if named is None else f"{named!r}, not one of them"
    return f"the document is of no known class: the classes are {known}; the model answered {answer}"
