"""The local Lambda runtime behaves like Lambda where the workflow depends on it (docs/semantics.md L2)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import boto3
import pytest
from botocore.config import Config

from docagent.localcloud.patches import AlreadyRunningError
from docagent.localcloud.server import LocalCloud
from tests.integration.conftest import aws_cli
from tests.support import wait_for_execution

HANDLER = """
import os, time
IMPORTS = {"count": 0}
IMPORTS["count"] += 1

def handler(event, context):
    if event.get("print"):
        print(event["print"])
    if event.get("sleep"):
        time.sleep(event["sleep"])
    if event.get("raise"):
        raise KeyError(event["raise"])
    if event.get("exit") is not None:
        os._exit(event["exit"])
    return {
        "pid": os.getpid(),
        "imports": IMPORTS["count"],
        "request_id": context.aws_request_id,
        "function_name": context.function_name,
        "memory": context.memory_limit_in_mb,
        "remaining_ms": context.get_remaining_time_in_millis(),
        "endpoint": os.environ.get("AWS_ENDPOINT_URL"),
        "custom": os.environ.get("CUSTOM"),
        "task_root": os.environ.get("LAMBDA_TASK_ROOT"),
        "cwd": os.getcwd(),
    }
"""

TRACING_HANDLER = """
from aws_lambda_powertools import Tracer
from aws_xray_sdk.core import xray_recorder

def handler(event, context):
    return {"sampler": type(xray_recorder.sampler).__name__, "tracer_disabled": bool(Tracer().disabled)}
