"""The document review state machine, defined by statemachines/document_review.asl.json."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aws_cdk import ArnFormat, Aws, Fn, Stack, Stage
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from functions import storage as keys
from functions.batch_inference.facts import BATCH_MIN_RECORDS, BATCH_TIMEOUT_HOURS_MIN
from stacks.config import BATCH_MAX_INPUT_BYTES, DocAgentConfig
from stacks.grants import Grant, Wildcards, acknowledge, granted
from stacks.in_progress_polling import in_progress_polling
from stacks.log_groups import retained_log_group
from stacks.storage import Storage

ASL_PATH = Path(__file__).resolve().parent.parent / "statemachines" / "document_review.asl.json"
PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_]+)\}")

# ResultWriter prefix in the ASL; the ItemReader reads the items SealJob names: JSON Lines (InputType JSONL,
# as of 2026-11 AWS docs https://docs.aws.amazon.com/step-functions/latest/dg/input-output-itemreader.html:
# InputType is one of CSV, JSON, JSONL, PARQUET, MANIFEST), one part or the parts joined, under items/; and
# items.json (InputType JSON) for executions of jobs prepared before the paged listing; the BatchJobs Map
# reads jobs/{job}/batch/parts.jsonl. One list, in functions/storage.py (#50 B1: the parts were not granted).
MAP_RESULTS_PREFIX = keys.MAP_RUNS_PREFIX
MAP_ITEMS_KEY_PATTERNS = keys.map_item_key_patterns(keys.ANY_JOB)


# What the workflow writes to CloudWatch Logs (docs/operating.md "Alerts, alarms and the dashboard"):
# every event (ALL: state entered and exited, task scheduled, succeeded, failed, retried; cdk-nag's
# AwsSolutions-SF1 asks for ALL) without execution data (looked up 2026-12, CloudFormation
# LoggingConfiguration: "IncludeExecutionData ... When set to false, data is excluded"). With data, every
# RequestApproval event would carry the task token (whoever holds it can approve the job) and every task's
# input and output the extracted document fields. The execution history keeps the data, behind
# states:GetExecutionHistory, for 90 days after an execution ends: that is what `docagent inspect` reads.
WORKFLOW_LOG_LEVEL = sfn.LogLevel.ALL
WORKFLOW_LOG_DATA = False


def asl_placeholders(path: Path = ASL_PATH) -> set[str]:
    """Every `${Name}` in the ASL: the stack's values (RENDERED) and CloudFormation's substitutions."""
    return set(PLACEHOLDER.findall(path.read_text(encoding="utf-8")))


# The file is JSON as it is (json.load works; JSON tools and Workflow Studio open it). A value that is a
# number or an optional block is written as a string holding only its placeholder ("MaxConcurrency":
# "${MaxConcurrency}"); the stack loads the file and sets these from the config (render_definition), then
# hands the rendered file to DefinitionBody.from_file. Every other placeholder is a string inside a string
# (function ARNs, the bucket: known only at deploy) and stays for CloudFormation's DefinitionSubstitutions;
# the local cloud deploys the same synthesized asset and substitutions (docagent/localcloud/cfn_resources.py).
RENDERED = frozenset(
    {
        "MaxConcurrency",
        "FanInMaxConcurrency",
        "ToleratedFailurePercentage",
        "InProgressRetryIntervalSeconds",
        "InProgressRetryMaxAttempts",
        "ApprovalTimeoutSeconds",
        "JobTimeoutSeconds",
        "ItemSelector",
        "ItemBatcher",
        "BatchMinRecords",
        "BatchJobsInFlight",
        "BatchPollSeconds",
        "BatchPollAttempts",
    }
)


def rendered_values(config: DocAgentConfig) -> dict[str, Any]:
    """The value of each RENDERED placeholder for this config; None leaves the field out of the definition."""
    polling = in_progress_polling(config.function_timeout_seconds)
    return {
        "MaxConcurrency": config.effective_max_concurrency,
        "FanInMaxConcurrency": config.fan_in_max_concurrency,
        "ToleratedFailurePercentage": config.tolerated_failure_percentage,
        "InProgressRetryIntervalSeconds": polling.interval_seconds,
        "InProgressRetryMaxAttempts": polling.max_attempts,
        "ApprovalTimeoutSeconds": config.approval_timeout_seconds,
        "JobTimeoutSeconds": config.job_timeout_seconds,
        **batching_blocks(config.documents_per_child),
        "BatchMinRecords": BATCH_MIN_RECORDS,
        "BatchJobsInFlight": config.batch_jobs_in_flight,
        "BatchPollSeconds": config.batch_poll_seconds,
        "BatchPollAttempts": batch_poll_attempts(config.batch_poll_seconds),
    }


def batch_poll_attempts(poll_seconds: int) -> int:
    """WaitForBatchJob's retries of States.Timeout: polls enough to outlast a batch job that waits in the
    queue and then runs for its whole timeout (functions/batch_inference/facts.py: twice
    BATCH_TIMEOUT_HOURS_MIN)."""
    return -(-2 * BATCH_TIMEOUT_HOURS_MIN * 3600 // poll_seconds)


def render_definition(config: DocAgentConfig, path: Path = ASL_PATH) -> Any:
    """The ASL file parsed, with every RENDERED placeholder set from the config (string placeholders kept)."""
    values = rendered_values(config)
    found: set[str] = set()

    def render(node: Any) -> Any:
        if isinstance(node, dict):
            rendered = {}
            for key, value in node.items():
                name = _whole_placeholder(value)
                if name in values:
                    found.add(name)
                    if values[name] is None:
                        continue
                    rendered[key] = values[name]
                else:
                    rendered[key] = render(value)
            return rendered
        if isinstance(node, list):
            return [render(item) for item in node]
        return node

    definition = render(json.loads(path.read_text(encoding="utf-8")))
    if found != values.keys():
        raise ValueError(
            f'{path.name}: values the stack sets that are not a whole JSON value ("${{Name}}") in it: '
            f"{sorted(values.keys() - found)}"
        )
    return definition


def _whole_placeholder(value: Any) -> str | None:
    match = PLACEHOLDER.fullmatch(value) if isinstance(value, str) else None
    return match.group(1) if match else None


def batching_blocks(documents_per_child: int) -> dict[str, Any]:
    """ReviewDocuments' ItemSelector and ItemBatcher (None: no batcher), see batching_substitutions."""
    if documents_per_child == 1:
        selector = {"job_id.$": "$.job_id", "options.$": "$.options", "document.$": "$$.Map.Item.Value"}
        return {"ItemSelector": selector, "ItemBatcher": None}
    batcher = {
        "MaxItemsPerBatch": documents_per_child,
        "MaxInputBytesPerBatch": BATCH_MAX_INPUT_BYTES,
        "BatchInput": {"job_id.$": "$.job_id", "options.$": "$.options"},
    }
    return {"ItemSelector": {"document.$": "$$.Map.Item.Value"}, "ItemBatcher": batcher}


