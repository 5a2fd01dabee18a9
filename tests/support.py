"""Helpers to build and run jobs in-process against moto: seed documents, prepare, process, report, ticket."""

from __future__ import annotations

import http.client
import json
import time
from pathlib import Path
from typing import Any

from docagent.drills.synthetic import SyntheticDocument, generate_documents
from docagent.kit.loader import read_bundle
from docagent.kit.registry import publish
from functions import aws, s3_json, storage
from functions.actions.payloads import ActionsResult, RunActionsEvent
from functions.definition.job_spec import DefinitionBundle, canonical_json
from functions.inference import ModelProvider
from functions.logic.build_report import build_report
from functions.logic.list_documents import list_step, seal
from functions.logic.prepare_job import prepare_job
from functions.logic.process_document import process_document
from functions.logic.run_actions import run_actions
from functions.payloads.document import DocumentOutcome, ProcessDocumentEvent
from functions.payloads.job import JobOptions, ListingCursor, ListingEvent, ManifestEntry, PreparedJob
from functions.payloads.report import BuildReportEvent, MapRunInfo, ReportSummary
from functions.s3_json import parse_items
from functions.settings import get_settings
from tests.fakes import CountingProvider, FakeLambdaContext

BUCKET = "docagent-test-bucket"
IDEMPOTENCY_TABLE = "docagent-idempotency"
CUSTOMERS_TABLE = "docagent-customers"
REFERENCE_TABLE = "docagent-references"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
# The extraction replies of the synthetic invoices seed_documents wrote (by text): their labels.
SEEDED_REPLIES: dict[str, str] = {}


def example_bundle(name: str = "invoices") -> DefinitionBundle:
    return read_bundle(EXAMPLES / name)


def without_models(bundle: DefinitionBundle) -> DefinitionBundle:
    """The bundle without its cascade (job.json ``models``): the deployment's model alone, as the unit tests'
    one fake model answers (the default invoices definition names [cheap, strong] since issue #54)."""
    return bundle.model_copy(update={"definition": bundle.definition.model_copy(update={"models": None})})


def publish_definition(bundle: DefinitionBundle) -> None:
    """What `docagent definition publish` stores: the bundle under its content hash."""
    put_object(
        storage.definition_key(bundle.name, bundle.sha256),
        canonical_json(bundle.model_dump(mode="json", by_alias=True)),
    )


def unpublish_definitions() -> None:
    """Remove every published definition (the unit cloud publishes the invoice example as the default)."""
    for key in list_keys(storage.DEFINITIONS_ROOT):
        s3().delete_object(Bucket=BUCKET, Key=key)


PREFIX = "incoming/batch-1/"


def wait_for_execution(sfn: Any, execution_arn: str, *, timeout: float = 120.0) -> dict[str, Any]:
    """DescribeExecution, polled until the execution leaves RUNNING; AssertionError after ``timeout``."""
    deadline = time.time() + timeout
    while True:
        described: dict[str, Any] = sfn.describe_execution(executionArn=execution_arn)
        if described["status"] != "RUNNING":
            return described
        if time.time() > deadline:
            raise AssertionError(f"{execution_arn} still RUNNING after {timeout:.0f} s")
        time.sleep(0.2)


def run_folder_job(endpoint: str, deployed: Any, folder: Any, job_id: str) -> tuple[Any, dict[str, Any]]:
    """A job folder's documents (a ``JobFolder``) run as job ``job_id`` on the session cloud: seeded under
    ``incoming/JOB/``, started with the folder's request, its execution SUCCEEDED; (the ``LocalJob``, its
    DescribeExecution)."""
    from docagent.drills.local_job import LocalJob  # noqa: PLC0415 (the local cloud's drills: integration only)

    job = LocalJob.on(endpoint, deployed, job_id)
    prefix = f"incoming/{job.job_id}/"
    folder.seed(job, prefix)
    job.start({"job_id": job.job_id, "prefix": prefix, **folder.request()})
    described = wait_for_execution(job.sfn, job.execution_arn, timeout=180)
    assert described["status"] == "SUCCEEDED", described.get("cause")
    return job, described


