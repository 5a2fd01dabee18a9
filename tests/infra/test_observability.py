"""Alerts, alarms, dashboard and saved queries (stacks/observability.py), read from the template."""

from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import aws_sns as sns

from stacks.docagent_stack import DocAgentStack
from stacks.observability import EMITTED_METRICS, FUNCTIONS_WITH_EXPECTED_ERRORS, NAMESPACE
from stacks.workflow import render_definition
from tests.infra.conftest import Synthesized, as_list, pretty

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


def job_alert_rule(synthesized: Synthesized) -> dict[str, Any]:
    """The job alerts' rule (the other rule routes Bedrock batch job state changes: stacks/lambdas.py)."""
    (rule,) = [
        rule
        for rule in synthesized.resources("AWS::Events::Rule").values()
        if rule["Properties"]["EventPattern"]["source"] == ["aws.states"]
    ]
    return rule  # type: ignore[no-any-return]


def test_rule_matches_failed_timed_out_and_aborted_jobs_of_this_state_machine_only(
    synthesized: Synthesized,
) -> None:
    rule = job_alert_rule(synthesized)
    pattern = rule["Properties"]["EventPattern"]
    assert pattern["source"] == ["aws.states"]
    assert pattern["detail-type"] == ["Step Functions Execution Status Change"]
    assert sorted(pattern["detail"]["status"]) == ["ABORTED", "FAILED", "TIMED_OUT"]
    # Exactly the parent's ARN: Map children carry "<arn>/<label>" and so never match.
    assert pattern["detail"]["stateMachineArn"] == [state_machine_ref(synthesized)]
    assert set(pattern) == {"source", "detail-type", "detail"}


def test_rule_sends_a_message_naming_the_job_the_error_and_the_commands(synthesized: Synthesized) -> None:
    rule = job_alert_rule(synthesized)
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


def test_email_subscription_only_when_configured(
    synthesized: Synthesized, variant_stack: DocAgentStack
) -> None:
    assert synthesized.resources("AWS::SNS::Subscription") == {}
    stack = variant_stack
    assert stack.config.alert_email == "oncall@example.com"
    (subscription,) = [child for child in stack.node.find_all() if isinstance(child, sns.CfnSubscription)]
    assert stack.resolve(subscription.protocol) == "email"
    assert stack.resolve(subscription.endpoint) == "oncall@example.com"


def test_every_alarm_notifies_the_topic_and_ignores_missing_data(synthesized: Synthesized) -> None:
    found = alarms(synthesized)
    # 2 job alarms, one failures alarm per Distributed Map (5), one throttles alarm per model (cdk.json: 2,
    # the default cascade's), errors of 6 functions, throttles of 7, approval and nothing-extracted, budget 2.
    assert len(synthesized.stack.config.model_ids()) == 2
    assert len(found) == 2 + 5 + 2 + 6 + 7 + 2 + 2
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


def test_every_distributed_map_has_a_failures_alarm_on_its_children(synthesized: Synthesized) -> None:
    """m7: documents, batch records, batch jobs and the fan-in's partitions: each Distributed Map's children
    (``<state machine ARN>/<label>``) are watched, not only the documents'."""
    labels = []

    def walk(states: dict[str, Any]) -> None:
        for state in states.values():
            processor = state.get("ItemProcessor", {})
            if processor.get("ProcessorConfig", {}).get("Mode") == "DISTRIBUTED":
                labels.append(state["Label"].replace("${MapLabel}", synthesized.stack.config.map_label))
            walk(processor.get("States", {}))

    walk(render_definition(synthesized.stack.config)["States"])
    assert len(labels) >= 4 and synthesized.stack.config.map_label in labels
    watched: dict[str, set[str]] = {}
    for properties in alarms(synthesized).values():
        for stat in metric_stats(properties).values() if "Metrics" in properties else []:
            (dimension,) = stat["Metric"]["Dimensions"]
            value = dimension["Value"]
            if isinstance(value, dict) and "Fn::Join" in value:
                watched.setdefault(value["Fn::Join"][1][-1].lstrip("/"), set()).add(
                    stat["Metric"]["MetricName"]
                )
    for label in labels:
        assert watched.get(label) == {"ExecutionsFailed", "ExecutionsTimedOut", "ExecutionsAborted"}, label


