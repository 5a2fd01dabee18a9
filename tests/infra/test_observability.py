"""Alerts, alarms, dashboard and saved queries (stacks/observability.py), read from the template."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import aws_sns as sns

from stacks.observability import EMITTED_METRICS, NAMESPACE
from tests.infra.conftest import Synthesized, construct_stack

FUNCTIONS_DIR = Path(__file__).resolve().parents[2] / "functions"


def alarms(synthesized: Synthesized) -> dict[str, dict[str, Any]]:
    """Alarm construct id (as in stacks/observability.py) -> properties."""
    found = {}
    for alarm_id, alarm in synthesized.stack.observability.alarms.items():
        logical_id = synthesized.logical_id(alarm)
        found[alarm_id] = synthesized.template_json["Resources"][logical_id]["Properties"]
    return found


def topic_ref(synthesized: Synthesized) -> dict[str, str]:
    return {"Ref": synthesized.logical_id(synthesized.stack.observability.topic)}


def state_machine_ref(synthesized: Synthesized) -> dict[str, str]:
    return {"Ref": synthesized.logical_id(synthesized.stack.workflow.state_machine)}


def metric_stats(properties: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Id -> MetricStat of a math alarm's inputs."""
    return {metric["Id"]: metric["MetricStat"] for metric in properties["Metrics"] if "MetricStat" in metric}


def test_rule_matches_failed_timed_out_and_aborted_jobs_of_this_state_machine_only(
    synthesized: Synthesized,
) -> None:
    (rule,) = synthesized.resources("AWS::Events::Rule").values()
    pattern = rule["Properties"]["EventPattern"]
    assert pattern["source"] == ["aws.states"]
    assert pattern["detail-type"] == ["Step Functions Execution Status Change"]
    assert sorted(pattern["detail"]["status"]) == ["ABORTED", "FAILED", "TIMED_OUT"]
    # Exactly the parent's ARN: Map children carry "<arn>/<label>" and so never match.
    assert pattern["detail"]["stateMachineArn"] == [state_machine_ref(synthesized)]
    assert set(pattern) == {"source", "detail-type", "detail"}


def test_rule_sends_a_message_naming_the_job_the_error_and_the_commands(synthesized: Synthesized) -> None:
    (rule,) = synthesized.resources("AWS::Events::Rule").values()
    (target,) = rule["Properties"]["Targets"]
    assert target["Arn"] == topic_ref(synthesized)
    transformer = target["InputTransformer"]
    paths = transformer["InputPathsMap"]
    assert paths["detail-name"] == "$.detail.name"
    assert {"$.detail.error", "$.detail.cause", "$.detail.status"} <= set(paths.values())
    message = json.loads(transformer["InputTemplate"])
    assert "docagent inspect <detail-name>" in message
    assert "docagent redrive <detail-name> --dry-run" in message
    assert "<detail-error>" in message
    assert "<detail-cause>" in message


def test_topic_is_encrypted_tls_only_and_publishable_by_eventbridge(synthesized: Synthesized) -> None:
    (topic,) = synthesized.resources("AWS::SNS::Topic").values()
    assert "KmsMasterKeyId" in topic["Properties"]
    (policy,) = synthesized.resources("AWS::SNS::TopicPolicy").values()
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    assert any(s["Effect"] == "Deny" and "aws:SecureTransport" in json.dumps(s) for s in statements)
    assert any(s.get("Principal") == {"Service": "events.amazonaws.com"} for s in statements)
    (key,) = synthesized.resources("AWS::KMS::Key").values()
    assert key["Properties"]["EnableKeyRotation"] is True
    principals = json.dumps(key["Properties"]["KeyPolicy"])
    assert "events.amazonaws.com" in principals
    assert "cloudwatch.amazonaws.com" in principals


def test_email_subscription_only_when_configured(synthesized: Synthesized, tmp_path: Path) -> None:
    assert synthesized.resources("AWS::SNS::Subscription") == {}
    stack = construct_stack(tmp_path, alert_email="oncall@example.com")
    (subscription,) = [child for child in stack.node.find_all() if isinstance(child, sns.CfnSubscription)]
    assert stack.resolve(subscription.protocol) == "email"
    assert stack.resolve(subscription.endpoint) == "oncall@example.com"


