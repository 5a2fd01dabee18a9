"""The local cloud survives its own kill -9: state on disk, a restart resumes what was running; and
`docagent local deploy` again, as a new user would, on a cloud that holds the stack, restored from the
journal after `local down` and `local up`, after a handler changed: it updates what changed, as `cdk deploy`
would, and new jobs run the new code."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import boto3
import pytest

from docagent.drills.cloud_crash import CloudProcess
from docagent.drills.demo_corpus import seed_inputs
from docagent.drills.local_job import LocalJob
from docagent.localcloud.deploy import LocalStack
from docagent.localcloud.server import REGION, free_port
from docagent.localcloud.synth import synth_local
from tests.integration.conftest import zip_source
from tests.support import wait_for_execution, wait_until

HANDLER = """
import boto3

def handler(event, context):
    boto3.client("s3").put_object(Bucket=event["bucket"], Key="token", Body=event["token"].encode())
    return {}
"""
BUCKET = "durable-bucket"


def _definition(function_arn: str) -> str:
    return json.dumps(
        {
            "StartAt": "Prepare",
            "States": {
                "Prepare": {"Type": "Pass", "Result": {"bucket": BUCKET}, "Next": "Approve"},
                "Approve": {
                    "Type": "Task",
                    "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
                    "Parameters": {
                        "FunctionName": function_arn,
                        "Payload": {"bucket.$": "$.bucket", "token.$": "$$.Task.Token"},
                    },
                    "Next": "Done",
                },
                "Done": {"Type": "Pass", "Result": {"done": True}, "End": True},
            },
        }
    )


@pytest.fixture
def cloud(tmp_path: Path) -> Iterator[CloudProcess]:
    process = CloudProcess(tmp_path, free_port(), time_scale=0.25)
    yield process
    process.stop()


def _client(cloud: CloudProcess, service: str) -> Any:
    session = boto3.session.Session(
        aws_access_key_id="local", aws_secret_access_key="local", region_name=REGION
    )
    return session.client(service, endpoint_url=cloud.endpoint)


def _cli(cloud: CloudProcess, *arguments: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DOCAGENT_STATE_DIR": str(cloud.state_root)}
    return subprocess.run(
        [sys.executable, "-m", "docagent.cli", *arguments, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _function(cloud: CloudProcess, role: str, name: str, source: str) -> str:
    """The ARN of a function made from inline source, run as ``role``."""
    return str(
        _client(cloud, "lambda").create_function(
            FunctionName=name,
            Runtime="python3.13",
            Role=role,
            Handler="index.handler",
            Code={"ZipFile": zip_source({"index.py": source})},
            Timeout=30,
        )["FunctionArn"]
    )


def _token(s3: Any) -> str | None:
    try:
        return str(s3.get_object(Bucket=BUCKET, Key="token")["Body"].read().decode())
    except s3.exceptions.NoSuchKey:
        return None


def test_up_on_a_taken_port_fails_at_once_naming_it(cloud: CloudProcess) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        started = time.time()
        refused = _cli(cloud, "local", "up", "--detach", "--port", str(port))
        assert refused.returncode != 0
        assert str(port) in json.loads(refused.stdout)["error"]
        assert time.time() - started < 60
    assert not (cloud.state_root / "local" / "cloud.json").exists(), "no cloud was left behind"


CHILD = """
import boto3, time, uuid

def handler(event, context):
    s3 = boto3.client("s3")
    s3.put_object(Bucket=event["bucket"], Key=f"calls/{event['index']}/{uuid.uuid4().hex}", Body=b"")
    if event["index"] == 1:
        time.sleep(1)  # the others finish first: a failure past the threshold aborts children still running
        try:
            s3.head_object(Bucket=event["bucket"], Key="fixed")
        except Exception:
            raise RuntimeError("not fixed yet") from None
    return {"index": event["index"]}
