"""The state machine resource, its substitutions and its hand-written role (docs/semantics.md D8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest
from aws_cdk import Stage
from aws_cdk import aws_stepfunctions as sfn

from stacks.docagent_stack import DocAgentStack
from stacks.function_specs import FUNCTION_SPECS
from stacks.in_progress_polling import in_progress_polling
from stacks.workflow import RENDERED, asl_placeholders, check_substitutions_cover_asl
from tests.infra.conftest import Synthesized, template_role_grants

STATES_ARN = "arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>"


def state_machine(synthesized: Synthesized) -> dict[str, Any]:
    (machine,) = synthesized.resources("AWS::StepFunctions::StateMachine").values()
    return machine


def state_machine_grants(synthesized: Synthesized) -> set[tuple[str, str]]:
    role_id = state_machine(synthesized)["Properties"]["RoleArn"]["Fn::GetAtt"][0]
    return template_role_grants(synthesized.template_json["Resources"][role_id])


def test_state_machine_is_a_named_standard_workflow(synthesized: Synthesized) -> None:
    properties = state_machine(synthesized)["Properties"]
    assert properties["StateMachineType"] == "STANDARD"
    assert properties["StateMachineName"] == f"{synthesized.stack.config.stack_name}-DocumentReview"


def test_state_machine_logs_every_event_without_execution_data_to_a_vended_log_group(
    synthesized: Synthesized,
) -> None:
    logging = state_machine(synthesized)["Properties"]["LoggingConfiguration"]
    # Every event, never the execution's data: a logged RequestApproval event would carry the task token,
    # task inputs and outputs the extracted document fields.
    assert logging["Level"] == "ALL"
    assert logging["IncludeExecutionData"] is False
    (destination,) = logging["Destinations"]
    log_group_id = destination["CloudWatchLogsLogGroup"]["LogGroupArn"]["Fn::GetAtt"][0]
    log_group = synthesized.template_json["Resources"][log_group_id]
    stack_name = synthesized.stack.config.stack_name
    # A name unique per stack creation: retained on delete, it never blocks the next create (deploy, destroy,
    # deploy; or a first create that rolled back).
    assert log_group["DeletionPolicy"] == "Retain"
    assert log_group["Properties"]["LogGroupName"] == {
        "Fn::Join": [
            "",
            [
                f"/aws/vendedlogs/states/{stack_name}-DocumentReview-",
                {"Fn::Select": [2, {"Fn::Split": ["/", {"Ref": "AWS::StackId"}]}]},
            ],
        ]
    }
    assert log_group["Properties"]["RetentionInDays"] == synthesized.stack.config.log_retention_days


def test_no_retained_resource_has_a_fixed_name(synthesized: Synthesized) -> None:
    """Deploy, destroy, deploy: a retained resource with a fixed name would make the second create fail."""
    names = {"LogGroupName", "BucketName", "TableName", "RoleName", "FunctionName", "StateMachineName"}
    for logical_id, resource in synthesized.template_json["Resources"].items():
        if resource.get("DeletionPolicy") != "Retain":
            continue
        for name in names & resource.get("Properties", {}).keys():
            assert not isinstance(resource["Properties"][name], str), f"{logical_id} keeps the fixed {name}"


def test_state_machine_is_traced(synthesized: Synthesized) -> None:
    assert state_machine(synthesized)["Properties"]["TracingConfiguration"] == {"Enabled": True}


def test_definition_is_the_asl_file_with_a_substitution_for_every_placeholder(
    synthesized: Synthesized,
) -> None:
    properties = state_machine(synthesized)["Properties"]
    assert "DefinitionS3Location" in properties
    assert set(properties["DefinitionSubstitutions"]) == asl_placeholders() - RENDERED


def test_substitutions_carry_the_config(synthesized: Synthesized) -> None:
    substitutions = state_machine(synthesized)["Properties"]["DefinitionSubstitutions"]
    config = synthesized.stack.config
    assert substitutions["MapLabel"] == config.map_label
    assert substitutions["ChildExecutionType"] == config.child_execution_type
    # Numbers are set in the definition asset itself (stacks/workflow.py: RENDERED).
    key = state_machine(synthesized)["Properties"]["DefinitionS3Location"]["Key"]
    asset = next(path for path in synthesized.outdir.glob("asset.*") if path.name.split(".")[1] in key)
    definition = json.loads(asset.read_text())
    review = definition["States"]["ReviewDocuments"]
    assert review["MaxConcurrency"] == config.effective_max_concurrency
    assert review["ToleratedFailurePercentage"] == config.tolerated_failure_percentage
    assert "ItemBatcher" not in review
    assert definition["States"]["RequestApproval"]["TimeoutSeconds"] == config.approval_timeout_seconds
    in_progress = [
        (retrier["IntervalSeconds"], retrier["MaxAttempts"])
        for state in [*definition["States"].values(), *review["ItemProcessor"]["States"].values()]
        for retrier in state.get("Retry", [])
        if retrier["ErrorEquals"] == ["IdempotencyAlreadyInProgressError"]
    ]
    polling = in_progress_polling(config.function_timeout_seconds)
    assert in_progress and set(in_progress) == {(polling.interval_seconds, polling.max_attempts)}
    assert substitutions["BucketName"] == {"Ref": synthesized.logical_id(synthesized.stack.storage.bucket)}


@pytest.mark.parametrize("spec", FUNCTION_SPECS, ids=lambda spec: spec.construct_id)
def test_function_arn_substitutions_point_at_their_functions(synthesized: Synthesized, spec: Any) -> None:
    substitutions = state_machine(synthesized)["Properties"]["DefinitionSubstitutions"]
    function = synthesized.template_json["Resources"][
        substitutions[f"{spec.construct_id}FunctionArn"]["Fn::GetAtt"][0]
    ]
    assert function["Properties"]["Handler"] == spec.handler


def test_express_child_execution_type_flows_into_the_substitution(
    express_inference_profile_stack: DocAgentStack,
) -> None:
    stack = express_inference_profile_stack
    machine = cast(sfn.CfnStateMachine, stack.workflow.state_machine.node.default_child)
    substitutions = stack.resolve(machine.definition_substitutions)
    assert substitutions["ChildExecutionType"] == "EXPRESS"
    review = rendered_definition(stack)["States"]["ReviewDocuments"]
    assert review["MaxConcurrency"] == stack.config.effective_max_concurrency  # 25, capped by quotas
    assert stack.resolve(machine.state_machine_name) == "DocAgentExpress-DocumentReview"


def test_approval_timeout_flows_into_the_substitution(variant_stack: DocAgentStack) -> None:
    stack = variant_stack
    assert stack.config.approval_timeout_seconds == 120
    assert rendered_definition(stack)["States"]["RequestApproval"]["TimeoutSeconds"] == 120


def rendered_definition(stack: DocAgentStack) -> Any:
    """The definition file the stack rendered for its asset (numbers and blocks set from the config)."""
    stage = Stage.of(stack)
    assert stage is not None
    name = f"{stack.config.stack_name}-DocumentReview"
    return json.loads((Path(stage.outdir) / f"{name}.asl.json").read_text())


def test_role_may_start_executions_of_its_own_state_machine_only(synthesized: Synthesized) -> None:
    name = state_machine(synthesized)["Properties"]["StateMachineName"]
    starts = {
        resource
        for action, resource in state_machine_grants(synthesized)
        if action == "states:StartExecution"
    }
    assert starts == {f"{STATES_ARN}:stateMachine:{name}"}


def test_role_may_watch_stop_and_redrive_its_map_children(synthesized: Synthesized) -> None:
    name = state_machine(synthesized)["Properties"]["StateMachineName"]
    granted = state_machine_grants(synthesized)
    children = f"{STATES_ARN}:execution:{name}/*"
    for action in ("states:DescribeExecution", "states:StopExecution", "states:RedriveExecution"):
        assert (action, children) in granted, action
    assert ("states:DescribeExecution", f"{STATES_ARN}:execution:{name}:*") in granted
    states_resources = {resource for action, resource in granted if action.startswith("states:")}
    assert all(resource.startswith(f"{STATES_ARN}:") and name in resource for resource in states_resources)


def test_role_may_invoke_the_seven_functions_and_their_versions(synthesized: Synthesized) -> None:
    invokes = {
        resource
        for action, resource in state_machine_grants(synthesized)
        if action == "lambda:InvokeFunction"
    }
    function_ids = synthesized.resources("AWS::Lambda::Function").keys()
    assert len(function_ids) == 7, "RequestApproval and BatchInference included"
    assert invokes == {f"<{fid}.Arn>" for fid in function_ids} | {f"<{fid}.Arn>:*" for fid in function_ids}


def test_role_reads_map_items_and_writes_map_results(synthesized: Synthesized) -> None:
    bucket = f"<{synthesized.logical_id(synthesized.stack.storage.bucket)}.Arn>"
    s3_grants = {grant for grant in state_machine_grants(synthesized) if grant[0].startswith("s3:")}
    assert s3_grants == {
        ("s3:GetObject", f"{bucket}/jobs/*/items/*"),  # a part, or the parts joined (JSONL)
        ("s3:GetObject", f"{bucket}/jobs/*/items.json"),  # executions of jobs prepared before the parts
        ("s3:GetObject", f"{bucket}/jobs/*/batch/parts.jsonl"),  # the BatchJobs Map's items (#50 B1)
        ("s3:PutObject", f"{bucket}/map-runs/*"),
        ("s3:GetObject", f"{bucket}/map-runs/*"),
        ("s3:ListMultipartUploadParts", f"{bucket}/map-runs/*"),
        ("s3:AbortMultipartUpload", f"{bucket}/map-runs/*"),
        ("s3:ListBucket", bucket),
    }


def test_role_may_deliver_logs_and_traces(synthesized: Synthesized) -> None:
    granted = state_machine_grants(synthesized)
    for action in ("logs:CreateLogDelivery", "logs:PutResourcePolicy", "xray:PutTraceSegments"):
        assert (action, "*") in granted


def test_outputs_name_everything_a_client_needs(synthesized: Synthesized) -> None:
    outputs = synthesized.template_json["Outputs"]
    expected = {"BucketName", "StateMachineArn", "IdempotencyTableName", "ReferenceTableName"}
    expected |= {"AlertTopicArn", "DashboardName"}
    expected |= {f"{spec.construct_id}FunctionName" for spec in FUNCTION_SPECS}
    assert set(outputs) == expected
    machine_id = next(iter(synthesized.resources("AWS::StepFunctions::StateMachine")))
    assert outputs["StateMachineArn"]["Value"] == {"Ref": machine_id}


def test_synthesis_refuses_a_placeholder_without_substitution() -> None:
    substitutions = dict.fromkeys(asl_placeholders() - RENDERED - {"MapLabel"}, "x") | {"Unused": "x"}
    with pytest.raises(ValueError, match=r"MapLabel.*Unused"):
        check_substitutions_cover_asl(substitutions)
