"""Creating each resource type of a synthesized template on the local cloud, through its service's real API
(docagent/localcloud/deploy.py runs them in order): IAM roles and policies, Lambda functions and layers, log
groups, buckets, tables, the state machine, topics, rules, alarms and dashboards. A resource already there
(a redeploy) is updated as ``cdk deploy`` would, or left with its data (buckets, tables).
"""

from __future__ import annotations

import functools
import io
import json
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from docagent.localcloud.cfn_template import DeployError, TemplateValues
from docagent.localcloud.iam.enforcement import ENFORCED_TAG
from docagent.localcloud.patches import LOG_GROUP_TAG
from stacks.sdk_pins import (
    DOCUMENT_LAYER_PREFIX,
    SDK_LAYER_PREFIX,
    document_layer_description,
    sdk_layer_description,
)

# The public Powertools layer is not in the local cloud's account: its contents come from the
# local interpreter's site-packages (pinned to the same Powertools version in pyproject.toml).
POWERTOOLS_LAYER = re.compile(r"^arn:aws:lambda:[^:]+:017000801446:layer:AWSLambdaPowertoolsPython")

# Resource types with no behaviour in a local run (CDK metadata is inert; Lambda's resource policy, which
# lets EventBridge invoke a function, is not evaluated: docs/local-cloud.md "IAM"). The alert topic's KMS key
# (nothing is encrypted locally), the email subscription (no mail leaves a laptop: the local
# alert sink writes the topic's messages to alerts.jsonl and the console instead) and Logs Insights saved
# queries (moto has no query definitions) are accepted too.
ACCEPTED_WITHOUT_EFFECT = {
    "AWS::CDK::Metadata",
    "AWS::KMS::Key",
    "AWS::SNS::Subscription",
    "AWS::Logs::QueryDefinition",
    "AWS::Lambda::Permission",
}
# CloudFormation properties of AWS::CloudWatch::Alarm that PutMetricAlarm takes under the same name.
ALARM_PROPERTIES = (
    "AlarmDescription",
    "ActionsEnabled",
    "AlarmActions",
    "OKActions",
    "InsufficientDataActions",
    "MetricName",
    "Namespace",
    "Statistic",
    "ExtendedStatistic",
    "Dimensions",
    "Period",
    "Unit",
    "EvaluationPeriods",
    "DatapointsToAlarm",
    "Threshold",
    "ComparisonOperator",
    "TreatMissingData",
    "Metrics",
)


def zip_directory(directory: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(directory).as_posix())
    return buffer.getvalue()


