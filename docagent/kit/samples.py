"""A definition's labelled samples: ``NAME.EXT`` with ``NAME.label.json`` beside it. The local Bedrock answers
from the labels (docagent/localcloud/bedrock/labels.py); ``docagent eval`` scores against them
(docagent/evaluation/labelled_sets.py); ``definition validate`` checks them (docagent/kit/validate.py).

A label is one of two JSON objects (docs/defining-a-job.md, "Samples and labels"):

- the document's fields, as its class's schema describes them; its class is the folder it sits in
  (``samples/CLASS/NAME.EXT``), or the definition's only class;
- ``{"class": "CLASS", "fields": {...}}``: the class said in the label, so a flat folder of several classes
  works; ``{"class": null}`` says the document is of no class (it ends ``UnknownDocumentClass``).

An object whose keys are ``class`` and (optionally) ``fields`` and nothing else is the second form."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LABEL_SUFFIX = ".label.json"
SAMPLES_FOLDER = "samples"


@dataclass(frozen=True)
class LabelContent:
    """What a label says: its fields, and its class when the label says one (``says_class``; ``class_name``
    None then means no class)."""

    fields: dict[str, Any]
    says_class: bool = False
    class_name: str | None = None

    def class_in(self, folder_class: str | None, classes: Iterable[str]) -> tuple[str | None, str | None]:
        """(the sample's class, None for no class; or a problem): the label's own, else the folder's, else
        the only class."""
        known = list(classes)
        if self.says_class:
            if self.class_name is not None and self.class_name not in known:
                return None, f"class {self.class_name!r} is not one of the definition's ({', '.join(known)})"
            return self.class_name, None
        if folder_class is None and len(known) == 1:
            return known[0], None
        if folder_class not in known:
            return None, (
                f"with several classes ({', '.join(known)}) a sample sits in {SAMPLES_FOLDER}/CLASS/ or its "
                'label says its class: {"class": "CLASS", "fields": {...}}'
            )
        return folder_class, None


def read_label(data: Any) -> LabelContent | str:
    """A label's JSON read (either form), or what is wrong with it."""
    if not isinstance(data, dict):
        return 'a label is a JSON object: the document\'s fields, or {"class": CLASS, "fields": {...}}'
    if "class" in data and set(data) <= {"class", "fields"}:
        named, fields = data["class"], data.get("fields", {})
        if named is not None and not isinstance(named, str):
            return "a label's class is a class name, or null for a document of no class"
        if not isinstance(fields, dict):
            return "a label's fields are a JSON object"
        if named is None and fields:
            return "a label of no class has no fields"
        return LabelContent(fields=fields, says_class=True, class_name=named)
    return LabelContent(fields=data)


def label_problem(label: Any, schema: dict[str, Any]) -> str | None:
    """What is wrong with a label of a class of ``schema``, or None."""
    if not isinstance(label, dict):
        return "a label is a JSON object of the class's fields"
    known = set(schema.get("properties", {}))
    unknown = sorted(set(label) - known)
    if known and unknown:
        return f"fields not in the schema: {', '.join(unknown)} (known: {', '.join(sorted(known))})"
    return None


def label_path(sample: Path) -> Path:
    """``NAME.EXT`` -> ``NAME.label.json`` beside it (the local model's answer for that document)."""
    return sample.with_name(sample.name.split(".", 1)[0] + LABEL_SUFFIX)


def sample_documents(folder: Path) -> list[Path]:
    """The folder's samples that have a label (samples/NAME.EXT or samples/CLASS/NAME.EXT), in name order."""
    root = folder / SAMPLES_FOLDER
    if not root.is_dir():
        return []
    return sorted(
        path
        for path in root.rglob("*")
        if path.is_file() and not path.name.endswith(LABEL_SUFFIX) and label_path(path).is_file()
    )
