"""Labelled sets: a folder of documents, each with its expected JSON beside it (``NAME.EXT`` +
``NAME.label.json``), and the job definition they are scored under.

With several classes, a document's class is the name of the folder it sits in (``DIR/CLASS/NAME.EXT``); with
one, every document is of that class. The kit will use the same convention.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from docagent.evaluation.figures import DefinitionVersion
from docagent.kit.loader import read_bundle
from docagent.kit.samples import LABEL_SUFFIX, label_problem, labelled_parts, read_label
from docagent.localcloud.bedrock.recordings import RECORDING_SUFFIX
from docagent.operations.context import RefusedError
from functions.definition.job_spec import DefinitionBundle

INVOICES = Path(__file__).resolve().parents[2] / "examples" / "invoices"


class Definition(BaseModel):
    """What documents are scored under: its classes, each a JSON Schema (2020-12) with the comparators'
    ``x-comparator`` and ``x-weight`` extensions. The kit's ``--job PATH`` will read one from a folder."""

    model_config = ConfigDict(extra="forbid")

    name: str
    classes: dict[str, dict[str, Any]]


def definition_of(bundle: DefinitionBundle) -> Definition:
    """What a job definition's documents are scored under: its classes' schemas."""
    return Definition(
        name=bundle.name, classes={name: dict(bundle.classes[name].schema_) for name in bundle.classes}
    )


def invoice_definition() -> Definition:
    """The invoice example (examples/invoices), the default of `docagent eval`."""
    return definition_of(read_bundle(INVOICES))


def definition_version(definition: Definition, versions: Any | None) -> DefinitionVersion:
    """The definition and the versions a job was pinned to (a JobVersions, or None when unknown)."""
    return DefinitionVersion(
        name=definition.name,
        model_id=getattr(versions, "model_id", None),
        prompt_version=getattr(versions, "prompt_version", None),
        prompt_sha256=getattr(versions, "prompt_sha256", None),
    )


class LabelledSample(BaseModel):
    """One document of a labelled set: its path relative to the set, its class and its expected JSON; or one
    section of a packet (``pages`` set, named ``PATH#SECTION``: docs/design.md, "Packets")."""

    model_config = ConfigDict(extra="forbid")

    name: str
    path: Path
    class_name: str | None = Field(description="None: the label says the document is of no class")
    label: JsonValue
    pages: tuple[int, int] | None = None

    @property
    def document(self) -> str:
        """The document's path relative to the set (a section's: its packet's)."""
        return self.name.split("#", 1)[0]


def read_samples(directory: str | Path, definition: Definition) -> list[LabelledSample]:
    """Every document of the folder with its label; refused (exit 2), naming each problem, when a label has
    no document, a document no label, or a label is no JSON object of the class's fields."""
    root = Path(directory)
    if not root.is_dir():
        raise RefusedError("DirectoryNotFound", f"{directory} is not a directory")
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
        and not p.name.endswith(RECORDING_SUFFIX)  # the local model's recorded replies: no document
    )
    labels = {
        p.with_name(p.name.removesuffix(LABEL_SUFFIX)): p for p in files if p.name.endswith(LABEL_SUFFIX)
    }
    documents = [p for p in files if not p.name.endswith(LABEL_SUFFIX)]
    by_stem: dict[Path, list[Path]] = {}
    for document in documents:
        by_stem.setdefault(document.with_suffix(""), []).append(document)
    problems: list[str] = []
    samples: list[LabelledSample] = []
    for stem, label_path in sorted(labels.items()):
        found = by_stem.get(stem, [])
        if len(found) != 1:
            what = (
                "no document" if not found else f"{len(found)} documents ({', '.join(p.name for p in found)})"
            )
            problems.append(f"{label_path.relative_to(root)}: {what} named {stem.name}.EXT beside it")
            continue
        relative = found[0].relative_to(root).as_posix()
        try:
            content = read_label(json.loads(label_path.read_text(encoding="utf-8")))
        except (ValueError, UnicodeDecodeError) as error:
            problems.append(f"{label_path.relative_to(root)}: not JSON ({error})")
            continue
        folder = Path(relative).parts
        parts, problem = (
            ([], content)
            if isinstance(content, str)
            else labelled_parts(content, folder[0] if len(folder) > 1 else None, definition.classes)
        )
        for part in parts:
            if problem is None and part.class_name is not None:
                problem = label_problem(part.fields, definition.classes[part.class_name])
        if problem:
            problems.append(f"{label_path.relative_to(root)}: {problem}")
            continue
        samples.extend(
            LabelledSample(
                name=relative if part.section is None else f"{relative}#{part.section.section_id}",
                path=found[0],
                class_name=part.class_name,
                label=part.fields,
                pages=None if part.section is None else part.section.pages,
            )
            for part in parts
        )
    unlabelled = sorted(p.relative_to(root).as_posix() for p in documents if p.with_suffix("") not in labels)
    problems += [
        f"{name}: no {Path(name).with_suffix('').name}{LABEL_SUFFIX} beside it" for name in unlabelled
    ]
    if problems:
        raise RefusedError(
            "LabelledSetInvalid",
            f"{directory}: {len(problems)} problem(s): " + "; ".join(problems),
            details={"problems": problems},
        )
    if not samples:
        raise RefusedError(
            "NoSamples", f"{directory} holds no labelled documents (NAME.EXT + NAME{LABEL_SUFFIX})"
        )
    return samples


def write_samples(directory: str | Path, documents: int, seed: int = 7) -> list[Path]:
    """The demo's synthetic corpus (docagent/drills/synthetic.py, in the demo's formats) as a labelled
    set: each document with its ground truth as its label. Refused when the folder already holds files."""
    from docagent.drills.document_files import DEFAULT_FORMATS, render_corpus
    from docagent.drills.synthetic import generate_documents

    if documents < 1:
        raise RefusedError("BadDocuments", "--documents must be at least 1")
    root = Path(directory)
    if root.exists() and any(root.iterdir()):
        raise RefusedError(
            "DirectoryNotEmpty", f"{directory} is not empty: write a labelled set to a new folder"
        )
    root.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for document in render_corpus(generate_documents(documents, seed=seed), DEFAULT_FORMATS, seed=seed):
        path = root / document.file_name
        path.write_bytes(document.data)
        label = path.with_name(path.stem + LABEL_SUFFIX)
        label.write_text(
            json.dumps(document.truth.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8"
        )
        written += [path, label]
    return written
