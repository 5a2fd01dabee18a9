"""The local ticket service (a real HTTP service on 127.0.0.1 with a SQLite store), the http action's client
against it, and RunActions through the deployed function on the local cloud: the ticket service as the
destination ``tickets``, EventBridge and SNS through the local cloud's moto, an export, each once."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from docagent.localcloud.cfn_template import CloudAssembly, DeployError
from docagent.localcloud.deploy import Deployer
from docagent.localcloud.ticket_service import LOCAL_TOPIC_ARN, TICKET_API_URL_PARAMETER, TicketService
from functions.actions.http_call import HttpClient
from functions.definition.action_specs import EventBridgeAction, ExportAction, HttpAction, SnsAction
from functions.definition.job_spec import DefinitionBundle
from functions.errors import (
    ActionConflict,
    ActionError,
    ActionInvalidResponse,
    ActionOutcomeUnknown,
    ActionTargetUnavailable,
)
from functions.payloads.job import JobInfo, JobManifest, JobVersions
from functions.payloads.report import MapRunSummary, Report
from tests.support import example_bundle, host_request

PAYLOAD: dict[str, Any] = {"reference": "job-1", "title": "Review of job-1", "body": "3 documents"}


@pytest.fixture
def service(tmp_path: Path):
    with TicketService(tmp_path / "tickets.sqlite3") as running:
        yield running


def http(
    method: str, url: str, body: dict[str, Any] | None = None, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    request = urllib.request.Request(
        url,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def post_ticket(service: TicketService, key: str | None, **body: str) -> tuple[int, Any]:
    fields = {"reference": "job-1", "title": "t", "body": "b", **body}
    return http("POST", f"{service.url}/tickets", fields, {"Idempotency-Key": key} if key else {})


# --------------------------------------------------------------------------------------------- the API


def test_same_key_and_body_is_the_same_ticket_another_body_is_409(service):
    created, ticket = post_ticket(service, "key-1")
    again, same = post_ticket(service, "key-1")
    conflict, error = post_ticket(service, "key-1", body="another body")
    other, second = post_ticket(service, "key-2")

    assert (created, again, conflict, other) == (201, 200, 409, 201)
    assert same == ticket and second["id"] != ticket["id"]
    assert error["ticket_id"] == ticket["id"]
    assert [t["id"] for t in service.tickets("job-1")] == [ticket["id"], second["id"]]


def test_tickets_are_found_by_reference_and_by_id(service):
    _, first = post_ticket(service, "a", reference="job-a")
    post_ticket(service, "b", reference="job-b")
    assert http("GET", f"{service.url}/tickets?reference=job-a") == (200, {"tickets": [first]})
    assert http("GET", f"{service.url}/tickets/{first['id']}") == (200, first)
    assert http("GET", f"{service.url}/tickets/TKT-999999")[0] == 404
    assert len(http("GET", f"{service.url}/tickets")[1]["tickets"]) == 2


def test_a_malformed_ticket_is_refused(service):
    assert http("POST", f"{service.url}/tickets", {"reference": "job-1"})[0] == 400


def test_a_web_page_gets_no_ticket(service):
    """Issue #49: the ticket service answers this machine's clients, no web page (rebound name, Origin)."""
    assert post_ticket(service, "k-own")[0] == 201
    port = int(service.url.rsplit(":", 1)[1])
    for host, headers in (
        (f"evil.example:{port}", {}),
        (f"127.0.0.1:{port}", {"Origin": "http://evil.example"}),
    ):
        status, _, body = host_request(port, "GET", "/tickets?reference=job-1", host, **headers)
        assert status in (403, 421) and "job-1" not in body, (host, headers)
    status, _, _ = host_request(
        port, "POST", "/tickets", f"127.0.0.1:{port}", "{}", **{"Content-Length": "-1"}
    )
    assert status == 400


def test_the_store_survives_a_restart_of_the_service(service, tmp_path):
    _, ticket = post_ticket(service, "key-1")
    url = service.url
    service.restart()
    assert service.url == url, "the port is kept, so a deployed URL stays valid"
    assert post_ticket(service, "key-1") == (200, ticket)
    service.stop()
    with TicketService(tmp_path / "tickets.sqlite3") as another:
        assert another.tickets() == [ticket]