def test_every_model_the_functions_may_call_has_a_throttles_alarm(
    express_inference_profile_stack: DocAgentStack,
) -> None:
    """M2: extra_model_ids (a definition's cheap or strong model) are alarmed on as model_id is."""
    stack = express_inference_profile_stack
    found = {}
    for alarm_id, alarm in stack.observability.alarms.items():
        cfn = alarm.node.default_child
        if stack.resolve(cfn.metric_name) == "InvocationThrottles":  # type: ignore[union-attr]
            (dimension,) = stack.resolve(cfn.dimensions)  # type: ignore[union-attr]
            found[dimension["value"]] = alarm_id
    assert set(found) == set(stack.config.model_ids()) and len(found) == 2, found
    assert found[stack.config.model_id] == "ModelThrottlesAlarm"


def test_model_throttle_alarm_uses_bedrock_metrics_and_the_configured_threshold(
    synthesized: Synthesized, variant_stack: DocAgentStack
) -> None:
    properties = alarms(synthesized)["ModelThrottlesAlarm"]
    config = synthesized.stack.config
    assert properties["Namespace"] == "AWS/Bedrock"
    assert properties["MetricName"] == "InvocationThrottles"
    assert properties["Dimensions"] == [{"Name": "ModelId", "Value": config.model_id}]
    assert properties["Threshold"] == config.model_throttle_alarm_threshold
    stack = variant_stack
    assert stack.config.model_throttle_alarm_threshold == 40 != config.model_throttle_alarm_threshold
    alarm = stack.observability.alarms["ModelThrottlesAlarm"]
    assert stack.resolve(alarm.node.default_child.threshold) == 40  # type: ignore[union-attr]


def test_each_function_has_a_throttles_alarm_and_an_errors_alarm_unless_its_errors_are_expected(
    synthesized: Synthesized,
) -> None:
    found = alarms(synthesized)
    config = synthesized.stack.config
    for function_id, function in synthesized.stack.functions.by_id.items():
        reference = {"Ref": synthesized.logical_id(function)}
        expected = function_id in FUNCTIONS_WITH_EXPECTED_ERRORS
        assert (f"{function_id}ErrorsAlarm" in found) is not expected, function_id
        for suffix, metric, threshold in (
            *([] if expected else [("Errors", "Errors", config.function_error_alarm_threshold)]),
            ("Throttles", "Throttles", 1),
        ):
            properties = found[f"{function_id}{suffix}Alarm"]
            assert properties["Namespace"] == "AWS/Lambda"
            assert properties["MetricName"] == metric
            assert properties["Dimensions"] == [{"Name": "FunctionName", "Value": reference}]
            assert properties["Threshold"] == threshold


def test_approval_alarm_spans_the_configured_wait(
    synthesized: Synthesized, variant_stack: DocAgentStack
) -> None:
    properties = alarms(synthesized)["ApprovalWaitingAlarm"]
    stats = metric_stats(properties)
    assert stats["requested"]["Metric"]["MetricName"] == "ApprovalsRequested"
    assert stats["decided"]["Metric"]["MetricName"] == "ApprovalsRecorded"
    assert stats["requested"]["Metric"]["Namespace"] == NAMESPACE
    assert stats["requested"]["Metric"]["Dimensions"] == [{"Name": "service", "Value": "docagent"}]
    seconds = synthesized.stack.config.approval_alarm_seconds
    assert properties["EvaluationPeriods"] * stats["requested"]["Period"] >= seconds
    assert properties["DatapointsToAlarm"] == properties["EvaluationPeriods"]
    stack = variant_stack
    assert stack.config.approval_alarm_seconds == 3600 != seconds
    alarm = stack.observability.alarms["ApprovalWaitingAlarm"].node.default_child
    assert stack.resolve(alarm.evaluation_periods) == 12  # type: ignore[union-attr]


def test_process_document_errors_are_left_to_the_map_run_alarm() -> None:
    """ProcessDocument raises ModelThrottled and in-progress errors that the ASL retries: its Lambda errors
    are not a person's business; a document failing after its retries is a failed child (MapRunFailuresAlarm).
    """
    assert {"ProcessDocument"} == FUNCTIONS_WITH_EXPECTED_ERRORS
    asl = (FUNCTIONS_DIR.parent / "statemachines" / "document_review.asl.json").read_text(encoding="utf-8")
    for retried in ("ModelThrottled", "IdempotencyAlreadyInProgressError"):
        assert retried in asl


