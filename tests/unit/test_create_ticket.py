"""create_ticket: one ticket per job through crashes, lost answers, an API without idempotency keys and an
API that is down. The HTTP client against the real ticket service is tested in tests/integration."""

from __future__ import annotations

import json
import time
from typing import Any

import boto3
import pytest
from functions.handlers.create_ticket import handler
from functions.logic.create_ticket import create_ticket, ticket_attempt
from functions.tickets import (
    HttpTicketClient,
    LedgerTicketClient,
    api_token,
    clear_token_cache,
    get_ticket_client,
    ticket_idempotency_key,
)

from functions import storage
from functions.errors import (
    ConfigurationError,
    TicketApiInvalidResponse,
    TicketApiUnavailable,
    TicketOutcomeUnknown,
)
from functions.models import CreateTicketEvent, JobTicket, TicketPayload, TicketRecord
from functions.settings import get_settings
from tests.fakes import FakeLambdaContext, InMemoryTicketClient, SimulatedCrash
from tests.support import BUCKET, get_json, list_keys

PAYLOAD = TicketPayload(reference="job-unit-1", title="t", body="b")
JOB = "job-unit-1"


def event_of(load_event, **changes: Any) -> CreateTicketEvent:
    return CreateTicketEvent.model_validate({**load_event("create_ticket"), **changes})


@pytest.fixture
def faults_enabled(env, fake_exit):
    env.setenv("FAULT_INJECTION_ENABLED", "true")
    get_settings.cache_clear()


def recorded(job_id: str = JOB) -> JobTicket:
    return JobTicket.model_validate(get_json(storage.ticket_key(job_id)))


# ------------------------------------------------------------------------------------------- the ledger


def test_create_ticket_twice_makes_one_ticket(cloud, load_event):
    event = load_event("create_ticket")
    first = handler(event, FakeLambdaContext())
    second = handler(event, FakeLambdaContext())

    assert second == first
    assert first["reference"] == JOB and first["created"] is True
    assert list_keys("ticket-ledger/") == ["ticket-ledger/docagent-ticket-job-unit-1.json"]
    ledger = get_json("ticket-ledger/docagent-ticket-job-unit-1.json")
    assert ledger["ticket_id"] == first["ticket_id"]
    assert "2/3 documents extracted" in ledger["title"]
    ticket = recorded()
    assert (ticket.ticket_id, ticket.adapter, ticket.idempotency_key, ticket.reconciled) == (
        first["ticket_id"], "ledger", "docagent-ticket-job-unit-1", False,
    )  # fmt: skip


def test_ledger_client_is_idempotent_on_its_key(cloud):
    client = LedgerTicketClient(BUCKET)
    first = client.create("docagent-ticket-j1", PAYLOAD)
    second = client.create("docagent-ticket-j1", PAYLOAD)
    assert (first.created, second.created) == (True, False)
    assert second.ticket_id == first.ticket_id
    assert [ticket.ticket_id for ticket in client.find_by_reference(JOB)] == [first.ticket_id]
    assert client.find_by_reference("other") == []


def test_a_lookup_by_reference_reads_that_references_tickets_only(cloud, monkeypatch):
    client = LedgerTicketClient(BUCKET)
    for n in range(12):
        client.create(
            f"docagent-ticket-other-{n}", TicketPayload(reference=f"other-{n}", title="t", body="b")
        )
    mine = client.create("docagent-ticket-j1", PAYLOAD)
    odd = TicketPayload(reference="a/b c", title="t", body="b")  # a reference that is no key-safe text
    theirs = client.create("docagent-ticket-odd", odd)
    read: list[str] = []
    real = storage.get_json_or_none
    monkeypatch.setattr(storage, "get_json_or_none", lambda key, **kw: read.append(key) or real(key, **kw))
    assert [ticket.ticket_id for ticket in client.find_by_reference(JOB)] == [mine.ticket_id]
    assert read == [storage.ledger_key("docagent-ticket-j1")], "one read, not one per ticket ever written"
    assert [ticket.ticket_id for ticket in client.find_by_reference("a/b c")] == [theirs.ticket_id]
    assert list_keys(storage.ledger_reference_prefix(JOB)) == [
        storage.ledger_index_key(JOB, "docagent-ticket-j1")
    ]
    assert len(list_keys("ticket-ledger/")) == 14, "the index lives outside the ledger's prefix"