def batching_substitutions(documents_per_child: int) -> dict[str, str]:
    """How ReviewDocuments hands documents to its children (docs/scale.md, "Batching").

    1: no ItemBatcher, a child per document whose input is ``{"job_id", "options", "document"}`` (the
    ProcessDocument payload of docs/design.md). K > 1: an ItemBatcher of at most K items; each item is
    ``{"document"}`` and the batch's BatchInput carries ``job_id`` and ``options`` once, so a child's input
    is ``{"Items": [{"document"}, ...], "BatchInput": {"job_id", "options"}}``; ProcessDocument gets
    ``items``. The blocks themselves are set by the stack (batching_blocks).
    """
    if documents_per_child == 1:
        return {
            "ChildJobIdPath": "$.job_id",
            "ChildOptionsPath": "$.options",
            "ChildDocumentsField": "document",
            "ChildDocumentsPath": "$.document",
        }
    return {
        "ChildJobIdPath": "$.BatchInput.job_id",
        "ChildOptionsPath": "$.BatchInput.options",
        "ChildDocumentsField": "items",
        "ChildDocumentsPath": "$.Items",
    }


def workflow_log_group_name(state_machine: str) -> str:
    """``/aws/vendedlogs/states/<state machine>-<stack uuid>``: the vended-logs prefix Step Functions
    recommends, made unique per stack by the UUID in the stack's id. The group is retained on delete (logs are
    evidence), so a fixed name would make the next create of the stack (after `cdk destroy`, or a first
    create that rolled back) fail with AlreadyExists; each stack creation gets a new UUID and group."""
    stack_uuid = Fn.select(2, Fn.split("/", Aws.STACK_ID))
    return Fn.join("", [f"/aws/vendedlogs/states/{state_machine}-", stack_uuid])


