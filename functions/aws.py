"""boto3 clients, created lazily (never at import) and cached per process.

boto3 honours AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_<SERVICE> by itself, so the same code runs against AWS, a
local cloud, or moto. Tests call ``clear_clients()`` (or each ``cache_clear``) between cases.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config

if TYPE_CHECKING:
    from mypy_boto3_bedrock_runtime import BedrockRuntimeClient
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_s3 import S3Client

_DEFAULT_CONFIG = Config(retries={"mode": "standard", "max_attempts": 5}, connect_timeout=5, read_timeout=30)
# Model calls: one attempt per call, no SDK retries. Step Functions retries a throttled or unavailable call
# (ModelThrottled, ModelUnavailable) with backoff and full jitter, which costs nothing while it waits
# and lets the journal record every attempt. The read timeout is set per call from the invocation's
# remaining time (see functions/inference/converse.py): a hung call ends as ModelUnavailable, not a timeout.
BEDROCK_CONNECT_TIMEOUT_SECONDS = 3


@functools.cache
def s3_client() -> S3Client:
    return boto3.client("s3", config=_DEFAULT_CONFIG)


@functools.cache
def dynamodb_client() -> DynamoDBClient:
    return boto3.client("dynamodb", config=_DEFAULT_CONFIG)


@functools.lru_cache(maxsize=16)
def bedrock_runtime_client(read_timeout: float = 60) -> BedrockRuntimeClient:
    """One client per read timeout (whole seconds, tenths under one: functions/inference/converse.py), so a
    warm container reuses its clients and their connections."""
    config = Config(
        retries={"mode": "standard", "total_max_attempts": 1},
        # Connect plus read stay below the time the caller had: connect takes at most a third of the read.
        connect_timeout=min(BEDROCK_CONNECT_TIMEOUT_SECONDS, round(read_timeout / 3, 1)),
        read_timeout=read_timeout,
    )
    return boto3.client("bedrock-runtime", config=config)


@functools.cache
def textract_client() -> Any:
    """Amazon Textract (the OCR of pages without a text layer, functions/reading/ocr/); typed loosely: no
    stubs are pinned for it. The SDK's standard retries take a throttled call
    (ProvisionedThroughputExceeded)."""
    return boto3.client("textract", config=_DEFAULT_CONFIG)


@functools.cache
def secretsmanager_client() -> Any:
    """Reads the secrets actions name by reference; typed loosely: no stubs are pinned for it."""
    return boto3.client("secretsmanager", config=_DEFAULT_CONFIG)


@functools.cache
def ssm_client() -> Any:
    """Reads SSM parameters actions name by reference (``ssm:/name``)."""
    return boto3.client("ssm", config=_DEFAULT_CONFIG)


@functools.cache
def events_client() -> Any:
    """EventBridge PutEvents (eventbridge actions)."""
    return boto3.client("events", config=_DEFAULT_CONFIG)


@functools.cache
def sns_client() -> Any:
    """SNS Publish (sns actions)."""
    return boto3.client("sns", config=_DEFAULT_CONFIG)


@functools.cache
def bedrock_client() -> Any:
    """The Bedrock control plane (batch inference jobs); typed loosely: no stubs are pinned for it."""
    return boto3.client("bedrock", config=_DEFAULT_CONFIG)


@functools.cache
def stepfunctions_client() -> Any:
    """SendTaskSuccess for the batch wait's task token (functions/batch_inference/invocation_jobs.py)."""
    return boto3.client("stepfunctions", config=_DEFAULT_CONFIG)


def clear_clients() -> None:
    """Forget every cached client (tests, or after the environment changed)."""
    factories = (s3_client, dynamodb_client, bedrock_runtime_client, secretsmanager_client, ssm_client)
    others = (events_client, sns_client, bedrock_client, stepfunctions_client, textract_client)
    for factory in (*factories, *others):
        factory.cache_clear()
