"""Sending one action: its payload, and each type's request. What a repeat does after an attempt whose
outcome is unknown (docs/actions.md): http reconciles by reference first; eventbridge and sns send again with
the same idempotency key in the payload (FIFO SNS: as MessageDeduplicationId), and consumers dedupe on it;
export writes the same bytes again."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from collections.abc import Callable

from botocore.exceptions import BotoCoreError, ClientError

from functions import aws
from functions.actions import export
from functions.actions.allowed import LEDGER_DESTINATION, bus_name
from functions.actions.credentials import secret_value
from functions.actions.http_call import HttpClient, OnSent, Payload, Recipient
from functions.actions.ledger import LedgerClient
from functions.actions.payloads import RemoteRecord
from functions.definition.action_specs import Action, EventBridgeAction, ExportAction, HttpAction, SnsAction
from functions.errors import ActionError, ActionOutcomeUnknown, ActionTargetUnavailable
from functions.observability import logger
from functions.payloads.report import Report

EVENT_SOURCE = "docagent"
_RETRYABLE_CODES = frozenset({"ThrottlingException", "Throttling", "InternalFailure", "ServiceUnavailable"})


def idempotency_key(job_id: str, action: str) -> str:
    """The action's idempotency key: the same on every attempt and redrive of the job, unique per action."""
    return f"docagent-{job_id}-{action}"


def statuses(report: Report) -> Counter[str]:
    """The report's documents by status, from its counts: the same as its rows' statuses, and there also when
    the rows are only in the table (a job above INLINE_ROWS_MAX documents, docs/design.md)."""
    return Counter(
        extracted=report.extracted, review=report.review, rejected=report.rejected, failed=report.failed
    )


def when_holds(action: Action, report: Report) -> bool:
    counts = statuses(report)
    if action.when == "any_rejected":
        return counts["rejected"] > 0
    if action.when == "any_review":
        return counts["review"] > 0
    if action.when == "all_accepted":
        return report.documents > 0 and counts["extracted"] == report.documents
    return True


def job_payload(
    job_id: str, *, definition: str, action: Action, key: str, report: Report, report_key: str
) -> Payload:
    """What every action sends: the job's summary, its reference (the job id) and the idempotency key."""
    counts = statuses(report)
    title = action.title if isinstance(action, HttpAction) else ""
    summary = (
        f"Job {job_id} reviewed {report.documents} documents: {counts['extracted']} extracted, "
        f"{counts['review']} to review, {counts['rejected']} rejected, {counts['failed']} failed. "
        f"Report: {report_key}"
    )
    return {
        "reference": job_id,
        "idempotency_key": key,
        "job_id": job_id,
        "definition": definition,
        "action": action.name,
        "title": title.replace("{job_id}", job_id),
        "body": summary,
        "report_key": report_key,
        "documents": report.documents,
        "extracted": counts["extracted"],
        "review": counts["review"],
        "rejected": counts["rejected"],
        "failed": counts["failed"],
    }


def payload_sha256(payload: Payload) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@dataclasses.dataclass(frozen=True)
class Sent:
    reference: str | None
    reconciled: bool = False


@dataclasses.dataclass(frozen=True)
class Sending:
    """One attempt of one action: everything its request needs."""

    job_id: str
    action: Action
    target: str
    key: str
    payload: Payload
    report: Report
    bucket: str
    uncertain: bool  # an earlier attempt's outcome is unknown
    claimed: frozenset[str]  # the records the job's earlier http actions made (their done.json references)
    on_sent: OnSent
    note_error: Callable[[ActionError], None]
    deadline: float | None = None


def recipient(target: str, secret: str | None, bucket: str, deadline: float | None) -> Recipient:
    if target == LEDGER_DESTINATION:
        return LedgerClient(bucket)
    token = (lambda: secret_value(secret)) if secret else None
    return HttpClient(target, token=token, deadline=deadline)


RecipientFactory = Callable[[str, str | None, str, float | None], Recipient]


def records_of(records: list[RemoteRecord], key: str, claimed: frozenset[str]) -> list[RemoteRecord]:
    """The records the action with this key made among its reference's (the job's): those carrying the key,
    else those of a target that does not echo keys, less the ones other actions of the job recorded as theirs
    (``claimed``: the ids in their done.json). A record carrying another key is another action's."""
    mine = [record for record in records if record.idempotency_key == key]
    return mine or [record for record in records if not record.idempotency_key and record.id not in claimed]


