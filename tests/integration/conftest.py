"""Integration tests run against a real local cloud on a free 127.0.0.1 port, stopped at the end."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import time
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from docagent import project
from docagent.cli import main
from docagent.drills.chaos import EXPRESS_PROFILE
from docagent.drills.demo_cloud import config_overrides
from docagent.drills.synthetic import (
    CUSTOMERS_CSV,
    CUSTOMERS_KEY,
    CUSTOMERS_TABLE,
    generate_customers,
    generate_documents,
)
from docagent.evaluation.runs import allowing
from docagent.localcloud.bedrock.labels import load_reader
from docagent.localcloud.deploy import deploy
from docagent.localcloud.server import REGION, LocalCloud
from docagent.localcloud.synth import synth_local, synth_local_variants
from docagent.operations.json_shapes import validate_output
from docagent.operations.reference import load_file
from functions.batch_inference.facts import BATCH_MIN_RECORDS
from tests.integration.test_eval import CHEAP

INVOICE_READER = project.ROOT / "examples" / "invoices" / "local_reader.py"


def lane_variants() -> list[dict[str, Any] | None]:
    """The local profile's variants the integration tests deploy: the default (the session cloud, demo,
    eval), the crash matrix's EXPRESS one, test_demo's batches of five, test_batch_crash's batch jobs of 100
    records and test_eval's cascade (its cheap model allowed beside the deployment's)."""
    # the cascade's strong model: the deployment's (cdk.json), which the default definition does not change
    strong = str(json.loads((project.ROOT / "cdk.json").read_text())["context"]["docagent"]["model_id"])
    return [
        None,
        EXPRESS_PROFILE,
        config_overrides(documents_per_child=5, batch_records_per_job=None),
        config_overrides(documents_per_child=1, batch_records_per_job=BATCH_MIN_RECORDS),
        allowing((CHEAP, strong)),
    ]


def pytest_configure(config: pytest.Config) -> None:
    """On a run that deals the tests to workers (`make test`: `-n 3`), the controller synthesizes the variants
    they deploy, together in one CDK process (jsii starts once: 5 take ~9 s of CPU against ~6 s each) before
    the workers start; each test then finds its assembly in the synthesis cache (localcloud/synth.py).
    A run without workers synthesizes what it deploys when it first deploys it."""
    workers = getattr(config.option, "numprocesses", None)
    if workers and not hasattr(config, "workerinput"):
        synth_local_variants(lane_variants())


@pytest.fixture(scope="session")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCloud]:
    # A quarter of real time keeps retries and timeouts short while leaving room for a loaded CI machine.
    # The generated invoices have no labels: the invoice example's reader answers them.
    reader = load_reader(INVOICE_READER)
    with LocalCloud(tmp_path_factory.mktemp("localcloud"), time_scale=0.25, reader=reader) as running:
        yield running
        # IAM is enforced (docagent/localcloud/iam): a request the template's policies refuse is a missing
        # grant (what AWS would refuse), unless a test provoked it and took it back (test_local_iam.py)
        assert running.iam is not None and not running.iam.denials, list(running.iam.denials)


@pytest.fixture(scope="session")
def aws(cloud: LocalCloud):
    session = boto3.session.Session(
        aws_access_key_id="local", aws_secret_access_key="local", region_name=REGION
    )
    return lambda service: session.client(service, endpoint_url=cloud.endpoint)


def run_aws_cli(cloud: LocalCloud, *arguments: str) -> tuple[int, Any, str]:
    """(exit code, parsed JSON output or None, stderr) of the standard AWS CLI against the local endpoint.

    The CLI's own driver (awscli.clidriver, what the `aws` script runs) in this process, with the local
    credentials and region set on its session: its parsing, requests and output as in a shell, without a
    new interpreter importing it each time (about 1.3 CPU-s a call; a subprocess until 2026-12-07).

    Importing awscli sets ``AWS_DATA_PATH`` in the process's environment (awscli/__init__.py, for its own
    models); it is set here only while the CLI runs, then put back: left set, every botocore session of the
    test process, and every local cloud and worker it starts afterwards, read their SDK data from another
    search path than the one the local cloud shares (tests/localcloud/test_fork_server_start_cost.py)."""
    data_path, before = _awscli_data_path(), os.environ.get("AWS_DATA_PATH")
    try:
        from awscli.clidriver import create_clidriver  # noqa: PLC0415 (only the tests that run the CLI load it)

        os.environ["AWS_DATA_PATH"] = data_path
        driver = create_clidriver()
        driver.session.set_credentials("local", "local")
        driver.session.set_config_variable("region", REGION)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = driver.main(["--endpoint-url", cloud.endpoint, *arguments, "--output", "json"])
            except SystemExit as exit_:  # argparse refuses a malformed command line by exiting
                code = exit_.code if isinstance(exit_.code, int) else 255
    finally:
        if before is None:
            os.environ.pop("AWS_DATA_PATH", None)
        else:
            os.environ["AWS_DATA_PATH"] = before
    text = out.getvalue()
    return code, (json.loads(text) if text.strip() else None), err.getvalue()


@functools.cache
def _awscli_data_path() -> str:
    """``AWS_DATA_PATH`` as importing awscli sets it (its own data folder added), the environment put back."""
    before = os.environ.get("AWS_DATA_PATH")
    import awscli  # noqa: F401, PLC0415 (sets AWS_DATA_PATH when first imported)

    value = os.environ.get("AWS_DATA_PATH", "")
    if before is None:
        os.environ.pop("AWS_DATA_PATH", None)
    else:
        os.environ["AWS_DATA_PATH"] = before
    return value


def aws_cli(cloud: LocalCloud, *arguments: str) -> Any:
    """Run the standard AWS CLI against the local endpoint; it must succeed; return its JSON output."""
    code, output, stderr = run_aws_cli(cloud, *arguments)
    assert code == 0, stderr
    return output


def zip_source(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


@pytest.fixture(scope="session")
def role_arn(aws) -> str:
    return aws("iam").create_role(RoleName="local-test", AssumeRolePolicyDocument="{}")["Role"]["Arn"]


@pytest.fixture
def make_function(aws, role_arn: str, request: pytest.FixtureRequest):
    """Create a function from inline source; returns its name."""

    def create(source: str, timeout: int = 3, environment: dict[str, str] | None = None) -> str:
        name = f"fn-{request.node.name[:40].replace('[', '-').replace(']', '')}"
        aws("lambda").create_function(
            FunctionName=name,
            Runtime="python3.13",
            Role=role_arn,
            Handler="app.handler",
            Code={"ZipFile": zip_source({"app.py": source})},
            Timeout=timeout,
            MemorySize=256,
            Environment={"Variables": environment or {}},
        )
        return name

    return create


FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def deployed(cloud: LocalCloud):
    """The app synthesized with the local profile (once per change: the synthesis cache) and deployed to the
    session's local cloud."""
    return deploy(synth_local(), "DocAgent", cloud.endpoint)