"""


def _map_definition(function_arn: str) -> str:
    worker = {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke",
        "Parameters": {"FunctionName": function_arn, "Payload.$": "$"},
        "OutputPath": "$.Payload",
        "End": True,
    }
    return json.dumps(
        {
            "StartAt": "Review",
            "States": {
                "Review": {
                    "Type": "Map",
                    "ItemReader": {
                        "Resource": "arn:aws:states:::s3:getObject",
                        "ReaderConfig": {"InputType": "JSON"},
                        "Parameters": {"Bucket": BUCKET, "Key": "items.json"},
                    },
                    "ItemProcessor": {
                        "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
                        "StartAt": "Work",
                        "States": {"Work": worker},
                    },
                    "End": True,
                }
            },
        }
    )


class Held(NamedTuple):
    """What the cloud holds at its first kill: the waiting job (its execution ARN, the token handed out, its
    history), the failed one (its ARN, its Map Runs), the two versions of doc.txt, the upload half done."""

    waiting: str
    token: str
    history: list[Any]
    failed: str
    map_runs: list[Any]
    versions: tuple[str, str]
    upload: str
    first_part: str


HEAD = b"a" * (5 * 1024 * 1024)  # S3's (and moto's) least size for a part that is not the last


def _hold_everything(cloud: CloudProcess) -> Held:
    """A fresh cloud made to hold each thing the restart must keep."""
    assert cloud.start(fresh=True).startswith("nothing to restore")
    s3, dynamodb, sfn = _client(cloud, "s3"), _client(cloud, "dynamodb"), _client(cloud, "stepfunctions")
    s3.create_bucket(Bucket=BUCKET)
    s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    s3.put_object(Bucket=BUCKET, Key="kept.txt", Body=b"kept")
    dynamodb.create_table(
        TableName="kept",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    dynamodb.put_item(TableName="kept", Item={"id": {"S": "a"}, "n": {"N": "1"}})
    role = str(_client(cloud, "iam").create_role(RoleName="r", AssumeRolePolicyDocument="{}")["Role"]["Arn"])
    # the waiting job
    waiting_machine = sfn.create_state_machine(
        name="durable",
        definition=_definition(_function(cloud, role, "hand-out-token", HANDLER)),
        roleArn=role,
    )
    execution = sfn.start_execution(
        stateMachineArn=waiting_machine["stateMachineArn"], name="job-1", input="{}"
    )
    token = wait_until(lambda: _token(s3))
    # the failed job
    items = [{"bucket": BUCKET, "index": index} for index in range(3)]
    s3.put_object(Bucket=BUCKET, Key="items.json", Body=json.dumps(items).encode())
    mapped = sfn.create_state_machine(
        name="mapped", definition=_map_definition(_function(cloud, role, "child", CHILD)), roleArn=role
    )
    arn = sfn.start_execution(stateMachineArn=mapped["stateMachineArn"], name="job-2", input="{}")[
        "executionArn"
    ]
    failed = wait_for_execution(sfn, arn, timeout=60)
    assert failed["status"] == "FAILED"
    map_runs = sfn.list_map_runs(executionArn=arn)["mapRuns"]
    # the versions and the upload half done
    first = s3.put_object(Bucket=BUCKET, Key="doc.txt", Body=b"one")["VersionId"]
    second = s3.put_object(Bucket=BUCKET, Key="doc.txt", Body=b"two")["VersionId"]
    s3.put_object(Bucket=BUCKET, Key="part-2", Body=b"tail\n")
    upload = s3.create_multipart_upload(Bucket=BUCKET, Key="joined")["UploadId"]
    one = s3.upload_part(Bucket=BUCKET, Key="joined", UploadId=upload, PartNumber=1, Body=HEAD)["ETag"]
    history_before = sfn.get_execution_history(executionArn=execution["executionArn"])["events"]

    return Held(execution["executionArn"], token, history_before, arn, map_runs, (first, second), upload, one)


def _check_restored(cloud: CloudProcess, held: Held) -> None:
    """After the kill: each thing is there as it was."""
    s3, dynamodb, sfn = _client(cloud, "s3"), _client(cloud, "dynamodb"), _client(cloud, "stepfunctions")
    assert s3.get_object(Bucket=BUCKET, Key="kept.txt")["Body"].read() == b"kept"
    assert dynamodb.get_item(TableName="kept", Key={"id": {"S": "a"}})["Item"]["n"] == {"N": "1"}
    described = sfn.describe_execution(executionArn=held.waiting)
    assert described["status"] == "RUNNING"
    history = sfn.get_execution_history(executionArn=held.waiting)["events"]
    assert [event["type"] for event in history[: len(held.history)]] == [
        event["type"] for event in held.history
    ]
    assert sfn.describe_execution(executionArn=held.failed)["redriveStatus"] == "REDRIVABLE"
    restored_runs = sfn.list_map_runs(executionArn=held.failed)["mapRuns"]
    same = ("mapRunArn", "stateMachineArn", "startDate")
    assert [{name: run[name] for name in same} for run in restored_runs] == [
        {name: run[name] for name in same} for run in held.map_runs
    ]
    assert s3.get_object(Bucket=BUCKET, Key="doc.txt", VersionId=held.versions[0])["Body"].read() == b"one"
    assert s3.get_object(Bucket=BUCKET, Key="doc.txt", VersionId=held.versions[1])["Body"].read() == b"two"
    listed = s3.list_object_versions(Bucket=BUCKET, Prefix="doc.txt")["Versions"]
    assert {(v["VersionId"], v["IsLatest"]) for v in listed} == {
        (held.versions[0], False),
        (held.versions[1], True),
    }


def _go_on(cloud: CloudProcess, held: Held) -> str:
    """After the restart each goes on: the token, the redrive, the upload; the joined object's version id."""
    s3, sfn = _client(cloud, "s3"), _client(cloud, "stepfunctions")
    # The token handed out before the crash is still the one that completes the task.
    sfn.send_task_success(taskToken=held.token, output=json.dumps({"approved": True}))
    done = wait_for_execution(sfn, held.waiting, timeout=60)
    assert done["status"] == "SUCCEEDED" and json.loads(done["output"]) == {"done": True}
    assert _token(s3) == held.token, "the resumed task handed out the same token again"
    # The failed job's redrive runs only the child that had failed.
    s3.put_object(Bucket=BUCKET, Key="fixed", Body=b"")
    sfn.redrive_execution(executionArn=held.failed)
    done = wait_for_execution(sfn, held.failed, timeout=60)
    assert done["status"] == "SUCCEEDED" and done["redriveCount"] == 1
    assert json.loads(done["output"]) == [{"index": 0}, {"index": 1}, {"index": 2}]
    calls = [
        key["Key"].split("/")[1] for key in s3.list_objects_v2(Bucket=BUCKET, Prefix="calls/")["Contents"]
    ]
    assert sorted(calls) == ["0", "1", "1", "2"], "only the failed child ran again"
    # The upload goes on after the restart, its UploadId kept.
    two = s3.upload_part_copy(
        Bucket=BUCKET,
        Key="joined",
        UploadId=held.upload,
        PartNumber=2,
        CopySource={"Bucket": BUCKET, "Key": "part-2"},
    )["CopyPartResult"]["ETag"]
    parts = [{"PartNumber": 1, "ETag": held.first_part}, {"PartNumber": 2, "ETag": two}]
    return str(
        s3.complete_multipart_upload(
            Bucket=BUCKET, Key="joined", UploadId=held.upload, MultipartUpload={"Parts": parts}
        )["VersionId"]
    )


