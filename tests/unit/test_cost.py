"""docagent cost: the local endpoint's request classification (on requests botocore really signs) and the
pricing of a job from usage measured at two sizes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import boto3
import pytest
from botocore.config import Config

from docagent.drills import prices
from docagent.drills.cost import UsageModel, cost_report
from docagent.localcloud.request_counts import OPERATOR_USER_AGENT, RequestCounter, classify
from stacks.config import load_config


class Sent(Exception):  # noqa: N818 (a control-flow signal, not an error)
    """Raised by the before-send hook: the request was built and signed, nothing left the process."""


def environ_of(service: str, call: Callable[[Any], Any], **client_args: Any) -> dict[str, Any]:
    """The WSGI environ the local endpoint would see for one boto3 call."""
    client = boto3.client(
        service, endpoint_url="http://127.0.0.1:4566", region_name="us-east-1", **client_args
    )
    seen: dict[str, Any] = {}

    def before_send(request: Any, **_: Any) -> None:
        seen["request"] = request
        raise Sent

    client.meta.events.register("before-send", before_send)
    with pytest.raises(Sent):
        call(client)
    request = seen["request"]
    url = urlsplit(request.url)
    headers = {
        f"HTTP_{name.upper().replace('-', '_')}": value.decode() if isinstance(value, bytes) else value
        for name, value in request.headers.items()
    }
    return {"REQUEST_METHOD": request.method, "PATH_INFO": url.path, "QUERY_STRING": url.query, **headers}


@pytest.mark.parametrize(
    ("service", "call", "expected"),
    [
        ("s3", lambda c: c.get_object(Bucket="b", Key="jobs/j/items.json"), ("s3", "GetObject")),
        ("s3", lambda c: c.get_object(Bucket="b", Key="k", VersionId="v1"), ("s3", "GetObject")),
        ("s3", lambda c: c.head_object(Bucket="b", Key="k"), ("s3", "HeadObject")),
        ("s3", lambda c: c.put_object(Bucket="b", Key="k", Body=b"x"), ("s3", "PutObject")),
        ("s3", lambda c: c.list_objects_v2(Bucket="b", Prefix="p/"), ("s3", "ListObjectsV2")),
        (
            "s3",
            lambda c: c.copy_object(Bucket="b", Key="k", CopySource={"Bucket": "b", "Key": "s"}),
            ("s3", "CopyObject"),
        ),
        ("s3", lambda c: c.create_multipart_upload(Bucket="b", Key="k"), ("s3", "CreateMultipartUpload")),
        (
            "s3",
            lambda c: c.upload_part(Bucket="b", Key="k", UploadId="u", PartNumber=1, Body=b"x"),
            ("s3", "UploadPart"),
        ),
        (
            "s3",
            lambda c: c.upload_part_copy(
                Bucket="b", Key="k", UploadId="u", PartNumber=2, CopySource={"Bucket": "b", "Key": "p"}
            ),
            ("s3", "UploadPartCopy"),
        ),
        (
            "s3",
            lambda c: c.complete_multipart_upload(
                Bucket="b", Key="k", UploadId="u", MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": "e"}]}
            ),
            ("s3", "CompleteMultipartUpload"),
        ),
        ("s3", lambda c: c.list_object_versions(Bucket="b", Prefix="p/"), ("s3", "ListObjectVersions")),
        ("dynamodb", lambda c: c.get_item(TableName="t", Key={"id": {"S": "1"}}), ("dynamodb", "GetItem")),
        ("dynamodb", lambda c: c.put_item(TableName="t", Item={"id": {"S": "1"}}), ("dynamodb", "PutItem")),
        ("lambda", lambda c: c.invoke(FunctionName="f", Payload=b"{}"), ("lambda", "Invoke")),
        ("stepfunctions", lambda c: c.list_map_runs(executionArn="arn:x"), ("states", "ListMapRuns")),
    ],
)
def test_the_endpoint_names_each_request_by_service_and_operation(env, service, call, expected):
    assert classify(environ_of(service, call)) == expected


def test_the_operator_s_requests_are_not_counted(env):
    counter = RequestCounter()
    counter.count(environ_of("s3", lambda c: c.get_object(Bucket="b", Key="k")))
    watching = Config(user_agent_extra=OPERATOR_USER_AGENT)
    counter.count(environ_of("s3", lambda c: c.get_object(Bucket="b", Key="k"), config=watching))
    assert counter.snapshot() == {"s3": {"GetObject": 1}}


def usage(documents: int) -> dict[str, Any]:
    """A job's usage shaped as the demo reports it: 3 S3 writes, 2 reads, 4 DynamoDB writes per document."""
    return {
        "requests": {
            "s3": {"PutObject": 3 * documents + 4, "GetObject": 2 * documents + 6, "ListObjectVersions": 1},
            "dynamodb": {"PutItem": 2 * documents + 1, "UpdateItem": 2 * documents + 1},
        },
        "lambda": {
            "ProcessDocument": {"invocations": documents, "ms": 1.0},
            "PrepareJob": {"invocations": 1},
        },
        "state_transitions": documents + 6,
        "stored_bytes": 4000 * documents,
    }