def test_an_index_entry_without_its_ticket_is_skipped(cloud):
    """A creator that stopped between the index entry and the ticket: the lookup finds nothing, and the next
    create (same idempotency key) writes the ticket the entry names."""
    client = LedgerTicketClient(BUCKET)
    key = storage.ledger_index_key(JOB, "docagent-ticket-j1")
    boto3.client("s3").put_object(Bucket=BUCKET, Key=key, Body=b"")
    assert client.find_by_reference(JOB) == []
    created = client.create("docagent-ticket-j1", PAYLOAD)
    assert [ticket.ticket_id for ticket in client.find_by_reference(JOB)] == [created.ticket_id]


def test_idempotency_key_is_derived_from_the_job_id():
    assert ticket_idempotency_key("job-7") == "docagent-ticket-job-7"


# ------------------------------------------------------------------------------ intent and reconciliation


def test_the_ticket_step_calls_the_ticket_system_once(cloud, load_event):
    client = InMemoryTicketClient()
    event = event_of(load_event)
    first = create_ticket(event, FakeLambdaContext(), client=client)
    second = create_ticket(event, FakeLambdaContext(), client=client)
    assert first == second
    assert client.create_calls == ["docagent-ticket-job-unit-1"]
    assert client.find_calls == [], "no earlier attempt, nothing to reconcile"


def test_the_intent_is_recorded_before_the_request(cloud, load_event):
    seen: list[Any] = []

    class Watching(InMemoryTicketClient):
        def create(self, idempotency_key: str, payload: TicketPayload, *, on_sent=None) -> TicketRecord:
            seen.append(storage.get_json_or_none(storage.ticket_attempt_key(JOB)))
            return super().create(idempotency_key, payload, on_sent=on_sent)

    create_ticket(event_of(load_event), FakeLambdaContext(), client=Watching())
    [attempt] = seen
    assert attempt["idempotency_key"] == "docagent-ticket-job-unit-1"
    assert len(attempt["payload_sha256"]) == 64 and attempt["attempts"] == 1


def test_a_lost_answer_is_settled_by_reference_at_once(cloud, load_event):
    client = InMemoryTicketClient(lose_answers=1)
    result = create_ticket(event_of(load_event), FakeLambdaContext(), client=client)

    assert [ticket.ticket_id for ticket in client.tickets] == [result.ticket_id]
    assert client.create_calls == ["docagent-ticket-job-unit-1"] and client.find_calls == [JOB]
    assert result.created is False and recorded().reconciled is True
    attempt = ticket_attempt(JOB)
    assert attempt is not None and [error.error for error in attempt.errors] == ["TicketOutcomeUnknown"]


def test_without_idempotency_keys_a_crash_after_the_request_still_gives_one_ticket(
    cloud, load_event, faults_enabled
):
    """The request reached the API (which ignores idempotency keys), then the worker died: the retry finds
    the ticket by reference instead of opening a second one."""
    client = InMemoryTicketClient(honour_keys=False)
    fault = {"fault": {"point": "after_ticket_request", "mode": "exit", "until_retry": 1}}
    with pytest.raises(SimulatedCrash):
        create_ticket(event_of(load_event, options=fault), FakeLambdaContext(timeout_ms=400), client=client)
    assert len(client.tickets) == 1 and not storage.exists(storage.ticket_key(JOB))

    time.sleep(0.5)  # the dead invocation's in-progress record expires at its deadline
    retried = event_of(load_event, options=fault, retry_count=1)
    result = create_ticket(retried, FakeLambdaContext(), client=client)

    assert [ticket.ticket_id for ticket in client.tickets] == [result.ticket_id]
    assert len(client.create_calls) == 1, "the retry reconciled instead of creating"
    assert recorded().reconciled is True


