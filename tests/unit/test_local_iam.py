"""The local cloud's IAM: policy evaluation (wildcards, NotAction/NotResource, conditions, explicit deny), the
IAM action and resource of each request shape, and the endpoint's answer to a denied request."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from moto import mock_aws

from docagent.localcloud.iam import actions
from docagent.localcloud.iam.actions import Check, UnmappedRequestError, Where
from docagent.localcloud.iam.enforcement import ENFORCED_TAG, Authorizer, denial_message, enabled
from docagent.localcloud.iam.policy import Decision, Policy, UnsupportedConditionError, evaluate
from docagent.localcloud.iam.role_tokens import role_credentials

WHERE = Where("123456789012", "us-east-1")
BUCKET = "arn:aws:s3:::jobs"


def policy(*statements: dict[str, Any]) -> list[Policy]:
    return [Policy.parse("p", {"Version": "2012-10-17", "Statement": list(statements)})]


def allow(**fields: Any) -> dict[str, Any]:
    return {"Effect": "Allow", **fields}


def test_wildcards_match_actions_without_case_and_resources_with_it() -> None:
    granted = policy(allow(Action="s3:Get*", Resource=f"{BUCKET}/jobs/*/items/*"))
    assert evaluate(granted, "s3:GetObject", f"{BUCKET}/jobs/j1/items/part-1.jsonl", {}) is Decision.ALLOW
    assert evaluate(granted, "S3:GETOBJECT", f"{BUCKET}/jobs/j1/items/x", {}) is Decision.ALLOW
    assert evaluate(granted, "s3:GetObject", f"{BUCKET}/jobs/j1/batch/parts.jsonl", {}) is Decision.NONE
    assert evaluate(granted, "s3:GetObject", f"{BUCKET}/JOBS/j1/items/x", {}) is Decision.NONE
    assert evaluate(granted, "s3:PutObject", f"{BUCKET}/jobs/j1/items/x", {}) is Decision.NONE
    one = policy(allow(Action="s3:GetObject", Resource=f"{BUCKET}/part-?.json"))
    assert evaluate(one, "s3:GetObject", f"{BUCKET}/part-1.json", {}) is Decision.ALLOW
    assert evaluate(one, "s3:GetObject", f"{BUCKET}/part-10.json", {}) is Decision.NONE
    # a dot in a pattern is a dot, not any character
    assert evaluate(policy(allow(Action="s3:GetObject", Resource=f"{BUCKET}/a.json")), "s3:GetObject",
                    f"{BUCKET}/aXjson", {}) is Decision.NONE  # fmt: skip


def test_not_action_and_not_resource_and_an_explicit_deny() -> None:
    everything_but = policy(allow(NotAction="s3:DeleteObject", NotResource=f"{BUCKET}/secret/*"))
    assert evaluate(everything_but, "s3:GetObject", f"{BUCKET}/a", {}) is Decision.ALLOW
    assert evaluate(everything_but, "s3:DeleteObject", f"{BUCKET}/a", {}) is Decision.NONE
    assert evaluate(everything_but, "s3:GetObject", f"{BUCKET}/secret/a", {}) is Decision.NONE
    denied = policy(
        allow(Action="s3:*", Resource="*"), {"Effect": "Deny", "Action": "s3:PutObject", "Resource": "*"}
    )
    assert evaluate(denied, "s3:PutObject", f"{BUCKET}/a", {}) is Decision.DENY
    assert evaluate(denied, "s3:GetObject", f"{BUCKET}/a", {}) is Decision.ALLOW


@pytest.mark.parametrize(
    ("condition", "context", "holds"),
    [
        (
            {"StringEquals": {"iam:PassedToService": "bedrock.amazonaws.com"}},
            {"iam:passedtoservice": ("bedrock.amazonaws.com",)},
            True,
        ),
        (
            {"StringEquals": {"iam:PassedToService": "bedrock.amazonaws.com"}},
            {"iam:passedtoservice": ("lambda.amazonaws.com",)},
            False,
        ),
        ({"StringEquals": {"iam:PassedToService": "bedrock.amazonaws.com"}}, {}, False),  # absent: false
        ({"StringNotEquals": {"aws:RequestedRegion": ["eu-west-1"]}}, {}, True),  # negated, absent: true
        (
            {"StringNotEquals": {"aws:RequestedRegion": ["eu-west-1", "us-east-1"]}},
            {"aws:requestedregion": ("us-east-1",)},
            False,
        ),
        ({"StringEqualsIfExists": {"aws:RequestedRegion": "eu-west-1"}}, {}, True),
        ({"Null": {"bedrock:InferenceProfileArn": "true"}}, {}, True),
        ({"Null": {"bedrock:InferenceProfileArn": "false"}}, {}, False),
        ({"Bool": {"aws:SecureTransport": "false"}}, {"aws:securetransport": ("true",)}, False),
        ({"Bool": {"aws:SecureTransport": False}}, {"aws:securetransport": ("false",)}, True),
        (
            {"ArnLike": {"aws:SourceArn": "arn:aws:cloudwatch:*:1:alarm:DocAgent-*"}},
            {"aws:sourcearn": ("arn:aws:cloudwatch:us-east-1:1:alarm:DocAgent-x",)},
            True,
        ),
        (
            {"ArnLike": {"aws:SourceArn": "arn:aws:cloudwatch:*:1:alarm:DocAgent-*"}},
            {"aws:sourcearn": ("arn:aws:sns:us-east-1:1:alarm:DocAgent-x",)},
            False,
        ),
        ({"ForAnyValue:StringLike": {"aws:TagKeys": ["team*"]}}, {"aws:tagkeys": ("x", "team-a")}, True),
        ({"ForAllValues:StringLike": {"aws:TagKeys": ["team*"]}}, {"aws:tagkeys": ("x", "team-a")}, False),
        ({"NumericLessThan": {"s3:max-keys": "10"}}, {"s3:max-keys": ("5",)}, True),
    ],
)
def test_conditions(condition: dict[str, Any], context: dict[str, tuple[str, ...]], holds: bool) -> None:
    granted = policy(allow(Action="*", Resource="*", Condition=condition))
    assert evaluate(granted, "s3:GetObject", "*", context) is (Decision.ALLOW if holds else Decision.NONE)


def test_a_condition_operator_not_implemented_is_refused_not_ignored() -> None:
    granted = policy(allow(Action="*", Resource="*", Condition={"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}))
    with pytest.raises(UnsupportedConditionError, match="IpAddress"):
        evaluate(granted, "s3:GetObject", "*", {})


def test_s3_requests_name_their_action_and_resource() -> None:
    def checks(method: str, path: str, query: str = "", **headers: str) -> list[Check]:
        return actions.s3_checks(method, path, query, headers, b"")

    assert checks("GET", "/jobs/a/b.json") == [Check("s3:GetObject", f"{BUCKET}/a/b.json")]
    assert checks("HEAD", "/jobs/a") == [Check("s3:GetObject", f"{BUCKET}/a")]
    assert checks("GET", "/jobs/a", "versionId=3") == [Check("s3:GetObjectVersion", f"{BUCKET}/a")]
    assert checks("GET", "/jobs", "list-type=2&prefix=jobs%2F") == [
        Check("s3:ListBucket", BUCKET, (("s3:prefix", ("jobs/",)),))
    ]
    assert checks("GET", "/jobs", "versions=") == [
        Check("s3:ListBucketVersions", BUCKET, (("s3:prefix", ("",)),))
    ]
    assert checks("DELETE", "/jobs/a", "uploadId=1") == [Check("s3:AbortMultipartUpload", f"{BUCKET}/a")]
    assert checks("PUT", "/jobs/a", "partNumber=1&uploadId=1") == [Check("s3:PutObject", f"{BUCKET}/a")]
    copied = checks("PUT", "/jobs/b", "", **{"x-amz-copy-source": "/jobs/a%20b?versionId=7"})
    assert copied == [Check("s3:PutObject", f"{BUCKET}/b"), Check("s3:GetObjectVersion", f"{BUCKET}/a b")]
    with pytest.raises(UnmappedRequestError):
        checks("PUT", "/jobs", "policy=")


def test_other_services_requests() -> None:
    table = json.dumps({"TableName": "idem", "Key": {}}).encode()
    assert actions.json_checks("dynamodb", "DynamoDB_20120810.GetItem", table, WHERE) == [
        Check("dynamodb:GetItem", "arn:aws:dynamodb:us-east-1:123456789012:table/idem")
    ]
    events = json.dumps({"Entries": [{"Source": "x"}]}).encode()
    assert actions.json_checks("events", "AWSEvents.PutEvents", events, WHERE) == [
        Check("events:PutEvents", "arn:aws:events:us-east-1:123456789012:event-bus/default")
    ]
    assert actions.lambda_checks("POST", "/2015-03-31/functions/fn/invocations", "", WHERE) == [
        Check("lambda:InvokeFunction", "arn:aws:lambda:us-east-1:123456789012:function:fn")
    ]
    converse = actions.bedrock_checks("POST", "/model/global.anthropic.claude-x/converse", b"", WHERE)
    profile = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/global.anthropic.claude-x"
    assert converse == [
        Check("bedrock:InvokeModel", profile),
        Check(
            "bedrock:InvokeModel",
            "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-x",
            (("bedrock:inferenceprofilearn", (profile,)),),
        ),
    ]
    job = json.dumps({"modelId": "anthropic.claude-x", "roleArn": "arn:aws:iam::1:role/batch"}).encode()
    assert actions.bedrock_checks("POST", "/model-invocation-job", job, WHERE) == [
        Check(
            "bedrock:CreateModelInvocationJob",
            "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-x",
        ),
        Check(
            "iam:PassRole",
            "arn:aws:iam::1:role/batch",
            (("iam:passedtoservice", ("bedrock.amazonaws.com",)),),
        ),
    ]


def test_the_denial_wording_is_aws_s() -> None:
    principal = "arn:aws:sts::123456789012:assumed-role/Role/Session"
    assert denial_message(principal, "s3:GetObject", f"{BUCKET}/k", "implicit", "s3") == (
        f'User: {principal} is not authorized to perform: s3:GetObject on resource: "{BUCKET}/k" '
        "because no identity-based policy allows the s3:GetObject action"
    )
    assert denial_message(principal, "dynamodb:GetItem", "arn:t", "resource", "dynamodb").endswith(
        "on resource: arn:t with an explicit deny in a resource-based policy"
    )


def _environ(token: str, service: str, method: str, path: str) -> dict[str, Any]:
    """A request signed with the local access key and the session token ``token``."""
    authorization = (
        f"AWS4-HMAC-SHA256 Credential=local/20261207/us-east-1/{service}/aws4_request, Signature=x"
    )
    return {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "HTTP_AUTHORIZATION": authorization,
        "HTTP_X_AMZ_SECURITY_TOKEN": token,
    }


def test_a_deployed_role_is_held_to_its_policies_and_the_operator_is_not() -> None:
    with mock_aws():
        iam = boto3.client("iam", region_name="us-east-1")
        tags = [{"Key": ENFORCED_TAG, "Value": "DocAgent"}]
        arn = iam.create_role(RoleName="Reader", AssumeRolePolicyDocument="{}", Tags=tags)["Role"]["Arn"]
        statement = allow(Action="s3:GetObject", Resource="arn:aws:s3:::jobs/items/*")
        iam.put_role_policy(
            RoleName="Reader",
            PolicyName="p",
            PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [statement]}),
        )
        authorizer = Authorizer("123456789012", "us-east-1")
        role = role_credentials(arn, "fn")["AWS_SESSION_TOKEN"]  # what the function's SDK signs with
        assert role_credentials(arn, "fn")["AWS_ACCESS_KEY_ID"] == "local"  # the local cloud's one key
        assert authorizer.check(_environ(role, "s3", "GET", "/jobs/items/a")) is None
        denial = authorizer.check(_environ(role, "s3", "GET", "/jobs/batch/parts.jsonl"))
        assert denial is not None and denial.service == "s3"
        assert denial.message == denial_message(
            "arn:aws:sts::123456789012:assumed-role/Reader/fn",
            "s3:GetObject",
            "arn:aws:s3:::jobs/batch/parts.jsonl",
            "implicit",
            "s3",
        )
        assert list(authorizer.denials) == [denial.message]
        assert authorizer.check(_environ("local", "s3", "GET", "/jobs/batch/parts.jsonl")) is None
        # what the local cloud does itself as the role (a Distributed Map starting its children)
        machine = "arn:aws:states:us-east-1:123456789012:stateMachine:Flow"
        refused = authorizer.authorize(arn, "StepFunctions", Check("states:StartExecution", machine))
        assert refused == denial_message(
            "arn:aws:sts::123456789012:assumed-role/Reader/StepFunctions",
            "states:StartExecution",
            machine,
            "implicit",
            "states",
        )
        assert (
            authorizer.authorize("arn:aws:iam::123456789012:role/NotDeployed", "s", Check("x:Y", "*")) is None
        )
        # a policy changed: decisions made before are forgotten
        statement["Resource"] = "arn:aws:s3:::jobs/*"
        iam.put_role_policy(
            RoleName="Reader",
            PolicyName="p",
            PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [statement]}),
        )
        authorizer.invalidate()
        assert authorizer.check(_environ(role, "s3", "GET", "/jobs/batch/parts.jsonl")) is None


def test_the_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DOCAGENT_LOCAL_IAM", raising=False)
    assert enabled() and not enabled(False)
    monkeypatch.setenv("DOCAGENT_LOCAL_IAM", "off")
    assert not enabled() and enabled(True)
