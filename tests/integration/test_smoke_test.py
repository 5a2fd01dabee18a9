"""scripts/smoke_test.py against the local cloud, whose deployed stack has the same outputs as the real one:
a three-document job checked end to end and cleaned up; ``--dry-run`` prints the calls and makes none."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from docagent import project
from docagent.operations.records import execution_arn_for

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "smoke_test.py"


@pytest.fixture
def smoke(cloud, stack_file: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    """Runs the script's ``main`` in-process against the session's local cloud: (exit code, JSON output)."""
    monkeypatch.setattr(project, "LOCAL_STACK_FILE", stack_file)
    spec = importlib.util.spec_from_file_location("smoke_test", SCRIPT)
    assert spec is not None and spec.loader is not None
    module: ModuleType = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "smoke_test", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "POLL_SECONDS", 0.5)

    def run(*argv: str) -> tuple[int, dict[str, Any]]:
        capsys.readouterr()
        code = module.main([*argv, "--endpoint", cloud.endpoint, "--json"])
        return code, json.loads(capsys.readouterr().out)

    return run


def keys_under(aws, bucket: str, prefix: str) -> list[str]:
    return [
        item["Key"] for item in aws("s3").list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    ]


def test_the_smoke_test_runs_a_job_checks_it_and_cleans_up(smoke, aws, deployed):
    code, result = smoke("--timeout", "300")
    assert code == 0, result
    assert all(check["ok"] for check in result["checks"]), result["checks"]
    names = [check["name"] for check in result["checks"]]
    assert names[:3] == ["execution", "report", "ticket"] and names[-1] == "alarms"
    report = next(check for check in result["checks"] if check["name"] == "report")
    assert report["detail"] == "3 documents, 3 extracted"
    job_id = result["job_id"]
    bucket, table = deployed.outputs["BucketName"], deployed.outputs["ReferenceTableName"]
    execution = execution_arn_for(deployed.outputs["StateMachineArn"], job_id)
    described = aws("stepfunctions").describe_execution(executionArn=execution)
    assert described["status"] == "SUCCEEDED"
    # Cleaned up: nothing of the job is left but its execution history.
    assert keys_under(aws, bucket, f"incoming/{job_id}/") == []
    assert keys_under(aws, bucket, f"jobs/{job_id}/") == []
    (put,) = [call for call in result["calls"] if call.startswith("dynamodb.put_item")]
    customer = json.loads(put.split("(", 1)[1][:-1])["Item"]["customer_id"]["S"]
    assert customer.startswith("CUST-9")
    key = {"table": {"S": "customers"}, "key": {"S": customer}}
    assert "Item" not in aws("dynamodb").get_item(TableName=table, Key=key)


def test_a_dry_run_prints_the_calls_and_makes_none(smoke, aws, deployed):
    code, result = smoke("--dry-run")
    assert code == 0, result
    calls = result["calls"]
    operations = [call.split("(", 1)[0] for call in calls]
    assert operations.count("s3.put_object") == 3
    assert operations[:5] == ["dynamodb.put_item", "s3.put_object", "s3.put_object", "s3.put_object",
                              "stepfunctions.start_execution"]  # fmt: skip
    assert "stepfunctions.describe_execution" in operations
    assert "cloudwatch.describe_alarms" in operations
    assert operations[-1] == "dynamodb.delete_item"
    job_id = result["job_id"]
    assert f'"name": "{job_id}"' in calls[4]
    bucket = deployed.outputs["BucketName"]
    assert keys_under(aws, bucket, f"incoming/{job_id}/") == []
    executions = aws("stepfunctions").list_executions(stateMachineArn=deployed.outputs["StateMachineArn"])
    assert job_id not in {execution["name"] for execution in executions["executions"]}