def test_without_idempotency_keys_a_lost_answer_gives_one_ticket(cloud, load_event):
    client = InMemoryTicketClient(honour_keys=False, lose_answers=1)
    result = create_ticket(event_of(load_event), FakeLambdaContext(), client=client)
    assert [ticket.ticket_id for ticket in client.tickets] == [result.ticket_id]


def test_crash_after_the_ticket_was_created_does_not_open_a_second_one(cloud, load_event, faults_enabled):
    fault = {"fault": {"point": "after_ticket", "mode": "exit", "until_retry": 1}}
    with pytest.raises(SimulatedCrash):
        create_ticket(event_of(load_event, options=fault), FakeLambdaContext(timeout_ms=400))
    [ledger_key] = list_keys("ticket-ledger/")
    created = get_json(ledger_key)

    time.sleep(0.5)
    result = create_ticket(event_of(load_event, options=fault, retry_count=1), FakeLambdaContext())

    assert list_keys("ticket-ledger/") == [ledger_key]
    assert result.ticket_id == created["ticket_id"]
    assert result.created is False  # found by reference: an earlier attempt created it
    assert recorded().reconciled is True


def test_a_crash_before_the_request_creates_on_the_retry(cloud, load_event, faults_enabled):
    client = InMemoryTicketClient(honour_keys=False)
    fault = {"fault": {"point": "before_ticket", "mode": "raise", "until_retry": 1}}
    with pytest.raises(Exception, match="before_ticket"):
        create_ticket(event_of(load_event, options=fault), FakeLambdaContext(), client=client)
    assert client.tickets == [] and ticket_attempt(JOB) is not None

    result = create_ticket(
        event_of(load_event, options=fault, retry_count=1), FakeLambdaContext(), client=client
    )
    assert [ticket.ticket_id for ticket in client.tickets] == [result.ticket_id]
    assert client.find_calls == [JOB], "the unknown attempt was reconciled (nothing found) before creating"
    assert result.created is True and recorded().reconciled is False


def test_an_unsettled_outcome_fails_clearly_and_a_rerun_settles_it(cloud, load_event):
    """The answer is lost and the search that would settle it fails too: TicketOutcomeUnknown, recorded; the
    next attempt (Retry or redrive) finds the ticket and adopts it."""
    searches_down = [1]

    class SearchDown(InMemoryTicketClient):
        def find_by_reference(self, reference: str) -> list[TicketRecord]:
            if searches_down[0]:
                searches_down[0] -= 1
                raise TicketApiUnavailable("search is down")
            return super().find_by_reference(reference)

    client = SearchDown(lose_answers=1)
    with pytest.raises(TicketOutcomeUnknown):
        create_ticket(event_of(load_event), FakeLambdaContext(), client=client)
    attempt = ticket_attempt(JOB)
    assert attempt is not None
    assert [error.error for error in attempt.errors] == ["TicketOutcomeUnknown", "TicketApiUnavailable"]
    assert not storage.exists(storage.ticket_key(JOB))

    result = create_ticket(event_of(load_event, redrive_count=1), FakeLambdaContext(), client=client)
    assert [ticket.ticket_id for ticket in client.tickets] == [result.ticket_id]
    assert len(client.create_calls) == 1


def test_an_api_that_is_down_fails_with_ticket_api_unavailable_then_a_rerun_creates_one(cloud, load_event):
    client = InMemoryTicketClient(unavailable=1)
    with pytest.raises(TicketApiUnavailable):
        create_ticket(event_of(load_event), FakeLambdaContext(), client=client)
    attempt = ticket_attempt(JOB)
    assert attempt is not None and attempt.errors[-1].error == "TicketApiUnavailable"

    result = create_ticket(event_of(load_event), FakeLambdaContext(), client=client)
    assert [ticket.ticket_id for ticket in client.tickets] == [result.ticket_id]
    assert result.created is True
    assert ticket_attempt(JOB).attempts == 2  # type: ignore[union-attr]