"""


def invoke(aws, name: str, event: dict) -> tuple[str | None, dict]:
    response = aws("lambda").invoke(FunctionName=name, Payload=json.dumps(event).encode())
    return response.get("FunctionError"), json.loads(response["Payload"].read())


def test_warm_worker_imports_once_and_passes_context_and_environment(aws, make_function, cloud: LocalCloud):
    name = make_function(HANDLER, timeout=3, environment={"CUSTOM": "from-config"})
    error, first = invoke(aws, name, {})
    error_again, second = invoke(aws, name, {})
    assert error is None and error_again is None
    assert first["pid"] == second["pid"], "a warm worker serves the next invocation"
    assert second["imports"] == 1, "the handler module is imported once per worker"
    assert first["request_id"] != second["request_id"]
    assert first["function_name"] == name and first["memory"] == 256
    assert 0 < first["remaining_ms"] <= 3000
    assert first["endpoint"] == cloud.endpoint and first["custom"] == "from-config"
    assert first["task_root"] == first["cwd"], "LAMBDA_TASK_ROOT names the unpacked code, as on Lambda"


def test_the_xray_sdk_runs_in_its_lambda_mode_and_tracing_stays_off(aws, make_function):
    # Lambda mode: the SDK samples locally (no X-Ray clients created at import, a tenth of a cold start);
    # tracing stays off, as there is no X-Ray daemon locally.
    error, payload = invoke(aws, make_function(TRACING_HANDLER), {})
    assert error is None, payload
    assert payload == {"sampler": "LocalSampler", "tracer_disabled": True}


def test_exception_is_reported_with_type_message_and_stack(aws, make_function):
    name = make_function(HANDLER)
    error, payload = invoke(aws, name, {"raise": "customer_id"})
    assert error == "Unhandled"
    assert payload["errorType"] == "KeyError"
    assert payload["errorMessage"] == "'customer_id'"
    assert any("app.py" in frame and "handler" in frame for frame in payload["stackTrace"])
    assert not any("worker.py" in frame for frame in payload["stackTrace"])


def test_timeout_kills_the_worker_and_reports_sandbox_timedout(aws, make_function):
    name = make_function(HANDLER, timeout=1)
    _, before = invoke(aws, name, {})
    error, payload = invoke(aws, name, {"sleep": 5})
    assert error == "Unhandled"
    assert payload["errorType"] == "Sandbox.Timedout"
    assert "Task timed out after 1.00 seconds" in payload["errorMessage"]
    with pytest.raises(ProcessLookupError):
        os.kill(before["pid"], 0)
    _, after = invoke(aws, name, {})
    assert after["pid"] != before["pid"], "a timed-out environment is replaced"


def test_worker_killed_from_outside_reports_runtime_exit_error(aws, make_function, cloud: LocalCloud):
    name = make_function(HANDLER, timeout=10)
    killed: list[int] = []

    def kill_busy_worker() -> None:
        deadline = time.time() + 5
        while time.time() < deadline and not killed:
            for worker in cloud.runtime.workers():
                if worker["function"] == name and worker["busy"]:
                    os.kill(worker["pid"], signal.SIGKILL)
                    killed.append(worker["pid"])
            time.sleep(0.05)

    killer = threading.Thread(target=kill_busy_worker)
    killer.start()
    error, payload = invoke(aws, name, {"sleep": 8})
    killer.join()
    assert killed, "the test found the busy worker"
    assert error == "Unhandled"
    assert payload["errorType"] == "Runtime.ExitError"
    assert payload["errorMessage"].endswith("Runtime exited with error: signal: killed")


def test_process_exit_inside_handler_reports_exit_status(aws, make_function):
    name = make_function(HANDLER)
    error, payload = invoke(aws, name, {"exit": 3})
    assert error == "Unhandled"
    assert payload["errorType"] == "Runtime.ExitError"
    assert payload["errorMessage"].endswith("exit status 3")


def test_concurrent_invocations_get_their_own_workers(aws, make_function):
    name = make_function(HANDLER)
    with ThreadPoolExecutor(max_workers=4) as pool:
        outcomes = list(pool.map(lambda _: invoke(aws, name, {"sleep": 0.5}), range(4)))
    assert all(error is None for error, _ in outcomes)
    assert len({payload["pid"] for _, payload in outcomes}) == 4


def test_invocations_beyond_the_cap_wait_for_a_free_worker_instead_of_being_throttled(
    aws, make_function, cloud: LocalCloud, monkeypatch
):
    name = make_function(HANDLER)
    monkeypatch.setattr(cloud.runtime, "max_workers", 2)
    waited = cloud.runtime.waited
    with ThreadPoolExecutor(max_workers=6) as pool:
        outcomes = list(pool.map(lambda _: invoke(aws, name, {"sleep": 0.3}), range(6)))
    assert all(error is None for error, _ in outcomes), outcomes
    assert len({payload["pid"] for _, payload in outcomes}) <= 2, "never more workers than the cap"
    assert cloud.runtime.waited > waited, "some waited for a worker"


def no_retry_client(cloud):
    session = boto3.session.Session(
        aws_access_key_id="local", aws_secret_access_key="local", region_name="us-east-1"
    )
    # One attempt: the SDK would retry a throttle (max_attempts counts the retries, total_max_attempts all).
    no_retries = Config(retries={"total_max_attempts": 1, "mode": "standard"})
    return session.client("lambda", endpoint_url=cloud.endpoint, config=no_retries)


def hold_a_slot(aws, cloud, name: str, seconds: float) -> threading.Thread:
    """An invocation of ``name`` sleeping ``seconds``, started and running when this returns."""
    running = cloud.runtime.running
    holder = threading.Thread(target=invoke, args=(aws, name, {"sleep": seconds}))
    holder.start()
    deadline = time.monotonic() + 30
    while cloud.runtime.running <= running and time.monotonic() < deadline:
        time.sleep(0.02)
    assert cloud.runtime.running > running, "the holding invocation never started"
    return holder


def throttle_of(client, name: str) -> dict:
    with pytest.raises(client.exceptions.TooManyRequestsException) as raised:
        client.invoke(FunctionName=name, Payload=b"{}")
    response = raised.value.response
    return {
        "status": response["ResponseMetadata"]["HTTPStatusCode"],
        "code": response["Error"]["Code"],
        "message": response["Error"]["Message"],
        "type": response.get("Type"),
        "reason": response.get("Reason"),
    }


def test_an_invocation_past_the_functions_cap_waits_then_is_throttled_as_on_aws(
    aws, make_function, cloud, monkeypatch
):
    name = make_function(HANDLER, timeout=60)  # 15 s at the session's time scale
    monkeypatch.setattr(cloud.runtime, "max_workers", 1)
    monkeypatch.setattr(cloud.runtime, "throttle_after_seconds", 0.2)
    holder = hold_a_slot(aws, cloud, name, 2)  # the only worker is busy
    assert throttle_of(no_retry_client(cloud), name) == {
        "status": 429,
        "code": "TooManyRequestsException",
        "message": "Rate Exceeded.",
        "type": "User",
        "reason": "ReservedFunctionConcurrentInvocationLimitExceeded",
    }
    holder.join()


def test_invocations_past_the_accounts_concurrency_are_throttled_and_a_retry_runs(
    aws, make_function, cloud, monkeypatch
):
    """The local account runs ``concurrency_limit`` invocations at once, across functions: one more is
    throttled with Lambda's account-level reason; retried once a slot is free, it runs."""
    name = make_function(HANDLER, timeout=60)
    monkeypatch.setattr(cloud.runtime, "concurrency_limit", cloud.runtime.running + 1)
    monkeypatch.setattr(cloud.runtime, "throttle_after_seconds", 0.2)
    client = no_retry_client(cloud)
    throttled = cloud.runtime.throttled
    holder = hold_a_slot(aws, cloud, name, 2)  # the function has workers to spare; the account has none
    assert throttle_of(client, name)["reason"] == "ConcurrentInvocationLimitExceeded"
    assert cloud.runtime.throttled == throttled + 1
    holder.join()
    retried = client.invoke(FunctionName=name, Payload=b"{}")
    assert "FunctionError" not in retried
    assert json.loads(retried["Payload"].read())["function_name"] == name