def test_faults_are_switched_over_http(service):
    status, faults = http("POST", f"{service.url}/_faults", {"fail_requests": 1})
    assert status == 200 and faults["fail_requests"] == 1
    assert post_ticket(service, "k")[0] == 503
    assert post_ticket(service, "k")[0] == 201, "a burst of one"
    assert http("POST", f"{service.url}/_faults", {"nonsense": 1})[0] == 400
    assert http("POST", f"{service.url}/_faults", {"clear": True})[1]["fail_requests"] == 0


# ------------------------------------------------------------------------------- the client, per switch


def client(service: TicketService, **options: Any) -> HttpClient:
    return HttpClient(f"{service.url}/tickets", **options)


def test_client_creates_then_returns_the_same_record(service):
    first = client(service).create("docagent-job-1-ticket", PAYLOAD)
    second = client(service).create("docagent-job-1-ticket", PAYLOAD)
    assert (first.created, second.created, second.id) == (True, False, first.id)
    assert [record.id for record in client(service).find_by_reference("job-1")] == [first.id]
    with pytest.raises(ActionConflict):
        client(service).create("docagent-job-1-ticket", {**PAYLOAD, "body": "changed"})


def test_accept_then_drop_is_an_unknown_outcome_with_the_record_created(service):
    service.set_faults(drop_responses=1)
    with pytest.raises(ActionOutcomeUnknown, match="no answer"):
        client(service).create("k", PAYLOAD)
    assert len(service.tickets("job-1")) == 1


def test_a_5xx_burst_shorter_than_the_retries_is_absorbed(service):
    service.set_faults(fail_requests=2)
    record = client(service, backoff_seconds=0.01).create("k", PAYLOAD)
    assert record.created and len(service.tickets()) == 1


def test_a_5xx_burst_longer_than_the_retries_is_action_target_unavailable(service):
    service.set_faults(fail_requests=10)
    with pytest.raises(ActionTargetUnavailable, match="after 3 attempt"):
        client(service, backoff_seconds=0.01).create("k", PAYLOAD)
    assert service.tickets() == [] and service.faults()["fail_requests"] == 7


def test_a_slow_answer_past_the_client_timeout_is_an_unknown_outcome(service):
    service.set_faults(delay_seconds=0.6, delay_requests=1)
    started = time.monotonic()
    with pytest.raises(ActionOutcomeUnknown, match="timed out"):
        client(service, timeout_seconds=0.2).create("k", PAYLOAD)
    assert time.monotonic() - started < 0.5
    deadline = (
        time.monotonic() + 10
    )  # the service finishes the slow request on its own (a loaded machine: later)
    while not service.tickets() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(service.tickets()) == 1, "the slow request still did its work"
    assert client(service).create("k", PAYLOAD).created is False


def test_garbage_is_action_invalid_response(service):
    service.set_faults(garbage_responses=2)
    with pytest.raises(ActionInvalidResponse, match="non-JSON"):
        client(service).create("k", PAYLOAD)
    with pytest.raises(ActionInvalidResponse):
        client(service).find_by_reference("job-1")


def test_rejecting_idempotency_keys_makes_a_repeat_a_second_record(service):
    service.set_faults(reject_idempotency_keys=True)
    first, second = client(service).create("k", PAYLOAD), client(service).create("k", PAYLOAD)
    assert first.id != second.id and second.created


def test_a_token_is_sent_as_a_bearer_header(tmp_path):
    with TicketService(tmp_path / "t.sqlite3", token="s3cr3t") as guarded:
        with pytest.raises(ActionError, match="401") as raised:
            HttpClient(f"{guarded.url}/tickets").create("k", PAYLOAD)
        assert "s3cr3t" not in str(raised.value)
        assert HttpClient(f"{guarded.url}/tickets", token=lambda: "s3cr3t").create("k", PAYLOAD).created


