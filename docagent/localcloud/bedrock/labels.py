"""What the local Bedrock answers for any job definition: a document's label, found by its bytes' sha256.

A label is the expected JSON of a sample document: ``NAME.EXT`` with ``NAME.label.json`` beside it
(docagent/evaluation/labelled_sets.py's convention; with several classes a sample sits in
``samples/CLASS/``). It
is registered with a running local cloud (``docagent local labels DIR``, ``register_labels``; ``docagent
start --from-dir DIR`` registers the labels it finds) and kept in the cloud's state folder, so a restart keeps
it and ``local up --fresh`` forgets it. The local Bedrock answers an extract call with the label's fields and
a classify call with its class; a document with no label is refused with how to add one (``no_label``).

A *recording* is what the real model replied for a document, kept to be replayed: ``NAME.recording.json``
(``Recording``, docagent/localcloud/bedrock/recordings.py: the document's sha256 and, per call, its purpose,
class and reply text), written from a job
that ran on AWS by ``scripts/record_replies.py JOB DIR --aws`` (the replies as the job's journal holds them)
and registered like labels (``docagent local labels DIR`` reads both). The local Bedrock replays a recorded
reply before it looks at a label.

A *reader* (``docagent local up --reader FILE``) answers extract calls of one class from the document's text
for documents with no label: a Python file with ``CLASS_NAME`` and ``reply(text) -> str``
(examples/invoices/local_reader.py).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import threading
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from docagent.kit.loader import DefinitionInvalid, read_bundle
from docagent.kit.samples import (
    LABEL_SUFFIX,
    SAMPLES_FOLDER,
    LabelContent,
    SectionLabel,
    label_problem,
    labelled_parts,
    read_label,
)
from docagent.localcloud.bedrock.recordings import RECORDING_SUFFIX, RecordedReply, Recording
from docagent.localcloud.request_guard import signed
from functions.definition.job_spec import DEFINITION_FILE
from functions.errors import DocumentRejected
from functions.reading.documents import LOCAL_NO_LABEL
from functions.reading.images import image_kind, page_images
from functions.reading.pdf_pages import page_count, page_windows, slice_pages

LABELS_PATH = "/_docagent/bedrock/labels"
LABELS_FILE = "labels.json"


class PageLabel(BaseModel):
    """A page's answer to a page classification (functions/reading/sections.py): counted from 1 in its
    block."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, serialize_by_alias=True)

    page: int = Field(ge=1)
    class_name: str | None = Field(None, alias="class")
    starts: bool = False


