"""What 1,000 documents cost in model calls, per model and per reading mode, on-demand and on batch inference:
the figures ``docagent preflight --documents N`` and ``docagent start --dry-run`` print before a job starts
(docs/cost.md, "Cost before the start"), and the estimate ``start`` refuses an over-budget job with.

The tokens are measured, not guessed: a document read as text takes what the demo's invoices took on
2026-12-07 (``make demo``, 200 real-sized invoices with the default definition, its evidence a page for each
value printed as it is: 1,480 input and 125 output tokens a document, issue #54; with a quote for every
value it was 1,428 and 195); read as images or visually, the demo's prompt (385 tokens a call, docs/cost.md,
2026-12-02) plus its pages (1.3 a document: 30 of the demo's 100 PDFs have two pages) at the documented
tokens a page (functions/reading/images.py, functions/reading/pdf_layers.py). The output is the same whatever
the reading. The project has no OCR reading (a scanned PDF is read visually), so there is no OCR row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from docagent.operations.json_shapes import ModelCost
from functions import spend
from functions.reading.images import BEST_PIXELS, PIXELS_PER_TOKEN
from functions.reading.pdf_layers import VISUAL_TOKENS_PER_PAGE

MEASURED_ON = "make demo, 2026-12-07 (docs/cost.md)"
MEASURED_INPUT_TOKENS_PER_DOCUMENT = 1_480
MEASURED_OUTPUT_TOKENS_PER_DOCUMENT = 125
MEASURED_PROMPT_TOKENS_PER_CALL = 385
MEASURED_PAGES_PER_DOCUMENT = 1.3
DOCUMENTS = 1_000


@dataclass(frozen=True)
class ReadingMode:
    """How a document's pages reach the model: the input tokens of a document, and what Converse must let
    the model read (spend.ModelPrice.reads)."""

    name: Literal["text", "image", "visual"]
    input_tokens: int
    needs: str
    meaning: str


READING_MODES: tuple[ReadingMode, ...] = (
    ReadingMode(
        "text",
        MEASURED_INPUT_TOKENS_PER_DOCUMENT,
        "document",
        "a PDF's or DOCX's text (a Converse document block; without document chat: text files only)",
    ),
    ReadingMode(
        "image",
        round(
            MEASURED_PROMPT_TOKENS_PER_CALL
            + MEASURED_PAGES_PER_DOCUMENT * -(-BEST_PIXELS // PIXELS_PER_TOKEN)
        ),
        "image",
        "each page an image at the best size (1.15 MP)",
    ),
    ReadingMode(
        "visual",
        round(MEASURED_PROMPT_TOKENS_PER_CALL + MEASURED_PAGES_PER_DOCUMENT * VISUAL_TOKENS_PER_PAGE),
        "document",
        "a PDF read visually (text and page images, citations; read: visual, or a scan under auto)",
    ),
)


def mode(name: str) -> ReadingMode:
    return next(reading for reading in READING_MODES if reading.name == name)


def per_1000(model_id: str, reading: ReadingMode) -> ModelCost:
    """One model read one way: 1,000 documents' tokens and their price on-demand and on batch; not ``priced``
    (no figures) for a model with no dated price, ``reads`` False where Converse does not let it."""
    input_tokens = reading.input_tokens * DOCUMENTS
    output_tokens = MEASURED_OUTPUT_TOKENS_PER_DOCUMENT * DOCUMENTS
    try:
        price = spend.model_price(model_id)
    except LookupError:
        price = None
    return ModelCost(
        model_id=model_id,
        mode=reading.name,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        priced=price is not None,
        reads=None if price is None or price.reads is None else reading.needs in price.reads,
        on_demand_usd=None
        if price is None
        else round(spend.call_cost_usd(model_id, input_tokens, output_tokens), 4),
        batch_usd=None
        if price is None
        else round(spend.call_cost_usd(model_id, input_tokens, output_tokens, "batch"), 4),
    )


def cost_per_1000(models: list[str], modes: list[str] | None = None) -> list[ModelCost]:
    """Every model (the cheap one first) by every reading mode (all of them unless named)."""
    readings = READING_MODES if modes is None else tuple(mode(name) for name in modes)
    return [per_1000(model, reading) for model in dict.fromkeys(models) for reading in readings]


def job_model_usd(documents: int, model_id: str, read: str) -> float | None:
    """What a job's first model (the one that reads every document) costs on-demand for ``documents`` read
    the definition's way (auto: as text), or None without a dated price. A cascade's strong model is asked
    only for the documents the cheap one leaves unsupported, a share no one knows before the job: the figure
    is a floor, so a job it puts over budget would certainly pass it."""
    usd = per_1000(model_id, mode("visual" if read == "visual" else "text")).on_demand_usd
    return None if usd is None else round(usd * documents / DOCUMENTS, 4)


def lines(rows: list[ModelCost]) -> list[str]:
    """The human view: one line a model and mode."""
    out = []
    for row in rows:
        head = f"{row.model_id} {row.mode}:"
        if row.on_demand_usd is None or row.batch_usd is None:
            out.append(f"{head} no dated price in functions/spend.py")
            continue
        text = f"{head} ${row.on_demand_usd:,.2f} on-demand, ${row.batch_usd:,.2f} batch per 1,000 documents"
        if row.reads is False:
            text += " (Converse does not let this model read documents this way)"
        out.append(text)
    return out
