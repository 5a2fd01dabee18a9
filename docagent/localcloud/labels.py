"""What the local Bedrock answers for any job definition: a document's label, found by its bytes' sha256.

A label is the expected JSON of a sample document: ``NAME.EXT`` with ``NAME.label.json`` beside it
(docagent/evaluation/samples.py's convention; with several classes a sample sits in ``samples/CLASS/``). It
is registered with a running local cloud (``docagent local labels DIR``, ``register_labels``; ``docagent
start --from-dir DIR`` registers the labels it finds) and kept in the cloud's state folder, so a restart keeps
it and ``local up --fresh`` forgets it. The local Bedrock answers an extract call with the label's fields and
a classify call with its class; a document with no label is refused with how to add one (``no_label``).

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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter

from docagent.kit.loader import DefinitionInvalid, read_bundle
from docagent.kit.samples import LABEL_SUFFIX, SAMPLES_FOLDER, label_problem
from functions.definition import DEFINITION_FILE

LABELS_PATH = "/_docagent/bedrock/labels"
LABELS_FILE = "labels.json"


class Label(BaseModel):
    """One document's expected answer: its fields (an extract call) and its class (a classify call)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="of the document's bytes")
    class_name: str | None = Field(None, description="None: the definition's only class")
    fields: dict[str, JsonValue]
    source: str = Field("", description="the document's path when it was registered")


_LABELS = TypeAdapter(list[Label])


class LabelsInvalid(ValueError):  # noqa: N818 (the labels are invalid: the name reads as the outcome)
    """A folder whose labels cannot be registered; ``problems`` holds one line per problem."""

    def __init__(self, folder: Path, problems: list[str]) -> None:
        super().__init__(f"{folder}: {len(problems)} problem(s): " + "; ".join(problems))
        self.problems = problems


def no_label(sha256: str) -> str:
    """Why the local Bedrock cannot answer a document, and how to make it."""
    return (
        f"no label for this document (sha256 {sha256}): put NAME.label.json beside it and run "
        "`docagent local labels DIR`"
    )


def document_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class LabelStore:
    """The labels a local cloud holds, by document sha256; saved whole to ``path`` on every change."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._labels: dict[str, Label] = {}
        self._path: Path | None = None

    def attach(self, path: Path | None) -> None:
        """Keep the labels in ``path`` (None: in memory only) and load what it holds."""
        with self._lock:
            self._path = path
            self._labels = {}
            if path is not None and path.exists():
                saved = _LABELS.validate_json(path.read_bytes())
                self._labels = {label.sha256: label for label in saved}

    def add(self, labels: Iterable[Label]) -> int:
        with self._lock:
            for label in labels:
                self._labels[label.sha256] = label
            self._save()
            return len(self._labels)

    def clear(self) -> None:
        with self._lock:
            self._labels.clear()
            self._save()

    def get(self, sha256: str) -> Label | None:
        with self._lock:
            return self._labels.get(sha256)

    def __len__(self) -> int:
        with self._lock:
            return len(self._labels)

    def _save(self) -> None:
        if self._path is None:
            return
        self._path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self._path.with_name(f".{self._path.name}.{os.getpid()}")
        temporary.write_bytes(_LABELS.dump_json(list(self._labels.values())))
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


def read_labels(folder: str | Path) -> list[Label]:
    """The labels of a folder of samples, or of a definition folder (its ``samples/``, classes known):
    every ``NAME.label.json`` with its one ``NAME.EXT``. A document in a subfolder is of the class the
    subfolder names; with one class, of that class. Documents with no label are left out (the local Bedrock
    refuses them, saying how to add one). Refused (LabelsInvalid) naming every bad label."""
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
            fields = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as error:
            problems.append(f"{shown}: not JSON ({error})")
            continue
        relative = found[0].relative_to(samples)
        class_name: str | None = relative.parts[0] if len(relative.parts) > 1 else None
        if classes is not None:
            if class_name is None and len(classes) == 1:
                class_name = next(iter(classes))
            if class_name not in classes:
                problems.append(
                    f"{shown}: a sample sits in {SAMPLES_FOLDER}/CLASS/ with several classes "
                    f"({', '.join(classes)})"
                )
                continue
            problem = label_problem(fields, classes[class_name])
        else:
            problem = None if isinstance(fields, dict) else "a label is a JSON object of the class's fields"
        if problem:
            problems.append(f"{shown}: {problem}")
            continue
        labels.append(
            Label(
                sha256=document_sha256(found[0].read_bytes()),
                class_name=class_name,
                fields=fields,
                source=str(found[0]),
            )
        )
    if problems:
        raise LabelsInvalid(root, problems)
    return labels


# ---------------------------------------------------------------------------------- a running local cloud


def _call(endpoint: str, method: str, payload: Any = None) -> dict[str, Any]:
    data = None if payload is None else json.dumps(payload).encode()
    request = urllib.request.Request(
        endpoint.rstrip("/") + LABELS_PATH,
        data=data,
        method=method,
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        answer: dict[str, Any] = json.loads(response.read())
    return answer


def post_labels(endpoint: str, labels: list[Label]) -> dict[str, Any]:
    """Register ``labels`` with the local cloud at ``endpoint``: {"added": N, "labels": held}."""
    return _call(endpoint, "POST", {"labels": [label.model_dump(mode="json") for label in labels]})


def register_labels(endpoint: str, folder: str | Path) -> int:
    """Register the labels of ``folder`` (read_labels) with the local cloud; the number registered."""
    labels = read_labels(folder)
    if labels:
        post_labels(endpoint, labels)
    return len(labels)


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
