"""process_document's extraction of a long PDF or TIFF, window by window (docs/design.md, "Page windows"):
which windows a document is read in, one durable ``extract-w{first:04d}`` step a window (its model call
journalled with the window, so a crash between windows never repeats a finished window's call), and the merge
of their fields by the class's schema (functions/reading/page_windows.py)."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol, cast

from pydantic import JsonValue

from functions.checks.fields import FieldsInvalid, extracted_fields, parse_reply
from functions.definition.job_spec import ClassBundle, DefinitionBundle
from functions.errors import DocumentInProgress, ExtractionFailed
from functions.inference import ModelProvider
from functions.inference.calls import CallSpec
from functions.inference.converse import MAX_READ_TIMEOUT_SECONDS
from functions.inference.evidence import extracted_with_evidence, split
from functions.inference.instructions import extract_instruction
from functions.payloads.document import WindowCall
from functions.payloads.model_calls import ExtractionRecord
from functions.reading.block_limits import DEFAULT_MAX_PAGES, pdf_call_bytes
from functions.reading.documents import DocumentInput
from functions.reading.page_windows import (
    DEFAULT_WINDOW_PAGES,
    ImageSlicer,
    PageWindow,
    PdfSlicer,
    Slicer,
    merge_windows,
    plan_image_windows,
    plan_windows,
)


@dataclass(frozen=True)
class Windows:
    """The page windows a document is read in, and its slicer (empty: one call takes it whole)."""

    pages: list[PageWindow]
    slicer: Slicer | None = None

    def __bool__(self) -> bool:
        return bool(self.pages)

    def first(self, document: DocumentInput) -> DocumentInput:
        """What a call on the document's first pages receives: the first window, or the whole document."""
        return self.slicer.slice(self.pages[0]) if self.slicer is not None and self.pages else document


def windows_of(document: DocumentInput, sha256: str, model_id: str, window_pages: int | None) -> Windows:
    """The windows ``document`` is read in (none: one call takes it whole); DocumentTooLarge when a window's
    slice is over a call's PDF bytes, found before any call (each slice is made and dropped here, and made
    again when its window is read: one slice in memory at a time). A TIFF of more pages than a request takes
    images is read in windows of its converted pages (each page checked when the document was read)."""
    if document.images:
        windows = plan_image_windows(len(document.images), window_pages)
        return Windows(windows, ImageSlicer(document, sha256)) if windows else Windows([])
    if document.format != "pdf":
        return Windows([])
    call_bytes = pdf_call_bytes(model_id)
    planned = plan_windows(document.pages, len(document.data), call_bytes, window_pages)
    if not planned:
        return Windows([])
    slicer = PdfSlicer(document, sha256, call_bytes)
    for window in planned:
        slicer.slice(window)
    return Windows(planned, slicer)


# Once a window's call was made in this invocation, the next starts only with time left for it: twice the
# slowest window of this invocation plus WINDOW_MARGIN_SECONDS, at most WINDOW_CALL_SECONDS (a call's read
# timeout is at most MAX_READ_TIMEOUT_SECONDS, and the journal write follows); else the document is handed
# back (DocumentInProgress: the workflow runs it again at once) and the next windows run in a fresh
# invocation, not a call cut short.
WINDOW_MARGIN_SECONDS = 5
WINDOW_CALL_SECONDS = MAX_READ_TIMEOUT_SECONDS + WINDOW_MARGIN_SECONDS
# ProcessDocument's retries of DocumentInProgress (statemachines/document_review.asl.json), each a fresh
# invocation that reads one window at least: a document of the default ceiling's pages, classified (a packet)
# then extracted at one window an invocation. Past them the document is given up (functions/logic/give_up.py).
MAX_CONTINUATIONS = 2 * DEFAULT_MAX_PAGES // DEFAULT_WINDOW_PAGES