def _adopt(records: list[RemoteRecord], key: str, claimed: frozenset[str]) -> RemoteRecord | None:
    """What an earlier attempt made: the oldest of the action's records (normally its only one)."""
    mine = records_of(records, key, claimed)
    if len(mine) > 1:
        logger.error("more than one record for the action", extra={"ids": [record.id for record in mine]})
    return mine[0] if mine else None


def _send_http(sending: Sending, action: HttpAction, make: RecipientFactory) -> Sent:
    client = make(sending.target, action.secret, sending.bucket, sending.deadline)

    def reconcile() -> RemoteRecord | None:
        found = _adopt(client.find_by_reference(sending.job_id), sending.key, sending.claimed)
        logger.info("reconciled an attempt with an unknown outcome", extra={"found": found is not None})
        return found

    if sending.uncertain:
        found = reconcile()
        if found is not None:
            return Sent(found.id, reconciled=True)
    try:
        record = client.create(sending.key, sending.payload, on_sent=sending.on_sent)
    except ActionOutcomeUnknown as unknown:
        try:
            found = reconcile()
        except ActionError:
            raise unknown from None
        if found is None:
            raise
        sending.note_error(unknown)  # settled: recorded here, as the caller sees no error
        return Sent(found.id, reconciled=True)
    return Sent(record.id, reconciled=not record.created)


def _aws_error(error: Exception, where: str) -> ActionError:
    """A failed AWS call: retryable when nothing can have been delivered or a resend is harmless."""
    if isinstance(error, ClientError):
        code = error.response.get("Error", {}).get("Code", "")
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        if code in _RETRYABLE_CODES or status >= 500:
            return ActionTargetUnavailable(f"{where}: {code}")
        return ActionError(f"{where}: refused with {code}")
    return ActionOutcomeUnknown(f"{where}: {type(error).__name__}: {error}")


def _send_event(sending: Sending, action: EventBridgeAction) -> Sent:
    entry = {
        "Source": EVENT_SOURCE,
        "DetailType": action.detail_type,
        "Detail": json.dumps(sending.payload, sort_keys=True, separators=(",", ":")),
        "EventBusName": action.bus,
    }
    where = f"PutEvents on {bus_name(action.bus)}"
    try:
        answer = aws.events_client().put_events(Entries=[entry])
    except (ClientError, BotoCoreError) as error:
        raise _aws_error(error, where) from None
    sending.on_sent()
    entries = answer.get("Entries") or [{}]
    if answer.get("FailedEntryCount") or not entries[0].get("EventId"):
        code = str(entries[0].get("ErrorCode") or "no event id")
        error_class = ActionTargetUnavailable if code in _RETRYABLE_CODES else ActionError
        raise error_class(f"{where}: {code} {entries[0].get('ErrorMessage') or ''}".strip())
    return Sent(str(entries[0]["EventId"]))


def _send_sns(sending: Sending, action: SnsAction) -> Sent:
    subject = action.subject.replace("{job_id}", sending.job_id)[:100]
    request: dict[str, object] = {
        "TopicArn": action.topic_arn,
        "Subject": subject,
        "Message": json.dumps(sending.payload, sort_keys=True, separators=(",", ":")),
        "MessageAttributes": {"idempotency_key": {"DataType": "String", "StringValue": sending.key}},
    }
    if action.topic_arn.endswith(".fifo"):
        request["MessageGroupId"] = sending.job_id
        request["MessageDeduplicationId"] = hashlib.sha256(sending.key.encode()).hexdigest()
    try:
        answer = aws.sns_client().publish(**request)
    except (ClientError, BotoCoreError) as error:
        raise _aws_error(error, f"Publish to {action.topic_arn}") from None
    sending.on_sent()
    return Sent(str(answer.get("MessageId") or "") or None)


def send(sending: Sending, make: RecipientFactory = recipient) -> Sent:
    """Perform the action once (or settle an earlier attempt's unknown outcome)."""
    action = sending.action
    if isinstance(action, HttpAction):
        return _send_http(sending, action, make)
    if isinstance(action, EventBridgeAction):
        return _send_event(sending, action)
    if isinstance(action, SnsAction):
        return _send_sns(sending, action)
    assert isinstance(action, ExportAction)
    prefix = export.export(sending.job_id, action, sending.report)
    sending.on_sent()
    return Sent(prefix)
