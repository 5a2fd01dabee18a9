"""A job's durable steps as the operator reads them: each document's steps in flow order (from the pinned
definition), their idempotency record keys (functions/durability/durable.py), and an idempotency record read
from DynamoDB (INPROGRESS until when, or expired)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from docagent.operations.display import iso
from functions.checks.outcomes import lookup_key
from functions.definition.job_spec import DefinitionBundle, LookupCheck
from functions.durability import durable
from functions.payloads.document import DocumentResult
from functions.reading.page_windows import window_step


@dataclass
class IdempotencyRecord:
    key: str
    status: str
    expiration: int | None
    in_progress_expiration_ms: int | None
    data: Any

    def expired_in_progress(self, at: dt.datetime) -> bool:
        if self.status != "INPROGRESS" or self.in_progress_expiration_ms is None:
            return False
        return self.in_progress_expiration_ms / 1000 < at.timestamp()

    def in_progress_until(self) -> str | None:
        if self.in_progress_expiration_ms is None:
            return None
        return iso(dt.datetime.fromtimestamp(self.in_progress_expiration_ms / 1000, dt.UTC))

    def summary(self, at: dt.datetime) -> dict[str, Any]:
        status = self.status
        if self.expired_in_progress(at):
            status = "INPROGRESS_EXPIRED"
        return {"key": self.key, "status": status, "in_progress_until": self.in_progress_until()}


def idempotency_record_of(item: dict[str, Any]) -> IdempotencyRecord:
    def number(name: str) -> int | None:
        value = item.get(name, {}).get("N")
        return None if value is None else int(float(value))

    raw = item.get("data", {}).get("S")
    try:
        data = json.loads(raw) if raw else None
    except ValueError:
        data = raw
    return IdempotencyRecord(
        key=item["id"]["S"],
        status=item.get("status", {}).get("S", ""),
        expiration=number("expiration"),
        in_progress_expiration_ms=number("in_progress_expiration"),
        data=data,
    )


# The durable steps of a document of a job prepared before job definitions existed.
STEPS_BEFORE_DEFINITIONS = ("extract", "customer_lookup")


MODEL_STEPS = ("classify", "classify-pages-w0001", "extract", "escalate")  # a packet's first window too


def document_steps(bundle: DefinitionBundle | None, result: DocumentResult | None = None) -> list[str]:
    """A document's durable steps in flow order (functions/logic/process_document.py): ``classify`` (with
    several classes; a PDF of a job that splits pages: ``classify-pages-w0001`` and ``sections``, a packet's
    first page window and its sections, functions/reading/sections.py), ``extract`` (a long PDF's result:
    ``extract-w{first:04d}`` a page window), ``escalate`` (a definition naming two models), then
    ``lookup-{check}`` per lookup check, ``ocr`` (a result whose pages without a text layer were read by OCR).

    Without its result (a document not finished yet): every step any document may take, the lookups of all
    the definition's classes. With its result: the steps that document took, and only those: its class's
    lookups whose field it had (a class that does not share its checks has no record of another's), no
    extract for a document of no class, none at all for a document refused before it was read."""
    if bundle is None:
        return list(STEPS_BEFORE_DEFINITIONS)
    classes = bundle.definition.classes
    split = bundle.definition.split == "pages" and (result is None or result.format == "pdf")
    # a packet's (functions/reading/sections.py)
    pages = ["classify-pages-w0001", "sections"] if split else []
    if (
        result is not None and result.sections is not None
    ):  # its sections' steps are keyed by their section too
        classified = ["classify"] if not split and len(classes) > 1 else []  # a packet class's document
        case = ["case"] if result.case is not None else []  # its case checks (functions/checks/cases.py)
        return [*classified, "classify-pages-w0001", "sections", *case]
    if result is not None:
        took = list(pages) if result.classify_call_id is not None else []
        if not split and len(classes) > 1 and result.classify_call_id is not None:
            took = ["classify"]
        if result.windows:  # a long PDF: one extract step a page window (functions/reading/page_windows.py)
            took += [window_step(window.pages[0]) for window in result.windows]
        elif result.model_call_id is not None:
            took.append("extract")
        if result.cascade is not None and result.cascade.escalate_call_id is not None:
            took.append("escalate")  # the strong model's step (functions/inference/cascade.py)
        spec = classes.get(result.class_name or "")
        if spec is not None and result.fields is not None:
            took += sorted(
                f"lookup-{check.name}"
                for check in spec.checks
                if isinstance(check, LookupCheck) and lookup_key(check, result.fields) is not None
            )
        # its pages without a text layer read by OCR, once (functions/reading/ocr/step.py)
        if result.ocr is not None:
            took.append("ocr")
        return took
    lookups = {
        f"lookup-{check.name}"
        for spec in classes.values()
        for check in spec.checks
        if isinstance(check, LookupCheck)
    }
    escalate = ["escalate"] if bundle.definition.models is not None else []
    return (pages or (["classify"] if len(classes) > 1 else [])) + ["extract", *escalate] + sorted(lookups)


def document_step_key(step: str, job_id: str, document_id: str) -> str:
    """A document step's idempotency record key (``lookup-{check}`` steps are named by the definition)."""
    ids = {"job_id": job_id, "document_id": document_id}
    return durable.record_key(step, ids)  # type: ignore[arg-type,unused-ignore]  # StepName: str in the kit


def job_step_key(step: durable.StepName, job_id: str) -> str:
    if step == "prepare":
        return durable.record_key("prepare", {"job_id": job_id}, key_field="job_id")
    return durable.record_key(step, {"job_id": job_id})
