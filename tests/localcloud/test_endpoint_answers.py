"""The endpoint's answers to the pipeline's most frequent calls are byte for byte those it gave before its
per-request cuts (localcloud/lean_serving.py, request_ids.py, s3/path_style.py, serializer_aliases.py): the
same boto3 calls against moto without the cuts, then with them, from the same seed, compared whole (status,
headers, body), only the clock's values blanked."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto.core.serialize import AttributePicker, TimestampSerializer, XFormedAttributePicker
from moto.moto_api._internal import mock_random
from moto.moto_api._internal.models import moto_api_backend
from moto.moto_api._internal.moto_random import MotoRandom
from moto.moto_server.werkzeug_app import create_backend_app
from moto.s3.responses import S3Response

from docagent.localcloud import keep_alive, request_ids, serializer_aliases
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
    _serialized_calls(s3, dynamodb)
    return answers


def _serialized_calls(s3: Any, dynamodb: Any) -> None:
    """Answers moto builds with its generic serializer (moto.core.serialize): listings and every DynamoDB
    answer, with each kind of attribute value, nested and in lists (localcloud/serializer_aliases.py)."""
    for index in range(3):
        s3.put_object(Bucket="documents", Key=f"jobs/j/out/{index}/r%s.json", Body=b"{}")
    s3.list_objects_v2(Bucket="documents", Prefix="jobs/j/", Delimiter="/")
    s3.list_objects_v2(Bucket="documents", Prefix="jobs/j/out/", MaxKeys=2, FetchOwner=True)
    s3.list_objects_v2(
        Bucket="documents", Prefix="jobs/j/out/", EncodingType="url", StartAfter="jobs/j/out/0"
    )
    with pytest.raises(s3.exceptions.NoSuchBucket):
        s3.list_objects_v2(Bucket="missing")
    every_type = {
        "id": {"S": "doc-2"},
        "n": {"N": "12.5"},
        "b": {"B": b"\x00\x01"},
        "ok": {"BOOL": True},
        "none": {"NULL": True},
        "tags": {"SS": ["a", "b"]},
        "sizes": {"NS": ["1", "2"]},
        "pages": {"L": [{"M": {"page": {"N": "1"}, "text": {"S": "x"}}}, {"L": [{"S": "y"}]}]},
        "result": {"M": {"fields": {"M": {"total": {"N": "3"}}}, "blobs": {"BS": [b"z"]}}},
    }
    dynamodb.put_item(TableName="steps", Item=every_type, ReturnConsumedCapacity="TOTAL")
    dynamodb.get_item(
        TableName="steps",
        Key={"id": {"S": "doc-2"}},
        ProjectionExpression="pages, #r",
        ExpressionAttributeNames={"#r": "result"},
    )
    dynamodb.get_item(TableName="steps", Key={"id": {"S": "absent"}})
    dynamodb.query(
        TableName="steps",
        KeyConditionExpression="id = :id",
        ExpressionAttributeValues={":id": {"S": "doc-2"}},
        ReturnConsumedCapacity="INDEXES",
    )
    dynamodb.scan(TableName="steps", Limit=1)
    dynamodb.batch_get_item(
        RequestItems={"steps": {"Keys": [{"id": {"S": "doc-1"}}, {"id": {"S": "doc-2"}}]}}
    )
    dynamodb.batch_write_item(RequestItems={"steps": [{"PutRequest": {"Item": {"id": {"S": "doc-3"}}}}]})
    dynamodb.update_item(
        TableName="steps",
        Key={"id": {"S": "doc-2"}},
        UpdateExpression="SET #n = #n + :one REMOVE #t",
        ExpressionAttributeNames={"#n": "n", "#t": "tags"},
        ExpressionAttributeValues={":one": {"N": "1"}},
        ReturnValues="UPDATED_OLD",
    )
    dynamodb.delete_item(TableName="steps", Key={"id": {"S": "doc-3"}}, ReturnValues="ALL_OLD")
    dynamodb.describe_table(TableName="steps")
    dynamodb.list_tables()
    with pytest.raises(dynamodb.exceptions.ResourceNotFoundException):
        dynamodb.get_item(TableName="missing", Key={"id": {"S": "x"}})


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
        before.setattr(XFormedAttributePicker, "get_possible_keys", serializer_aliases._moto_possible_keys)
        before.setattr(AttributePicker, "__call__", serializer_aliases._moto_pick)
        before.setattr(
            TimestampSerializer, "_convert_timestamp_to_str", serializer_aliases._moto_convert_timestamp
        )
        with _served() as endpoint:
            uncut = _calls(endpoint)
    request_ids.install()
    path_style.install()
    serializer_aliases.install()
    with _served() as endpoint:
        lean = _calls(endpoint)
    assert len(lean) == 11 + 19
    assert all(any(name == "x-amzn-requestid" for name, _ in headers) for _, headers, _ in lean)
    assert lean == uncut
