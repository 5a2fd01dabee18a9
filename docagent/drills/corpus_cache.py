"""Rendered corpora kept by the hash of what makes them, so a second demo does not render its PDFs and DOCX
files again (1.4 s of the 200-document demo's seed phase, measured 2026-12-02; the synthesis cache's idea,
docagent/localcloud/synth.py, applied to the corpus).

The key is everything the bytes depend on: each document's id and text, the formats and the seed that
assigns them, the renderer's source (docagent/drills/document_files.py) and the versions of the libraries it
calls. Rendering is byte-stable (fixed dates and zip times), so a hit gives exactly the bytes a render would.
An entry is a zip of the files, written whole to a temporary name and renamed; one that cannot be read or
written is rendered again: the cache never fails a demo.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import uuid
import zipfile
from collections.abc import Sequence
from pathlib import Path

from docagent import project
from docagent.drills import document_files, scanned
from docagent.drills.document_files import (
    CorpusFormat,
    RenderedDocument,
    assign_formats,
    file_name,
    render_corpus,
)
from docagent.drills.synthetic import SyntheticDocument

CACHE_FORMAT = "1"
LIBRARIES = ("fpdf2", "python-docx", "openpyxl", "pillow")
# Entries kept (the newest): each corpus size or generator change makes one (about 2 MB for 200 documents).
KEEP_ENTRIES = 8


def corpus_key(documents: Sequence[SyntheticDocument], formats: Sequence[CorpusFormat], seed: int) -> str:
    renderer = Path(document_files.__file__).read_bytes() + Path(scanned.__file__).read_bytes()
    versions = {name: importlib.metadata.version(name) for name in LIBRARIES}
    described = json.dumps(
        {
            "format": CACHE_FORMAT,
            "formats": list(formats),
            "seed": seed,
            "libraries": versions,
            "renderer": hashlib.sha256(renderer).hexdigest(),
            "documents": [[d.document_id, d.text] for d in documents],
        },
        sort_keys=True,
    )
    return hashlib.sha256(described.encode()).hexdigest()[:32]


def rendered_corpus(
    documents: Sequence[SyntheticDocument], formats: Sequence[CorpusFormat], seed: int
) -> list[RenderedDocument]:
    """``render_corpus(documents, formats, seed)``, from the cache when it holds this corpus."""
    entry = project.RENDER_CACHE / f"{corpus_key(documents, formats, seed)}.zip"
    found = _read(entry, documents, formats, seed)
    if found is not None:
        return found
    rendered = render_corpus(documents, formats, seed)
    _write(entry, rendered)
    return rendered


def _read(
    entry: Path, documents: Sequence[SyntheticDocument], formats: Sequence[CorpusFormat], seed: int
) -> list[RenderedDocument] | None:
    try:
        with zipfile.ZipFile(entry) as archive:
            assigned = assign_formats(len(documents), formats, seed)
            found = []
            for document, fmt in zip(documents, assigned, strict=True):
                name = file_name(document.document_id, fmt)
                data = archive.read(name)
                found.append(RenderedDocument(document.document_id, fmt, name, data, document.truth))
            return found
    except (OSError, KeyError, zipfile.BadZipFile):
        return None


def _write(entry: Path, rendered: Sequence[RenderedDocument]) -> None:
    partial = entry.with_name(f".{entry.name}.{uuid.uuid4().hex}")
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_STORED) as archive:
            for document in rendered:
                archive.writestr(document.file_name, document.data)
        os.replace(partial, entry)
        kept = sorted(entry.parent.glob("*.zip"), key=lambda path: path.stat().st_mtime, reverse=True)
        for old in kept[KEEP_ENTRIES:]:
            old.unlink(missing_ok=True)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
