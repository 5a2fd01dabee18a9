"""A job's request, options, manifest and the payloads of preparing and listing it (docs/design.md)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from functions.payloads.common import (
    DOCUMENT_ID_PATTERN,
    JOB_ID_PATTERN,
    FaultPointName,
    Inference,
    StrictModel,
)


class FaultSpec(StrictModel):
    """Where and how to inject a fault (only honoured when FAULT_INJECTION_ENABLED=true)."""

    point: FaultPointName
    document_index: int | None = Field(None, ge=0)
    action: str | None = Field(
        None, description="at the action points: fire only for this action (default: every action)"
    )
    mode: Literal["exit", "raise", "hang"] = "raise"
    times: int | None = Field(
        None,
        ge=1,
        description="fire at most this many times (per document, action or part), counted durably: the first "
        "arrivals at the point fire, whatever their attempt",
    )
    until_retry: int | None = Field(None, ge=0, description="fire only while retry_count < until_retry")
    until_redrive: int | None = Field(
        None, ge=0, description="fire only while the execution's redrive count < until_redrive"
    )

    @model_serializer(mode="wrap")
    def _without_unset_times(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A spec that leaves ``times`` unset dumps (and hashes) as before the key existed."""
        data: dict[str, Any] = handler(self)
        if data.get("times") is None:
            data.pop("times", None)
        return data


