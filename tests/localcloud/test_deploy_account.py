"""A deploy creates the same account however many requests it takes: the synthesized app deployed with each
SSM parameter read once a deploy (cfn_template.py) and with every dynamic reference read again, as before,
leaves the same functions, roles and their policies, alarms, state machine, log groups, buckets, tables,
topics and rules (docagent/localcloud/deploy.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest

from docagent.localcloud import cfn_template
from docagent.localcloud.deploy import deploy
from docagent.localcloud.server import REGION, LocalCloud, client_environment
from docagent.localcloud.synth import synth_local

pytestmark = pytest.mark.own_cloud

# What differs between two deploys of one template: when, and the ids services make up.
VOLATILE = {
    "AlarmConfigurationUpdatedTimestamp",
    "CreateDate",
    "LastModified",
    "ResponseMetadata",
    "RevisionId",
    "RoleId",
    "StateReason",
    "StateReasonData",
    "StateUpdatedTimestamp",
    "creationDate",
    "creationTime",
    "revisionId",
}


def scrubbed(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: scrubbed(item) for key, item in value.items() if key not in VOLATILE}
    if isinstance(value, list):
        return [scrubbed(item) for item in value]
    return value


def account(endpoint: str) -> dict[str, Any]:
    """What the deploy created, as the services describe it."""
    environment = client_environment(endpoint)
    session = boto3.session.Session(
        aws_access_key_id=environment["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=environment["AWS_SECRET_ACCESS_KEY"],
        aws_session_token=environment["AWS_SESSION_TOKEN"],
        region_name=REGION,
    )

    def client(service: str) -> Any:
        return session.client(service, endpoint_url=endpoint)  # type: ignore[call-overload]

    iam, functions, machines = client("iam"), client("lambda"), client("stepfunctions")
    roles = {
        role["RoleName"]: {
            "role": role,
            "inline": {
                name: iam.get_role_policy(RoleName=role["RoleName"], PolicyName=name)["PolicyDocument"]
                for name in iam.list_role_policies(RoleName=role["RoleName"])["PolicyNames"]
            },
            "attached": iam.list_attached_role_policies(RoleName=role["RoleName"])["AttachedPolicies"],
        }
        for role in iam.list_roles()["Roles"]
    }
    return scrubbed(
        {
            "roles": roles,
            "functions": {
                f["FunctionName"]: {
                    "configuration": f,
                    "tags": functions.list_tags(Resource=f["FunctionArn"])["Tags"],
                }
                for f in functions.list_functions()["Functions"]
            },
            "alarms": client("cloudwatch").describe_alarms()["MetricAlarms"],
            "dashboards": client("cloudwatch").list_dashboards()["DashboardEntries"],
            "machines": [
                machines.describe_state_machine(stateMachineArn=m["stateMachineArn"])
                for m in machines.list_state_machines()["stateMachines"]
            ],
            "log_groups": client("logs").describe_log_groups()["logGroups"],
            "buckets": [b["Name"] for b in client("s3").list_buckets()["Buckets"]],
            "tables": client("dynamodb").list_tables()["TableNames"],
            "topics": client("sns").list_topics()["Topics"],
            "rules": client("events").list_rules()["Rules"],
        }
    )


def deployed(state: Path) -> tuple[dict[str, Any], dict[str, int]]:
    """The account a deploy made (each cloud's own ticket service named alike) and its SSM requests."""
    with LocalCloud(state, persist=False) as cloud:
        deploy(synth_local(), "DocAgent", cloud.endpoint)
        requests = cloud.requests.snapshot()
        made = json.dumps(account(cloud.endpoint)).replace(cloud.tickets.url, "TICKETS")
        return json.loads(made), requests["ssm"]


class _Forgetful(dict[str, str]):
    """Parameters never kept: every dynamic reference read again, as the deploy did before."""

    def __contains__(self, key: object) -> bool:
        return False


def test_reading_each_parameter_once_deploys_the_same_account(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    once, once_ssm = deployed(tmp_path / "once")
    keep = cfn_template.TemplateValues.__init__

    def forgetful(self: cfn_template.TemplateValues, *args: Any) -> None:
        keep(self, *args)
        self._parameters = _Forgetful()

    monkeypatch.setattr(cfn_template.TemplateValues, "__init__", forgetful)
    again, again_ssm = deployed(tmp_path / "again")

    assert once == again
    assert len(once["functions"]) >= 7 and len(once["alarms"]) >= 20 and len(once["machines"]) == 1
    assert once_ssm["GetParameter"] == 1 < again_ssm["GetParameter"]
