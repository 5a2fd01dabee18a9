"""The seven functions against docs/design.md: handlers, environment, runtime, logs and their own roles."""

from __future__ import annotations

import importlib.metadata
import json
import re
from pathlib import Path
from typing import Any, cast

import pytest
from aws_cdk import aws_iam as iam

from functions.settings import ENV_VARS
from stacks.config import DEFAULT_CHEAP_MODEL_ID, INFERENCE_PROFILE_PREFIXES, DocAgentConfig
from stacks.docagent_stack import DocAgentStack
from stacks.function_specs import FUNCTION_SPECS
from stacks.lambdas import REPO_ROOT, function_environment
from stacks.powertools import powertools_layer_parameter
from tests.infra.conftest import Synthesized, grants, resolved_policy_statements, template_role_grants

DESIGN = (REPO_ROOT / "docs" / "design.md").read_text(encoding="utf-8")
DESIGN_HANDLERS = sorted(set(re.findall(r"functions\.handlers\.\w+\.handler", DESIGN)))
_ENV_SECTION = DESIGN.split("## Environment variables", 1)[1].split("\n## ", 1)[0]
PINNED_POWERTOOLS = re.search(
    r"^aws_lambda_powertools==(\S+)$", (REPO_ROOT / "constraints.txt").read_text(), re.MULTILINE
).group(1)  # type: ignore[union-attr]
DESIGN_ENV = dict(re.findall(r"`([A-Z][A-Z0-9_]+)(?:=([^`]*))?`", _ENV_SECTION))


def functions_by_handler(synthesized: Synthesized) -> dict[str, dict[str, Any]]:
    return {
        function["Properties"]["Handler"]: function
        for function in synthesized.resources("AWS::Lambda::Function").values()
    }


def role_of(synthesized: Synthesized, function: dict[str, Any]) -> dict[str, Any]:
    role_id = function["Properties"]["Role"]["Fn::GetAtt"][0]
    role: dict[str, Any] = synthesized.template_json["Resources"][role_id]
    return role


def test_design_lists_seven_handlers_and_the_environment() -> None:
    assert len(DESIGN_HANDLERS) == 7
    assert {"BUCKET_NAME", "MODEL_ID", "POWERTOOLS_LOG_LEVEL"} <= DESIGN_ENV.keys()


def test_there_is_one_function_per_design_handler(synthesized: Synthesized) -> None:
    assert sorted(functions_by_handler(synthesized)) == DESIGN_HANDLERS


@pytest.mark.parametrize("handler", DESIGN_HANDLERS)
def test_function_runs_python_3_13_traced_with_the_powertools_layer(
    synthesized: Synthesized, handler: str
) -> None:
    properties = functions_by_handler(synthesized)[handler]["Properties"]
    config: DocAgentConfig = synthesized.stack.config
    assert properties["Runtime"] == "python3.13"
    assert properties["Architectures"] == ["x86_64"]
    assert properties["TracingConfig"] == {"Mode": "Active"}
    own_timeouts = {  # RunActions' (#40), VerifyJob's (#44)
        "functions.handlers.run_actions.handler": config.actions_timeout_seconds,
        "functions.handlers.verify_job.handler": config.verify_timeout_seconds,
    }
    assert properties["Timeout"] == own_timeouts.get(handler, config.function_timeout_seconds)
    aggregates = handler.split(".")[2] in {"prepare_job", "build_report", "run_actions", "verify_job"}
    assert properties["MemorySize"] == (
        config.aggregate_memory_mb if aggregates else config.function_memory_mb
    )
    sdk = {"Ref": synthesized.logical_id(synthesized.stack.functions.sdk_layer)}
    documents = {"Ref": synthesized.logical_id(synthesized.stack.functions.document_layer)}
    powertools = "{{resolve:ssm:/aws/service/powertools/python/x86_64/python3.13/" + PINNED_POWERTOOLS + "}}"
    assert sorted(properties["Layers"], key=str) == sorted(
        [powertools, sdk, documents],
        key=str,
    )


