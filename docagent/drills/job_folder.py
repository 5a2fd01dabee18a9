"""A definition folder run on the local cloud: ``docagent demo --job PATH`` and ``docagent chaos --job PATH``.

Before its job starts, the folder is validated (every problem named, nothing started), published to the
deployment's bucket as a version (``docagent definition publish``: no deploy), its samples' labels are
registered with the local Bedrock (which answers each sample's extract and classify calls from its label),
its ``references/*.csv`` are loaded into the deployment's reference table (as ``docagent reference load``
loads them), and its samples are uploaded. The job then runs with ``definition`` = the folder's name, and
pins that version.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docagent.kit.reference_files import reference_files

# Built by kit-cli (definition publish) and kit-localmodel (labels): present once their branches merge.
from docagent.kit.registry import checked_bundle, publish
from docagent.kit.samples import LABEL_SUFFIX, SAMPLES_FOLDER, label_path, read_label, sample_documents
from docagent.localcloud.bedrock.labels import register_labels
from docagent.operations.reference import load_file
from functions import storage
from functions.definition.job_spec import DefinitionBundle, short_version
from stacks import outputs as names

if TYPE_CHECKING:
    from docagent.drills.local_job import LocalJob
from docagent.drills.demo_corpus import Truth


@dataclass(frozen=True)
class JobFolder:
    """A validated definition folder and its labelled samples."""

    path: Path
    bundle: DefinitionBundle
    documents: tuple[Path, ...]

    @property
    def name(self) -> str:
        return self.bundle.name

    @classmethod
    def read(cls, path: str | Path, *, calibrating: bool = False) -> JobFolder:
        """The folder, validated as ``docagent definition validate`` does; a ValueError naming every problem
        (DefinitionInvalid), or saying the folder has no labelled sample to run. ``calibrating`` (``eval
        --calibrate``): a precision target without its fit is allowed."""
        folder = Path(path)
        bundle: DefinitionBundle = checked_bundle(folder, calibrating=calibrating)
        documents = tuple(sample_documents(folder))
        if not documents:
            raise ValueError(
                f"{folder} has no sample to run: put documents under {SAMPLES_FOLDER}/ (in CLASS/ folders "
                f"with several classes), each with NAME{LABEL_SUFFIX} beside it (the JSON the local model "
                "answers)"
            )
        return cls(folder, bundle, documents)

    def key(self, prefix: str, document: Path) -> str:
        return storage.uploaded_key(prefix, document.relative_to(self.path / SAMPLES_FOLDER).as_posix())

    def request(self) -> dict[str, Any]:
        """What a job's start request adds to run this definition."""
        return {"definition": self.name}

    def seed(self, job: LocalJob, prefix: str) -> dict[str, Truth]:
        """Publish the definition, register the labels, load the references and upload the samples on the
        local cloud of ``job``. The truth of the invoice corpus has no counterpart here (the labels are the
        truth, and ``summary`` compares the results with them): none is returned."""
        if job.ctx.endpoint is None:
            raise ValueError("a definition folder runs on the local cloud only")
        publish(job.s3, job.bucket, self.bundle, by="docagent demo")
        register_labels(job.ctx.endpoint, self.path)
        table_name = job.ctx.output(names.REFERENCE_TABLE)
        for reference in reference_files(self.path, self.bundle):  # as `docagent reference load` loads it
            load_file(job.dynamodb, table_name, reference.table, reference.path, reference.key_field)
        for document in self.documents:
            job.s3.put_object(Bucket=job.bucket, Key=self.key(prefix, document), Body=document.read_bytes())
        return {}

    def summary(self, job: LocalJob, prefix: str) -> dict[str, Any]:
        """The demo's figures of this definition's job, its samples uploaded under ``prefix``: the
        ``definition`` object, and the extraction accuracy against the labels (top-level fields equal to the
        label's, over every sample), overall and by format (the sample's extension)."""
        job.records.refresh()
        results = {str(result.key): result.model_dump(mode="json") for result in job.records.results.values()}
        scored: dict[str, list[int]] = {}
        differing = []
        for document in self.documents:
            result = results.get(self.key(prefix, document)) or {}
            tally = scored.setdefault(document.suffix.lstrip(".") or "txt", [0, 0])
            for label, fields in _labelled_fields(
                job, result, json.loads(label_path(document).read_text("utf-8"))
            ):
                tally[0] += sum(fields.get(name) == value for name, value in label.items())
                tally[1] += len(label)
                if fields != label:
                    differing.append(document.relative_to(self.path).as_posix())
        correct, total = (sum(tally[i] for tally in scored.values()) for i in (0, 1))
        return {
            "definition": folder_summary(job, self, list(results.values()), differing),
            "extraction_accuracy": round(correct / total, 4) if total else 0.0,
            "extraction_accuracy_by_format": {
                fmt: round(right / count, 4) if count else 0.0
                for fmt, (right, count) in sorted(scored.items())
            },
            "documents_by_format": dict(
                sorted(Counter(doc.suffix.lstrip(".") or "txt" for doc in self.documents).items())
            ),
        }


