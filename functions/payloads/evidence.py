"""A field's evidence: what the model says it read (``Quote``, in the same reply as the value) and what the
grounding check found of it (``FieldEvidence``, stored in the document's result beside the value).

docs/design.md, "Evidence and confidence"; functions/evidence/grounding.py computes FieldEvidence.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from functions.payloads.common import StrictModel

# grounded: the quote is on the page named (whitespace and case normalised) and the value agrees with it;
# approximate: found only by fuzzy matching, or on another page than the one named; not_found: the quote is
# not in the document, or the value does not agree with its quote; unverified: the document has no text layer
# the pipeline reads (a page read visually), so only the page is known.
Grounding = Literal["grounded", "approximate", "not_found", "unverified"]
# How a field is held to its quote (its schema's ``x-grounding``, functions/evidence/grounding_modes.py):
# verbatim, the value is read from the quote; support, the quote must be found but the value is not compared
# (a summary, a judgement); none, no check (the quote recorded, never a reason for review).
GroundingMode = Literal["verbatim", "support", "none"]


class Box(StrictModel):
    """Where a span is on its page: ratios (0..1) of the page's width and height from its top-left corner,
    Amazon Textract's ``BoundingBox`` shape (docs/design.md, "Evidence and confidence": a contract the console
    draws; it does not change)."""

    left: float = Field(ge=0, le=1)
    top: float = Field(ge=0, le=1)
    width: float = Field(ge=0, le=1)
    height: float = Field(ge=0, le=1)


class Quote(StrictModel):
    """One field's evidence as the model replies it (the reply's ``_evidence`` object, by field path)."""

    quote: str | None = Field(
        None,
        max_length=2000,
        description="the verbatim text the value was read from; null: the page alone (a value printed as it "
        "is, which the grounding finds on the page itself)",
    )
    page: int = Field(1, ge=1, description="the page it is on, 1 for a document without pages")
    confidence: float | None = Field(None, ge=0, le=1, description="the model's own score, when asked")


class FieldEvidence(StrictModel):
    """One field's evidence in a document's result: the quote, where it is and how far it holds."""

    quote: str | None = None
    page: int | None = Field(None, ge=1, description="the page the quote is on (the model's, when not found)")
    start: int | None = Field(None, ge=0, description="offset of the span in the page's text")
    end: int | None = Field(None, ge=0, description="end offset (exclusive) of the span in the page's text")
    grounding: Grounding
    match_score: float = Field(0.0, ge=0, le=100, description="rapidfuzz score of the quote against the span")
    value_agrees: bool | None = Field(
        None, description="the value read from its quote under the schema (null: not comparable, an enum)"
    )
    confidence: float = Field(ge=0, le=1)
    note: str | None = Field(None, description="why it is not grounded, in words")
    mode: GroundingMode = Field(
        "verbatim", description="how the value is held to its quote (x-grounding): verbatim, support, none"
    )
    box: Box | None = Field(
        None, description="where the span is on its page (ratios of the page; null: unknown)"
    )


# Cascade.escalated when the strong model gave the whole document (the cheap model's reply gave no fields).
WHOLE_DOCUMENT = "*"


class Cascade(StrictModel):
    """A document of a definition naming ``models: [CHEAP, STRONG]`` (functions/inference/cascade.py): which
    fields the strong model extracted again, which model gave each field and what each model's calls cost."""

    models: list[str] = Field(min_length=2, max_length=2, description="[CHEAP, STRONG] of job.json")
    escalated: list[str] = Field(
        default_factory=list,
        description="the top-level fields the strong model gave (the grounding would send them to review); "
        f'["{WHOLE_DOCUMENT}"]: the whole document, the cheap model gave no fields; []: none',
    )
    reasons: list[str] = Field(default_factory=list, description="why each was escalated, in words")
    escalate_call_id: str | None = Field(None, description="the strong model's call (the journal's call_id)")
    field_models: dict[str, str] = Field(
        default_factory=dict, description="the model id that gave each top-level field"
    )
    cost_usd: dict[str, float | None] = Field(
        default_factory=dict,
        description="each model's call of the document priced (functions/spend.py); null: no dated price",
    )
