"""Alerts, alarms, a dashboard and saved log queries: what an operator needs to see a job fail.

- An SNS topic for job alerts (KMS-encrypted, TLS only; an email subscription when ``alert_email`` is set).
- An EventBridge rule on Step Functions "Execution Status Change" for FAILED, TIMED_OUT and ABORTED executions
  of this state machine only (its Distributed Map children carry ``<state machine ARN>/<label>``, so an exact
  match on ``stateMachineArn`` leaves them out), whose input transformer writes the message.
- Alarms on the topic, a dashboard, and Logs Insights saved queries over the functions' log groups.

The metrics are stacks/metrics.py's; the dashboard is stacks/dashboard.py.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import jsii
from aws_cdk import ArnFormat, Aws, Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from stacks.config import DocAgentConfig
from stacks.dashboard import job_dashboard
from stacks.metrics import EMITTED_METRICS, FIVE_MINUTES, NAMESPACE, bedrock_metric, own_metric, states_metric
from stacks.workflow import PLACEHOLDER, render_definition

__all__ = ["EMITTED_METRICS", "FUNCTIONS_WITH_EXPECTED_ERRORS", "NAMESPACE", "Observability"]

ALERT_STATUSES = ("FAILED", "TIMED_OUT", "ABORTED")
EVENT_SOURCE = "aws.states"
EVENT_DETAIL_TYPE = "Step Functions Execution Status Change"
# Functions whose Lambda Errors metric counts expected, retried errors (ModelThrottled, ModelUnavailable,
# IdempotencyAlreadyInProgressError: the ASL retries them): no Errors alarm. A document that still fails after
# its retries is a failed Map Run child, which MapRunFailuresAlarm counts.
FUNCTIONS_WITH_EXPECTED_ERRORS = frozenset({"ProcessDocument"})
# The approval alarm's granularity: RUNNING_SUM over periods of this length.
APPROVAL_PERIOD_SECONDS = 300


def alert_message_lines(name: str, status: str, error: str, cause: str, arn: str) -> list[str]:
    """The alert's text, shared with the local cloud's sink so both clouds say the same thing.

    EventBridge's event carries no state name: the message names the execution's error and cause and the
    command that shows where it stopped (``docagent inspect`` reads the history)."""
    return [
        f"docagent job {name} {status}",
        f"error: {error}",
        f"cause: {cause}",
        f"execution: {arn}",
        f"where it stopped (failed state, documents, what is left): docagent inspect {name}",
        f"what a redrive would run again: docagent redrive {name} --dry-run",
    ]


class Observability(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: DocAgentConfig,
        state_machine: sfn.StateMachine,
        functions: Mapping[str, lambda_.Function],
    ) -> None:
        super().__init__(scope, construct_id)
        self._config = config
        self._state_machine = state_machine
        self._functions = functions

        key = kms.Key(
            self,
            "AlertsKey",
            description="docagent job alerts topic encryption (EventBridge and CloudWatch publish to it)",
            enable_key_rotation=True,
        )
        for service in ("events.amazonaws.com", "cloudwatch.amazonaws.com"):
            key.grant(iam.ServicePrincipal(service), "kms:Decrypt", "kms:GenerateDataKey*")
        self.topic = sns.Topic(
            self,
            "JobAlerts",
            display_name="docagent job alerts",
            master_key=key,
            enforce_ssl=True,
        )
        self._allow_alarms_to_publish()
        if config.alert_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(config.alert_email))

        self.rule = self._status_change_rule()
        self.alarms: dict[str, cloudwatch.Alarm] = {}
        self._alarms()
        self.dashboard = job_dashboard(
            self, config=config, state_machine=state_machine, functions=functions, alarms=self.alarms
        )
        self.queries = self._saved_queries()

    # -- alerts -------------------------------------------------------------------------------------

    @property
    def alarm_name_prefix(self) -> str:
        """Every alarm of the stack is named ``<stack>-<construct id>``: the topic policy and the smoke test
        (scripts/smoke_test.py) find them by this prefix."""
        return f"{self._config.stack_name}-"

    def alarm_arn_pattern(self) -> str:
        return Stack.of(self).format_arn(
            service="cloudwatch",
            resource="alarm",
            resource_name=f"{self.alarm_name_prefix}*",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )

    def _allow_alarms_to_publish(self) -> None:
        """The topic's policy replaces SNS's default one (which let the owner account publish), so CloudWatch
        alarms need their own statement: the service principal, limited to this stack's alarms in this
        account (as of 2026-12, AWS re:Post "Why didn't I receive an SNS notification for my CloudWatch
        alarm trigger?": Principal cloudwatch.amazonaws.com, sns:Publish, ArnLike aws:SourceArn on the alarm
        ARN). EventBridge gets its own, limited to the job alerts' rule (_allow_the_rule_to_publish)."""
        self._allow_to_publish("AllowThisStacksAlarms", "cloudwatch", "ArnLike", self.alarm_arn_pattern())

    def _allow_to_publish(self, sid: str, service: str, operator: str, source_arn: str) -> None:
        """A service may publish to the topic for sources of this account matching ``source_arn`` only."""
        self.topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid=sid,
                principals=[iam.ServicePrincipal(f"{service}.amazonaws.com")],
                actions=["sns:Publish"],
                resources=[self.topic.topic_arn],
                conditions={
                    operator: {"aws:SourceArn": source_arn},
                    "StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID},
                },
            )
        )

    def _status_change_rule(self) -> events.Rule:
        rule = events.Rule(
            self,
            "JobFailedRule",
            description="docagent: a job (parent execution) FAILED, TIMED_OUT or ABORTED",
            event_pattern=events.EventPattern(
                source=[EVENT_SOURCE],
                detail_type=[EVENT_DETAIL_TYPE],
                detail={
                    "status": list(ALERT_STATUSES),
                    "stateMachineArn": [self._state_machine.state_machine_arn],
                },
            ),
        )
        field = events.EventField.from_path
        message = "\n".join(
            alert_message_lines(
                name=field("$.detail.name"),
                status=field("$.detail.status"),
                error=field("$.detail.error"),
                cause=field("$.detail.cause"),
                arn=field("$.detail.executionArn"),
            )
        )
        rule.add_target(_TopicTarget(self.topic, events.RuleTargetInput.from_text(message)))
        self._allow_the_rule_to_publish(rule)
        return rule

    def _allow_the_rule_to_publish(self, rule: events.Rule) -> None:
        """EventBridge may publish for this rule only: aws:SourceArn is the rule's ARN (looked up 2026-12-07,
        Amazon EventBridge User Guide "Using resource-based policies for Amazon EventBridge", Amazon SNS
        permissions: Principal events.amazonaws.com, sns:Publish, Condition ArnEquals aws:SourceArn on the
        rule ARN). targets.SnsTopic would grant the service principal with no condition: any rule of any
        account could publish to the topic."""
        self._allow_to_publish("AllowTheJobAlertsRule", "events", "ArnEquals", rule.rule_arn)

    # -- alarms -------------------------------------------------------------------------------------

    def _add_alarm(
        self,
        construct_id: str,
        metric: cloudwatch.IMetric,
        *,
        threshold: float,
        description: str,
        evaluation_periods: int = 1,
    ) -> cloudwatch.Alarm:
        alarm = cloudwatch.Alarm(
            self,
            construct_id,
            alarm_name=f"{self.alarm_name_prefix}{construct_id}",
            metric=metric,
            threshold=threshold,
            evaluation_periods=evaluation_periods,
            datapoints_to_alarm=evaluation_periods,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=f"docagent: {description}",
        )
        alarm.add_alarm_action(cloudwatch_actions.SnsAction(self.topic))
        self.alarms[construct_id] = alarm
        return alarm

    def map_children_arn(self, label: str) -> str:
        """Distributed Map children emit AWS/States metrics under ``<state machine ARN>/<map label>`` (as of
        2026-11, AWS docs: "Viewing a Distributed Map Run execution in Step Functions")."""
        return f"{self._state_machine.state_machine_arn}/{label}"

    def _alarms(self) -> None:
        config = self._config
        parent = self._state_machine.state_machine_arn
        self._add_alarm(
            "ExecutionsFailedAlarm",
            states_metric("ExecutionsFailed", parent),
            threshold=1,
            description="a job execution failed",
        )
        self._add_alarm(
            "ExecutionsTimedOutAlarm",
            states_metric("ExecutionsTimedOut", parent),
            threshold=1,
            description=f"a job ran longer than job_timeout_seconds ({config.job_timeout_seconds} s) and "
            "timed out",
        )
        for label in distributed_map_labels(config):
            self._map_run_alarm(label)
        for index, model in enumerate(config.model_ids()):
            self._add_alarm(
                "ModelThrottlesAlarm" if index == 0 else f"ExtraModel{index}ThrottlesAlarm",
                bedrock_metric(model, "InvocationThrottles"),
                threshold=config.model_throttle_alarm_threshold,
                description=f"model {model} throttled at least {config.model_throttle_alarm_threshold} calls "
                "in 5 minutes",
            )
        for function_id, function in self._functions.items():
            if function_id not in FUNCTIONS_WITH_EXPECTED_ERRORS:
                self._add_alarm(
                    f"{function_id}ErrorsAlarm",
                    function.metric_errors(period=FIVE_MINUTES, statistic="Sum"),
                    threshold=config.function_error_alarm_threshold,
                    description=f"{function_id} reported errors (crashes and timeouts included)",
                )
            self._add_alarm(
                f"{function_id}ThrottlesAlarm",
                function.metric_throttles(period=FIVE_MINUTES, statistic="Sum"),
                threshold=1,
                description=f"{function_id} invocations were throttled",
            )
        self._approval_alarm()
        self._silent_failure_alarm()
        self._budget_alarms()

    def _map_run_alarm(self, label: str) -> None:
        """The children of one Distributed Map failed, timed out or were aborted (documents, batch jobs, the
        fan-in's partitions): the documents' alarm keeps its name, MapRunFailuresAlarm."""
        children = self.map_children_arn(label)
        is_documents = label == self._config.map_label
        self._add_alarm(
            "MapRunFailuresAlarm" if is_documents else f"{_pascal(label)}MapRunFailuresAlarm",
            cloudwatch.MathExpression(
                expression="failed + timedout + aborted",
                using_metrics={
                    "failed": states_metric("ExecutionsFailed", children),
                    "timedout": states_metric("ExecutionsTimedOut", children),
                    "aborted": states_metric("ExecutionsAborted", children),
                },
                label=f"Map Run child executions ({label}) failed, timed out or aborted",
                period=FIVE_MINUTES,
            ),
            threshold=1,
            description=f"Distributed Map {label!r} child executions"
            + (" (documents)" if is_documents else "")
            + " failed, timed out or were aborted",
        )

    def _budget_alarms(self) -> None:
        """A job's spend reached the warning share of its budget, or the budget stopped a job
        (functions/budget.py emits each metric once per event; docs/design.md, "Budget")."""
        self._add_alarm(
            "BudgetWarningAlarm",
            own_metric("BudgetWarnings"),
            threshold=1,
            description="a job spent 80 % of its budget (docagent status JOB; docagent budget JOB)",
        )
        self._add_alarm(
            "BudgetStoppedAlarm",
            own_metric("BudgetStops"),
            threshold=1,
            description="a job's budget stopped its model calls (docagent budget JOB, then redrive)",
        )

    def _approval_alarm(self) -> None:
        """Requests minus decisions, cumulated over the configured wait: breaching at every period means an
        approval asked for at the start of the window is still undecided at its end. A rejection is not a
        metric (the operator's SendTaskFailure runs no function), so it keeps counting as pending until it
        leaves the window; docs/design.md lists this."""
        seconds = self._config.approval_alarm_seconds
        periods = max(1, math.ceil(seconds / APPROVAL_PERIOD_SECONDS))
        period = Duration.seconds(APPROVAL_PERIOD_SECONDS)
        self._add_alarm(
            "ApprovalWaitingAlarm",
            cloudwatch.MathExpression(
                expression="RUNNING_SUM(FILL(requested, 0)) - RUNNING_SUM(FILL(decided, 0))",
                using_metrics={
                    "requested": own_metric("ApprovalsRequested", period),
                    "decided": own_metric("ApprovalsRecorded", period),
                },
                label="approvals pending",
                period=period,
            ),
            threshold=1,
            evaluation_periods=periods,
            description=f"an approval has waited longer than {seconds} s (docagent approve / reject)",
        )

    def _silent_failure_alarm(self) -> None:
        """The failure nothing else reports: jobs that end SUCCEEDED with every document rejected (an empty
        reference table, a prompt that no longer matches). Documents were reviewed in the window and none was
        extracted; a long job that is still running and extracting does not breach it."""
        window = Duration.minutes(self._config.silent_failure_window_minutes)
        self._add_alarm(
            "NothingExtractedAlarm",
            cloudwatch.MathExpression(
                expression="IF(FILL(rejected, 0) > 0 AND FILL(extracted, 0) == 0, 1, 0)",
                using_metrics={
                    "rejected": own_metric("DocumentsRejected", window),
                    "extracted": own_metric("DocumentsExtracted", window),
                },
                label="documents rejected, none extracted",
                period=window,
            ),
            threshold=1,
            description=f"documents were reviewed but none extracted within {window.to_minutes()} minutes "
            "(every document rejected: see the report's rejection_reasons)",
        )

    # -- saved Logs Insights queries ----------------------------------------------------------------

    def _saved_queries(self) -> dict[str, logs.QueryDefinition]:
        """Saved queries take no parameters: replace JOB_ID (and DOCUMENT_ID) before running one."""
        groups = [function.log_group for _, function in sorted(self._functions.items())]
        prefix = f"{self._config.stack_name}/"
        fields = ["@timestamp", "@log", "level", "message", "document_id", "step", "outcome", "error"]
        specs = {
            "DocumentOfJob": (
                "document D of job J",
                'job_id = "JOB_ID" and document_id = "DOCUMENT_ID"',
                fields,
            ),
            "ModelCallsOfJob": (
                "every model call of job J",
                'job_id = "JOB_ID" and (message = "model call" or span_name = "model call")',
                [
                    "@timestamp",
                    "document_id",
                    "model_call_id",
                    "outcome",
                    "duration_ms",
                    "`gen_ai.request.model`",
                    "`gen_ai.usage.input_tokens`",
                    "`gen_ai.usage.output_tokens`",
                ],
            ),
            "ErrorsOfJob": (
                "errors of job J",
                'job_id = "JOB_ID" and level in ["ERROR", "WARNING", "CRITICAL"]',
                fields,
            ),
        }
        return {
            query_id: logs.QueryDefinition(
                self,
                f"{query_id}Query",
                query_definition_name=f"{prefix}{title} (replace JOB_ID, DOCUMENT_ID)",
                query_string=logs.QueryString(
                    fields=columns, filter_statements=[condition], sort="@timestamp asc"
                ),
                log_groups=groups,
            )
            for query_id, (title, condition, columns) in specs.items()
        }