class Label(BaseModel):
    """One document's expected answer: its fields (an extract call), its class (a classify call) and its
    pages' classes (a classify-pages call: ``pages``, else every page of its class, the first starting)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="of the document's bytes")
    class_name: str | None = Field(None, description="None: the definition's only class, or no class")
    no_class: bool = Field(False, description="the label says the document is of no class")
    fields: dict[str, JsonValue]
    quotes: dict[str, str] = Field(
        default_factory=dict, description="the text supporting a field, by path: the label's _evidence"
    )
    source: str = Field("", description="the document's path when it was registered")
    pages: list[PageLabel] | None = Field(None, description="a packet's page window: each page's answer")
    unlabelled: list[int] = Field(
        default_factory=list, description="the window's pages (counted in the packet) in no labelled section"
    )

    def page_answers(self, count: int) -> list[PageLabel]:
        """The answer to a classify-pages call of ``count`` pages."""
        if self.pages is not None:
            return self.pages
        named = None if self.no_class else self.class_name
        return [PageLabel(page=page, class_name=named, starts=page == 1) for page in range(1, count + 1)]


class Kept(BaseModel):
    """What the local cloud keeps on disk: every label and recording registered."""

    labels: list[Label] = Field(default_factory=list)
    recordings: list[Recording] = Field(default_factory=list)


class LabelsInvalid(ValueError):  # noqa: N818 (the labels are invalid: the name reads as the outcome)
    """A folder whose labels cannot be registered; ``problems`` holds one line per problem."""

    def __init__(self, folder: Path, problems: list[str]) -> None:
        super().__init__(f"{folder}: {len(problems)} problem(s): " + "; ".join(problems))
        self.problems = problems


def no_label(sha256: str) -> str:
    """Why the local Bedrock cannot answer a document, and how to make it (read by the functions as
    DocumentNotLabelled: functions/reading/documents.py LOCAL_NO_LABEL)."""
    return (
        f"{LOCAL_NO_LABEL} (sha256 {sha256}): add its expected fields as NAME.label.json beside the document "
        "NAME.EXT and register them (`docagent local labels DIR`, or start it with --from-dir DIR), or run "
        "with a real model (docs/local-cloud.md)"
    )


def document_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def label_digests(data: bytes) -> list[str]:
    """The hashes a document's label answers by: its bytes', and for an image docagent converts (a TIFF, a
    rotated or large photo: functions/reading/images.py) its first converted page's, which is what the local
    Bedrock sees. An image that breaks a limit is answered by its bytes' hash only (the job rejects it
    first)."""
    digests = [document_sha256(data)]
    if image_kind(data) is None:
        return digests
    try:
        pages = page_images(data)
    except DocumentRejected:
        return digests
    converted = document_sha256(pages[0].data)
    return digests if converted in digests else [*digests, converted]


def slice_digest(sha256: str, first: int, last: int) -> str:
    """What a TIFF packet's slice (pages ``first`` to ``last`` of the TIFF whose bytes hash to ``sha256``) is
    answered by: its first page's note names the TIFF and the pages (functions/reading/page_windows.py), not a
    hash of its own."""
    return document_sha256(f"{sha256}#{first}-{last}".encode())


def _slice_digests(data: bytes, pages: int, tiff: bool) -> Callable[[int, int], list[str]]:
    """The digests of a packet's slice of pages ``first`` to ``last``, as the job slices it: a PDF's slice
    bytes (functions/reading/pdf_pages.py); a TIFF's whole document as any TIFF, a part by
    ``slice_digest``."""
    whole = document_sha256(data)

    def digests(first: int, last: int) -> list[str]:
        if not tiff:
            return [document_sha256(slice_pages(data, first, last))]
        return label_digests(data) if (first, last) == (1, pages) else [slice_digest(whole, first, last)]

    return digests


def packet_labels(
    data: bytes, sections: Sequence[SectionLabel], source: str, packet_class: str | None = None
) -> list[Label]:
    """A packet's labels (docs/design.md, "Packets"): each page window's slice, answering its pages' classes,
    and each labelled section's slice, answering its class and fields; sliced as the job slices
    (functions/reading/pdf_pages.py; a TIFF's pages: functions/reading/sections.py ``pages_of``). A slice that
    is both (a window that is one section) answers as both."""
    tiff = image_kind(data) == "tiff"
    pages = len(page_images(data)) if tiff else page_count(data)
    slice_digests = _slice_digests(data, pages, tiff)
    covered = {
        page: section for section in sections for page in range(section.pages[0], section.pages[1] + 1)
    }
    by_digest: dict[str, dict[str, Any]] = {}
    for first, last in page_windows(pages):
        answers = [
            PageLabel(
                page=page - first + 1,
                class_name=covered[page].class_name,
                starts=page == covered[page].pages[0],
            )
            for page in range(first, last + 1)
            if page in covered
        ]
        unlabelled = [page for page in range(first, last + 1) if page not in covered]
        for digest in slice_digests(first, last):
            by_digest[digest] = {"pages": answers, "unlabelled": unlabelled}
    for section in sections:
        if section.pages[1] > pages:
            raise ValueError(f"section {section.section_id} ends after the document's {pages} pages")
        for digest in slice_digests(*section.pages):
            by_digest.setdefault(digest, {}).update(
                class_name=section.class_name, no_class=section.class_name is None, fields=section.fields
            )
    whole = by_digest.setdefault(document_sha256(data), {})
    if packet_class is not None and "class_name" not in whole:  # a packet class: its classification's answer
        whole["class_name"] = packet_class
    return [
        Label(sha256=digest, source=source, **{"fields": {}, **found}) for digest, found in by_digest.items()
    ]


class LabelStore:
    """The labels a local cloud holds, by document sha256; saved whole to ``path`` on every change."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._labels: dict[str, Label] = {}
        self._recordings: dict[str, Recording] = {}
        self._path: Path | None = None

    def attach(self, path: Path | None) -> None:
        """Keep the labels and recordings in ``path`` (None: in memory only) and load what it holds."""
        with self._lock:
            self._path = path
            kept = (
                Kept.model_validate_json(path.read_bytes()) if path is not None and path.exists() else Kept()
            )
            self._labels = {label.sha256: label for label in kept.labels}
            self._recordings = {recording.sha256: recording for recording in kept.recordings}

    def add(self, labels: Iterable[Label], recordings: Iterable[Recording] = ()) -> int:
        """Register ``labels`` and ``recordings`` (a document's new one replaces its old one); how many
        documents the store answers now."""
        with self._lock:
            self._labels.update((label.sha256, label) for label in labels)
            self._recordings.update((recording.sha256, recording) for recording in recordings)
            self._save()
            return len(self._labels.keys() | self._recordings.keys())

    def clear(self) -> None:
        with self._lock:
            self._labels.clear()
            self._recordings.clear()
            self._save()

    def get(self, sha256: str) -> Label | None:
        with self._lock:
            return self._labels.get(sha256)

    def keep_reply(self, sha256: str, reply: RecordedReply) -> Recording:
        """Record a model's reply for a document (``--model ... --record``): it replaces the document's
        reply of the same purpose and class; the document's recording as it is now."""
        with self._lock:
            kept = self._recordings.get(sha256)
            label = self._labels.get(sha256)
            replies = [
                old
                for old in (kept.replies if kept else [])
                if (old.purpose, old.class_name) != (reply.purpose, reply.class_name)
            ]
            source = label.source if label is not None else (kept.source if kept else "")
            recording = Recording(sha256=sha256, replies=[*replies, reply], source=source)
            self._recordings[sha256] = recording
            self._save()
        return recording

    def recorded(self, sha256: str, purpose: str, class_name: str | None) -> RecordedReply | None:
        with self._lock:
            recording = self._recordings.get(sha256)
        return None if recording is None else recording.reply_to(purpose, class_name)

    def counts(self) -> dict[str, int]:
        with self._lock:
            return {"labels": len(self._labels), "recordings": len(self._recordings)}

    def _save(self) -> None:
        if self._path is None:
            return
        self._path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self._path.with_name(f".{self._path.name}.{os.getpid()}")
        kept = Kept(labels=list(self._labels.values()), recordings=list(self._recordings.values()))
        temporary.write_bytes(kept.model_dump_json().encode())
        temporary.replace(self._path)


# ------------------------------------------------------------------------------------------ reading labels


def _definition_classes(root: Path) -> dict[str, dict[str, Any]] | None:
    """The classes (name -> schema) of the definition folder ``root``, or None when it is no definition."""
    if not (root / DEFINITION_FILE).is_file():
        return None
    try:
        bundle = read_bundle(root)
    except DefinitionInvalid as invalid:
        raise LabelsInvalid(root, invalid.problems) from None
    return {name: dict(bundle.classes[name].schema_) for name in bundle.classes}


def _class_of(
    content: LabelContent, relative: Path, classes: dict[str, dict[str, Any]] | None
) -> tuple[str | None, str | None]:
    """A sample's class (its label's, else its subfolder's; a packet's sections say theirs) and what is wrong
    with its label, checked against the definition's ``classes`` when known."""
    class_name: str | None = relative.parts[0] if len(relative.parts) > 1 else None
    problem: str | None = None
    if content.sections:
        if classes is not None:
            parts, problem = labelled_parts(content, None, classes)
            for part in parts:
                if problem is None and part.class_name is not None:
                    problem = label_problem(part.fields, classes[part.class_name])
    elif classes is not None:
        class_name, problem = content.class_in(class_name, classes)
        if problem is None and class_name is not None:
            problem = label_problem(content.fields, classes[class_name])
    elif content.says_class:
        class_name = content.class_name
    return class_name, problem


def read_labels(folder: str | Path) -> list[Label]:
    """The labels of a folder of samples, or of a definition folder (its ``samples/``, classes known):
    every ``NAME.label.json`` with its one ``NAME.EXT``. A document is of the class its label says
    (docagent/kit/samples.py), else of the class its subfolder names; with one class, of that class.
    Documents with no label are left out (the local Bedrock refuses them, saying how to add one). Refused
    (LabelsInvalid) naming every bad label."""
    root = Path(folder)
    if not root.is_dir():
        raise LabelsInvalid(root, [f"{folder} is not a directory"])
    classes = _definition_classes(root)
    samples = root / SAMPLES_FOLDER if classes is not None else root
    if not samples.is_dir():
        return []
    files = sorted(
        path
        for path in samples.rglob("*")
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(samples).parts)
    )
    documents: dict[Path, list[Path]] = {}
    for path in files:
        if not path.name.endswith(LABEL_SUFFIX):
            documents.setdefault(path.with_suffix(""), []).append(path)
    problems: list[str] = []
    labels: list[Label] = []
    for path in files:
        if not path.name.endswith(LABEL_SUFFIX):
            continue
        shown = path.relative_to(samples).as_posix()
        stem = path.with_name(path.name.removesuffix(LABEL_SUFFIX))
        found = documents.get(stem, [])
        if len(found) != 1:
            what = "no document" if not found else f"{len(found)} documents"
            problems.append(f"{shown}: {what} named {stem.name}.EXT beside it")
            continue
        try:
            content = read_label(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, UnicodeDecodeError) as error:
            problems.append(f"{shown}: not JSON ({error})")
            continue
        if isinstance(content, str):
            problems.append(f"{shown}: {content}")
            continue
        relative = found[0].relative_to(samples)
        class_name, problem = _class_of(content, relative, classes)
        if problem:
            problems.append(f"{shown}: {problem}")
            continue
        data = found[0].read_bytes()
        if content.sections:
            try:
                labels.extend(packet_labels(data, content.sections, str(found[0]), content.class_name))
            except (ValueError, DocumentRejected) as error:
                problems.append(f"{shown}: {error}")
            continue
        labels.extend(
            Label(
                sha256=digest,
                class_name=class_name,
                no_class=content.says_class and content.class_name is None,
                fields=content.fields,
                quotes=content.quotes,
                source=str(found[0]),
            )
            for digest in label_digests(data)
        )
    if problems:
        raise LabelsInvalid(root, problems)
    return labels