def test_every_alarm_notifies_the_topic_and_ignores_missing_data(synthesized: Synthesized) -> None:
    found = alarms(synthesized)
    assert len(found) == 4 + 2 * 6 + 2
    for alarm_id, properties in found.items():
        assert properties["AlarmActions"] == [topic_ref(synthesized)], alarm_id
        assert properties["TreatMissingData"] == "notBreaching", alarm_id
        assert properties["ComparisonOperator"] == "GreaterThanOrEqualToThreshold", alarm_id


def test_execution_alarms_watch_the_parent_state_machine(synthesized: Synthesized) -> None:
    found = alarms(synthesized)
    for alarm_id, metric in (
        ("ExecutionsFailedAlarm", "ExecutionsFailed"),
        ("ExecutionsTimedOutAlarm", "ExecutionsTimedOut"),
    ):
        properties = found[alarm_id]
        assert properties["Namespace"] == "AWS/States"
        assert properties["MetricName"] == metric
        assert properties["Dimensions"] == [
            {"Name": "StateMachineArn", "Value": state_machine_ref(synthesized)}
        ]
        assert properties["Statistic"] == "Sum"
        assert properties["Threshold"] == 1


def test_map_run_alarm_watches_the_children_by_their_labelled_arn(synthesized: Synthesized) -> None:
    properties = alarms(synthesized)["MapRunFailuresAlarm"]
    stats = metric_stats(properties)
    assert {stat["Metric"]["MetricName"] for stat in stats.values()} == {
        "ExecutionsFailed",
        "ExecutionsTimedOut",
        "ExecutionsAborted",
    }
    label = synthesized.stack.config.map_label
    for stat in stats.values():
        (dimension,) = stat["Metric"]["Dimensions"]
        assert dimension["Name"] == "StateMachineArn"
        assert dimension["Value"] == {"Fn::Join": ["", [state_machine_ref(synthesized), f"/{label}"]]}
    assert properties["Threshold"] == 1


def test_model_throttle_alarm_uses_bedrock_metrics_and_the_configured_threshold(
    synthesized: Synthesized, tmp_path: Path
) -> None:
    properties = alarms(synthesized)["ModelThrottlesAlarm"]
    config = synthesized.stack.config
    assert properties["Namespace"] == "AWS/Bedrock"
    assert properties["MetricName"] == "InvocationThrottles"
    assert properties["Dimensions"] == [{"Name": "ModelId", "Value": config.model_id}]
    assert properties["Threshold"] == config.model_throttle_alarm_threshold
    stack = construct_stack(tmp_path, model_throttle_alarm_threshold=40)
    alarm = stack.observability.alarms["ModelThrottlesAlarm"]
    assert stack.resolve(alarm.node.default_child.threshold) == 40  # type: ignore[union-attr]


def test_each_function_has_an_errors_and_a_throttles_alarm(synthesized: Synthesized) -> None:
    found = alarms(synthesized)
    config = synthesized.stack.config
    for function_id, function in synthesized.stack.functions.by_id.items():
        reference = {"Ref": synthesized.logical_id(function)}
        for suffix, metric, threshold in (
            ("Errors", "Errors", config.function_error_alarm_threshold),
            ("Throttles", "Throttles", 1),
        ):
            properties = found[f"{function_id}{suffix}Alarm"]
            assert properties["Namespace"] == "AWS/Lambda"
            assert properties["MetricName"] == metric
            assert properties["Dimensions"] == [{"Name": "FunctionName", "Value": reference}]
            assert properties["Threshold"] == threshold


def test_approval_alarm_spans_the_configured_wait(synthesized: Synthesized, tmp_path: Path) -> None:
    properties = alarms(synthesized)["ApprovalWaitingAlarm"]
    stats = metric_stats(properties)
    assert stats["requested"]["Metric"]["MetricName"] == "ApprovalsRequested"
    assert stats["decided"]["Metric"]["MetricName"] == "ApprovalsRecorded"
    assert stats["requested"]["Metric"]["Namespace"] == NAMESPACE
    assert stats["requested"]["Metric"]["Dimensions"] == [{"Name": "service", "Value": "docagent"}]
    seconds = synthesized.stack.config.approval_alarm_seconds
    assert properties["EvaluationPeriods"] * stats["requested"]["Period"] >= seconds
    assert properties["DatapointsToAlarm"] == properties["EvaluationPeriods"]
    stack = construct_stack(tmp_path, approval_alarm_seconds=3600)
    alarm = stack.observability.alarms["ApprovalWaitingAlarm"].node.default_child
    assert stack.resolve(alarm.evaluation_periods) == 12  # type: ignore[union-attr]


