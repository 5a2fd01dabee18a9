"""IAM enforced by the local cloud (docagent/localcloud/iam): a grant removed from the synthesized template
fails the job where AWS would, naming the grant's action and resource; the job redrives once it is back."""

from __future__ import annotations

import copy
import json
from typing import Any

from docagent.drills.local_job import LocalJob
from docagent.localcloud.cfn_template import CloudAssembly
from docagent.localcloud.deploy import Deployer, LocalStack
from docagent.localcloud.server import LocalCloud
from docagent.localcloud.synth import synth_local
from functions import storage
from tests.integration.test_local_job import run_job
from tests.support import wait_for_execution


def _without_statement(template: dict[str, Any], sid: str) -> dict[str, Any]:
    """The template with the role statement ``sid`` taken out (it must be there, once)."""
    changed = copy.deepcopy(template)
    removed = 0
    for resource in changed["Resources"].values():
        for policy in (
            resource.get("Properties", {}).get("Policies", []) if resource["Type"] == "AWS::IAM::Role" else []
        ):
            statements = policy["PolicyDocument"]["Statement"]
            kept = [s for s in statements if s.get("Sid") != sid]
            removed += len(statements) - len(kept)
            policy["PolicyDocument"]["Statement"] = kept
    assert removed == 1, f"{sid}: {removed} statements"
    return changed


def test_a_removed_grant_fails_the_job_naming_it_and_the_job_redrives_once_it_is_back(
    cloud: LocalCloud, deployed
) -> None:
    job = _job_without_grant(
        cloud, deployed, "ReadMapItems", "iam-items-grant"
    )  # the workflow role's read of the items
    failed = job.sfn.describe_execution(executionArn=job.execution_arn)
    assert (failed["status"], failed["error"]) == ("FAILED", "States.ItemReaderFailed"), failed["cause"]
    items = f"arn:aws:s3:::{job.bucket}/{storage.items_part_key('iam-items-grant', 0)}"  # one part: the items
    denial = (
        f"User: {_workflow_session(deployed)} is not authorized to perform: "
        f's3:GetObject on resource: "{items}" '
        "because no identity-based policy allows the s3:GetObject action"
    )
    assert "AccessDenied" in failed["cause"] and denial in failed["cause"], failed["cause"]
    _taken_back(cloud, denial)
    _redriven_to_success(job)


def test_a_map_whose_role_may_not_start_its_children_fails_naming_it(cloud: LocalCloud, deployed) -> None:
    job = _job_without_grant(cloud, deployed, "StartMapChildren", "iam-children-grant")
    failed = job.sfn.describe_execution(executionArn=job.execution_arn)
    machine = deployed.outputs["StateMachineArn"]
    denial = (
        f"User: {_workflow_session(deployed)} is not authorized to perform: states:StartExecution on "
        f"resource: {machine} because no identity-based policy allows the states:StartExecution action"
    )
    assert failed["status"] == "FAILED" and denial in failed["cause"], failed["cause"]
    _taken_back(cloud, denial)
    _redriven_to_success(job)


def _workflow_session(deployed: LocalStack) -> str:
    return f"arn:aws:sts::123456789012:assumed-role/{deployed.physical['WorkflowRole98C7DC98']}/StepFunctions"


def _job_without_grant(cloud: LocalCloud, deployed: LocalStack, sid: str, job_id: str) -> LocalJob:
    """A 3-document job run on the app deployed without the role statement ``sid``; the app is deployed
    whole again after it."""
    assert cloud.iam is not None, "IAM is enforced by default"
    assembly = CloudAssembly(synth_local(), "DocAgent")
    original = assembly.template
    assembly.template = _without_statement(original, sid)
    Deployer(assembly, "DocAgent", cloud.endpoint).deploy()
    try:
        job, _ = run_job(cloud, deployed, job_id, documents=3)
    finally:
        assembly.template = original
        Deployer(assembly, "DocAgent", cloud.endpoint).deploy()
    return job


def _taken_back(cloud: LocalCloud, denial: str) -> None:
    assert cloud.iam is not None and denial in cloud.iam.denials
    cloud.iam.denials.clear()  # provoked here (the session's cloud checks for unexpected ones at its end)


def _redriven_to_success(job: LocalJob) -> None:
    job.sfn.redrive_execution(executionArn=job.execution_arn)
    described = wait_for_execution(job.sfn, job.execution_arn, timeout=240)
    assert described["status"] == "SUCCEEDED", described.get("cause")
    assert json.loads(described["output"])["verification"]["verified"] is True
