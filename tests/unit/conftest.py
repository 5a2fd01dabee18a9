"""Unit-test fixtures: a test environment, moto in-process (no sockets: the network is blocked), fresh caches
per test, and the AWS resources of the stack (job bucket, idempotency table, reference table)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from moto import mock_aws
from moto.core.config import default_user_config
from pytest_socket import disable_socket, enable_socket

# Before any functions.* import creates the Powertools objects.
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "docagent")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "DocAgent")

from docagent.drills.synthetic import CUSTOMERS_CSV, CUSTOMERS_KEY, CUSTOMERS_TABLE
from docagent.kit.loader import read_bundle
from docagent.kit.registry import publish
from docagent.operations.reference import load_file
from functions import aws
from functions.definition.job_spec import DefinitionBundle
from functions.durability import durable
from functions.logic import process_document
from functions.observability import metrics
from functions.settings import get_settings
from tests.moto_state import build_once, environment
from tests.support import (
    BUCKET,
    EXAMPLES,
    IDEMPOTENCY_TABLE,
    REFERENCE_TABLE,
    seeded_provider,
    without_models,
)

TEST_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "BUCKET_NAME": BUCKET,
    "IDEMPOTENCY_TABLE_NAME": IDEMPOTENCY_TABLE,
    "REFERENCE_TABLE_NAME": REFERENCE_TABLE,
    "DEFAULT_DEFINITION": "invoices",
    "MODEL_PROVIDER": "bedrock",
    "MODEL_ID": "fake-model",
    "CODE_VERSION": "test-0000000",
    "MAX_DOCUMENT_BYTES": "16000",  # over the synthetic invoices as text (a page or two: up to ~5.5 KB)
    "MAX_DOCUMENTS": "300",
    "IDEMPOTENCY_TTL_SECONDS": "3600",
    "ACTIONS_ALLOWED": '{"destinations": {"tickets": "ledger"}}',
    "FAULT_INJECTION_ENABLED": "false",
}


def pytest_configure(config: pytest.Config) -> None:
    # Powertools warns when an invocation (a replayed durable step, a refused request) adds no metric.
    config.addinivalue_line("filterwarnings", "ignore:No application metrics to publish:UserWarning")


_environment_of_the_clients: list[frozenset[tuple[str, str]]] = []


def clear_all_caches() -> None:
    """Settings, the process document caches and metrics are forgotten before and after every test. The
    boto3 clients and the idempotency persistence layers only when the environment changed: a client reads
    its region, credentials and endpoints at creation, and moto answers any client created after it was
    imported, so a client of the same environment serves every test (creating them was ~40 ms a test)."""
    get_settings.cache_clear()
    current = environment()
    if _environment_of_the_clients != [current]:
        aws.clear_clients()
        durable.clear_caches()
        _environment_of_the_clients[:] = [current]
    process_document.clear_caches()
    metrics.clear_metrics()


@pytest.fixture(autouse=True)
def _no_network() -> Iterator[None]:
    """Unit tests never open a socket: moto runs in-process; anything else is a bug."""
    disable_socket(allow_unix_socket=True)
    yield
    enable_socket()


@pytest.fixture(autouse=True)
def env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    for name in list(os.environ):
        if name.startswith("AWS_ENDPOINT_URL") or name in {"AWS_PROFILE", "AWS_CONFIG_FILE"}:
            monkeypatch.delenv(name)
    for name, value in TEST_ENV.items():
        monkeypatch.setenv(name, value)
    clear_all_caches()
    yield monkeypatch
    clear_all_caches()


@pytest.fixture(autouse=True)
def _seeded_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Handlers called without a provider never reach Bedrock: process_document's default provider answers
    the seeded synthetic invoices with their labels (tests/support.py seeded_provider)."""
    monkeypatch.setattr(process_document, "get_model_provider", lambda *_, **__: seeded_provider())


@pytest.fixture
def cloud(env: pytest.MonkeyPatch) -> Iterator[None]:
    """moto with the stack's resources: job bucket, idempotency table (id, TTL expiration), reference table
    (table, key) holding reference table customers: the 50 synthetic customers CUST-00001..CUST-00050, and
    the invoice example published as the default definition. Built through the APIs once per process and
    environment, then restored from a copy (tests/moto_state.py): ~2 ms a test instead of ~40."""
    with fresh_mock():
        build_once("cloud", create_stack_resources)
        yield


def fresh_mock() -> Any:
    """``mock_aws`` with empty backends, keeping boto3's default session across tests: its loader caches the
    service models, which would otherwise be parsed again for every test (most of the suite's time)."""
    core = {**default_user_config.get("core", {}), "reset_boto3_session": False}
    return mock_aws(config={"core": core})  # type: ignore[call-overload]


def create_stack_resources() -> None:
    """The job bucket, the idempotency table (id, TTL expiration), the reference table with the invoice
    example's reference table customers (50 customers)."""
    aws.s3_client().create_bucket(Bucket=BUCKET)
    dynamodb = aws.dynamodb_client()
    dynamodb.create_table(
        TableName=IDEMPOTENCY_TABLE,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    dynamodb.update_time_to_live(
        TableName=IDEMPOTENCY_TABLE,
        TimeToLiveSpecification={"Enabled": True, "AttributeName": "expiration"},
    )
    create_reference_table(dynamodb)
    load_file(dynamodb, REFERENCE_TABLE, CUSTOMERS_TABLE, CUSTOMERS_CSV, CUSTOMERS_KEY)
    # The deployment's default definition (DEFAULT_DEFINITION), published as `docagent definition publish`
    # does: PrepareJob pins its current version. Without its cascade (`models`, issue #54): these tests'
    # model (MODEL_ID fake-model, tests/fakes.py) answers every call as one model; the default's cascade is
    # tested in test_cascade.py and test_scaffold.py, and run by the demo.
    publish(aws.s3_client(), BUCKET, without_models(read_bundle(EXAMPLES / "invoices")))


def create_reference_table(dynamodb: Any) -> None:
    """The reference table as stacks/storage.py creates it: partition key ``table``, sort key ``key``."""
    dynamodb.create_table(
        TableName=REFERENCE_TABLE,
        KeySchema=[
            {"AttributeName": "table", "KeyType": "HASH"},
            {"AttributeName": "key", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "table", "AttributeType": "S"},
            {"AttributeName": "key", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )


@pytest.fixture
def estimates_bundle(tmp_path: Path) -> DefinitionBundle:
    """A job of one class, the claims example's repair estimate (its schema has a list, line_items): the long
    documents' job (tests/unit/test_page_windows.py, test_tiff_windows.py)."""
    name = "repair-estimate"
    (tmp_path / "classes").mkdir()
    shutil.copy(EXAMPLES / "claims" / "classes" / f"{name}.schema.json", tmp_path / "classes")
    job = {
        "name": "long-documents",
        "classes": {name: {"description": "A repair estimate.", "schema": f"classes/{name}.schema.json"}},
    }
    (tmp_path / "job.json").write_text(json.dumps(job))
    return read_bundle(tmp_path)


@pytest.fixture
def cloud_settings(cloud: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The stack's resources with the deployed read ceiling (MAX_DOCUMENT_BYTES, 50 MB)."""
    monkeypatch.setenv("MAX_DOCUMENT_BYTES", "50000000")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()