def test_the_powertools_layer_is_the_pinned_library_version() -> None:
    """The layer and the library move together: constraints.txt, the installed package, the layer."""
    assert importlib.metadata.version("aws-lambda-powertools") == PINNED_POWERTOOLS
    assert powertools_layer_parameter().endswith(f"/{PINNED_POWERTOOLS}")
    pyproject = (REPO_ROOT / "pyproject.toml").read_text()
    assert f"aws-lambda-powertools[tracer,validation]=={PINNED_POWERTOOLS}" in pyproject


@pytest.mark.parametrize("handler", DESIGN_HANDLERS)
def test_function_gets_every_design_environment_variable(synthesized: Synthesized, handler: str) -> None:
    variables = functions_by_handler(synthesized)[handler]["Properties"]["Environment"]["Variables"]
    assert variables.keys() == DESIGN_ENV.keys()
    for name, fixed_value in DESIGN_ENV.items():
        if fixed_value:
            assert variables[name] == fixed_value, name


def test_environment_covers_what_the_function_settings_read(synthesized: Synthesized) -> None:
    variables = next(iter(functions_by_handler(synthesized).values()))["Properties"]["Environment"][
        "Variables"
    ]
    assert set(ENV_VARS) <= variables.keys()


def test_environment_values_come_from_config_and_storage(synthesized: Synthesized) -> None:
    stack = synthesized.stack
    config: DocAgentConfig = stack.config
    variables = functions_by_handler(synthesized)["functions.handlers.prepare_job.handler"]["Properties"][
        "Environment"
    ]["Variables"]
    assert variables["BUCKET_NAME"] == {"Ref": synthesized.logical_id(stack.storage.bucket)}
    assert variables["IDEMPOTENCY_TABLE_NAME"] == {
        "Ref": synthesized.logical_id(stack.storage.idempotency_table)
    }
    assert variables["REFERENCE_TABLE_NAME"] == {"Ref": synthesized.logical_id(stack.storage.reference_table)}
    assert variables["MODEL_PROVIDER"] == config.model_provider
    assert variables["MODEL_ID"] == config.model_id
    assert variables["DEFAULT_DEFINITION"] == config.default_definition
    assert variables["MAX_DOCUMENT_BYTES"] == str(config.max_document_bytes)
    assert variables["IDEMPOTENCY_TTL_SECONDS"] == str(config.idempotency_ttl_seconds)
    assert variables["FAULT_INJECTION_ENABLED"] == "false"


def test_code_version_is_the_code_asset_hash(synthesized: Synthesized) -> None:
    for function in synthesized.resources("AWS::Lambda::Function").values():
        asset_hash = function["Properties"]["Code"]["S3Key"].removesuffix(".zip")
        assert asset_hash.startswith(function["Properties"]["Environment"]["Variables"]["CODE_VERSION"])


def test_code_asset_holds_only_the_functions_package(synthesized: Synthesized) -> None:
    keys = {
        function["Properties"]["Code"]["S3Key"]
        for function in synthesized.resources("AWS::Lambda::Function").values()
    }
    assert len(keys) == 1, "all seven functions share one code asset"
    asset_dir = synthesized.outdir / f"asset.{keys.pop().removesuffix('.zip')}"
    files = sorted(path.relative_to(asset_dir) for path in asset_dir.rglob("*") if path.is_file())
    assert files, asset_dir
    assert all(path.parts[0] == "functions" for path in files), files
    assert not [path for path in files if "__pycache__" in path.parts or path.suffix == ".pyc"]
    for handler in DESIGN_HANDLERS:
        module = handler.removesuffix(".handler").replace(".", "/") + ".py"
        assert Path(module) in files


def test_each_function_logs_to_its_own_retained_log_group(synthesized: Synthesized) -> None:
    log_groups = synthesized.resources("AWS::Logs::LogGroup")
    used = []
    for function in synthesized.resources("AWS::Lambda::Function").values():
        log_group_id = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        log_group = log_groups[log_group_id]
        assert log_group["Properties"]["RetentionInDays"] == synthesized.stack.config.log_retention_days
        assert log_group["DeletionPolicy"] == "Retain"
        used.append(log_group_id)
    assert len(set(used)) == 7


