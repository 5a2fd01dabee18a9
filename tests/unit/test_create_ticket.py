from __future__ import annotations

import io
import json
import os
import time
import urllib.error
import urllib.request

import pytest

from functions.errors import TicketError
from functions.handlers.create_ticket import handler
from functions.logic.create_ticket import create_ticket
from functions.models import CreateTicketEvent, TicketPayload
from functions.settings import get_settings
from functions.tickets import HttpTicketClient, LedgerTicketClient, ticket_idempotency_key
from tests.fakes import FakeLambdaContext, InMemoryTicketClient, SimulatedCrash
from tests.support import BUCKET, get_json, list_keys

PAYLOAD = TicketPayload(reference="job-unit-1", title="t", body="b")


def test_create_ticket_twice_makes_one_ticket(cloud, load_event):
    event = load_event("create_ticket")
    first = handler(event, FakeLambdaContext())
    second = handler(event, FakeLambdaContext())

    assert second == first
    assert first["reference"] == "job-unit-1" and first["created"] is True
    assert list_keys("ticket-ledger/") == ["ticket-ledger/docagent-ticket-job-unit-1.json"]
    ledger = get_json("ticket-ledger/docagent-ticket-job-unit-1.json")
    assert ledger["ticket_id"] == first["ticket_id"]
    assert "2/3 documents extracted" in ledger["title"]
    recorded = get_json("jobs/job-unit-1/ticket.json")
    assert (recorded["ticket_id"], recorded["adapter"], recorded["idempotency_key"]) == (
        first["ticket_id"], "ledger", "docagent-ticket-job-unit-1",
    )  # fmt: skip


def test_the_ticket_step_calls_the_ticket_system_once(cloud, load_event):
    client = InMemoryTicketClient()
    event = CreateTicketEvent.model_validate(load_event("create_ticket"))
    first = create_ticket(event, FakeLambdaContext(), client=client)
    second = create_ticket(event, FakeLambdaContext(), client=client)
    assert first == second
    assert client.create_calls == ["docagent-ticket-job-unit-1"]


def test_crash_after_the_ticket_was_created_does_not_open_a_second_one(cloud, env, monkeypatch, load_event):
    env.setenv("FAULT_INJECTION_ENABLED", "true")
    get_settings.cache_clear()

    def fake_exit(code: int) -> None:
        raise SimulatedCrash(f"os._exit({code})")

    monkeypatch.setattr(os, "_exit", fake_exit)
    event = load_event("create_ticket")
    event["options"] = {"fault": {"point": "after_ticket", "mode": "exit", "until_retry": 1}}
    with pytest.raises(SimulatedCrash):
        create_ticket(CreateTicketEvent.model_validate(event), FakeLambdaContext(timeout_ms=600))
    [ledger_key] = list_keys("ticket-ledger/")
    created = get_json(ledger_key)

    time.sleep(0.7)
    event["retry_count"] = 1
    result = create_ticket(CreateTicketEvent.model_validate(event), FakeLambdaContext())

    assert list_keys("ticket-ledger/") == [ledger_key]
    assert result.ticket_id == created["ticket_id"]
    assert result.created is False  # the ticket system already had it


def test_ledger_client_is_idempotent_on_its_key(cloud):
    client = LedgerTicketClient(BUCKET)
    first = client.create("docagent-ticket-j1", PAYLOAD)
    second = client.create("docagent-ticket-j1", PAYLOAD)
    assert (first.created, second.created) == (True, False)
    assert second.ticket_id == first.ticket_id
    assert [ticket.ticket_id for ticket in client.find_by_reference("job-unit-1")] == [first.ticket_id]
    assert client.find_by_reference("other") == []


def test_idempotency_key_is_derived_from_the_job_id():
    assert ticket_idempotency_key("job-7") == "docagent-ticket-job-7"


class FakeResponse(io.BytesIO):
    def __init__(self, status: int, body: object) -> None:
        super().__init__(json.dumps(body).encode())
        self.status = status


def test_http_client_sends_the_idempotency_key_and_reads_the_ticket(monkeypatch):
    sent: list[urllib.request.Request] = []
    ticket = {"id": "T-1", "reference": "job-unit-1"}
    answers = [FakeResponse(201, {**ticket, "created_at": "2026-11-29T10:00:00Z"}),
               FakeResponse(200, ticket),
               FakeResponse(200, {"tickets": [{"id": "T-1", "reference": "job-unit-1"},
                                              {"id": "T-9", "reference": "job-unit-10"}]})]  # fmt: skip

    def fake_urlopen(request, timeout):
        sent.append(request)
        return answers.pop(0)

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    client = HttpTicketClient("https://tickets.example.com/api/")
    first = client.create("docagent-ticket-job-unit-1", PAYLOAD)
    second = client.create("docagent-ticket-job-unit-1", PAYLOAD)
    found = client.find_by_reference("job-unit-1")

    assert (first.ticket_id, first.created, second.created) == ("T-1", True, False)
    assert [ticket.ticket_id for ticket in found] == ["T-1"]
    assert sent[0].full_url == "https://tickets.example.com/api/tickets"
    assert sent[0].get_method() == "POST"
    assert sent[0].get_header("Idempotency-key") == "docagent-ticket-job-unit-1"
    assert isinstance(sent[0].data, bytes)
    assert json.loads(sent[0].data) == PAYLOAD.model_dump()
    assert sent[2].full_url == "https://tickets.example.com/api/tickets?reference=job-unit-1"


def test_http_client_errors_are_ticket_errors(monkeypatch):
    def refusing_urlopen(request, timeout):
        raise urllib.error.HTTPError(request.full_url, 503, "busy", {}, None)  # type: ignore[arg-type]

    monkeypatch.setattr(urllib.request, "urlopen", refusing_urlopen)
    with pytest.raises(TicketError, match="returned 503"):
        HttpTicketClient("https://tickets.example.com").create("k", PAYLOAD)


def test_http_client_refuses_non_http_urls():
    with pytest.raises(ValueError, match="http"):
        HttpTicketClient("file:///etc/passwd")