def test_a_killed_cloud_restarts_with_everything_resumes_the_waiting_job_and_redrives_the_failed_one(
    cloud: CloudProcess, tmp_path: Path
) -> None:
    """One cloud for every durability check (each start of a cloud process costs seconds of CPU; until
    2026-12-07 four tests with eleven starts, test_redeploy.py's among them): before a kill -9 it holds an
    object, an item, a job waiting for its task token, a job whose Map failed, two versions of an object
    (manifests pin documents by VersionId: a replayed PutObject must recreate the same version) and a
    multipart upload half done (SealJob joins a job's item parts with one); after the restart each is there as
    it was and goes on: the token completes the waiting job, a redrive runs only the failed child, the upload
    completes (its UploadId kept) and comes back whole after a second kill. Then the app deployed and run, a
    clean stop keeps everything, a deploy after a handler changed runs the new code, and ``--fresh`` starts
    empty."""
    held = _hold_everything(cloud)
    s3 = _client(cloud, "s3")

    cloud.kill()  # kill -9: its process group and its Lambda workers

    status = json.loads(_cli(cloud, "local", "status").stdout)
    assert status["up"] is False and status["journal_bytes"] > 0
    down = _cli(cloud, "list")  # an operator command: the cloud is down, not a reason to try AWS
    assert down.returncode == 3, down.stdout + down.stderr
    assert json.loads(down.stdout)["error_type"] == "LocalCloudDown"

    assert cloud.start().startswith("restored 2 jobs, 1 running, resuming")
    _check_restored(cloud, held)
    version = _go_on(cloud, held)

    cloud.kill()
    cloud.start()

    joined = s3.get_object(Bucket=BUCKET, Key="joined")
    assert joined["VersionId"] == version
    assert joined["Body"].read() == HEAD + b"tail\n"

    # `docagent local deploy` as a new user runs it, and a job of the stack (test_redeploy.py's own cloud,
    # started twice, until 2026-12-07)
    out_dir = tmp_path / "cdk.out"
    shutil.copytree(synth_local(), out_dir)
    first = _deploy(cloud, out_dir)
    before = _code_version_of_a_new_job(cloud, first, "before-change")
    assert before != CHANGED
    buckets = sorted(bucket["Name"] for bucket in s3.list_buckets()["Buckets"])
    assert BUCKET in buckets and len(buckets) > 1

    # A stopped cloud (`local down`) starts with what it had (`local up`; test_up_fresh_starts_empty until
    # 2026-12-07: three more cloud starts of its own), the stack too; deployed again after a handler changed,
    # it updates what changed (on a cloud that holds the stack: EntityAlreadyExists before) and new jobs run
    # the new code.
    cloud.stop()
    _change_a_handler(out_dir)
    assert cloud.start().startswith("restored 3 jobs, 0 running")
    assert sorted(bucket["Name"] for bucket in s3.list_buckets()["Buckets"]) == buckets
    redeployed = _deploy(cloud, out_dir)
    assert redeployed.outputs == first.outputs
    assert _code_version_of_a_new_job(cloud, redeployed, "after-change") == CHANGED
    job = LocalJob.on(cloud.endpoint, redeployed, "before-change")
    job.records.refresh()
    manifest = job.records.manifest
    assert manifest is not None and manifest.versions.code_version == before, "the first job's record stays"

    # and `up --fresh` starts empty
    cloud.stop()
    _detached_fresh_and_scaled(cloud)


