"""Recordings: what a model replied for a document, kept to be replayed offline (``NAME.recording.json``
beside a labelled sample; docagent/localcloud/bedrock/labels.py registers and replays them).

A ``Recording`` names its document by the sha256 of its bytes and holds, per call, its purpose, class, reply
text and the usage the model billed. ``recordings_of`` makes them from a finished job's journal
(``scripts/record_replies.py``, ``--record``), ``write_recordings`` writes them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

RECORDING_SUFFIX = ".recording.json"


class RecordedReply(BaseModel):
    """One call's reply text as the model gave it."""

    model_config = ConfigDict(extra="forbid", frozen=True, serialize_by_alias=True)

    purpose: Literal["extract", "classify", "classify-pages"]
    class_name: str | None = Field(
        None,
        validation_alias=AliasChoices(
            "class", "class_name"
        ),  # ``class`` as in a label; the old spelling read
        serialization_alias="class",
        description="the class extracted (null for a classify call)",
    )
    reply: str
    input_tokens: int | None = Field(
        None, ge=0, description="the model's usage as it answered (a replay bills it)"
    )
    output_tokens: int | None = Field(None, ge=0)


class Recording(BaseModel):
    """The replies recorded for one document (a ``NAME.recording.json``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="of the document's bytes")
    replies: list[RecordedReply] = Field(min_length=1)
    source: str = ""

    def reply_to(self, purpose: str, class_name: str | None) -> RecordedReply | None:
        """The recorded reply of a call (an extract call of no known class: the first extract reply)."""
        for recorded in self.replies:
            if recorded.purpose == purpose and (class_name is None or recorded.class_name == class_name):
                return recorded
        return None


def recordings_of(
    results: Mapping[str, BaseModel], calls: Mapping[str, Sequence[BaseModel]]
) -> list[Recording]:
    """A finished job's model calls as recordings (``results`` and ``calls`` by document id, as JobRecords
    reads them): per document whose result holds the sha256 of its bytes, each call that returned fields,
    its reply the fields as JSON. The journal keeps a reply parsed, not its text: replayed, it is the same
    answer (a classify call's fields are ``{"class": NAME}``)."""
    recordings: list[Recording] = []
    for document_id, result in sorted(results.items()):
        found = result.model_dump(mode="json")
        if not found.get("sha256"):
            continue
        replies = []
        for call in calls.get(document_id, []):
            record = call.model_dump(mode="json")
            fields = record.get("fields", record.get("facts"))
            if not isinstance(fields, dict) or record.get("window"):
                continue  # no fields; or a long PDF's page window, which a recording does not replay (#41)
            purpose = record.get("purpose", "extract")
            class_name = record.get("class_name") if purpose == "extract" else None
            # the call's usage as billed; a record without it (0 input tokens: the default) replays estimated
            billed = bool(record.get("input_tokens"))
            replies.append(
                RecordedReply(
                    purpose=purpose,
                    class_name=class_name,
                    reply=json.dumps(fields),
                    input_tokens=record.get("input_tokens") if billed else None,
                    output_tokens=record.get("output_tokens") if billed else None,
                )
            )
        if replies:
            source = str(found.get("key") or document_id)
            recordings.append(Recording(sha256=found["sha256"], replies=replies, source=source))
    return recordings


def write_recordings(directory: str | Path, recordings: list[Recording]) -> list[Path]:
    """Each recording as ``NAME-SHA.recording.json`` in ``directory`` (NAME: its document's file name)."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    written = []
    for recording in recordings:
        stem = Path(recording.source).stem or "document"
        path = root / f"{stem}-{recording.sha256[:12]}{RECORDING_SUFFIX}"
        path.write_text(recording.model_dump_json(indent=2) + "\n", encoding="utf-8")
        written.append(path)
    return written
