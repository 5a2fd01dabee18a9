"""The local ticket service (a real HTTP service on 127.0.0.1 with a SQLite store), the HTTP ticket client
against it, and create_ticket through the deployed function and the real workflow on the local cloud."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from functions.tickets import HttpTicketClient

from docagent.localcloud.deploy import CloudAssembly, Deployer, DeployError
from docagent.localcloud.ticket_service import TICKET_API_URL_PARAMETER, TicketService
from functions.errors import (
    TicketApiInvalidResponse,
    TicketApiUnavailable,
    TicketConflict,
    TicketError,
    TicketOutcomeUnknown,
)
from functions.models import TicketPayload
from tests.integration.test_local_job import run_job
from tests.support import wait_for_execution

PAYLOAD = TicketPayload(reference="job-1", title="Review of job-1", body="3 documents")


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


def test_client_creates_then_returns_the_same_ticket(service):
    client = HttpTicketClient(service.url + "/")
    first = client.create("docagent-ticket-job-1", PAYLOAD)
    second = client.create("docagent-ticket-job-1", PAYLOAD)
    assert (first.created, second.created, second.ticket_id) == (True, False, first.ticket_id)
    assert [t.ticket_id for t in client.find_by_reference("job-1")] == [first.ticket_id]
    with pytest.raises(TicketConflict):
        client.create("docagent-ticket-job-1", PAYLOAD.model_copy(update={"body": "changed"}))


def test_accept_then_drop_is_an_unknown_outcome_with_the_ticket_created(service):
    service.set_faults(drop_responses=1)
    with pytest.raises(TicketOutcomeUnknown, match="no answer"):
        HttpTicketClient(service.url).create("k", PAYLOAD)
    assert len(service.tickets("job-1")) == 1


def test_a_5xx_burst_shorter_than_the_retries_is_absorbed(service):
    service.set_faults(fail_requests=2)
    ticket = HttpTicketClient(service.url, backoff_seconds=0.01).create("k", PAYLOAD)
    assert ticket.created and len(service.tickets()) == 1


def test_a_5xx_burst_longer_than_the_retries_is_ticket_api_unavailable(service):
    service.set_faults(fail_requests=10)
    with pytest.raises(TicketApiUnavailable, match="after 3 attempt"):
        HttpTicketClient(service.url, backoff_seconds=0.01).create("k", PAYLOAD)
    assert service.tickets() == [] and service.faults()["fail_requests"] == 7


def test_a_slow_answer_past_the_client_timeout_is_an_unknown_outcome(service):
    service.set_faults(delay_seconds=0.6, delay_requests=1)
    started = time.monotonic()
    with pytest.raises(TicketOutcomeUnknown, match="timed out"):
        HttpTicketClient(service.url, timeout_seconds=0.2).create("k", PAYLOAD)
    assert time.monotonic() - started < 0.5
    time.sleep(0.6)
    assert len(service.tickets()) == 1, "the slow request still did its work"
    assert HttpTicketClient(service.url).create("k", PAYLOAD).created is False


def test_garbage_is_ticket_api_invalid_response(service):
    service.set_faults(garbage_responses=2)
    client = HttpTicketClient(service.url)
    with pytest.raises(TicketApiInvalidResponse, match="non-JSON"):
        client.create("k", PAYLOAD)
    with pytest.raises(TicketApiInvalidResponse):
        client.find_by_reference("job-1")


def test_rejecting_idempotency_keys_makes_a_repeat_a_second_ticket(service):
    service.set_faults(reject_idempotency_keys=True)
    client = HttpTicketClient(service.url)
    first, second = client.create("k", PAYLOAD), client.create("k", PAYLOAD)
    assert first.ticket_id != second.ticket_id and second.created


def test_a_token_is_sent_as_a_bearer_header(tmp_path):
    with TicketService(tmp_path / "t.sqlite3", token="s3cr3t") as guarded:
        with pytest.raises(TicketError, match="401") as raised:
            HttpTicketClient(guarded.url).create("k", PAYLOAD)
        assert "s3cr3t" not in str(raised.value)
        assert HttpTicketClient(guarded.url, token=lambda: "s3cr3t").create("k", PAYLOAD).created


# ------------------------------------------------------------------ create_ticket on the local cloud


def test_the_local_cloud_publishes_the_ticket_service_url_for_the_deploy(cloud, aws, deployed):
    parameter = aws("ssm").get_parameter(Name=TICKET_API_URL_PARAMETER)["Parameter"]
    assert parameter["Value"] == cloud.tickets.url
    configuration = aws("lambda").get_function_configuration(
        FunctionName=deployed.outputs["CreateTicketFunctionName"]
    )
    variables = configuration["Environment"]["Variables"]
    assert (variables["TICKET_ADAPTER"], variables["TICKET_API_URL"]) == ("http", cloud.tickets.url)


def test_the_local_deploy_resolves_ssm_dynamic_references_as_cloudformation_does(cloud, tmp_path):
    (tmp_path / "T.template.json").write_text('{"Resources": {}}')
    (tmp_path / "T.assets.json").write_text('{"files": {}}')
    deployer = Deployer(CloudAssembly(tmp_path, "T"), "T", cloud.endpoint)
    reference = "{{resolve:ssm:" + TICKET_API_URL_PARAMETER + "}}"
    assert deployer.resolve({"Fn::Join": ["", [reference, "/v1"]]}) == f"{cloud.tickets.url}/v1"
    with pytest.raises(DeployError, match="ParameterNotFound"):
        deployer.resolve("{{resolve:ssm:/docagent/local/nothing-here}}")
    with pytest.raises(DeployError, match="only 'ssm'"):
        deployer.resolve("{{resolve:secretsmanager:token}}")


def invoke_create_ticket(aws, deployed, job_id: str) -> tuple[str | None, dict[str, Any]]:
    event = {"job_id": job_id, "report": {"report_key": f"jobs/{job_id}/report.json", "documents": 1,
                                          "extracted": 1, "rejected": 0}}  # fmt: skip
    response = aws("lambda").invoke(
        FunctionName=deployed.outputs["CreateTicketFunctionName"], Payload=json.dumps(event).encode()
    )
    return response.get("FunctionError"), json.loads(response["Payload"].read())


def read_json(aws, deployed, key: str) -> Any:
    body = aws("s3").get_object(Bucket=deployed.outputs["BucketName"], Key=key)["Body"].read()
    return json.loads(body)


@pytest.mark.parametrize("keys", ["honoured", "rejected"])
def test_a_dropped_answer_is_reconciled_to_exactly_one_ticket(cloud, aws, deployed, keys):
    job_id = f"ticket-drop-{keys}"
    cloud.tickets.set_faults(drop_responses=1, reject_idempotency_keys=keys == "rejected")
    try:
        error, result = invoke_create_ticket(aws, deployed, job_id)
    finally:
        cloud.tickets.clear_faults()
    assert error is None, result
    [ticket] = cloud.tickets.tickets(job_id)
    assert (result["ticket_id"], result["created"]) == (ticket["id"], False)
    recorded = read_json(aws, deployed, f"jobs/{job_id}/ticket.json")
    assert recorded["reconciled"] is True and recorded["adapter"] == "http"
    attempt = read_json(aws, deployed, f"jobs/{job_id}/ticket-attempt.json")
    assert [e["error"] for e in attempt["errors"]] == ["TicketOutcomeUnknown"]


def test_garbage_from_the_api_fails_the_step_with_a_recorded_error(cloud, aws, deployed):
    cloud.tickets.set_faults(garbage_responses=1)
    try:
        error, result = invoke_create_ticket(aws, deployed, "ticket-garbage")
    finally:
        cloud.tickets.clear_faults()
    assert (error, result["errorType"]) == ("Unhandled", "TicketApiInvalidResponse")
    attempt = read_json(aws, deployed, "jobs/ticket-garbage/ticket-attempt.json")
    assert attempt["errors"][-1]["error"] == "TicketApiInvalidResponse"
    error, result = invoke_create_ticket(aws, deployed, "ticket-garbage")
    assert error is None and len(cloud.tickets.tickets("ticket-garbage")) == 1, result


def test_api_down_fails_the_job_at_create_ticket_and_a_redrive_settles_it(cloud, deployed):
    """5xx for longer than the client's retries and the workflow's Retry: the job FAILS at CreateTicket with
    TicketApiUnavailable; with the API back, a redrive reruns CreateTicket only and the job SUCCEEDS with
    exactly one ticket."""
    job_id = "ticket-api-down"
    cloud.tickets.set_faults(fail_requests=100_000)
    try:
        job, _ = run_job(cloud, deployed, job_id, documents=1)
        failed = job.sfn.describe_execution(executionArn=job.execution_arn)
    finally:
        cloud.tickets.clear_faults()
    assert (failed["status"], failed.get("error")) == ("FAILED", "TicketApiUnavailable"), failed
    history = job.sfn.get_execution_history(executionArn=job.execution_arn, maxResults=1000)["events"]
    entered = [e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e]
    assert entered[-1] == "CreateTicket"
    assert cloud.tickets.tickets(job_id) == []

    job.sfn.redrive_execution(executionArn=job.execution_arn)
    redriven = wait_for_execution(job.sfn, job.execution_arn, timeout=60)
    assert redriven["status"] == "SUCCEEDED", redriven.get("cause")
    assert json.loads(redriven["output"])["verification"]["verified"] is True
    assert len(job.tickets()) == 1
    attempt = job.records.read_json(f"jobs/{job_id}/ticket-attempt.json")
    assert {e["error"] for e in attempt["errors"]} == {"TicketApiUnavailable"}
