"""The reading of a job's batch output records: a document's durable model step takes its batch reply instead
of calling the model (docs/batch.md). The reply is used only when the record's system prompt and text equal
the call's (functions/batch_inference/input_records.py wrote the call the on-demand path would make). A
record that
failed, a missing output (the job failed, expired, was stopped, or was never submitted) or a record of another
call leaves the call to the on-demand provider: every document ends with one result."""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

from functions import s3_json, storage
from functions.batch_inference.facts import TERMINAL_STATUSES
from functions.batch_inference.payloads import BatchJobRecord
from functions.batch_inference.plan import clear_caches as clear_plan_caches
from functions.batch_inference.plan import plan_of
from functions.inference.base import ModelProvider
from functions.inference.converse import read_reply
from functions.observability import logger
from functions.payloads.model_calls import ModelReply
from functions.reading.documents import DocumentInput
from functions.settings import get_settings


def record_id(document_id: str) -> str:
    """A document's record id: 11 alphanumeric characters from its id (Bedrock's record ids are
    alphanumeric), stable across retries and redrives."""
    return hashlib.sha256(document_id.encode("utf-8")).hexdigest()[:11]


def get_batch_job(job_id: str, part: int) -> BatchJobRecord | None:
    data = s3_json.get_json_or_none(storage.batch_job_key(job_id, part))
    return None if data is None else BatchJobRecord.model_validate(data)


@functools.lru_cache(maxsize=256)
def _finished_batch_job(bucket: str, job_id: str, part: int) -> BatchJobRecord | None:
    record = get_batch_job(job_id, part)
    if record is None or record.status not in TERMINAL_STATUSES:
        raise LookupError("not finished")  # not cached: the job may finish yet
    return record


def finished_batch_job(job_id: str, part: int) -> BatchJobRecord | None:
    """A part's batch job once it ended (read once per warm container), else None."""
    try:
        return _finished_batch_job(get_settings().bucket_name, job_id, part)
    except LookupError:
        return None


def output_line(job_id: str, index: int, document_id: str) -> dict[str, Any] | None:
    """The document's output line of its part's finished batch job, or None (no plan, job, file or line)."""
    batch_plan = plan_of(job_id)
    if batch_plan is None:
        return None
    part = batch_plan.part_of(index)
    batch = finished_batch_job(job_id, part)
    if batch is None or batch.bedrock_job_id is None:
        return None
    key = storage.batch_output_key(job_id, part, batch.bedrock_job_id, document_id)
    try:
        body = s3_json.get_bytes(key)
    except s3_json.ObjectNotFound:
        return None
    wanted = record_id(document_id)
    for text in body.decode("utf-8").splitlines():
        try:
            line = json.loads(text)
        except ValueError:
            continue
        if isinstance(line, dict) and line.get("recordId") == wanted:
            return line
    return None


def _texts(model_input: Any) -> tuple[str, str]:
    """The system prompt and the user text of a record's Converse body ("" where absent)."""
    if not isinstance(model_input, dict):
        return "", ""
    system = "".join(
        block.get("text", "") for block in model_input.get("system", []) if isinstance(block, dict)
    )
    content = (model_input.get("messages") or [{}])[0].get("content", [])
    user = "".join(block.get("text", "") for block in content if isinstance(block, dict))
    return system, user


class BatchReplies:
    """A ModelProvider that answers a document's call from its batch output record when the record is that
    call's and succeeded, and from ``inner`` (an on-demand call) otherwise."""

    def __init__(self, inner: ModelProvider, job_id: str, index: int, document_id: str) -> None:
        self._inner, self._job_id, self._document_id = inner, job_id, document_id
        self._index = index

    @property
    def system(self) -> str:
        return self._inner.system

    @property
    def operation(self) -> str:
        return self._inner.operation

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def on_demand(self) -> ModelProvider:
        """The on-demand provider: a packet's calls (functions/reading/sections.py) read parts of the
        document, which its whole document's batch record does not answer."""
        return self._inner

    def converse(self, document: DocumentInput, system: str, user: str) -> ModelReply:
        line = output_line(self._job_id, self._index, self._document_id)
        if line is not None and _texts(line.get("modelInput")) == (system, user):
            output = line.get("modelOutput")
            if isinstance(output, dict):
                logger.info("model reply from the batch job's output record")
                return read_reply(output, self.model_id, get_settings().model_max_tokens, "batch")
            logger.warning("batch record failed: calling on-demand", extra={"batch_error": line.get("error")})
        return self._inner.converse(document, system, user)


def clear_caches() -> None:
    _finished_batch_job.cache_clear()
    clear_plan_caches()