def test_each_function_has_its_own_role(synthesized: Synthesized) -> None:
    roles = [
        function["Properties"]["Role"]["Fn::GetAtt"][0]
        for function in synthesized.resources("AWS::Lambda::Function").values()
    ]
    assert len(set(roles)) == 7


def test_no_managed_or_generated_policies(synthesized: Synthesized) -> None:
    assert synthesized.resources("AWS::IAM::ManagedPolicy") == {}
    # Roles are immutable in the stack, so CDK cannot add a DefaultPolicy next to the hand-written one.
    assert synthesized.resources("AWS::IAM::Policy") == {}
    for role in synthesized.resources("AWS::IAM::Role").values():
        assert "ManagedPolicyArns" not in role["Properties"]


@pytest.mark.parametrize("handler", DESIGN_HANDLERS)
def test_function_writes_logs_only_to_its_own_log_group(synthesized: Synthesized, handler: str) -> None:
    function = functions_by_handler(synthesized)[handler]
    log_group_id = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
    log_grants = {
        grant
        for grant in template_role_grants(role_of(synthesized, function))
        if grant[0].startswith("logs:")
    }
    assert log_grants == {
        ("logs:CreateLogStream", f"<{log_group_id}.Arn>"),
        ("logs:PutLogEvents", f"<{log_group_id}.Arn>"),
    }