def test_the_workflow_retries_a_throttled_task_until_it_runs(
    aws, make_function, role_arn, cloud, monkeypatch
):
    """Three Map iterations at once against a local account of one: the two throttled tasks fail with
    Lambda.TooManyRequestsException, the Retry on it (docs/semantics.md L1) runs them, the job succeeds."""
    name = make_function(HANDLER, timeout=60)
    monkeypatch.setattr(cloud.runtime, "concurrency_limit", cloud.runtime.running + 1)
    monkeypatch.setattr(cloud.runtime, "throttle_after_seconds", 0.1)
    arn = aws("lambda").get_function(FunctionName=name)["Configuration"]["FunctionArn"]
    work = {
        "Type": "Task",
        "Resource": "arn:aws:states:::lambda:invoke",
        "Parameters": {"FunctionName": arn, "Payload": {"sleep": 0.6}},
        "Retry": [
            {"ErrorEquals": ["Lambda.TooManyRequestsException"], "IntervalSeconds": 1, "MaxAttempts": 6}
        ],
        "End": True,
    }
    definition = {
        "StartAt": "Each",
        "States": {
            "Each": {
                "Type": "Map",
                "ItemsPath": "$.items",
                "ItemProcessor": {"StartAt": "Work", "States": {"Work": work}},
                "End": True,
            }
        },
    }
    sfn = aws("stepfunctions")
    machine = sfn.create_state_machine(
        name=f"throttled-{uuid.uuid4().hex[:8]}", definition=json.dumps(definition), roleArn=role_arn
    )["stateMachineArn"]
    execution = sfn.start_execution(stateMachineArn=machine, input=json.dumps({"items": [1, 2, 3]}))
    done = wait_for_execution(sfn, execution["executionArn"], timeout=120)
    assert done["status"] == "SUCCEEDED", done
    history = sfn.get_execution_history(executionArn=execution["executionArn"], maxResults=1000)["events"]
    failures = [event["taskFailedEventDetails"] for event in history if event["type"] == "TaskFailed"]
    assert failures, "no task was throttled"
    assert {failure["error"] for failure in failures} == {"Lambda.TooManyRequestsException"}
    assert all("Rate Exceeded." in failure["cause"] for failure in failures)
    succeeded = [event for event in history if event["type"] == "TaskSucceeded"]
    assert len(succeeded) == 3


def test_handler_output_reaches_cloudwatch_logs(aws, make_function):
    name = make_function(HANDLER)
    invoke(aws, name, {"print": "hello from the handler"})
    logs = aws("logs")
    deadline = time.time() + 5
    messages: list[str] = []
    while time.time() < deadline and not any("hello from the handler" in m for m in messages):
        time.sleep(0.1)
        events = logs.filter_log_events(logGroupName=f"/aws/lambda/{name}")["events"]
        messages = [event["message"] for event in events]
    assert any(m.startswith("START RequestId:") for m in messages)
    assert any("hello from the handler" in m for m in messages)
    assert any(m.startswith("REPORT RequestId:") for m in messages)


def test_a_second_cloud_in_the_same_process_is_refused(cloud, tmp_path):
    with pytest.raises(AlreadyRunningError):
        LocalCloud(tmp_path).start()


def test_aws_cli_invokes_against_the_endpoint(make_function, cloud: LocalCloud, tmp_path):
    name = make_function(HANDLER)
    out = tmp_path / "out.json"
    response = aws_cli(cloud, "lambda", "invoke", "--function-name", name, "--payload", "{}", str(out))
    assert response["StatusCode"] == 200
    assert json.loads(out.read_text())["function_name"] == name