class ResourceCreator:
    """Creates the template's resources of each type (``by_type``, in the order a deploy creates them)
    with the deploy's ``client`` of each service."""

    def __init__(self, template: TemplateValues, client: Callable[[str], Any]) -> None:
        self.template = template
        self._client = client
        # Each asset's zip, made once: the stack's functions share one code asset (zipping it took 22 ms
        # of CPU, once for each of the seven functions of a deploy, 2026-12-08).
        self._zips: dict[Path, bytes] = {}
        self.by_type: dict[str, Callable[[str, dict[str, Any]], None]] = {
            "AWS::IAM::Role": self.role,
            "AWS::Lambda::LayerVersion": self.layer,
            "AWS::Logs::LogGroup": self.log_group,
            "AWS::S3::Bucket": self.bucket,
            "AWS::DynamoDB::Table": self.table,
            "AWS::Lambda::Function": self.function,
            "AWS::StepFunctions::StateMachine": self.state_machine,
            "AWS::SNS::Topic": self.topic,
            "AWS::Events::Rule": self.rule,
            "AWS::CloudWatch::Alarm": self.alarm,
            "AWS::CloudWatch::Dashboard": self.dashboard,
            # The policies last: what they name exists by then. The local endpoint enforces them (iam/).
            "AWS::IAM::Policy": self.policy,
            "AWS::S3::BucketPolicy": self.bucket_policy,
            "AWS::SNS::TopicPolicy": self.topic_policy,
        }

    def role(self, logical_id: str, properties: dict[str, Any]) -> None:
        """The role, tagged for the local endpoint's IAM (iam/enforcement.py), with its inline policies as the
        template has them (a redeploy removes the ones it no longer has) and its managed policies."""
        iam = self._client("iam")
        name = self.template.physical[logical_id]
        trust = json.dumps(self.template.resolve(properties.get("AssumeRolePolicyDocument", {})))
        tags = [{"Key": ENFORCED_TAG, "Value": self.template.stack_name}]
        existed = _exists(lambda: iam.create_role(RoleName=name, AssumeRolePolicyDocument=trust, Tags=tags))
        if existed:
            iam.update_assume_role_policy(RoleName=name, PolicyDocument=trust)
            iam.tag_role(RoleName=name, Tags=tags)
        inline = {str(p["PolicyName"]): p["PolicyDocument"] for p in properties.get("Policies", [])}
        for policy_name, document in inline.items():
            iam.put_role_policy(
                RoleName=name,
                PolicyName=policy_name,
                PolicyDocument=json.dumps(self.template.resolve(document)),
            )
        kept = set(inline) | {
            str(self.template.resolve(r["Properties"]["PolicyName"]))
            for r in self.template.resources.values()
            if r["Type"] == "AWS::IAM::Policy" and name in self._role_names(r["Properties"])
        }
        if existed:  # a role created just now has only the policies put above: none is stale
            for stale in set(iam.list_role_policies(RoleName=name)["PolicyNames"]) - kept:
                iam.delete_role_policy(RoleName=name, PolicyName=stale)
        for arn in self.template.resolve(properties.get("ManagedPolicyArns", [])):
            iam.attach_role_policy(RoleName=name, PolicyArn=str(arn))

    def _role_names(self, properties: dict[str, Any]) -> list[str]:
        return [str(self.template.resolve(role)) for role in properties.get("Roles", [])]

    def policy(self, logical_id: str, properties: dict[str, Any]) -> None:
        document = json.dumps(self.template.resolve(properties["PolicyDocument"]))
        for role in self._role_names(properties):
            self._client("iam").put_role_policy(
                RoleName=role,
                PolicyName=str(self.template.resolve(properties["PolicyName"])),
                PolicyDocument=document,
            )

    def bucket_policy(self, logical_id: str, properties: dict[str, Any]) -> None:
        self._client("s3").put_bucket_policy(
            Bucket=str(self.template.resolve(properties["Bucket"])),
            Policy=json.dumps(self.template.resolve(properties["PolicyDocument"])),
        )

    def topic_policy(self, logical_id: str, properties: dict[str, Any]) -> None:
        document = json.dumps(self.template.resolve(properties["PolicyDocument"]))
        for topic in self.template.resolve(properties["Topics"]):
            self._client("sns").set_topic_attributes(
                TopicArn=str(topic), AttributeName="Policy", AttributeValue=document
            )

    def log_group(self, logical_id: str, properties: dict[str, Any]) -> None:
        logs = self._client("logs")
        name = self.template.physical[logical_id]
        _exists(lambda: logs.create_log_group(logGroupName=name))
        if "RetentionInDays" in properties:
            logs.put_retention_policy(logGroupName=name, retentionInDays=int(properties["RetentionInDays"]))

    def bucket(self, logical_id: str, properties: dict[str, Any]) -> None:
        s3 = self._client("s3")
        name = self.template.physical[logical_id]
        _exists(lambda: s3.create_bucket(Bucket=name))  # one already there keeps its objects
        if properties.get("VersioningConfiguration", {}).get("Status") == "Enabled":
            s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})

    def table(self, logical_id: str, properties: dict[str, Any]) -> None:
        dynamodb = self._client("dynamodb")
        name = self.template.physical[logical_id]
        throughput = properties.get("ProvisionedThroughput")
        created = functools.partial(
            dynamodb.create_table,
            TableName=name,
            KeySchema=properties["KeySchema"],
            AttributeDefinitions=properties["AttributeDefinitions"],
            BillingMode=properties.get("BillingMode", "PROVISIONED"),
            **({"ProvisionedThroughput": throughput} if throughput else {}),
        )
        if _exists(created):  # a table already there is left as it is, with its items
            return
        ttl = properties.get("TimeToLiveSpecification")
        if ttl and ttl.get("Enabled"):
            dynamodb.update_time_to_live(
                TableName=name,
                TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl["AttributeName"]},
            )

    def function(self, logical_id: str, properties: dict[str, Any]) -> None:
        code = properties["Code"]
        if "S3Key" not in code:
            raise DeployError(f"{logical_id}: only asset (S3Key) code is supported locally")
        layers = [str(arn) for arn in self.template.resolve(properties.get("Layers", []))]
        own = {
            self.template.arn(i)
            for i, r in self.template.resources.items()
            if r["Type"] == "AWS::Lambda::LayerVersion"
        }
        unknown_layers = [arn for arn in layers if not POWERTOOLS_LAYER.match(arn) and arn not in own]
        if unknown_layers:
            raise DeployError(
                f"{logical_id}: layers not Powertools' nor the stack's are not supported: {unknown_layers}"
            )
        log_group = self.template.resolve(properties.get("LoggingConfig", {}).get("LogGroup")) or (
            f"/aws/lambda/{self.template.physical[logical_id]}"
        )
        client = self._client("lambda")
        name = self.template.physical[logical_id]
        asset = self.template.assembly.asset(self.template.resolve(code["S3Key"]))
        if asset not in self._zips:
            self._zips[asset] = zip_directory(asset)
        code_zip = self._zips[asset]
        environment = {
            "Variables": self.template.resolve(properties.get("Environment", {}).get("Variables", {}))
        }
        configuration = {
            "FunctionName": name,
            "Runtime": properties["Runtime"],
            "Role": self.template.resolve(properties["Role"]),
            "Handler": properties["Handler"],
            "Timeout": int(properties.get("Timeout", 3)),
            "MemorySize": int(properties.get("MemorySize", 128)),
            "Environment": environment,
            "TracingConfig": properties.get("TracingConfig", {"Mode": "PassThrough"}),
        }
        tags = {LOG_GROUP_TAG: log_group}
        create = functools.partial(client.create_function, Code={"ZipFile": code_zip}, Tags=tags)
        if not _exists(lambda: create(**configuration)):
            return  # created
        client.update_function_code(FunctionName=name, ZipFile=code_zip)
        client.update_function_configuration(**configuration)
        client.tag_resource(Resource=self.template.arn(logical_id), Tags=tags)

    def layer(self, logical_id: str, properties: dict[str, Any]) -> None:
        """The SDK layer (stacks/sdk_pins.py): locally its content is the interpreter's own boto3, so it
        deploys only when it names the installed versions, as the Powertools layer does. The document layer
        (Pillow, pypdf, ...: stacks/document_layer.py) is the interpreter's own libraries too; it deploys when
        it names constraints.txt's pins (the local synth does not bundle it: docagent/localcloud/synth.py)."""
        description = str(properties.get("Description", ""))
        if description.startswith(DOCUMENT_LAYER_PREFIX):
            if description != document_layer_description():
                raise DeployError(
                    f"{logical_id}: the template wants {description}, not constraints.txt's pins"
                )
            return
        if not description.startswith(SDK_LAYER_PREFIX):
            raise DeployError(f"{logical_id}: only the SDK and document layers are supported locally")
        if description != sdk_layer_description():
            raise DeployError(
                f"{logical_id}: the template wants {description[len(SDK_LAYER_PREFIX) :]}; the local runtime "
                f"provides the installed {sdk_layer_description()[len(SDK_LAYER_PREFIX) :]} (pin both alike)"
            )

    def state_machine(self, logical_id: str, properties: dict[str, Any]) -> None:
        if "DefinitionS3Location" in properties:
            key = self.template.resolve(properties["DefinitionS3Location"]["Key"])
            definition = self.template.assembly.asset(key).read_text()
        elif "DefinitionString" in properties:
            definition = str(self.template.resolve(properties["DefinitionString"]))
        else:
            raise DeployError(f"{logical_id}: state machine without a definition")
        substitutions = self.template.resolve(properties.get("DefinitionSubstitutions", {}))
        for placeholder, value in substitutions.items():
            definition = definition.replace("${" + placeholder + "}", str(value))
        leftover = sorted(set(re.findall(r"\$\{(\w+)\}", definition)))
        if leftover:
            raise DeployError(f"{logical_id}: placeholders without a substitution: {leftover}")
        sfn = self._client("stepfunctions")
        definition, role = _moto_compatible(definition), self.template.resolve(properties["RoleArn"])
        arn = self.template.arn(logical_id)
        # Described first: moto answers a create of an existing name with the machine it has, whatever the
        # definition (AWS: StateMachineAlreadyExists when it differs). Executions that run keep theirs.
        if _exists(functools.partial(sfn.describe_state_machine, stateMachineArn=arn), missing=True):
            sfn.update_state_machine(stateMachineArn=arn, definition=definition, roleArn=role)
            return
        sfn.create_state_machine(
            name=self.template.physical[logical_id],
            definition=definition,
            roleArn=role,
            type=properties.get("StateMachineType", "STANDARD"),
        )

    def topic(self, logical_id: str, properties: dict[str, Any]) -> None:
        # KmsMasterKeyId is left out: the key is accepted without effect (nothing is encrypted locally).
        self._client("sns").create_topic(Name=self.template.physical[logical_id])

    def rule(self, logical_id: str, properties: dict[str, Any]) -> None:
        events = self._client("events")
        name = self.template.physical[logical_id]
        events.put_rule(
            Name=name,
            EventPattern=json.dumps(self.template.resolve(properties["EventPattern"])),
            State=properties.get("State", "ENABLED"),
            Description=properties.get("Description", ""),
        )
        targets = self.template.resolve(properties.get("Targets", []))
        if targets:
            events.put_targets(Rule=name, Targets=targets)

    def alarm(self, logical_id: str, properties: dict[str, Any]) -> None:
        arguments = {
            key: self.template.resolve(properties[key]) for key in ALARM_PROPERTIES if key in properties
        }
        self._client("cloudwatch").put_metric_alarm(AlarmName=self.template.physical[logical_id], **arguments)

    def dashboard(self, logical_id: str, properties: dict[str, Any]) -> None:
        self._client("cloudwatch").put_dashboard(
            DashboardName=self.template.physical[logical_id],
            DashboardBody=str(self.template.resolve(properties["DashboardBody"])),
        )