def test_usage_is_split_into_per_document_and_per_job_and_priced(env):
    model = UsageModel.fit((10, usage(10)), (30, usage(30)))
    assert model.per_document["requests:s3:PutObject"] == 3
    assert model.per_job["requests:s3:PutObject"] == 4
    assert model.per_document["requests:s3:ListObjectVersions"] == 0  # one listing page, whatever the size
    assert model.per_job["state_transitions"] == 6

    config = load_config({"model_id": "anthropic.claude-3-haiku-20240307-v1:0"})
    report = cost_report(100_000, model, config)
    by_service = report["by_service"]
    assert set(by_service) == {"stepfunctions", "lambda", "dynamodb", "s3", "bedrock"}
    assert by_service["stepfunctions"]["state_transitions"] == 100_006
    assert by_service["dynamodb"]["write_units"] == 400_002
    assert by_service["s3"]["usd"] == pytest.approx(
        (300_004 + 1) * prices.S3_PER_WRITE_OR_LIST
        + 200_006 * prices.S3_PER_READ
        + 0.4 * prices.S3_PER_GB_MONTH,
        abs=1e-4,
    )
    tokens = 100_000 * config.model_input_tokens_per_document
    assert by_service["bedrock"]["usd"] == pytest.approx(
        tokens / 1000 * 0.00025 + 100_000 * prices.ASSUMED_OUTPUT_TOKENS_PER_DOCUMENT / 1000 * 0.00125,
        abs=1e-4,
    )
    assert report["total_usd"] == pytest.approx(sum(f["usd"] for f in by_service.values()), abs=1e-3)
    assert report["per_1000_usd"] * 100 == pytest.approx(
        report["total_usd"], rel=0.01
    )  # fixed costs are small
    assert report["prices_as_of"] == prices.PRICES_AS_OF


def test_a_model_without_a_price_is_named(env):
    model = UsageModel.fit((10, usage(10)), (30, usage(30)))
    with pytest.raises(LookupError, match=r"no price for model 'acme\.tiny-v1'"):
        cost_report(1000, model, load_config({"model_id": "acme.tiny-v1"}))


def test_k_documents_per_child_divide_the_per_child_counters_by_k() -> None:
    measured = UsageModel(
        (10, 30),
        {"state_transitions": 1.0, "invocations:ProcessDocument": 1.0, "requests:s3:PutObject": 2.0},
        {"state_transitions": 6.0, "invocations:PrepareJob": 1.0},
    )
    batched = measured.batched(10)
    assert batched.per_document == {
        "state_transitions": 0.1,
        "invocations:ProcessDocument": 0.1,
        "requests:s3:PutObject": 2.0,  # per document whatever the batch
    }
    assert batched.per_job == measured.per_job
    assert batched.batched(1).per_document == measured.per_document  # back from K=10 to K=1
    config = load_config({})
    one, ten = (cost_report(100_000, model, config)["by_service"] for model in (measured, batched))
    assert (
        ten["stepfunctions"]["state_transitions"] == (one["stepfunctions"]["state_transitions"] - 6) // 10 + 6
    )
    assert ten["lambda"]["requests"] < one["lambda"]["requests"] / 9
    assert ten["lambda"]["gb_seconds"] == one["lambda"]["gb_seconds"]  # K documents' time per invocation