def test_function_grants_follow_the_design_s3_layout(synthesized: Synthesized) -> None:
    bucket = f"<{synthesized.logical_id(synthesized.stack.storage.bucket)}.Arn>"
    by_handler = functions_by_handler(synthesized)

    def s3(module: str, action: str) -> set[str]:
        role = role_of(synthesized, by_handler[f"functions.handlers.{module}.handler"])
        return {resource for granted, resource in template_role_grants(role) if granted == action}

    assert s3("prepare_job", "s3:PutObject") == {
        f"{bucket}/jobs/*/request.json",
        f"{bucket}/jobs/*/manifest.json",
        f"{bucket}/jobs/*/items/*",  # the parts and their join (a multipart upload of UploadPartCopy)
        f"{bucket}/jobs/*/listing/*",
    }
    assert {f"{bucket}/jobs/*/items/*", f"{bucket}/jobs/*/listing/*"} <= s3("prepare_job", "s3:GetObject")
    assert s3("prepare_job", "s3:AbortMultipartUpload") == {f"{bucket}/jobs/*/items/items.jsonl"}
    assert s3("process_document", "s3:PutObject") == {
        f"{bucket}/jobs/*/results/*",
        f"{bucket}/jobs/*/model-calls/*",
        f"{bucket}/jobs/*/model-attempts/*",
        f"{bucket}/jobs/*/model-breaker.json",
        f"{bucket}/jobs/*/ocr/*",  # the pages read by OCR, stored once (#52)
    }
    assert f"{bucket}/jobs/*/ocr/*" in s3("process_document", "s3:GetObject")
    # the OCR of pages without a text layer (Textract DetectDocumentText has no resource type):
    # ProcessDocument only; the local cloud enforces it, so a missing grant fails locally as on AWS
    for handler in DESIGN_HANDLERS:
        textract = s3(handler.split(".")[2], "textract:DetectDocumentText")
        assert textract == ({"*"} if handler.split(".")[2] == "process_document" else set()), handler
    assert s3("build_report", "s3:GetObject") == {
        f"{bucket}/jobs/*",
        f"{bucket}/map-runs/*",
        f"{bucket}/definitions/*",  # the pinned definition: every report failed on AWS without it (#50)
    }
    assert s3("build_report", "s3:PutObject") == {
        f"{bucket}/jobs/*/report.json",
        f"{bucket}/jobs/*/review-wait.json",  # WaitForReview's token and queue
        f"{bucket}/jobs/*/report/*",  # the fan-in: plan, routed rows, partials, segments, the table
    }
    assert s3("build_report", "s3:AbortMultipartUpload") == {f"{bucket}/jobs/*/report/*"}
    assert s3("verify_job", "s3:PutObject") == {f"{bucket}/jobs/*/verify/*"}  # the partitions' verdicts
    assert s3("run_actions", "s3:PutObject") == {
        f"{bucket}/jobs/*/actions/*",
        f"{bucket}/jobs/*/exports/*/*",
        f"{bucket}/jobs/*/report.json",  # the report's actions section
        f"{bucket}/action-ledger/*",
        f"{bucket}/action-ledger-index/*",  # the index by reference, written before the record
    }
    # An export's files are multipart uploads (aborted on an error).
    assert s3("run_actions", "s3:AbortMultipartUpload") == {f"{bucket}/jobs/*/exports/*/*"}
    ledger = {f"{bucket}/action-ledger/*", f"{bucket}/action-ledger-index/*"}
    assert ledger | {f"{bucket}/definitions/*"} <= s3("verify_job", "s3:GetObject")
    assert ledger | {f"{bucket}/definitions/*"} <= s3("run_actions", "s3:GetObject")
    # verify_job writes only its partitions' verdicts (checked above), nothing it verifies
    approval_objects = {f"{bucket}/jobs/*/approval.json", f"{bucket}/jobs/*/report.json"}
    assert s3("request_approval", "s3:GetObject") == approval_objects
    assert s3("request_approval", "s3:PutObject") == approval_objects
    assert s3("batch_inference", "s3:PutObject") == {f"{bucket}/jobs/*/batch/*", f"{bucket}/batch-jobs/*"}
    assert f"{bucket}/jobs/*/batch/*" in s3("process_document", "s3:GetObject")  # its batch output record
    # the job's pinned definition (its models and checks): every job failed on AWS without it (#50, found by
    # the local IAM)
    assert f"{bucket}/definitions/*" in s3("process_document", "s3:GetObject")
    # a reviewer's re-split of a packet (docs/design.md "Re-splitting a packet"): read by its re-run only
    assert f"{bucket}/jobs/*/reviews/*/split.json" in s3("process_document", "s3:GetObject")
    assert not {r for r in s3("process_document", "s3:PutObject") if "/reviews/" in r}
    # PlanBatchJobs reads the manifest's parts (the documents' sizes); each document reads the plan
    assert f"{bucket}/jobs/*/items/*" in s3("batch_inference", "s3:GetObject")
    # batch_inference reads a document to write its batch record, as process_document will send it
    document_readers = {
        f"functions.handlers.{module}.handler"
        for module in ("prepare_job", "process_document", "batch_inference")
    }
    for handler, function in by_handler.items():
        role = role_of(synthesized, function)
        granted = s3_actions(template_role_grants(role)) - {"s3:AbortMultipartUpload"}  # prepare_job's, above
        assert granted <= {"s3:GetObject", "s3:PutObject", "s3:ListBucket"} | DOCUMENT_VERSION_ACTIONS
        assert ("s3:ListBucket", bucket) in template_role_grants(role)
        # Only the functions that read documents may read (and list) their pinned versions.
        assert bool(granted & DOCUMENT_VERSION_ACTIONS) == (handler in document_readers)


DOCUMENT_VERSION_ACTIONS = {"s3:ListBucketVersions", "s3:GetObjectVersion"}


def s3_actions(granted: set[tuple[str, str]]) -> set[str]:
    return {action for action, _ in granted if action.startswith("s3:")}


def test_only_the_waits_that_complete_their_own_token_may_send_task_success(synthesized: Synthesized) -> None:
    """WaitForBatchJob (batch_inference) and WaitForReview (build_report) complete their token when what they
    wait for has already happened; no other function completes a task."""
    senders = {
        handler.split(".")[2]
        for handler, function in functions_by_handler(synthesized).items()
        if any(
            granted.startswith("states:")
            for granted, _ in template_role_grants(role_of(synthesized, function))
        )
    }
    assert senders == {"batch_inference", "build_report"}