# What each service answers to a create of something that exists (moto's names, as AWS's).
ALREADY_EXISTS = {
    "EntityAlreadyExists",  # IAM
    "ResourceAlreadyExistsException",  # CloudWatch Logs
    "BucketAlreadyOwnedByYou",  # S3
    "ResourceInUseException",  # DynamoDB
    "ResourceConflictException",  # Lambda
}


def _exists(call: Callable[[], Any], *, missing: bool = False) -> bool:
    """Create something: False when created, True when it was already there (a redeploy). With ``missing``,
    ``call`` reads it instead: True when it is there, False when it is not (``StateMachineDoesNotExist``)."""
    try:
        call()
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code")
        if missing and code == "StateMachineDoesNotExist":
            return False
        if not missing and code in ALREADY_EXISTS:
            return True
        raise
    return missing


def _moto_compatible(definition: str) -> str:
    """moto's ASL grammar reads ToleratedFailurePercentage only as a decimal (``0.0``), not ``0``;
    the two are the same JSON number, so write it as a decimal."""
    document = json.loads(definition)

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("ToleratedFailurePercentage"), int):
                node["ToleratedFailurePercentage"] = float(node["ToleratedFailurePercentage"])
            for child in node.values():
                visit(child)
        elif isinstance(node, list):
            for child in node:
                visit(child)

    visit(document)
    return json.dumps(document)
