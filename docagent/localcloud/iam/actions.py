"""What a request to the local endpoint asks IAM for: its actions, each on a resource ARN, with the request's
condition keys (AWS "Service Authorization Reference": the actions, resource types and condition keys of S3,
Lambda, DynamoDB, Step Functions, SNS, EventBridge, SSM, Secrets Manager, CloudWatch Logs and Bedrock, looked
up 2026-12-07).

S3 is read from the path-style request (the local endpoint is called by address); the JSON services from
``X-Amz-Target`` and the body; Lambda and Bedrock from their REST paths. A request of a shape not known here
raises ``UnmappedRequestError``: the caller refuses it with that reason (a role is never let through
unchecked).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote

from docagent.localcloud.bedrock.batch_path import PATH as BATCH_PATH
from docagent.localcloud.request_counts import _s3_operation

# Inference profile ids start with their geography (AWS "Supported Regions and models for inference profiles",
# looked up 2026-12-07): global., us., eu., apac., jp., au., ca., us-gov.
PROFILE_PREFIXES = ("global", "us", "eu", "apac", "jp", "au", "ca", "us-gov")
PASSED_TO_SERVICE = "iam:passedtoservice"
INFERENCE_PROFILE_KEY = "bedrock:inferenceprofilearn"


class UnmappedRequestError(ValueError):
    """The local evaluation does not know which IAM action a request is."""


@dataclass(frozen=True)
class Check:
    action: str
    resource: str
    context: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())


@dataclass(frozen=True)
class Where:
    account: str
    region: str


def _s3_path(path: str) -> tuple[str, str]:
    """(bucket, key) of a path-style request; PATH_INFO holds the UTF-8 bytes as Latin-1 (WSGI)."""
    text = path.encode("latin-1").decode("utf-8", "replace")
    bucket, _, key = text.lstrip("/").partition("/")
    return bucket, key


_S3_ACTIONS = {
    "GetObject": "GetObject",
    "HeadObject": "GetObject",
    "PutObject": "PutObject",
    "CopyObject": "PutObject",
    "UploadPart": "PutObject",
    "UploadPartCopy": "PutObject",
    "CompleteMultipartUpload": "PutObject",
    "POSTMultipartUpload": "PutObject",
    "CreateMultipartUpload": "PutObject",
    "DELETEMultipartUpload": "AbortMultipartUpload",
    "GETMultipartUpload": "ListMultipartUploadParts",
    "DeleteObject": "DeleteObject",
    "ListObjects": "ListBucket",
    "ListObjectsV2": "ListBucket",
    "HeadBucket": "ListBucket",
    "ListObjectVersions": "ListBucketVersions",
    "MultipartUploads": "ListBucketMultipartUploads",
    "BucketVersioning": "GetBucketVersioning",
    "PUTBucketVersioning": "PutBucketVersioning",
}


def s3_checks(
    method: str, path: str, query_string: str, headers: Mapping[str, str], body: bytes
) -> list[Check]:
    query = parse_qs(query_string, keep_blank_values=True)
    copy = headers.get("x-amz-copy-source")
    operation = _s3_operation(method, path, query, copy=copy is not None)
    bucket, key = _s3_path(path)
    bucket_arn, object_arn = f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/{key}"
    versioned = "versionId" in query
    if operation == "DeleteObjects":
        keys = re.findall(rb"<Key>(.*?)</Key>", body)
        return [Check("s3:DeleteObject", f"{bucket_arn}/{k.decode('utf-8', 'replace')}") for k in keys]
    if operation not in _S3_ACTIONS:
        raise UnmappedRequestError(f"S3 {method} {path}?{query_string}")
    action = _S3_ACTIONS[operation]
    if versioned and action in ("GetObject", "DeleteObject"):
        action += "Version"
    if action.startswith(("List", "GetBucket", "PutBucket")):
        prefix = query.get("prefix", [""])[0]
        return [Check(f"s3:{action}", bucket_arn, (("s3:prefix", (prefix,)),))]
    checks = [Check(f"s3:{action}", object_arn)]
    if copy is not None:
        source, _, version = unquote(copy).lstrip("/").partition("?versionId=")
        checks.append(Check("s3:GetObjectVersion" if version else "s3:GetObject", f"arn:aws:s3:::{source}"))
    return checks


def _json_resource(service: str, body: Mapping[str, Any], where: Where) -> list[str]:
    region, account = where.region, where.account
    if service == "dynamodb":
        tables = [body["TableName"]] if "TableName" in body else list(body.get("RequestItems") or {})
        tables += [
            next(iter(item.values())).get("TableName", "") for item in body.get("TransactItems") or [] if item
        ]
        return [f"arn:aws:dynamodb:{region}:{account}:table/{t}" for t in tables] or ["*"]
    if service == "states":
        for key in ("executionArn", "stateMachineArn", "activityArn", "mapRunArn", "resourceArn"):
            if key in body:
                return [str(body[key])]
        return ["*"]
    if service == "ssm":
        names = [body["Name"]] if "Name" in body else list(body.get("Names") or [])
        return [f"arn:aws:ssm:{region}:{account}:parameter/{str(n).lstrip('/')}" for n in names] or ["*"]
    if service == "events" and "Entries" in body:
        buses = {str(e.get("EventBusName") or "default") for e in body["Entries"]}
        return [
            b if b.startswith("arn:") else f"arn:aws:events:{region}:{account}:event-bus/{b}" for b in buses
        ]
    if service == "secretsmanager" and "SecretId" in body:
        secret = str(body["SecretId"])
        return [
            secret
            if secret.startswith("arn:")
            else f"arn:aws:secretsmanager:{region}:{account}:secret:{secret}"
        ]
    if service == "logs" and "logGroupName" in body:
        group = f"arn:aws:logs:{region}:{account}:log-group:{body['logGroupName']}"
        stream = body.get("logStreamName")
        return [f"{group}:log-stream:{stream}" if stream else group]
    return ["*"]


def json_checks(service: str, target: str, body: bytes, where: Where) -> list[Check]:
    operation = target.rsplit(".", 1)[-1]
    try:
        document = json.loads(body or b"{}")
    except ValueError:
        document = {}
    return [Check(f"{service}:{operation}", r) for r in _json_resource(service, document, where)]


def query_checks(service: str, body: bytes, query_string: str) -> list[Check]:
    """Query-protocol services (SNS, STS, IAM): Action and the topic from the form."""
    form = parse_qs(body.decode("utf-8", "replace") or query_string)
    operation = form.get("Action", [""])[0]
    if not operation:
        raise UnmappedRequestError(f"{service} request without an Action")
    resource = form.get("TopicArn", form.get("TargetArn", ["*"]))[0] if service == "sns" else "*"
    return [Check(f"{service}:{operation}", resource)]


def lambda_checks(method: str, path: str, query_string: str, where: Where) -> list[Check]:
    match = re.fullmatch(r"/[0-9-]+/functions/([^/]+)(/.*)?", path)
    if match is None:
        raise UnmappedRequestError(f"Lambda {method} {path}")
    name, rest = unquote(match[1]), match[2] or ""
    qualifier = parse_qs(query_string).get("Qualifier", [""])[0]
    arn = (
        name if name.startswith("arn:") else f"arn:aws:lambda:{where.region}:{where.account}:function:{name}"
    )
    if qualifier and arn.count(":") == 6:
        arn += f":{qualifier}"
    if rest in ("/invocations", "/invoke-async", "/invoke-async/"):
        return [Check("lambda:InvokeFunction", arn)]
    if method == "GET" and rest in ("", "/configuration"):
        return [Check("lambda:GetFunction" if not rest else "lambda:GetFunctionConfiguration", arn)]
    raise UnmappedRequestError(f"Lambda {method} {path}")


def model_checks(action: str, model_id: str, where: Where) -> list[Check]:
    """InvokeModel (Converse) or CreateModelInvocationJob on a model: an inference profile is authorized on
    the profile and on the foundation model it routes to, with bedrock:InferenceProfileArn naming the profile
    (AWS "Prerequisites for inference profiles", looked up 2026-12-07)."""
    model_id = unquote(model_id)
    if model_id.startswith("arn:"):
        resource_id = model_id.rsplit("/", 1)[-1]
        kind = "inference-profile" if ":inference-profile/" in model_id else "foundation-model"
    else:
        resource_id = model_id
        kind = "inference-profile" if model_id.split(".", 1)[0] in PROFILE_PREFIXES else "foundation-model"
    if kind == "foundation-model":
        return [Check(action, f"arn:aws:bedrock:{where.region}::foundation-model/{resource_id}")]
    profile = f"arn:aws:bedrock:{where.region}:{where.account}:inference-profile/{resource_id}"
    model = resource_id.split(".", 1)[1]
    routed = ((INFERENCE_PROFILE_KEY, (profile,)),)
    return [
        Check(action, profile),
        Check(action, f"arn:aws:bedrock:{where.region}::foundation-model/{model}", routed),
    ]


def bedrock_checks(method: str, path: str, body: bytes, where: Where) -> list[Check]:
    runtime = re.fullmatch(
        r"/model/([^/]+)/(converse|converse-stream|invoke|invoke-with-response-stream)", path
    )
    if runtime is not None:
        streaming = runtime[2].endswith("stream")
        return model_checks(
            "bedrock:InvokeModelWithResponseStream" if streaming else "bedrock:InvokeModel", runtime[1], where
        )
    job = BATCH_PATH.match(path)
    if job is None:
        raise UnmappedRequestError(f"Bedrock {method} {path}")
    jobs = f"arn:aws:bedrock:{where.region}:{where.account}:model-invocation-job/"
    if job["job"]:
        identifier = unquote(job["job"])
        arn = identifier if identifier.startswith("arn:") else jobs + identifier
        return [
            Check("bedrock:StopModelInvocationJob" if job["stop"] else "bedrock:GetModelInvocationJob", arn)
        ]
    if method == "GET":
        return [Check("bedrock:ListModelInvocationJobs", "*")]
    request = json.loads(body or b"{}")
    checks = model_checks("bedrock:CreateModelInvocationJob", str(request.get("modelId", "")), where)
    passed = ((PASSED_TO_SERVICE, ("bedrock.amazonaws.com",)),)
    return [*checks, Check("iam:PassRole", str(request.get("roleArn", "")), passed)]
