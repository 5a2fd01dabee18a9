"""A definition's labelled samples: ``NAME.EXT`` with ``NAME.label.json`` beside it (the document's expected
JSON, a JSON object of its class's fields); with several classes a sample sits in ``samples/CLASS/``. The
local Bedrock answers from the labels (docagent/localcloud/bedrock/labels.py); ``docagent eval`` scores
against them
(docagent/evaluation/labelled_sets.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

LABEL_SUFFIX = ".label.json"
SAMPLES_FOLDER = "samples"


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
