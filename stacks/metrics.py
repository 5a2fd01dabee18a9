"""The CloudWatch metrics the alarms and the dashboard watch (stacks/observability.py, stacks/dashboard.py).

Metric names in the ``DocAgent`` namespace are the ones the functions emit with Powertools (EMF, dimension
``service=docagent``); tests/infra/test_observability.py checks each one against functions/.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch

NAMESPACE = "DocAgent"
SERVICE_DIMENSION = {"service": "docagent"}
FIVE_MINUTES = Duration.minutes(5)
# The DocAgent metrics the functions emit (functions/handlers, functions/logic,
# functions/inference/telemetry.py).
EMITTED_METRICS = (
    "DocumentsExtracted",
    "DocumentsForReview",
    "DocumentsRejected",
    "DocumentsListed",
    "ModelCalls",
    "ModelCallsRejected",
    "ModelInputTokens",
    "ModelOutputTokens",
    "ActionsPerformed",
    "ActionsReconciled",
    "ActionsSkipped",
    "ActionErrors",
    "ApprovalsRequested",
    "ApprovalsRecorded",
    "ReportsBuilt",
    "JobsVerified",
)


def states_metric(name: str, arn: str, period: Duration = FIVE_MINUTES) -> cloudwatch.Metric:
    """An AWS/States metric of a state machine (or of a Distributed Map's children: ``<ARN>/<label>``)."""
    return cloudwatch.Metric(
        namespace="AWS/States",
        metric_name=name,
        dimensions_map={"StateMachineArn": arn},
        statistic="Sum",
        period=period,
    )


def own_metric(name: str, period: Duration = FIVE_MINUTES, statistic: str = "Sum") -> cloudwatch.Metric:
    return cloudwatch.Metric(
        namespace=NAMESPACE,
        metric_name=name,
        dimensions_map=SERVICE_DIMENSION,
        statistic=statistic,
        period=period,
    )


def bedrock_metric(model_id: str, name: str, statistic: str = "Sum") -> cloudwatch.Metric:
    """An AWS/Bedrock runtime metric of one model, dimension ModelId: the id the functions call, an
    inference profile's included (as of 2026-11, AWS docs: "Monitor bedrock-runtime inference using
    CloudWatch metrics")."""
    return cloudwatch.Metric(
        namespace="AWS/Bedrock",
        metric_name=name,
        dimensions_map={"ModelId": model_id},
        statistic=statistic,
        period=FIVE_MINUTES,
    )