def test_only_idempotent_steps_touch_the_idempotency_table(synthesized: Synthesized) -> None:
    table = f"<{synthesized.logical_id(synthesized.stack.storage.idempotency_table)}.Arn>"
    references = f"<{synthesized.logical_id(synthesized.stack.storage.reference_table)}.Arn>"
    users = {}
    for handler, function in functions_by_handler(synthesized).items():
        granted = template_role_grants(role_of(synthesized, function))
        users[handler.split(".")[2]] = {action for action, resource in granted if resource == table}
        if "process_document" not in handler:
            assert not any(resource == references for _, resource in granted), handler
    powertools = {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"}
    assert users == {
        "prepare_job": powertools,
        "process_document": powertools,
        "run_actions": powertools,
        "build_report": set(),
        "request_approval": set(),
        "verify_job": set(),
        "batch_inference": set(),
    }


def test_only_process_document_may_invoke_the_model(synthesized: Synthesized) -> None:
    for handler, function in functions_by_handler(synthesized).items():
        model_grants = {
            grant
            for grant in template_role_grants(role_of(synthesized, function))
            if grant[0].startswith("bedrock:")
        }
        if handler == "functions.handlers.process_document.handler":
            model_id = synthesized.stack.config.model_id
            geography, _, base_model = model_id.partition(".")
            assert geography in INFERENCE_PROFILE_PREFIXES  # the default is a cross-Region inference profile
            assert model_grants == {  # the global profile's statements: tests/infra/test_model_grants.py
                (
                    "bedrock:InvokeModel",
                    "arn:<AWS::Partition>:bedrock:<AWS::Region>:<AWS::AccountId>:inference-profile/"
                    + model_id,
                ),
                (
                    "bedrock:InvokeModel",
                    "arn:<AWS::Partition>:bedrock:<AWS::Region>::foundation-model/" + base_model,
                ),
                ("bedrock:InvokeModel", "arn:<AWS::Partition>:bedrock:::foundation-model/" + base_model),
                # the default cascade's cheap model (cdk.json extra_model_ids): a US profile and its model
                (
                    "bedrock:InvokeModel",
                    "arn:<AWS::Partition>:bedrock:<AWS::Region>:<AWS::AccountId>:inference-profile/"
                    + DEFAULT_CHEAP_MODEL_ID,
                ),
                (
                    "bedrock:InvokeModel",
                    "arn:<AWS::Partition>:bedrock:*::foundation-model/amazon.nova-lite-v1:0",
                ),
            }
        elif handler == "functions.handlers.batch_inference.handler":
            # Creates and reads the job's batch job (Bedrock invokes the model under the batch role).
            assert {action for action, _ in model_grants} == {
                "bedrock:CreateModelInvocationJob",
                "bedrock:GetModelInvocationJob",
                "bedrock:TagResource",
            }
        else:
            assert model_grants == set()


def _process_document_grants(stack: DocAgentStack) -> set[tuple[str, str]]:
    role = cast(iam.CfnRole, stack.functions.node.find_child("ProcessDocumentRole").node.default_child)
    return grants(list(resolved_policy_statements(stack, role)))


def test_only_the_functions_passing_fault_points_record_firings_and_only_with_fault_injection(
    synthesized: Synthesized, variant_stack: DocAgentStack
) -> None:
    """A fault armed with `times` writes its firings under jobs/{job}/faults/ (functions/durability/faults.py)
    from the functions whose steps pass the points; a deployment without fault injection grants none."""
    passing = {spec.construct_id for spec in FUNCTION_SPECS if spec.passes_fault_points}
    assert passing == {"ProcessDocument", "BuildReport", "RunActions", "VerifyJob", "BatchInference"}
    for stack, injection in ((synthesized.stack, False), (variant_stack, True)):
        assert stack.config.fault_injection_enabled is injection
        bucket = f"<{stack.resolve(stack.storage.bucket.bucket_arn)['Fn::GetAtt'][0]}.Arn>"
        for spec in FUNCTION_SPECS:
            role = stack.functions.node.find_child(f"{spec.construct_id}Role").node.default_child
            granted = grants(list(resolved_policy_statements(stack, cast(iam.CfnRole, role))))
            firings = {resource for action, resource in granted if "/faults/" in resource}
            expected = {f"{bucket}/jobs/*/faults/*"} if injection and spec.construct_id in passing else set()
            assert firings == expected, (spec.construct_id, injection)
            assert all(action == "s3:PutObject" for action, resource in granted if "/faults/" in resource)


def test_inference_profile_grants_the_profile_and_its_model_and_the_extra_models(
    express_inference_profile_stack: DocAgentStack,
) -> None:
    model_grants = {
        grant
        for grant in _process_document_grants(express_inference_profile_stack)
        if grant[0].startswith("bedrock:")
    }
    assert model_grants == {
        (
            "bedrock:InvokeModel",
            "arn:<AWS::Partition>:bedrock:<AWS::Region>:<AWS::AccountId>:inference-profile/"
            "us.anthropic.claude-3-5-haiku-20241022-v1:0",
        ),
        (  # in the geography's Regions, through the profile only: tests/infra/test_model_grants.py
            "bedrock:InvokeModel",
            "arn:<AWS::Partition>:bedrock:*::foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0",
        ),
        (  # extra_model_ids: the cheap model a definition names (job.json models)
            "bedrock:InvokeModel",
            "arn:<AWS::Partition>:bedrock:<AWS::Region>::foundation-model/anthropic.claude-3-haiku-20240307-v1:0",
        ),
    }


def test_documents_are_readable_only_in_the_source_locations(
    express_inference_profile_stack: DocAgentStack,
) -> None:
    stack = express_inference_profile_stack
    bucket = f"<{stack.resolve(stack.storage.bucket.bucket_arn)['Fn::GetAtt'][0]}.Arn>"
    for function in ("PrepareJob", "ProcessDocument"):
        role = cast(iam.CfnRole, stack.functions.node.find_child(f"{function}Role").node.default_child)
        granted = grants(list(resolved_policy_statements(stack, role)))
        reads = {resource for action, resource in granted if action == "s3:GetObject"}
        assert {f"{bucket}/incoming/*", "arn:<AWS::Partition>:s3:::partner-drop/invoices/*"} <= reads
        assert f"{bucket}/*" not in reads  # not any key of the job bucket: never another job's records
        assert not {r for r in reads if r.startswith(f"{bucket}/jobs/*/approval")}
        assert ("s3:ListBucket", "arn:<AWS::Partition>:s3:::partner-drop") in granted
    variables = function_environment(stack.config, stack.storage, code_version="0")
    assert variables["SOURCE_LOCATIONS"] == "incoming/,s3://partner-drop/invoices/"


def test_config_reaches_the_environment(express_inference_profile_stack: DocAgentStack) -> None:
    # The wiring into every function is covered on the synthesized stack; this covers the mapping.
    stack = express_inference_profile_stack
    variables = function_environment(stack.config, stack.storage, code_version="0123456789ab")
    assert json.loads(variables["ACTIONS_ALLOWED"])["destinations"] == {
        "tickets": "https://tickets.example.com/api/tickets"
    }
    assert variables["POWERTOOLS_LOG_LEVEL"] == "DEBUG"
    assert variables["MODEL_ID"] == "us.anthropic.claude-3-5-haiku-20241022-v1:0"
    # the models its IAM grants (model_id, extra_model_ids): what a definition's job.json models may name
    assert json.loads(variables["MODELS_ALLOWED"]) == [
        "us.anthropic.claude-3-5-haiku-20241022-v1:0",
        "anthropic.claude-3-haiku-20240307-v1:0",
    ]
    assert variables["CODE_VERSION"] == "0123456789ab"
    assert variables.keys() == DESIGN_ENV.keys()