def wait_until(check: Any, what: str = "the condition", *, timeout: float = 60.0) -> Any:
    """``check()`` polled until it returns something truthy (returned); AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"never saw {what} within {timeout:.0f} s")


def s3() -> Any:
    return aws.s3_client()  # cached while the environment stays the same (tests/unit/conftest.py)


def put_object(key: str, body: str | bytes, bucket: str = BUCKET) -> None:
    s3().put_object(Bucket=bucket, Key=key, Body=body.encode() if isinstance(body, str) else body)


def get_json(key: str, bucket: str = BUCKET) -> Any:
    return json.loads(s3().get_object(Bucket=bucket, Key=key)["Body"].read())


def list_keys(prefix: str, bucket: str = BUCKET) -> list[str]:
    response = s3().list_objects_v2(Bucket=bucket, Prefix=prefix)
    return [obj["Key"] for obj in response.get("Contents", [])]


def seed_documents(n: int, *, seed: int = 11, prefix: str = PREFIX) -> list[SyntheticDocument]:
    """n synthetic invoices (known customers) as {prefix}{document_id}.txt."""
    documents = generate_documents(n, seed)
    for document in documents:
        put_object(f"{prefix}{document.document_id}.txt", document.text)
        SEEDED_REPLIES[document.text] = document.truth.model_dump_json()
    return documents


def prepare(
    job_id: str,
    *,
    prefix: str | None = PREFIX,
    documents: list[str] | None = None,
    options: dict[str, Any] | None = None,
    context: FakeLambdaContext | None = None,
    definition: str | DefinitionBundle | None = None,
) -> PreparedJob:
    """A prepared job (PrepareJob, the listing, SealJob) of ``definition``: a published name, or a bundle
    published here first; by default the deployment's (DEFAULT_DEFINITION)."""
    request: dict[str, Any] = {"job_id": job_id}
    if isinstance(definition, DefinitionBundle):
        publish(s3(), BUCKET, definition)
        request["definition"] = definition.name
    elif definition is not None:
        request["definition"] = definition
    if documents is not None:
        request["documents"] = documents
    elif prefix is not None:
        request["prefix"] = prefix
    if options is not None:
        request["options"] = options
    started = prepare_job({"request": request, "execution_name": job_id}, context or FakeLambdaContext())
    return list_and_seal(started.job_id, started.listing)


def list_and_seal(job_id: str, cursor: ListingCursor | None = None) -> PreparedJob:
    """What the state machine does after PrepareJob: ListDocuments until the listing is done, then SealJob."""
    cursor = cursor or ListingCursor()
    settings = get_settings()
    while not cursor.done:
        cursor = list_step(ListingEvent(action="list", job_id=job_id, listing=cursor), settings)
    return seal(ListingEvent(action="seal", job_id=job_id, listing=cursor), settings)


def items(job: PreparedJob) -> list[ManifestEntry]:
    return parse_items(s3().get_object(Bucket=job.bucket, Key=job.items_key)["Body"].read())


def document_event(
    job: PreparedJob, entry: ManifestEntry, *, retry_count: int = 0, options: JobOptions | None = None
) -> ProcessDocumentEvent:
    return ProcessDocumentEvent(
        job_id=job.job_id, options=options or job.options, document=entry, retry_count=retry_count
    )


def seeded_provider() -> CountingProvider:
    """A provider answering the seeded synthetic invoices with their labels."""
    return CountingProvider(SEEDED_REPLIES)


def process_all(job: PreparedJob, provider: ModelProvider | None = None) -> dict[str, DocumentOutcome]:
    provider = provider or seeded_provider()
    return {
        entry.document_id: process_document(
            document_event(job, entry), FakeLambdaContext(), provider=provider
        )
        for entry in items(job)
    }


