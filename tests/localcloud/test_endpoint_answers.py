"""The endpoint's answers to the pipeline's most frequent calls are byte for byte those it gave before its
per-request cuts (localcloud/lean_serving.py, request_ids.py, s3/path_style.py): the same boto3 calls
against moto without the cuts, then with them, from the same seed, compared whole (status, headers, body),
only the clock's values blanked."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto.moto_api._internal import mock_random
from moto.moto_api._internal.models import moto_api_backend
from moto.moto_api._internal.moto_random import MotoRandom
from moto.moto_server.werkzeug_app import create_backend_app
from moto.s3.responses import S3Response

from docagent.localcloud import keep_alive, request_ids
from docagent.localcloud.s3 import path_style
from docagent.localcloud.server import HOST, CachedDispatcher, client_environment, free_port
from docagent.localcloud.state.persistence import JournaledMotoServer
from tests.localcloud.test_lean_serving import UncutHandler

# moto's backends are one per process: emptying them here would empty the integration tests' session cloud
pytestmark = pytest.mark.own_cloud

Answer = tuple[int, list[tuple[str, str]], bytes]
_CLOCK_HEADERS = frozenset({"date", "last-modified"})
_CLOCK_IN_BODY = re.compile(rb"<LastModified>[^<]*|\d{10}\.\d+")  # S3's XML, DynamoDB's epoch seconds


def _calls(endpoint: str) -> list[Answer]:
    """What a document's steps ask most (S3 objects and listings, DynamoDB items), and two refusals."""
    session = boto3.session.Session(
        aws_access_key_id="local", aws_secret_access_key="local", region_name="us-east-1"
    )
    answers: list[Answer] = []

    def keep(http_response: Any, **_: Any) -> None:
        body, clocks = _CLOCK_IN_BODY.subn(b"-", http_response.content)
        # a body with a time: its checksum and its length (a float's digits) go with the time
        blank = _CLOCK_HEADERS | ({"x-amz-crc32", "content-length"} if clocks else set())
        headers = sorted(
            (name.lower(), "-" if name.lower() in blank else value)
            for name, value in http_response.headers.items()
        )
        answers.append((http_response.status_code, headers, body))

    s3 = session.client("s3", endpoint_url=endpoint)
    dynamodb = session.client("dynamodb", endpoint_url=endpoint)
    for client in (s3, dynamodb):
        client.meta.events.register("after-call", keep)
        client.meta.events.register("after-call-error", keep)
    s3.create_bucket(Bucket="documents")
    body = json.dumps({"text": "ünïcode " * 50}).encode()
    s3.put_object(Bucket="documents", Key="jobs/j/in/a b.json", Body=body, Metadata={"my_key": "v"})
    s3.get_object(Bucket="documents", Key="jobs/j/in/a b.json")  # its body kept by the hook
    s3.head_object(Bucket="documents", Key="jobs/j/in/a b.json")
    s3.list_objects_v2(Bucket="documents", Prefix="jobs/j/")
    with pytest.raises(s3.exceptions.NoSuchKey):
        s3.get_object(Bucket="documents", Key="jobs/j/missing.json")
    dynamodb.create_table(
        TableName="steps",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    item = {"id": {"S": "doc-1"}, "status": {"S": "INPROGRESS"}, "expiration": {"N": "1"}}
    dynamodb.put_item(TableName="steps", Item=item, ConditionExpression="attribute_not_exists(id)")
    dynamodb.update_item(
        TableName="steps",
        Key={"id": {"S": "doc-1"}},
        UpdateExpression="SET #s = :s, #d = :d",
        ExpressionAttributeNames={"#s": "status", "#d": "data"},
        ExpressionAttributeValues={":s": {"S": "COMPLETED"}, ":d": {"S": "{}"}},
        ReturnValues="ALL_NEW",
    )
    dynamodb.get_item(TableName="steps", Key={"id": {"S": "doc-1"}}, ConsistentRead=True)
    with pytest.raises(dynamodb.exceptions.ConditionalCheckFailedException):
        dynamodb.put_item(TableName="steps", Item=item, ConditionExpression="attribute_not_exists(id)")
    return answers


@contextlib.contextmanager
def _served() -> Iterator[str]:
    """moto behind the endpoint's server (keep_alive.KeepAliveRequestHandler, as it is when called), its
    backends empty and its random source seeded."""
    server = JournaledMotoServer(None, HOST, free_port(), app=CachedDispatcher(create_backend_app))
    server.bind()
    server.serve()
    moto_api_backend.reset()
    mock_random.seed(51)
    try:
        yield f"http://{HOST}:{server._port}"
    finally:
        server.stop()


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in client_environment("unused").items():
        if name != "AWS_ENDPOINT_URL":
            monkeypatch.setenv(name, value)


def test_the_pipeline_s_calls_are_answered_as_before_the_cuts(
    monkeypatch: pytest.MonkeyPatch, environment: None
) -> None:
    with monkeypatch.context() as before:
        before.setattr(keep_alive, "KeepAliveRequestHandler", UncutHandler)
        before.setattr(MotoRandom, "get_random_string", request_ids._moto_get_random_string)
        before.setattr(
            S3Response, "subdomain_based_buckets", staticmethod(path_style._moto_subdomain_based_buckets)
        )
        with _served() as endpoint:
            uncut = _calls(endpoint)
    request_ids.install()
    path_style.install()
    with _served() as endpoint:
        lean = _calls(endpoint)
    assert len(lean) == 11
    assert all(any(name == "x-amzn-requestid" for name, _ in headers) for _, headers, _ in lean)
    assert lean == uncut