def test_garbage_from_the_ticket_api_is_a_specific_recorded_error(cloud, load_event):
    class Garbage(InMemoryTicketClient):
        def create(self, idempotency_key: str, payload: TicketPayload, *, on_sent=None) -> TicketRecord:
            raise TicketApiInvalidResponse("ticket API POST answered non-JSON: '<html>'")

    with pytest.raises(TicketApiInvalidResponse):
        create_ticket(event_of(load_event), FakeLambdaContext(), client=Garbage())
    attempt = get_json(storage.ticket_attempt_key(JOB))
    assert attempt["errors"][-1]["error"] == "TicketApiInvalidResponse"
    assert "non-JSON" in attempt["errors"][-1]["message"]


def test_a_recorded_ticket_is_returned_without_calling_the_api(cloud, load_event):
    """ticket.json written, then the worker died before the step completed: the rerun returns the record."""
    storage.put_json(
        storage.ticket_key(JOB),
        JobTicket(
            ticket_id="T-9", reference=JOB, idempotency_key="docagent-ticket-job-unit-1", adapter="memory",
            created=True, created_at="2026-11-29T10:00:00Z",
        ),
    )  # fmt: skip
    client = InMemoryTicketClient()
    result = create_ticket(event_of(load_event), FakeLambdaContext(), client=client)
    assert (result.ticket_id, result.created) == ("T-9", True)
    assert client.create_calls == [] and client.find_calls == []


# ---------------------------------------------------------------------------------- HTTP client and token


def test_http_client_refuses_non_http_urls():
    with pytest.raises(ValueError, match="http"):
        HttpTicketClient("file:///etc/passwd")


def test_http_client_without_time_left_sends_nothing():
    client = HttpTicketClient("http://tickets.invalid", deadline=time.monotonic() - 1)
    with pytest.raises(TicketApiUnavailable, match="no time left"):
        client.create("k", PAYLOAD)


SECRET_NAME = "docagent/ticket-api"


@pytest.fixture
def secret(cloud) -> str:
    clear_token_cache()
    arn = boto3.client("secretsmanager").create_secret(Name=SECRET_NAME, SecretString="s3cr3t-token")["ARN"]
    yield str(arn)
    clear_token_cache()


def test_the_token_is_read_from_secrets_manager_once(secret):
    assert api_token(secret) == "s3cr3t-token"
    boto3.client("secretsmanager").put_secret_value(SecretId=secret, SecretString="rotated")
    assert api_token(secret) == "s3cr3t-token", "cached for the warm container"
    clear_token_cache()
    assert api_token(secret) == "rotated"


def test_a_json_secret_gives_its_token_field(secret):
    boto3.client("secretsmanager").put_secret_value(
        SecretId=secret, SecretString=json.dumps({"token": "t-1"})
    )
    assert api_token(secret) == "t-1"


def test_a_missing_or_empty_secret_is_a_configuration_error_without_the_value(secret):
    boto3.client("secretsmanager").put_secret_value(SecretId=secret, SecretString=json.dumps({"user": "x"}))
    with pytest.raises(ConfigurationError, match="no 'token' field"):
        api_token(secret)
    with pytest.raises(ConfigurationError, match="ResourceNotFoundException") as raised:
        api_token(secret.replace(SECRET_NAME, "docagent/missing"))
    assert "s3cr3t" not in str(raised.value)


def test_the_http_adapter_reads_its_url_and_secret_from_the_settings(env, secret):
    env.setenv("TICKET_ADAPTER", "http")
    env.setenv("TICKET_API_URL", "https://tickets.example.com/api")
    env.setenv("TICKET_API_SECRET_ARN", secret)
    get_settings.cache_clear()
    client = get_ticket_client(get_settings())
    assert isinstance(client, HttpTicketClient) and client.name == "http"


def test_a_malformed_secret_arn_is_refused(env):
    env.setenv("TICKET_API_SECRET_ARN", "my-secret")
    get_settings.cache_clear()
    with pytest.raises(ConfigurationError, match="TICKET_API_SECRET_ARN"):
        get_settings()