def state_machine_name(config: DocAgentConfig) -> str:
    return f"{config.stack_name}-DocumentReview"


# The state machine's role (Workflow._role), as data: stacks/grants.py.
STATE_MACHINE_GRANTS: tuple[Grant[str], ...] = (
    Grant("InvokeWorkflowFunctions", ("lambda:InvokeFunction",), "functions"),
    # Distributed Map IAM: the parent starts its children as executions of itself ...
    Grant("StartMapChildren", ("states:StartExecution",), "own"),
    # ... watches and stops them, and redrives the failed ones when the parent is redriven.
    Grant("ManageMapChildren", ("states:DescribeExecution", "states:StopExecution"), "executions"),
    Grant("RedriveMapRun", ("states:RedriveExecution",), "children"),
    Grant("ReadMapItems", ("s3:GetObject",), "items"),
    Grant(
        "WriteMapResults",
        ("s3:PutObject", "s3:GetObject", "s3:ListMultipartUploadParts", "s3:AbortMultipartUpload"),
        "map_results",
    ),
    Grant("ListJobBucket", ("s3:ListBucket",), "job_bucket"),
    # Vended log delivery and X-Ray: these actions take no resource-level permissions.
    Grant(
        "DeliverExecutionLogs",
        (
            "logs:CreateLogDelivery",
            "logs:GetLogDelivery",
            "logs:UpdateLogDelivery",
            "logs:DeleteLogDelivery",
            "logs:ListLogDeliveries",
            "logs:PutResourcePolicy",
            "logs:DescribeResourcePolicies",
            "logs:DescribeLogGroups",
        ),
        "any",
    ),
    Grant(
        "SendTraces",
        (
            "xray:PutTraceSegments",
            "xray:PutTelemetryRecords",
            "xray:GetSamplingRules",
            "xray:GetSamplingTargets",
        ),
        "any",
    ),
)
STATE_MACHINE_WILDCARDS = (
    Wildcards(
        ("any",), "CloudWatch Logs vended log delivery and X-Ray actions take no resource-level permissions."
    ),
    Wildcards(
        ("qualified_functions",),
        "The `:*` qualifier lets the workflow invoke published versions and aliases of its own "
        "{functions} functions, and nothing else.",
    ),
    Wildcards(
        ("executions",),
        "Distributed Map child executions get generated names under this state machine ({name}); "
        "the wildcard is limited to executions of this state machine.",
    ),
    Wildcards(
        ("items", "map_results"),
        "The Distributed Map reads each job's items file (job id in the key) and its ResultWriter "
        "writes one folder per Map Run under {map_results}/; both are limited to those keys.",
    ),
)