def write_result_files(
    job: PreparedJob, outcomes: dict[str, DocumentOutcome], run_id: str = "run-1"
) -> MapRunInfo:
    """What the Distributed Map's ResultWriter writes for these succeeded children (one SUCCEEDED_0.json in
    the documented shape), and the Map's output that points at it."""
    folder = f"map-runs/{run_id}/"
    arn = f"arn:aws:states:us-east-1:123456789012:mapRun:DocumentReview/documents:{run_id}"
    entries = []
    for entry in items(job):
        outcome = outcomes.get(entry.document_id)
        if outcome is None:
            continue
        child_input = {
            "job_id": job.job_id,
            "options": job.options.model_dump(mode="json"),
            "document": entry.model_dump(mode="json"),
        }
        entries.append(
            {
                "ExecutionArn": f"{arn.replace(':mapRun:', ':execution:')}:{entry.index}",
                "Input": json.dumps(child_input),
                "InputDetails": {"Included": True},
                "Output": outcome.model_dump_json(),
                "OutputDetails": {"Included": True},
                "Status": "SUCCEEDED",
            }
        )
    put_object(f"{folder}SUCCEEDED_0.json", json.dumps(entries), bucket=job.bucket)
    manifest = {
        "DestinationBucket": job.bucket,
        "MapRunArn": arn,
        "ResultFiles": {
            "FAILED": [],
            "PENDING": [],
            "SUCCEEDED": [{"Key": f"{folder}SUCCEEDED_0.json", "Size": 0}],
        },
    }
    put_object(f"{folder}manifest.json", json.dumps(manifest), bucket=job.bucket)
    return MapRunInfo.model_validate(
        {"MapRunArn": arn, "ResultWriterDetails": {"Bucket": job.bucket, "Key": f"{folder}manifest.json"}}
    )


def report(job: PreparedJob, outcomes: dict[str, DocumentOutcome] | None = None) -> ReportSummary:
    """build_report over the ResultWriter's files for these outcomes (none given: no result files)."""
    map_run = write_result_files(job, outcomes) if outcomes is not None else MapRunInfo()
    return build_report(BuildReportEvent(job_id=job.job_id, map_run=map_run))


def pin(job_id: str, bundle: DefinitionBundle) -> None:
    """Make the job's manifest pin ``bundle`` (published here), as prepare_job does for a definition."""
    publish_definition(bundle)
    manifest = s3_json.get_manifest(job_id)
    assert manifest is not None, f"job {job_id} has no manifest"
    pinned = {"definition": bundle.name, "definition_sha256": bundle.sha256}
    versions = manifest.versions.model_copy(update=pinned)
    s3_json.put_json(storage.manifest_key(job_id), manifest.model_copy(update={"versions": versions}))


def actions(job: PreparedJob, summary: ReportSummary, **event: Any) -> ActionsResult:
    """RunActions for the job."""
    return run_actions(RunActionsEvent(job_id=job.job_id, report=summary, **event), FakeLambdaContext())


def host_request(
    port: int, method: str, path: str, host: str, body: str = "", **headers: str
) -> tuple[int, dict[str, str], str]:
    """One request to 127.0.0.1:``port`` with the ``Host`` header a rebound name sends (urllib would send
    127.0.0.1's): its status, headers and body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        sent = {"Host": host, **headers}
        if body:
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        connection.request(method, path, body=body.encode() or None, headers=sent)
        reply = connection.getresponse()
        return reply.status, dict(reply.getheaders()), reply.read().decode("utf-8", "replace")
    finally:
        connection.close()


class RequestLog:
    """The requests the workers' S3 and DynamoDB clients (functions/aws.py) make while it is open, in order,
    as ``(operation, what)``: an S3 request's key (``list`` for a listing), a DynamoDB request's table. A
    botocore ``before-parameter-build`` hook: every call the SDK is asked to make (not its retries)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []

    def _record(self, model: Any, params: dict[str, Any], **_: Any) -> None:
        what = (
            params.get("TableName") if model.service_model.service_name == "dynamodb" else params.get("Key")
        )
        self.requests.append((model.name, "list" if model.name == "ListObjectsV2" else str(what or "")))

    def __enter__(self) -> RequestLog:
        for client in (aws.s3_client(), aws.dynamodb_client()):
            client.meta.events.register("before-parameter-build", self._record, unique_id=_REQUEST_LOG)
        return self

    def __exit__(self, *_: object) -> None:
        for client in (aws.s3_client(), aws.dynamodb_client()):
            client.meta.events.unregister("before-parameter-build", unique_id=_REQUEST_LOG)


_REQUEST_LOG = "tests.support.RequestLog"