# ------------------------------------------------------------------ run_actions on the local cloud


def test_the_local_cloud_publishes_the_ticket_service_url_for_the_deploy(cloud, aws, deployed):
    parameter = aws("ssm").get_parameter(Name=TICKET_API_URL_PARAMETER)["Parameter"]
    assert parameter["Value"] == cloud.tickets.url
    configuration = aws("lambda").get_function_configuration(
        FunctionName=deployed.outputs["RunActionsFunctionName"]
    )
    allowed = json.loads(configuration["Environment"]["Variables"]["ACTIONS_ALLOWED"])
    assert allowed["destinations"] == {"tickets": f"{cloud.tickets.url}/tickets"}
    assert allowed["topics"] == [LOCAL_TOPIC_ARN] and allowed["event_buses"] == ["default"]


def test_the_local_deploy_resolves_ssm_dynamic_references_as_cloudformation_does(cloud, tmp_path):
    (tmp_path / "T.template.json").write_text('{"Resources": {}}')
    (tmp_path / "T.assets.json").write_text('{"files": {}}')
    deployer = Deployer(CloudAssembly(tmp_path, "T"), "T", cloud.endpoint)
    reference = "{{resolve:ssm:" + TICKET_API_URL_PARAMETER + "}}"
    assert deployer.template.resolve({"Fn::Join": ["", [reference, "/v1"]]}) == f"{cloud.tickets.url}/v1"
    assert deployer.template.resolve(f"{reference}/tickets") == f"{cloud.tickets.url}/tickets"
    with pytest.raises(DeployError, match="ParameterNotFound"):
        deployer.template.resolve("{{resolve:ssm:/docagent/local/nothing-here}}")
    with pytest.raises(DeployError, match="only 'ssm'"):
        deployer.template.resolve("{{resolve:secretsmanager:token}}")


ALL_TYPES = (
    HttpAction(type="http", name="ticket", url="destination:tickets"),
    EventBridgeAction(type="eventbridge", name="event", bus="default"),
    SnsAction(type="sns", name="message", topic_arn=LOCAL_TOPIC_ARN),
    ExportAction(type="export", name="results"),
)


def seed_job(aws, deployed, job_id: str, *actions: Any) -> dict[str, Any]:
    """A finished job's records (manifest pinning a published definition, report.json), as RunActions reads
    them; the RunActions event."""
    bucket = deployed.outputs["BucketName"]
    invoices = example_bundle()
    bundle = DefinitionBundle(
        definition=invoices.definition.model_copy(update={"actions": list(actions)}), classes=invoices.classes
    )
    versions = JobVersions(
        model_id="m", prompt_version="p", prompt_sha256="0" * 64, code_version="c",
        created_at="2026-12-01T00:00:00Z", definition=bundle.name, definition_sha256=bundle.sha256,
    )  # fmt: skip
    manifest = JobManifest(
        job=JobInfo(job_id=job_id, source_bucket=bucket, prefix=None, request_sha256="0" * 64),
        versions=versions,
    )
    report = Report(
        job_id=job_id, versions=versions, documents=0, extracted=0, rejected=0, failed=0,
        rejection_reasons={}, totals={}, rows=[], rejected_documents=[], failed_documents=[],
        map_run=MapRunSummary(),
    )  # fmt: skip
    s3 = aws("s3")
    for key, data in (
        (
            f"definitions/{bundle.name}/versions/{bundle.sha256}.json",
            bundle.model_dump(mode="json", by_alias=True),
        ),
        (f"jobs/{job_id}/manifest.json", manifest.model_dump(mode="json")),
        (f"jobs/{job_id}/report.json", report.model_dump(mode="json")),
    ):
        s3.put_object(Bucket=bucket, Key=key, Body=json.dumps(data).encode())
    summary = {"report_key": f"jobs/{job_id}/report.json", "documents": 0, "extracted": 0, "rejected": 0}
    return {"job_id": job_id, "report": summary}