# -- the operator CLI (`docagent start/status/list/redrive/inspect/logs`) against the session's cloud ------


@pytest.fixture(scope="session")
def stack_file(deployed, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The deployed stack's outputs where `docagent local deploy` records them (a stack.json)."""
    path = tmp_path_factory.mktemp("operator") / "stack.json"
    deployed.save(path)
    return path


@pytest.fixture
def docagent(cloud: LocalCloud, stack_file: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    """Run `docagent ARGS --endpoint <cloud> --json` in-process: returns (exit code, the parsed JSON), checked
    against the command's output model (docagent/operations/json_shapes.py)."""
    monkeypatch.setattr(project, "LOCAL_STACK_FILE", stack_file)

    def run(*arguments: str) -> tuple[int, dict]:
        capsys.readouterr()
        code = main([*arguments, "--endpoint", cloud.endpoint, "--json"])
        answer = json.loads(capsys.readouterr().out)
        validate_output(" ".join(arguments[:2]), answer)  # the documented shape (docs/reference/cli-json.md)
        return code, answer

    return run


@pytest.fixture(scope="session")
def customers(aws, deployed) -> list[str]:
    """The invoice example's reference table customers (the synthetic customers) loaded into the deployed
    reference table, as `docagent reference load` loads it; returns their ids."""
    table = deployed.outputs["ReferenceTableName"]
    load_file(aws("dynamodb"), table, CUSTOMERS_TABLE, CUSTOMERS_CSV, CUSTOMERS_KEY)
    return [customer.customer_id for customer in generate_customers()]


@pytest.fixture
def documents_dir(tmp_path: Path, customers: list[str]):
    """write(count, seed) -> a directory of `count` generated invoices (doc-00000.txt ...)."""

    def write(count: int, seed: int = 7, name: str = "docs") -> Path:
        directory = tmp_path / name
        directory.mkdir()
        for document in generate_documents(count, seed=seed, customer_ids=customers):
            (directory / f"{document.document_id}.txt").write_text(document.text)
        return directory

    return write


def run_to_end(aws: Any, machine: dict[str, Any], payload: Any = None) -> tuple[dict[str, Any], list[Any]]:
    """Create ``machine`` (a definition) under a new name, run it with ``payload`` to its end; (the
    execution as described, its history's events)."""
    sfn = aws("stepfunctions")
    arn = sfn.create_state_machine(
        name=f"run-{uuid.uuid4().hex[:8]}",
        definition=json.dumps(machine),
        roleArn="arn:aws:iam::123456789012:role/local",
    )["stateMachineArn"]
    execution = sfn.start_execution(stateMachineArn=arn, input=json.dumps(payload or {}))["executionArn"]
    deadline = time.monotonic() + 60
    while (described := sfn.describe_execution(executionArn=execution))["status"] == "RUNNING":
        assert time.monotonic() < deadline, f"{execution} still running"
        time.sleep(0.05)
    return described, sfn.get_execution_history(executionArn=execution)["events"]