def test_silent_failure_alarm_fires_when_documents_are_rejected_and_none_extracted(
    synthesized: Synthesized,
) -> None:
    properties = alarms(synthesized)["NothingExtractedAlarm"]
    stats = metric_stats(properties)
    assert stats["rejected"]["Metric"]["MetricName"] == "DocumentsRejected"
    assert stats["extracted"]["Metric"]["MetricName"] == "DocumentsExtracted"
    window = synthesized.stack.config.silent_failure_window_minutes * 60
    assert stats["rejected"]["Period"] == stats["extracted"]["Period"] == window
    (expression,) = [metric["Expression"] for metric in properties["Metrics"] if "Expression" in metric]
    assert expression == "IF(FILL(rejected, 0) > 0 AND FILL(extracted, 0) == 0, 1, 0)"
    # Nothing about executions: a long first job that is still running does not breach it.
    assert "ExecutionsStarted" not in json.dumps(properties)


def test_the_timed_out_alarm_can_fire_the_workflow_has_an_overall_timeout(
    synthesized: Synthesized, variant_stack: DocAgentStack
) -> None:
    assert "ExecutionsTimedOutAlarm" in alarms(synthesized)
    config = synthesized.stack.config
    # A number the stack renders into the definition it deploys (stacks/workflow.py, RENDERED).
    assert render_definition(config)["TimeoutSeconds"] == config.job_timeout_seconds
    assert config.job_timeout_seconds > config.approval_timeout_seconds
    stack = variant_stack
    assert stack.config.job_timeout_seconds == 200_000 != config.job_timeout_seconds
    assert render_definition(stack.config)["TimeoutSeconds"] == 200_000


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
        "Action outcomes",
        "Approvals pending",
        "Alarms",
    }
    by_title = {widget["properties"].get("title"): widget["properties"] for widget in body["widgets"]}
    documents = by_title["Documents per minute"]
    assert [metric[1] for metric in documents["metrics"]] == [
        "DocumentsExtracted",
        "DocumentsForReview",
        "DocumentsRejected",
    ]
    assert all(metric[-1]["period"] == 60 for metric in documents["metrics"])
    assert [metric[1] for metric in by_title["Action outcomes"]["metrics"]] == [
        "ActionsPerformed",
        "ActionsReconciled",
        "ActionsSkipped",
        "ActionErrors",
    ]
    assert len(by_title["Function errors"]["metrics"]) == 7


@pytest.mark.parametrize("metric", EMITTED_METRICS)
def test_dashboard_and_alarm_metrics_are_ones_the_functions_emit(metric: str) -> None:
    sources = "\n".join(path.read_text(encoding="utf-8") for path in FUNCTIONS_DIR.rglob("*.py"))
    assert re.search(rf'name="{metric}"|"{metric}" if |else "{metric}"|": "{metric}",', sources), metric


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


# -- who may publish to the alert topic -------------------------------------------------------------------

ACCOUNT = "123456789012"
REGION = "eu-west-1"
PSEUDO = {"AWS::Partition": "aws", "AWS::Region": REGION, "AWS::AccountId": ACCOUNT, "AWS::URLSuffix": ""}


def render(value: Any, arns: dict[str, str]) -> Any:
    """A CloudFormation value rendered for one fake account: pseudo parameters, Fn::Join, and the ARNs given
    for Ref/GetAtt of the template's own resources."""
    if isinstance(value, list):
        return [render(item, arns) for item in value]
    if not isinstance(value, dict):
        return value
    if "Ref" in value:
        return PSEUDO.get(value["Ref"]) or arns[value["Ref"]]
    if "Fn::GetAtt" in value:
        return arns[value["Fn::GetAtt"][0]]
    if "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return separator.join(str(render(part, arns)) for part in parts)
    return {key: render(item, arns) for key, item in value.items()}


def conditions_hold(conditions: dict[str, dict[str, Any]], context: dict[str, str]) -> bool:
    operators = {
        "ArnLike": fnmatch.fnmatchcase,
        "ArnEquals": str.__eq__,
        "StringEquals": str.__eq__,
        "StringLike": fnmatch.fnmatchcase,
        "Bool": lambda actual, expected: actual.lower() == str(expected).lower(),
    }
    for operator, pairs in conditions.items():
        for key, expected in pairs.items():
            actual = context.get(key)
            if actual is None or not any(operators[operator](actual, str(e)) for e in as_list(expected)):
                return False
    return True