class Workflow(Construct):
    """A Standard state machine whose Distributed Map runs ProcessDocument once per document (or per batch
    of ``documents_per_child``)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: DocAgentConfig,
        storage: Storage,
        functions: Mapping[str, lambda_.IFunction],
    ) -> None:
        super().__init__(scope, construct_id)
        name = state_machine_name(config)

        substitutions = {
            **{
                f"{function_id}FunctionArn": function.function_arn
                for function_id, function in functions.items()
            },
            "BucketName": storage.bucket.bucket_name,
            "MapLabel": config.map_label,
            "ChildExecutionType": config.child_execution_type,
            **batching_substitutions(config.documents_per_child),
        }
        check_substitutions_cover_asl(substitutions)
        rendered_asl = self._rendered_asl(name, config)

        log_group = retained_log_group(
            self,
            "LogGroup",
            log_group_name=workflow_log_group_name(name),
            retention_days=config.log_retention_days,
        )
        role = self._role(name, storage=storage, functions=functions)

        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            state_machine_name=name,
            state_machine_type=sfn.StateMachineType.STANDARD,
            definition_body=sfn.DefinitionBody.from_file(str(rendered_asl)),
            definition_substitutions=substitutions,
            tracing_enabled=True,
            logs=sfn.LogOptions(
                destination=log_group, level=WORKFLOW_LOG_LEVEL, include_execution_data=WORKFLOW_LOG_DATA
            ),
            # Immutable: the policy below is the whole story, CDK adds nothing behind our back.
            role=role.without_policy_updates(),
        )

    def _rendered_asl(self, name: str, config: DocAgentConfig) -> Path:
        """The ASL with the config's numbers and blocks set, written into the cloud assembly's directory
        (synthesis copies it into the definition asset, named by its content)."""
        stage = Stage.of(self)
        assert stage is not None, "the workflow belongs to an app"
        path = Path(stage.outdir) / f"{name}.asl.json"
        path.write_text(json.dumps(render_definition(config), indent=2) + "\n", encoding="utf-8")
        return path

    def _role(
        self,
        name: str,
        *,
        storage: Storage,
        functions: Mapping[str, lambda_.IFunction],
    ) -> iam.Role:
        stack = Stack.of(self)
        # Built from the explicit name, not from the state machine, which would depend on this role.
        own_arn = stack.format_arn(
            service="states",
            resource="stateMachine",
            resource_name=name,
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        # Distributed Map children are `execution:<name>/<label>:<id>`; the parent is `execution:<name>:<id>`.
        child_executions = stack.format_arn(
            service="states",
            resource="execution",
            resource_name=f"{name}/*",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        own_executions = stack.format_arn(
            service="states",
            resource="execution",
            resource_name=f"{name}:*",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        function_arns = [function.function_arn for function in functions.values()]
        arns = {
            "functions": [*function_arns, *[f"{arn}:*" for arn in function_arns]],
            "qualified_functions": [f"{arn}:*" for arn in function_arns],
            "own": [own_arn],
            "children": [child_executions],
            "executions": [child_executions, own_executions],
            "items": [storage.bucket.arn_for_objects(pattern) for pattern in MAP_ITEMS_KEY_PATTERNS],
            "map_results": [storage.bucket.arn_for_objects(f"{MAP_RESULTS_PREFIX}/*")],
            "job_bucket": [storage.bucket.bucket_arn],
            "any": ["*"],
        }
        role = iam.Role(
            self,
            "Role",
            description="docagent document review state machine: least privilege, written by hand",
            assumed_by=iam.ServicePrincipal("states.amazonaws.com"),
            inline_policies={
                "LeastPrivilege": iam.PolicyDocument(statements=granted(STATE_MACHINE_GRANTS, name, arns))
            },
        )
        acknowledge(
            role,
            STATE_MACHINE_WILDCARDS,
            arns,
            name=name,
            functions=len(function_arns),
            map_results=MAP_RESULTS_PREFIX,
        )
        return role


def check_substitutions_cover_asl(substitutions: Mapping[str, str]) -> None:
    """A placeholder left unsubstituted deploys as literal text and fails at run time, so refuse it now."""
    expected = asl_placeholders() - RENDERED
    missing = expected - substitutions.keys()
    unused = substitutions.keys() - expected
    if missing or unused:
        raise ValueError(
            f"{ASL_PATH.name}: placeholders without a substitution: {sorted(missing)}; "
            f"substitutions the ASL does not use: {sorted(unused)}"
        )