@jsii.implements(events.IRuleTarget)
class _TopicTarget:
    """The topic as the rule's target, with the message; its permission is the rule's own statement in the
    topic policy (Observability._allow_the_rule_to_publish), not targets.SnsTopic's unconditioned grant."""

    def __init__(self, topic: sns.ITopic, message: events.RuleTargetInput) -> None:
        self._topic, self._message = topic, message

    def bind(self, _rule: events.IRule, _id: str | None = None) -> events.RuleTargetConfig:
        return events.RuleTargetConfig(arn=self._topic.topic_arn, input=self._message)


def distributed_map_labels(config: DocAgentConfig) -> list[str]:
    """The Label of every Distributed Map of the workflow (its ASL, the documents' Map's label from the
    config): each Map's children are executions of ``<state machine>/<label>``."""
    labels: list[str] = []

    def walk(states: Mapping[str, object]) -> None:
        for state in states.values():
            if not isinstance(state, dict):
                continue
            processor = state.get("ItemProcessor") or {}
            if (processor.get("ProcessorConfig") or {}).get("Mode") == "DISTRIBUTED":
                # The one placeholder a Label holds (stacks/workflow.py substitutes it at deploy).
                labels.append(
                    PLACEHOLDER.sub(lambda m: {"MapLabel": config.map_label}[m.group(1)], state["Label"])
                )
            walk(processor.get("States") or {})

    walk(render_definition(config)["States"])
    return labels


def _pascal(label: str) -> str:
    return "".join(part.capitalize() for part in label.replace("_", "-").split("-"))