STACK = "DocAgent"
CHANGED = "-changed-handler"


def _deploy(cloud: CloudProcess, out_dir: Path) -> LocalStack:
    done = _cli(cloud, "local", "deploy", "--out-dir", str(out_dir), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return LocalStack(**json.loads(done.stdout))


def _code_version_of_a_new_job(cloud: CloudProcess, stack: LocalStack, job_id: str) -> str:
    job = LocalJob.on(cloud.endpoint, stack, job_id)
    prefix = f"incoming/{job_id}/"
    seed_inputs(job, 2, prefix)
    job.start({"job_id": job_id, "prefix": prefix})
    described = wait_for_execution(job.sfn, job.execution_arn, timeout=240)
    assert described["status"] == "SUCCEEDED", described.get("cause")
    job.records.refresh()
    manifest = job.records.manifest
    assert manifest is not None
    return manifest.versions.code_version


def _change_a_handler(out_dir: Path) -> None:
    """What editing functions/logic/list_documents.py and synthesizing again gives: a new code asset."""
    assets = json.loads((out_dir / f"{STACK}.assets.json").read_text())
    changed = 0
    for asset in assets["files"].values():
        source = out_dir / asset["source"]["path"] / "functions" / "logic" / "list_documents.py"
        if source.exists():
            text = source.read_text()
            assert "code_version=settings.code_version," in text
            source.write_text(
                text.replace("code_version=settings.code_version,", f'code_version="{CHANGED}",')
            )
            changed += 1
    assert changed, "the functions' code asset holds the handler"


SLEEPER = """
import time

def handler(event, context):
    time.sleep(event.get("sleep", 0))
    return {}
"""


def _detached_fresh_and_scaled(cloud: CloudProcess) -> None:
    """`local up --detach --fresh --time-scale 0.1` starts empty and ends a 10 s function timeout after about
    1 s; `local down` stops it (test_lambda_runtime.py's own detached cloud until 2026-12-07)."""
    up = _cli(cloud, "local", "up", "--detach", "--fresh", "--port", str(cloud.port), "--time-scale", "0.1")
    try:  # `local down` runs even if `local up` fails half-way: the test stops what it starts
        assert up.returncode == 0, up.stdout + up.stderr
        assert _client(cloud, "s3").list_buckets()["Buckets"] == []
        role = _client(cloud, "iam").create_role(RoleName="scaled", AssumeRolePolicyDocument="{}")
        lambda_client = _client(cloud, "lambda")
        lambda_client.create_function(
            FunctionName="scaled",
            Runtime="python3.13",
            Role=role["Role"]["Arn"],
            Handler="index.handler",
            Code={"ZipFile": zip_source({"index.py": SLEEPER})},
            Timeout=10,
        )
        lambda_client.invoke(FunctionName="scaled", Payload=b"{}")  # warm: init is not timed
        started = time.time()
        response = lambda_client.invoke(FunctionName="scaled", Payload=json.dumps({"sleep": 3}).encode())
        elapsed = time.time() - started
    finally:
        down = _cli(cloud, "local", "down")
    assert json.loads(response["Payload"].read())["errorType"] == "Sandbox.Timedout"
    assert elapsed < 2.5, f"took {elapsed:.1f} s"
    assert down.returncode == 0, down.stderr
    assert json.loads(down.stdout)["stopped"]["port"] == cloud.port
    assert not (cloud.state_root / "local" / "cloud.json").exists()