def _labelled_fields(
    job: LocalJob, result: dict[str, Any], label: dict[str, Any]
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(a label's fields, the fields the job extracted) of a document, or of each section of a packet (its
    label says its sections: docagent/kit/samples.py; a section's result is read by its pages)."""
    content = read_label(label)
    if isinstance(content, str) or not content.sections:
        fields = content.fields if not isinstance(content, str) else label
        return [(fields, result.get("fields") or {})]
    pairs = []
    for section in content.sections:
        found: dict[str, Any] = {}
        if result.get("document_id"):
            key = storage.section_result_key(job.job_id, result["document_id"], section.section_id)
            found = (job.records.read_json(key) or {}).get("fields") or {}
        pairs.append((section.fields, found))
    return pairs


def folder_summary(
    job: LocalJob, folder: JobFolder, results: list[dict[str, Any]], differing: list[str]
) -> dict[str, Any]:
    """What the job of a definition folder did, from its durable records: the version it pinned, results by
    outcome and class, the packets' sections (listed by their documents' results, and stored), the samples
    whose fields differ from their labels, classify and extract calls, the totals, and each action's outcome
    and attempts."""
    calls = [call.model_dump(mode="json") for calls in job.records.model_calls.values() for call in calls]
    report = job.records.read_json(storage.report_key(job.job_id)) or {}
    pinned = (report.get("versions") or {}).get("definition_sha256")
    actions = []
    for action in report.get("actions") or []:
        done_key = storage.action_done_key(job.job_id, action["name"])
        done = job.records.read_json(done_key) or {}
        actions.append({**action, "attempts": done.get("attempts")})
    return {
        "name": folder.name,
        "version": short_version(folder.bundle.sha256),
        "pinned": short_version(str(pinned)) if pinned else None,
        "samples": len(folder.documents),
        "results_by_status": dict(sorted(Counter(str(r["status"]) for r in results).items())),
        "results_by_class": dict(  # a packet's: its sections'
            sorted(
                Counter(
                    str(part.get("class_name")) for r in results for part in (r.get("sections") or [r])
                ).items()
            )
        ),
        "sections": sum(len(r.get("sections") or []) for r in results),
        "section_results": sum(
            job.records.read_json(
                storage.section_result_key(job.job_id, r["document_id"], part["section_id"])
            )
            is not None
            for r in results
            for part in r.get("sections") or []
        ),
        "fields_differing_from_label": sorted(differing),
        "model_calls_by_purpose": dict(
            sorted(Counter(str(c.get("purpose", "extract")) for c in calls).items())
        ),
        "totals": report.get("totals"),
        "actions": actions,
        "actions_declared": [action.name for action in folder.bundle.definition.actions],
    }
