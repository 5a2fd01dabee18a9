"""The stack's name and output names: the contract between the CDK app and whoever reads the deployed stack
(the operator CLI, the local cloud's deploy, the drills). Plain strings: importing this module does not load
aws-cdk-lib, so the CLI can use it without the CDK app's dependencies."""

from __future__ import annotations

from typing import Final

STACK_NAME: Final = "DocAgent"

BUCKET: Final = "BucketName"
STATE_MACHINE: Final = "StateMachineArn"
IDEMPOTENCY_TABLE: Final = "IdempotencyTableName"
REFERENCE_TABLE: Final = "ReferenceTableName"
ALERT_TOPIC: Final = "AlertTopicArn"
DASHBOARD: Final = "DashboardName"

# The construct ids of stacks/lambdas.py FUNCTION_SPECS; a function's name is the output {id}FunctionName.
PREPARE_JOB: Final = "PrepareJob"
PROCESS_DOCUMENT: Final = "ProcessDocument"
BUILD_REPORT: Final = "BuildReport"
RUN_ACTIONS: Final = "RunActions"
REQUEST_APPROVAL: Final = "RequestApproval"
VERIFY_JOB: Final = "VerifyJob"
BATCH_INFERENCE: Final = "BatchInference"
FUNCTION_IDS: Final = (
    PREPARE_JOB,
    PROCESS_DOCUMENT,
    BUILD_REPORT,
    RUN_ACTIONS,
    REQUEST_APPROVAL,
    VERIFY_JOB,
    BATCH_INFERENCE,
)


def function_name_output(function_id: str) -> str:
    """The output holding a function's name: ``ProcessDocument`` → ``ProcessDocumentFunctionName``."""
    return f"{function_id}FunctionName"
