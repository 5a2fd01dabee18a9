"""The user text block of each kind of model call (Converse needs one beside the document block), and how to
read it back. The local Bedrock (docagent/localcloud/bedrock/converse_api.py) reads these to know what it is
asked; the
functions write them. They name the document block and the class, nothing from the document."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_EXTRACT = 'Extract the fields of a document of class "{class_name}" from the attached document {name}. '
_CLASSIFY = "Classify the attached document {name}: name the one class it belongs to. "
_CLASSIFY_PAGES = (
    "Classify each page of the attached document {name}, pages {first} to {last} of a packet that may hold "
    "several documents: name each page's class and whether a new document starts on it. "
)
_REPLY = "Reply with the JSON object only."
_EXTRACT_RE = re.compile(
    r'^Extract the fields of a document of class "([a-z0-9-]+)" from the attached document '
)
_CLASSIFY_RE = re.compile(r"^Classify the attached document ")
_CLASSIFY_PAGES_RE = re.compile(
    r"^Classify each page of the attached document \S+, pages (\d+) to (\d+) of a packet"
)


_WINDOW = (
    "It holds pages {first} to {last} of {total} of a longer document: give the fields these pages hold, "
    "null for the others; count the pages of your evidence from its first page as 1. "
)


def extract_instruction(
    class_name: str, document_name: str, window: tuple[int, int, int] | None = None
) -> str:
    """The extract call's user text; ``window`` (first, last, total pages): a long PDF's page window
    (functions/reading/page_windows.py)."""
    pages = "" if window is None else _WINDOW.format(first=window[0], last=window[1], total=window[2])
    return _EXTRACT.format(class_name=class_name, name=document_name) + pages + _REPLY


def classify_instruction(document_name: str) -> str:
    return _CLASSIFY.format(name=document_name) + _REPLY


def classify_pages_instruction(document_name: str, first: int, last: int) -> str:
    """A packet's page window (functions/reading/sections.py): its pages' numbers in the packet, for the
    reader."""
    return _CLASSIFY_PAGES.format(name=document_name, first=first, last=last) + _REPLY


@dataclass(frozen=True)
class Asked:
    """What a call asks: ``extract`` (of ``class_name``), ``classify`` or ``classify-pages`` (of the packet's
    pages ``first`` to ``last``)."""

    kind: Literal["extract", "classify", "classify-pages"]
    class_name: str | None = None
    first: int | None = None
    last: int | None = None


def asked(instruction: str) -> Asked | None:
    """What the user text block asks, or None for a text no docagent function writes."""
    match = _EXTRACT_RE.match(instruction)
    if match:
        return Asked("extract", match.group(1))
    pages = _CLASSIFY_PAGES_RE.match(instruction)
    if pages:
        return Asked("classify-pages", first=int(pages.group(1)), last=int(pages.group(2)))
    if _CLASSIFY_RE.match(instruction):
        return Asked("classify")
    return None