class JobOptions(StrictModel):
    """The request's options, normalised: every key present."""

    fault: FaultSpec | None = None
    require_approval: bool = Field(
        False, description="wait for `docagent approve` before the actions (the RequestApproval step)"
    )
    max_cost_usd: float | None = Field(
        None,
        gt=0,
        description="the job's budget in US dollars: no model call starts that would pass it",
    )
    inference: Inference = Field(
        "on_demand",
        description="on_demand, batch (Bedrock batch inference) or auto (batch above its minimum)",
    )
    wait_for_review: bool | None = Field(
        None,
        description="the report and actions wait for the review queue; null: the definition's review.wait "
        "(SealJob sets it)",
    )

    @model_serializer(mode="wrap")
    def _without_unset_wait(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A request that leaves ``wait_for_review`` unset dumps (and hashes) as before the key existed."""
        data: dict[str, Any] = handler(self)
        if data.get("wait_for_review") is None:
            data.pop("wait_for_review", None)
        return data

    @model_validator(mode="before")
    @classmethod
    def _legacy_approval_key(cls, value: Any) -> Any:
        """``approval`` was reserved (always null) before ``require_approval``: accept it when null, so
        requests and events stored before the change still validate; anything else is a mistake."""
        if isinstance(value, dict) and "approval" in value:
            if value["approval"] is not None:
                raise ValueError("'approval' is no longer used: set 'require_approval': true")
            value = {name: item for name, item in value.items() if name != "approval"}
        return value


class JobRequest(StrictModel):
    """The execution input: exactly one of ``prefix`` or ``documents``."""

    job_id: str = Field(pattern=JOB_ID_PATTERN)
    prefix: str | None = Field(None, min_length=1, max_length=1024)
    documents: list[Annotated[str, Field(min_length=1, max_length=1024)]] | None = None
    bucket: str | None = Field(None, min_length=3, max_length=63)
    # The published job definition to run (functions/definition/job_spec.py), by name; null: the deployment's
    # DEFAULT_DEFINITION. PrepareJob pins the version that is current when the job starts.
    definition: str | None = Field(None, pattern=r"^[a-z0-9][a-z0-9-]{0,62}$")
    options: JobOptions = Field(default_factory=JobOptions)

    @model_validator(mode="after")
    def _exactly_one_source(self) -> JobRequest:
        if (self.prefix is None) == (self.documents is None):
            raise ValueError("exactly one of 'prefix' or 'documents' is required")
        if self.prefix is not None and not self.prefix.endswith("/"):
            raise ValueError("'prefix' must end with '/'")
        if self.documents is not None and len(set(self.documents)) != len(self.documents):
            raise ValueError("'documents' lists the same key more than once")
        return self


class ManifestEntry(StrictModel):
    """One item of items.json, pinned without reading the document: ``version_id`` (versioned bucket) or
    ``etag`` (the object's ETag at listing time); ``size``/``version_id``/``etag`` are null when the object
    was missing. ``sha256`` is set only by manifests from before pinning (the child hashes what it reads)."""

    document_id: str = Field(pattern=DOCUMENT_ID_PATTERN)
    key: str = Field(min_length=1)
    index: int = Field(ge=0)
    size: int | None = Field(None, ge=0)
    sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    version_id: str | None = Field(None, min_length=1, max_length=1024)
    etag: str | None = Field(None, min_length=1, max_length=1024)


class JobVersions(StrictModel):
    """What a job is pinned to, so results are reproducible and explainable."""

    model_id: str
    prompt_version: str
    prompt_sha256: str
    code_version: str
    created_at: str
    # The job definition (functions/definition/job_spec.py) the job runs, by name and content hash: every step
    # reads that bundle (s3_json.get_definition). Null only in jobs prepared before definitions existed.
    definition: str | None = None
    definition_sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")


class PreparedJob(StrictModel):
    """prepare_job's output (the Distributed Map reads ``bucket``/``items_key``)."""

    job_id: str = Field(pattern=JOB_ID_PATTERN)
    bucket: str
    manifest_key: str
    items_key: str
    document_count: int = Field(ge=1)
    options: JobOptions
    versions: JobVersions


class JobInfo(StrictModel):
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    source_bucket: str
    prefix: str | None
    request_sha256: str


class JobManifest(StrictModel):
    """jobs/{job_id}/manifest.json: written last (by SealJob), never changed afterwards. A summary: the
    entries are in ``parts`` (JSON Lines, s3_json.manifest_entries reads them); manifests from before the
    paged listing carry them inline in ``entries`` instead."""

    job: JobInfo
    versions: JobVersions
    entries: list[ManifestEntry] = Field(default_factory=list)
    parts: list[str] = Field(default_factory=list)
    document_count: int | None = Field(None, ge=0)
    items_key: str | None = None

    @property
    def count(self) -> int:
        return len(self.entries) if self.document_count is None else self.document_count


class ListingCursor(StrictModel):
    """Where the listing of a job stands, carried by the state machine between ListDocuments steps: the part
    the next step writes (or continues), the documents listed before it, and whether the listing is done."""

    part: int = Field(0, ge=0)
    documents: int = Field(0, ge=0)
    done: bool = False


class ListingPart(StrictModel):
    """jobs/{job_id}/listing/part-NNNNN.json: the durable record of one part of the items. Written after the
    part's JSONL (``bytes`` of it are the part); ``complete`` once the part holds at least the minimum part
    size or the listing ended (``last``); ``next_*``: where the listing goes on after the part."""

    part: int = Field(ge=0)
    first_index: int = Field(ge=0)
    count: int = Field(ge=0)
    bytes: int = Field(ge=0)
    pages: int = Field(ge=0)
    complete: bool
    last: bool
    next_key_marker: str | None = None
    next_version_id_marker: str | None = None


class StartedJob(StrictModel):
    """PrepareJob's output: the request is validated and stored, the listing starts at ``listing``."""

    job_id: str = Field(pattern=JOB_ID_PATTERN)
    bucket: str
    options: JobOptions
    listing: ListingCursor = Field(default_factory=ListingCursor)


class ListingEvent(StrictModel):
    """ListDocuments (``action: list``) and SealJob (``action: seal``): the job and the cursor."""

    action: Literal["list", "seal"]
    job_id: str = Field(pattern=JOB_ID_PATTERN)
    listing: ListingCursor


class StoredRequest(StrictModel):
    """jobs/{job_id}/request.json."""

    request: JobRequest
    request_sha256: str
    received_at: str
    # The definition PrepareJob pinned (the request's, else DEFAULT_DEFINITION; its current version then):
    # SealJob writes it into the manifest's JobVersions. Null: no definition (the PROMPT_VERSION file).
    definition: str | None = None
    definition_sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")


class PrepareJobEvent(StrictModel):
    request: dict[str, Any]
    execution_name: str