def invoke(aws, deployed, function: str, event: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    response = aws("lambda").invoke(
        FunctionName=deployed.outputs[f"{function}FunctionName"], Payload=json.dumps(event).encode()
    )
    return response.get("FunctionError"), json.loads(response["Payload"].read())


def read_json(aws, deployed, key: str) -> Any:
    body = aws("s3").get_object(Bucket=deployed.outputs["BucketName"], Key=key)["Body"].read()
    return json.loads(body)


def queue(aws, name: str) -> tuple[str, str]:
    url = aws("sqs").create_queue(QueueName=name)["QueueUrl"]
    arn = aws("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn


def drain(aws, url: str) -> list[dict[str, Any]]:
    messages = aws("sqs").receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
    return [json.loads(message["Body"]) for message in messages]


def test_every_action_type_runs_once_through_the_deployed_function(cloud, aws, deployed):
    job_id = "actions-all-types"
    events_url, events_arn = queue(aws, "actions-events")
    aws("events").put_rule(Name="actions-test", EventPattern=json.dumps({"source": ["docagent"]}))
    aws("events").put_targets(Rule="actions-test", Targets=[{"Id": "q", "Arn": events_arn}])
    messages_url, messages_arn = queue(aws, "actions-messages")
    aws("sns").subscribe(TopicArn=LOCAL_TOPIC_ARN, Protocol="sqs", Endpoint=messages_arn)
    event = seed_job(aws, deployed, job_id, *ALL_TYPES)

    error, first = invoke(aws, deployed, "RunActions", event)
    assert error is None, first
    error, second = invoke(aws, deployed, "RunActions", event)
    assert error is None and second == first

    outcomes = {outcome["name"]: outcome for outcome in first["actions"]}
    assert [outcome["outcome"] for outcome in first["actions"]] == ["performed"] * 4
    [ticket] = cloud.tickets.tickets(job_id)
    assert outcomes["ticket"]["reference"] == ticket["id"]
    [delivered] = drain(aws, events_url)
    assert delivered["detail"]["idempotency_key"] == f"docagent-{job_id}-event"
    [message] = drain(aws, messages_url)
    assert json.loads(message["Message"])["idempotency_key"] == f"docagent-{job_id}-message"
    assert outcomes["results"]["reference"] == f"jobs/{job_id}/exports/results/"
    assert read_json(aws, deployed, f"jobs/{job_id}/report.json")["actions"] == first["actions"]


@pytest.mark.parametrize("keys", ["honoured", "rejected"])
def test_a_dropped_answer_is_reconciled_to_exactly_one_record(cloud, aws, deployed, keys):
    job_id = f"actions-drop-{keys}"
    event = seed_job(aws, deployed, job_id, ALL_TYPES[0])
    cloud.tickets.set_faults(drop_responses=1, reject_idempotency_keys=keys == "rejected")
    try:
        error, result = invoke(aws, deployed, "RunActions", event)
    finally:
        cloud.tickets.clear_faults()
    assert error is None, result
    [ticket] = cloud.tickets.tickets(job_id)
    [outcome] = result["actions"]
    assert (outcome["reference"], outcome["outcome"]) == (ticket["id"], "reconciled")
    attempt = read_json(aws, deployed, f"jobs/{job_id}/actions/ticket/attempt.json")
    assert [e["error"] for e in attempt["errors"]] == ["ActionOutcomeUnknown"]


def test_garbage_from_the_target_fails_the_step_with_a_recorded_error(cloud, aws, deployed):
    job_id = "actions-garbage"
    event = seed_job(aws, deployed, job_id, ALL_TYPES[0])
    cloud.tickets.set_faults(garbage_responses=1)
    try:
        error, result = invoke(aws, deployed, "RunActions", event)
    finally:
        cloud.tickets.clear_faults()
    assert (error, result["errorType"]) == ("Unhandled", "ActionInvalidResponse")
    attempt = read_json(aws, deployed, f"jobs/{job_id}/actions/ticket/attempt.json")
    assert attempt["errors"][-1]["error"] == "ActionInvalidResponse"
    error, result = invoke(aws, deployed, "RunActions", event)
    assert error is None and len(cloud.tickets.tickets(job_id)) == 1, result
