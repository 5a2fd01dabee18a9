"""The action types on moto (EventBridge PutEvents, SNS Publish), the deployment's allow-list, and secrets
by reference (Secrets Manager, SSM)."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from functions import aws
from functions.actions.allowed import AllowedTargets, allowed_target, refusals
from functions.actions.credentials import clear_cache, secret_value
from functions.actions.send import Sending, idempotency_key, send
from functions.definition.action_specs import EventBridgeAction, ExportAction, HttpAction, SnsAction
from functions.errors import ActionError, ActionNotAllowed, ConfigurationError
from functions.payloads.job import JobVersions
from functions.payloads.report import MapRunSummary, Report
from tests.support import BUCKET

JOB = "job-targets"
ACCOUNT = "123456789012"


def report() -> Report:
    versions = JobVersions(
        model_id="m",
        prompt_version="p",
        prompt_sha256="0" * 64,
        code_version="c",
        created_at="2026-12-01T00:00:00Z",
    )
    return Report(
        job_id=JOB, versions=versions, documents=0, extracted=0, rejected=0, failed=0, rejection_reasons={},
        totals={}, rows=[], rejected_documents=[], failed_documents=[], map_run=MapRunSummary(),
    )  # fmt: skip


def sending(action: Any, sent: list[str]) -> Sending:
    key = idempotency_key(JOB, action.name)
    return Sending(
        job_id=JOB,
        action=action,
        target="",
        key=key,
        payload={"reference": JOB, "idempotency_key": key, "documents": 0},
        report=report(),
        bucket=BUCKET,
        uncertain=False,
        claimed=frozenset(),
        on_sent=lambda: sent.append("sent"),
        note_error=lambda error: None,
    )


def queue_for(name: str) -> tuple[str, str]:
    sqs = boto3.client("sqs")
    url = sqs.create_queue(
        QueueName=name, Attributes={"FifoQueue": "true"} if name.endswith(".fifo") else {}
    )["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn


def received(url: str) -> list[dict[str, Any]]:
    messages = boto3.client("sqs").receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
    return [json.loads(message["Body"]) for message in messages]


def test_an_eventbridge_action_puts_one_event_carrying_the_idempotency_key(cloud):
    events = boto3.client("events")
    events.create_event_bus(Name="jobs")
    url, arn = queue_for("job-events")
    events.put_rule(Name="all", EventBusName="jobs", EventPattern=json.dumps({"source": ["docagent"]}))
    events.put_targets(Rule="all", EventBusName="jobs", Targets=[{"Id": "q", "Arn": arn}])
    sent: list[str] = []
    action = EventBridgeAction(type="eventbridge", name="notify", bus="jobs")

    result = send(sending(action, sent))

    assert result.reference and sent == ["sent"]
    [event] = received(url)
    assert event["source"] == "docagent" and event["detail-type"] == "docagent job finished"
    assert event["detail"]["idempotency_key"] == f"docagent-{JOB}-notify"


def test_an_eventbridge_failure_is_an_action_error(cloud):
    action = EventBridgeAction(type="eventbridge", name="notify", bus="no-such-bus")
    with pytest.raises(ActionError):
        send(sending(action, []))


def test_an_sns_action_publishes_one_message_with_the_key_as_attribute(cloud):
    sns = boto3.client("sns")
    topic = sns.create_topic(Name="jobs")["TopicArn"]
    url, arn = queue_for("job-messages")
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn)
    action = SnsAction(type="sns", name="announce", topic_arn=topic)

    result = send(sending(action, []))

    [envelope] = received(url)
    assert envelope["MessageId"] == result.reference
    assert envelope["Subject"] == f"docagent job {JOB}"
    assert json.loads(envelope["Message"])["idempotency_key"] == f"docagent-{JOB}-announce"
    assert envelope["MessageAttributes"]["idempotency_key"]["Value"] == f"docagent-{JOB}-announce"


def test_a_fifo_topic_gets_the_key_as_deduplication_id(cloud):
    topic = boto3.client("sns").create_topic(
        Name="jobs.fifo", Attributes={"FifoTopic": "true", "ContentBasedDeduplication": "false"}
    )["TopicArn"]
    published: list[dict[str, Any]] = []
    aws.sns_client().meta.events.register(
        "provide-client-params.sns.Publish", lambda params, **_: published.append(dict(params))
    )
    action = SnsAction(type="sns", name="announce", topic_arn=topic)
    send(sending(action, []))
    send(sending(action, []))  # a re-send after an unknown outcome: the same deduplication id
    assert [call["MessageGroupId"] for call in published] == [JOB, JOB]
    dedupe = {call["MessageDeduplicationId"] for call in published}
    assert len(dedupe) == 1 and len(dedupe.pop()) == 64


# --------------------------------------------------------------------------------------------- allowed

ALLOWED = AllowedTargets(
    destinations={"tickets": "https://tickets.example.com/api/tickets"},
    hosts=["hooks.example.com", "*.internal.example.org"],
    event_buses=[f"arn:aws:events:us-east-1:{ACCOUNT}:event-bus/jobs"],
    topics=[f"arn:aws:sns:us-east-1:{ACCOUNT}:jobs"],
    secrets=[f"arn:aws:secretsmanager:us-east-1:{ACCOUNT}:secret:docagent/*", "ssm:/docagent/"],
)


@pytest.mark.parametrize(
    ("action", "target"),
    [
        (
            HttpAction(type="http", name="a", url="destination:tickets"),
            "https://tickets.example.com/api/tickets",
        ),
        (HttpAction(type="http", name="a", url="https://hooks.example.com/x"), "https://hooks.example.com/x"),
        (
            HttpAction(type="http", name="a", url="https://a.internal.example.org/"),
            "https://a.internal.example.org/",
        ),
        (EventBridgeAction(type="eventbridge", name="a", bus="jobs"), "jobs"),
        (
            SnsAction(type="sns", name="a", topic_arn=f"arn:aws:sns:us-east-1:{ACCOUNT}:jobs"),
            f"arn:aws:sns:us-east-1:{ACCOUNT}:jobs",
        ),
        (ExportAction(type="export", name="a"), "job bucket"),
        (
            HttpAction(type="http", name="a", url="destination:tickets", secret="ssm:/docagent/token"),
            "https://tickets.example.com/api/tickets",
        ),
    ],
)
def test_allowed_targets_resolve(action, target):
    assert refusals(action, ALLOWED) == []
    assert allowed_target(action, ALLOWED) == target


@pytest.mark.parametrize(
    ("action", "problem"),
    [
        (HttpAction(type="http", name="a", url="destination:crm"), "destination crm is not configured"),
        (
            HttpAction(type="http", name="a", url="https://evil.example.net/"),
            "host evil.example.net is not allowed",
        ),
        (HttpAction(type="http", name="a", url="https://internal.example.org/"), "host internal.example.org"),
        (EventBridgeAction(type="eventbridge", name="a", bus="other"), "event bus other is not allowed"),
        (
            SnsAction(type="sns", name="a", topic_arn=f"arn:aws:sns:us-east-1:{ACCOUNT}:other"),
            "SNS topic arn:aws:sns:us-east-1:123456789012:other is not allowed",
        ),
        (
            HttpAction(type="http", name="a", url="destination:tickets", secret="ssm:/other/token"),
            "SSM parameter /other/token is under no allowed prefix",
        ),
        (
            HttpAction(
                type="http",
                name="a",
                url="destination:tickets",
                secret=f"arn:aws:secretsmanager:us-east-1:{ACCOUNT}:secret:other-AbCdEf",
            ),
            "is not allowed; add its ARN to actions.secrets",
        ),
    ],
)
def test_targets_the_deployment_does_not_allow_are_refused_with_the_fix(action, problem):
    [refusal] = refusals(action, ALLOWED)
    assert problem in refusal and "actions." in refusal
    with pytest.raises(ActionNotAllowed, match="action a: "):
        allowed_target(action, ALLOWED)


# --------------------------------------------------------------------------------------------- secrets


@pytest.fixture
def secret(cloud) -> Any:
    clear_cache()
    arn = boto3.client("secretsmanager").create_secret(Name="docagent/api", SecretString="s3cr3t-token")[
        "ARN"
    ]
    yield str(arn)
    clear_cache()


def test_a_secret_is_read_from_secrets_manager_once(secret):
    assert secret_value(secret) == "s3cr3t-token"
    boto3.client("secretsmanager").put_secret_value(SecretId=secret, SecretString="rotated")
    assert secret_value(secret) == "s3cr3t-token", "cached for the warm container"
    clear_cache()
    assert secret_value(secret) == "rotated"


def test_a_json_secret_gives_its_token_field(secret):
    boto3.client("secretsmanager").put_secret_value(
        SecretId=secret, SecretString=json.dumps({"token": "t-1"})
    )
    assert secret_value(secret) == "t-1"


def test_an_ssm_parameter_is_a_secret_by_reference(cloud):
    clear_cache()
    boto3.client("ssm").put_parameter(Name="/docagent/token", Value="p-1", Type="SecureString")
    assert secret_value("ssm:/docagent/token") == "p-1"


def test_a_missing_or_empty_secret_is_a_configuration_error_without_the_value(secret):
    boto3.client("secretsmanager").put_secret_value(SecretId=secret, SecretString=json.dumps({"user": "x"}))
    with pytest.raises(ConfigurationError, match="no 'token' field"):
        secret_value(secret)
    with pytest.raises(ConfigurationError, match="ResourceNotFoundException") as raised:
        secret_value(secret.replace("docagent/api", "docagent/missing"))
    assert "s3cr3t" not in str(raised.value)
