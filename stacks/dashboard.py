"""The jobs dashboard (``<stack>-jobs``): jobs by status, documents per minute, the models' calls and
tokens, model_id's latency, every model's throttles, the functions' durations, errors and throttles, action
outcomes, approvals pending and every alarm's state."""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from stacks.config import DocAgentConfig
from stacks.metrics import bedrock_metric, own_metric, states_metric


def job_dashboard(
    scope: Construct,
    *,
    config: DocAgentConfig,
    state_machine: sfn.StateMachine,
    functions: Mapping[str, lambda_.Function],
    alarms: Mapping[str, cloudwatch.Alarm],
) -> cloudwatch.Dashboard:
    parent = state_machine.state_machine_arn
    minute = Duration.minutes(1)
    by_name = sorted(functions.items())
    dashboard = cloudwatch.Dashboard(
        scope,
        "Dashboard",
        dashboard_name=f"{config.stack_name}-jobs",
        default_interval=Duration.hours(6),
    )
    dashboard.add_widgets(
        cloudwatch.GraphWidget(
            title="Jobs by status",
            left=[
                states_metric(name, parent)
                for name in (
                    "ExecutionsStarted",
                    "ExecutionsSucceeded",
                    "ExecutionsFailed",
                    "ExecutionsTimedOut",
                    "ExecutionsAborted",
                )
            ],
            width=12,
        ),
        cloudwatch.GraphWidget(
            title="Documents per minute",
            left=[
                own_metric(name, minute)
                for name in ("DocumentsExtracted", "DocumentsForReview", "DocumentsRejected")
            ],
            width=12,
        ),
    )
    dashboard.add_widgets(
        cloudwatch.GraphWidget(
            title="Model calls",
            left=[own_metric(name) for name in ("ModelCalls", "ModelCallsRejected")],
            width=6,
        ),
        cloudwatch.GraphWidget(
            title="Model tokens",
            left=[own_metric(name) for name in ("ModelInputTokens", "ModelOutputTokens")],
            width=6,
        ),
        cloudwatch.GraphWidget(
            title="Model latency",
            left=[
                bedrock_metric(config.model_id, "InvocationLatency", "p50"),
                bedrock_metric(config.model_id, "InvocationLatency", "p99"),
            ],
            width=6,
        ),
        cloudwatch.GraphWidget(
            title="Model throttles",
            left=[bedrock_metric(model, "InvocationThrottles") for model in config.model_ids()],
            width=6,
        ),
    )
    dashboard.add_widgets(
        cloudwatch.GraphWidget(
            title="Function durations (p99)",
            left=[function.metric_duration(statistic="p99", label=name) for name, function in by_name],
            width=8,
        ),
        cloudwatch.GraphWidget(
            title="Function errors",
            left=[function.metric_errors(statistic="Sum", label=name) for name, function in by_name],
            width=8,
        ),
        cloudwatch.GraphWidget(
            title="Function throttles",
            left=[function.metric_throttles(statistic="Sum", label=name) for name, function in by_name],
            width=8,
        ),
    )
    dashboard.add_widgets(
        cloudwatch.GraphWidget(
            title="Action outcomes",
            left=[
                own_metric(name)
                for name in ("ActionsPerformed", "ActionsReconciled", "ActionsSkipped", "ActionErrors")
            ],
            width=8,
        ),
        cloudwatch.GraphWidget(
            title="Approvals pending",
            left=[alarms["ApprovalWaitingAlarm"].metric],
            width=8,
        ),
        cloudwatch.AlarmStatusWidget(title="Alarms", alarms=list(alarms.values()), width=8),
    )
    return dashboard