def read_recordings(folder: str | Path) -> list[Recording]:
    """Every ``*.recording.json`` under ``folder`` (each names its document by sha256: no document needed);
    refused (LabelsInvalid) naming every bad one."""
    root = Path(folder)
    problems: list[str] = []
    recordings: list[Recording] = []
    for path in sorted(root.rglob(f"*{RECORDING_SUFFIX}")) if root.is_dir() else []:
        shown = path.relative_to(root).as_posix()
        try:
            recordings.append(Recording.model_validate_json(path.read_bytes()))
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "top"
            problems.append(f"{shown}: {where}: {first['msg']}")
    if problems:
        raise LabelsInvalid(root, problems)
    return recordings


# ---------------------------------------------------------------------------------- a running local cloud


def _call(endpoint: str, method: str, payload: Any = None) -> dict[str, Any]:
    data = None if payload is None else json.dumps(payload).encode()
    request = urllib.request.Request(
        endpoint.rstrip("/") + LABELS_PATH,
        data=data,
        method=method,
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(signed(request), timeout=30) as response:
        answer: dict[str, Any] = json.loads(response.read())
    return answer


def post_labels(
    endpoint: str, labels: list[Label], recordings: list[Recording] | None = None
) -> dict[str, Any]:
    """Register ``labels`` (and ``recordings``) with the local cloud at ``endpoint``: {"added": N, "labels":
    labels held, "recordings": recordings held}."""
    return _call(
        endpoint,
        "POST",
        {
            "labels": [label.model_dump(mode="json") for label in labels],
            "recordings": [recording.model_dump(mode="json") for recording in recordings or []],
        },
    )


def register_labels(endpoint: str, folder: str | Path) -> int:
    """Register the labels (read_labels) and recordings (read_recordings) of ``folder`` with the local
    cloud; the number registered."""
    labels, recordings = read_labels(folder), read_recordings(folder)
    if labels or recordings:
        post_labels(endpoint, labels, recordings)
    return len(labels) + len(recordings)


def labels_of(endpoint: str) -> dict[str, Any]:
    """How many labels the local cloud holds: {"labels": N}."""
    return _call(endpoint, "GET")


# ------------------------------------------------------------------------------------------------ readers


@dataclass(frozen=True)
class Reader:
    """A fallback answerer of extract calls of one class, from the document's text."""

    class_name: str
    reply: Callable[[str], str]
    path: str


def load_reader(path: str | Path) -> Reader:
    """The reader in a Python file (``CLASS_NAME`` and ``reply(text) -> str``); ValueError when it is none."""
    file = Path(path)
    spec = importlib.util.spec_from_file_location(f"docagent_reader_{file.stem}", file)
    if spec is None or spec.loader is None or not file.is_file():
        raise ValueError(f"{path}: no such Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    class_name, reply = getattr(module, "CLASS_NAME", None), getattr(module, "reply", None)
    if not isinstance(class_name, str) or not callable(reply):
        raise ValueError(f"{path}: a reader defines CLASS_NAME (a class name) and reply(text) -> str")
    return Reader(class_name=class_name, reply=reply, path=str(file))