def test_silent_failure_alarm_compares_started_and_succeeded_over_the_window(
    synthesized: Synthesized,
) -> None:
    properties = alarms(synthesized)["NoJobSucceededAlarm"]
    stats = metric_stats(properties)
    assert stats["started"]["Metric"]["MetricName"] == "ExecutionsStarted"
    assert stats["succeeded"]["Metric"]["MetricName"] == "ExecutionsSucceeded"
    window = synthesized.stack.config.silent_failure_window_minutes * 60
    assert stats["started"]["Period"] == stats["succeeded"]["Period"] == window
    (expression,) = [metric["Expression"] for metric in properties["Metrics"] if "Expression" in metric]
    assert "started" in expression and "succeeded == 0" in expression.replace(
        "FILL(succeeded, 0)", "succeeded"
    )


def dashboard_body(synthesized: Synthesized) -> str:
    (dashboard,) = synthesized.resources("AWS::CloudWatch::Dashboard").values()
    parts = dashboard["Properties"]["DashboardBody"]["Fn::Join"][1]
    return "".join(part if isinstance(part, str) else "TOKEN" for part in parts)


def test_dashboard_has_the_widgets_an_operator_needs(synthesized: Synthesized) -> None:
    body = json.loads(dashboard_body(synthesized))
    titles = {widget["properties"].get("title") for widget in body["widgets"]}
    assert titles >= {
        "Jobs by status",
        "Documents per minute",
        "Model calls",
        "Model tokens",
        "Model latency",
        "Model throttles",
        "Function durations (p99)",
        "Function errors",
        "Ticket outcomes",
        "Approvals pending",
        "Alarms",
    }
    by_title = {widget["properties"].get("title"): widget["properties"] for widget in body["widgets"]}
    documents = by_title["Documents per minute"]
    assert [metric[1] for metric in documents["metrics"]] == ["DocumentsExtracted", "DocumentsRejected"]
    assert all(metric[-1]["period"] == 60 for metric in documents["metrics"])
    assert [metric[1] for metric in by_title["Ticket outcomes"]["metrics"]] == [
        "TicketsCreated",
        "TicketsReconciled",
        "TicketApiErrors",
    ]
    assert len(by_title["Function errors"]["metrics"]) == 6


@pytest.mark.parametrize("metric", EMITTED_METRICS)
def test_dashboard_and_alarm_metrics_are_ones_the_functions_emit(metric: str) -> None:
    sources = "\n".join(path.read_text(encoding="utf-8") for path in FUNCTIONS_DIR.rglob("*.py"))
    assert re.search(rf'name="{metric}"|"{metric}" if |else "{metric}"', sources), metric


def test_every_docagent_metric_used_is_an_emitted_one(synthesized: Synthesized) -> None:
    used = set(re.findall(r'"DocAgent","(\w+)"', dashboard_body(synthesized).replace(" ", "")))
    for properties in alarms(synthesized).values():
        for stat in metric_stats(properties).values() if "Metrics" in properties else []:
            if stat["Metric"]["Namespace"] == NAMESPACE:
                used.add(stat["Metric"]["MetricName"])
    assert used
    assert used <= set(EMITTED_METRICS)


def test_saved_queries_cover_a_document_the_model_calls_and_the_errors_of_a_job(
    synthesized: Synthesized,
) -> None:
    queries = {
        query["Properties"]["Name"]: query["Properties"]
        for query in synthesized.resources("AWS::Logs::QueryDefinition").values()
    }
    assert len(queries) == 3
    function_groups = {
        json.dumps(synthesized.stack.resolve(function.log_group.log_group_name))
        for function in synthesized.stack.functions.by_id.values()
    }
    for name, query in queries.items():
        assert "JOB_ID" in query["QueryString"], name
        assert {json.dumps(group) for group in query["LogGroupNames"]} == function_groups, name
    (document,) = [q for name, q in queries.items() if "document D" in name]
    assert 'document_id = "DOCUMENT_ID"' in document["QueryString"]
    (calls,) = [q for name, q in queries.items() if "model call" in name]
    assert "gen_ai.usage.input_tokens" in calls["QueryString"]
    (errors,) = [q for name, q in queries.items() if "errors" in name]
    assert '"ERROR"' in errors["QueryString"]