def may_publish(
    statements: list[dict[str, Any]], topic_arn: str, service: str, context: dict[str, str]
) -> bool:
    """IAM's answer for a service publishing with this request context: an Allow matches, no Deny does."""

    def matches(statement: dict[str, Any]) -> bool:
        principal = statement["Principal"]
        services = as_list(principal.get("Service", [])) if isinstance(principal, dict) else []
        anyone = principal == "*" or (isinstance(principal, dict) and principal.get("AWS") == "*")
        actions = {action.lower() for action in as_list(statement["Action"])}
        return (
            (service in services or anyone)
            and bool(actions & {"sns:publish", "sns:*"})
            and topic_arn in as_list(statement["Resource"])
            and conditions_hold(statement.get("Condition", {}), context)
        )

    allowed = any(matches(s) for s in statements if s["Effect"] == "Allow")
    return allowed and not any(matches(s) for s in statements if s["Effect"] == "Deny")


def publishers(synthesized: Synthesized) -> tuple[str, list[dict[str, Any]], dict[str, str]]:
    """The topic's ARN, its policy rendered for the fake account, and every resource ARN of the template."""
    resources = synthesized.template_json["Resources"]
    arns = {
        logical_id: f"arn:aws:{resource['Type'].split('::')[1].lower()}:{REGION}:{ACCOUNT}:{logical_id}"
        for logical_id, resource in resources.items()
    }
    topic_id = synthesized.logical_id(synthesized.stack.observability.topic)
    (policy,) = synthesized.resources("AWS::SNS::TopicPolicy").values()
    statements = render(policy["Properties"]["PolicyDocument"]["Statement"], arns)
    return arns[topic_id], statements, arns


def test_every_publisher_the_topic_needs_may_publish_and_nobody_else(synthesized: Synthesized) -> None:
    topic_arn, statements, arns = publishers(synthesized)
    tls = {"aws:SecureTransport": "true", "aws:SourceAccount": ACCOUNT}
    (rule_id,) = [
        rule_id
        for rule_id, rule in synthesized.resources("AWS::Events::Rule").items()
        if rule == job_alert_rule(synthesized)
    ]
    rule = {**tls, "aws:SourceArn": arns[rule_id]}
    assert may_publish(statements, topic_arn, "events.amazonaws.com", rule), pretty(statements)
    found = alarms(synthesized)
    assert found
    for alarm_id, properties in found.items():
        alarm_arn = f"arn:aws:cloudwatch:{REGION}:{ACCOUNT}:alarm:{properties['AlarmName']}"
        alarm = {**tls, "aws:SourceArn": alarm_arn}
        assert may_publish(statements, topic_arn, "cloudwatch.amazonaws.com", alarm), alarm_id
        # Without TLS the topic's Deny wins.
        plain = {**alarm, "aws:SecureTransport": "false"}
        assert not may_publish(statements, topic_arn, "cloudwatch.amazonaws.com", plain), alarm_id
    stack_name = synthesized.stack.config.stack_name
    strangers = {
        "another account's alarm": f"arn:aws:cloudwatch:{REGION}:999999999999:alarm:{stack_name}-X",
        "another stack's alarm": f"arn:aws:cloudwatch:{REGION}:{ACCOUNT}:alarm:Other-ExecutionsFailedAlarm",
    }
    for what, arn in strangers.items():
        context = {**tls, "aws:SourceArn": arn}
        assert not may_publish(statements, topic_arn, "cloudwatch.amazonaws.com", context), what
    # m8: EventBridge publishes for the job alerts' rule only, not for any other rule.
    for what, arn in {
        "another rule": f"arn:aws:events:{REGION}:{ACCOUNT}:rule/someone-elses",
        "another account's rule": f"arn:aws:events:{REGION}:999999999999:rule/x",
    }.items():
        assert not may_publish(
            statements, topic_arn, "events.amazonaws.com", {**tls, "aws:SourceArn": arn}
        ), what
    someone = {**tls, "aws:SourceArn": f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:x"}
    assert not may_publish(statements, topic_arn, "lambda.amazonaws.com", someone)


def test_alarms_are_named_after_the_stack(synthesized: Synthesized) -> None:
    prefix = f"{synthesized.stack.config.stack_name}-"
    for alarm_id, properties in alarms(synthesized).items():
        assert properties["AlarmName"] == f"{prefix}{alarm_id}"


def test_budget_alarms_alert_at_the_warning_share_and_when_the_budget_stops_a_job(
    synthesized: Synthesized,
) -> None:
    found = alarms(synthesized)
    for alarm, metric in (("BudgetWarningAlarm", "BudgetWarnings"), ("BudgetStoppedAlarm", "BudgetStops")):
        properties = found[alarm]
        assert properties["MetricName"] == metric
        assert properties["Threshold"] == 1
        assert properties["AlarmActions"], f"{alarm} alerts nobody"