class WindowClock:
    """The time check between a long document's windows (its extraction's, a packet's page
    classification's): ``before`` a window, DocumentInProgress when a window was called in this invocation
    and the time left would not cover the next; ``after`` it, the window's time counted when it was called
    here (not a durable step's record reused)."""

    def __init__(self, time_left: Callable[[], float] | None) -> None:
        self.time_left = time_left
        self.slowest: float | None = None  # the longest window this invocation called, in seconds
        self.started = time.monotonic()

    def before(self, label: str) -> None:
        self.started = time.monotonic()
        left = self.time_left() if self.time_left is not None else float("inf")
        needed = min(WINDOW_CALL_SECONDS, 2 * (self.slowest or 0.0) + WINDOW_MARGIN_SECONDS)
        if self.slowest is not None and left < needed:
            raise DocumentInProgress(
                f"handed back: {left:.0f} s left in this invocation, under the {needed:.0f} s a window's "
                f"call may take; {label} and the rest run in a fresh invocation"
            )

    def after(self, called: bool) -> None:
        if called:
            self.slowest = max(self.slowest or 0.0, time.monotonic() - self.started)


class StepRunner(Protocol):
    """What the document's run gives a window: its durable model step under a name of its own, and the steps
    whose body ran in this invocation."""

    ran: set[str]

    def model_step(
        self, spec: CallSpec, document: DocumentInput, model: ModelProvider, step: str | None = None
    ) -> ExtractionRecord: ...


@dataclass(frozen=True)
class WindowedExtraction:
    """The merged extraction (a failed window's record when one failed) and each window's call."""

    record: ExtractionRecord
    calls: list[WindowCall]


def extract_windows(
    runner: StepRunner,
    spec: CallSpec,
    windows: Windows,
    model: ModelProvider,
    *,
    bundle: DefinitionBundle,
    pages: Callable[[], list[str] | None],
    time_left: Callable[[], float] | None = None,
) -> WindowedExtraction:
    """Each window's extraction as its own durable step, in page order, then merged; the first window that
    gives no fields stops the document (its reason names the window's pages). Once a window's call was made in
    this invocation, the next one starts only with time left for it (``time_left``; see WINDOW_CALL_SECONDS).
    ``pages``: the document's page texts, read when the merge grounds the windows' quotes."""
    assert spec.class_name is not None
    class_bundle = bundle.class_bundle(spec.class_name)
    relaxed = class_bundle.model_copy(update={"schema_": {**class_bundle.schema_, "required": []}})
    done: list[tuple[PageWindow, dict[str, JsonValue]]] = []
    calls: list[WindowCall] = []
    last: ExtractionRecord | None = None
    assert windows.slicer is not None
    clock = WindowClock(time_left)
    for window in windows.pages:
        first, end, total = window.first, window.last, window.total
        clock.before(window.label)
        document = windows.slicer.slice(window)
        window_spec = replace(
            spec,
            user=extract_instruction(spec.class_name, document.name, (first, end, total)),
            read=functools.partial(window_fields, class_bundle=relaxed),
            window=window.window_id,
        )
        record = runner.model_step(window_spec, document, model, step=window.step)
        clock.after(called=window.step in runner.ran)
        calls.append(WindowCall(pages=(first, end), model_call_id=record.call_id))
        if not record.ok or record.fields is None:
            reason = f"{window.label}: {record.reason or record.error or ExtractionFailed.__name__}"
            return WindowedExtraction(record.model_copy(update={"reason": reason}), calls)
        done.append((window, record.fields))
        last = record
    assert last is not None, "a windowed document has windows"
    merged = merge_windows(done, cast("dict[str, Any]", class_bundle.schema_), pages())
    first_call = {"call_id": calls[0].model_call_id}
    fields, _ = split(merged)
    try:  # the merge holds what the class requires (each window held only its own pages' fields)
        extracted_fields(json.dumps(fields), class_bundle)
    except FieldsInvalid as invalid:
        reason = f"the windows' fields merged: {invalid}"
        failed = {"ok": False, "fields": None, "error": ExtractionFailed.__name__, "reason": reason}
        return WindowedExtraction(last.model_copy(update={**first_call, **failed}), calls)
    return WindowedExtraction(last.model_copy(update={"fields": merged, **first_call}), calls)


def window_fields(reply: str, class_bundle: ClassBundle) -> dict[str, JsonValue]:
    """A window's reply read as the class's fields it gives: its null fields dropped, none required (a window
    holds some pages' fields; the merge is checked against the whole schema)."""
    data = parse_reply(reply)
    given = {name: value for name, value in data.items() if value is not None}
    return extracted_with_evidence(json.dumps(given), class_bundle)
