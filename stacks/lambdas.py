"""The Lambda functions of docs/design.md, each with its own log group and least-privilege role."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from aws_cdk import Duration, FileSystem, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from functions import storage as keys
from functions.actions.allowed import SSM_PREFIX
from functions.batch_inference.facts import EVENT_DETAIL_TYPE, EVENT_SOURCE
from stacks import nag, outputs
from stacks.config import DocAgentConfig
from stacks.document_layer import document_layer
from stacks.function_specs import FUNCTION_SPECS, FunctionSpec
from stacks.grants import Grant, Wildcards, acknowledge, granted
from stacks.log_groups import retained_log_group
from stacks.model_grants import granted_model_arns, model_invoke_statements
from stacks.powertools import LAYER_RUNTIME, powertools_layer_reference
from stacks.sdk_layer import sdk_layer
from stacks.storage import Storage

REPO_ROOT = Path(__file__).resolve().parent.parent

# The code asset is the repository root filtered down to the `functions/` package, so the handler
# strings keep their `functions.handlers.<name>.handler` form. Glob rules apply in order, last match wins.
CODE_ASSET_EXCLUDES = (
    "*",
    "!functions",
    "!functions/**",
    "__pycache__",
    "*.pyc",
    ".*",  # `*` does not match dot-files (.venv, .git), and hidden files never belong in the asset
)

RUNTIME = lambda_.Runtime.PYTHON_3_13
# The layer parameter names the runtime and architecture (stacks/powertools.py): they move together.
assert RUNTIME.name == LAYER_RUNTIME
# The functions' architecture by the config's name (cdk.json ``architecture``), each its own Powertools layer.
ARCHITECTURES = {"x86_64": lambda_.Architecture.X86_64, "arm64": lambda_.Architecture.ARM_64}
POWERTOOLS_LAYER_ACCOUNT = "017000801446"


def powertools_layer_name(architecture: str) -> str:
    return f"AWSLambdaPowertoolsPythonV3-python313-{architecture}"


# What Powertools' DynamoDB persistence layer calls.
IDEMPOTENCY_ACTIONS = ("dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem")


# Each function's role (Functions._role), as data (stacks/grants.py); the action targets' statements
# (stacks/action_targets.py) and the batch job's (Functions._batch_statements) follow them.
FUNCTION_GRANTS: tuple[Grant[FunctionSpec], ...] = (
    Grant("WriteOwnLogs", ("logs:CreateLogStream", "logs:PutLogEvents"), "log_group"),
    Grant("SendTraces", ("xray:PutTraceSegments", "xray:PutTelemetryRecords"), "any"),
    # With ListBucket a missing key reads as NoSuchKey instead of AccessDenied. Documents are pinned by
    # version (prepare_job lists versions, process_document reads one).
    Grant("ListJobBucket", ("s3:ListBucket",), "job_bucket", when=lambda spec: not spec.reads_sources),
    Grant(
        "ListJobBucket",
        ("s3:ListBucket", "s3:ListBucketVersions"),
        "job_bucket",
        when=lambda spec: spec.reads_sources,
    ),
    Grant("ReadJobObjects", ("s3:GetObject",), "reads"),
    Grant("ReadDocuments", ("s3:GetObject", "s3:GetObjectVersion"), "source_objects"),
    Grant("ListDocumentBuckets", ("s3:ListBucket", "s3:ListBucketVersions"), "source_buckets"),
    Grant("WriteJobObjects", ("s3:PutObject",), "writes"),
    # A fault armed with `times` records each firing before it fires (functions/durability/faults.py):
    # only in a deployment with fault injection enabled (config fault_injection_enabled; else no ARN).
    Grant(
        "RecordFaultFirings", ("s3:PutObject",), "fault_firings", when=lambda spec: spec.passes_fault_points
    ),
    Grant("AbortJobUploads", ("s3:AbortMultipartUpload",), "aborts_uploads"),
    Grant(
        "KeepIdempotencyRecords",
        IDEMPOTENCY_ACTIONS,
        "idempotency_table",
        when=lambda spec: spec.uses_idempotency,
    ),
    Grant(
        "LookUpReferences", ("dynamodb:GetItem",), "reference_table", when=lambda spec: spec.reads_references
    ),
    # DetectDocumentText names no resource: it has no resource type (looked up 2026-12-07, "Actions,
    # resources, and condition keys for Amazon Textract", https://docs.aws.amazon.com/service-authorization/
    # latest/reference/list_amazontextract.html: its only related action is s3:GetObject), so "*".
    Grant("ReadPageText", ("textract:DetectDocumentText",), "any", when=lambda spec: spec.reads_page_text),
    # SendTaskSuccess names a task token, not a resource (as CompleteBatchWait).
    Grant(
        "CompleteReviewWait", ("states:SendTaskSuccess",), "any", when=lambda spec: spec.completes_review_wait
    ),
)
FUNCTION_WILDCARDS = (
    Wildcards(
        ("any",),
        "X-Ray PutTraceSegments/PutTelemetryRecords and Textract DetectDocumentText do not support "
        "resource-level permissions.",
    ),
    Wildcards(
        ("source_objects",),
        "{module} reads the job's documents, which sit under the configured source locations "
        "(config source_locations; docs/design.md, Source locations): read only, those prefixes only.",
    ),
    Wildcards(
        ("reads", "writes", "aborts_uploads", "fault_firings"),
        "Keys carry the job id (and document id), so {module} is limited to the key patterns of "
        "the docs/design.md S3 layout it reads or writes.",
    ),
    Wildcards(
        ("targets",),
        "The deployment's actions allow-list names secrets by ARN pattern and SSM parameters by prefix "
        "(config actions.secrets): read only, those patterns only.",
        only_wildcards=True,
    ),
    Wildcards(
        ("batch_jobs", "batch_models"),
        "Batch job ids are made by Bedrock when the job is created: any batch job of this account "
        "and region, and this model only (a cross-region profile's model in every region of its "
        "geography).",
        only_wildcards=True,
    ),
)


class Functions(Construct):
    """All functions share one code asset, the Powertools layer and one environment."""

    def __init__(
        self, scope: Construct, construct_id: str, *, config: DocAgentConfig, storage: Storage
    ) -> None:
        super().__init__(scope, construct_id)
        self._config = config
        self._storage = storage

        code = lambda_.Code.from_asset(str(REPO_ROOT), exclude=list(CODE_ASSET_EXCLUDES))
        self.code_version = FileSystem.fingerprint(str(REPO_ROOT), exclude=list(CODE_ASSET_EXCLUDES))[:12]
        self.architecture = ARCHITECTURES[config.architecture]
        powertools = lambda_.LayerVersion.from_layer_version_arn(
            self, "PowertoolsLayer", powertools_layer_reference(architecture=config.architecture)
        )
        # The pinned SDK before the runtime's own (stacks/sdk_pins.py).
        self.sdk_layer = sdk_layer(self, "SdkLayer")
        # Pillow, pypdf, python-docx, rapidfuzz built for the functions' platform (stacks/document_layer.py).
        self.document_layer = document_layer(self, "DocumentLayer", self.architecture)
        self.batch_role = self._batch_service_role()
        environment = function_environment(
            config, storage, code_version=self.code_version, batch_role_arn=self.batch_role.role_arn
        )

        layers = (self.sdk_layer, self.document_layer, powertools)
        self.by_id: Mapping[str, lambda_.Function] = {
            spec.construct_id: self._function(spec, code=code, layers=layers, environment=environment)
            for spec in FUNCTION_SPECS
        }
        # Bedrock's batch job state changes wake the waiting WaitForBatchJob task
        # (functions/batch_inference/invocation_jobs.py).
        events.Rule(
            self,
            "BatchJobStateChange",
            description="docagent: Bedrock batch inference job state changes, to complete the waiting task",
            event_pattern=events.EventPattern(source=[EVENT_SOURCE], detail_type=[EVENT_DETAIL_TYPE]),
            targets=[targets.LambdaFunction(self.by_id[outputs.BATCH_INFERENCE])],
        )

    def _batch_service_role(self) -> iam.Role:
        """The role Bedrock assumes to run a job's batch inference: read the batch input, write the output,
        invoke the model (looked up 2026-12-02, Bedrock User Guide "Create a service role for batch
        inference": trust bedrock.amazonaws.com with aws:SourceAccount; S3 GetObject, ListBucket, PutObject
        on the input and output locations)."""
        stack, bucket = Stack.of(self), self._storage.bucket
        model_statements = model_invoke_statements(stack, self._config)
        statements = [
            iam.PolicyStatement(
                sid="ReadBatchInput",
                actions=["s3:GetObject"],
                resources=[
                    bucket.arn_for_objects(keys.everything_under(keys.batch_inputs_root(keys.ANY_JOB)))
                ],
            ),
            iam.PolicyStatement(
                sid="WriteBatchOutput",
                actions=["s3:PutObject"],
                resources=[
                    bucket.arn_for_objects(keys.everything_under(keys.batch_outputs_root(keys.ANY_JOB)))
                ],
            ),
            iam.PolicyStatement(
                sid="ListJobBucket", actions=["s3:ListBucket"], resources=[bucket.bucket_arn]
            ),
            *model_statements,
        ]
        role = iam.Role(
            self,
            "BatchInferenceServiceRole",
            description="docagent: Bedrock batch inference of a job's documents, least privilege",
            assumed_by=iam.ServicePrincipal(
                "bedrock.amazonaws.com", conditions={"StringEquals": {"aws:SourceAccount": stack.account}}
            ),
            inline_policies={"LeastPrivilege": iam.PolicyDocument(statements=statements)},
        )
        nag.acknowledge_wildcard_resources(
            role,
            [s.resources[0] for s in statements[:2]],
            "Bedrock reads each job's batch input and writes its output under the job's batch/ keys only.",
        )
        _acknowledge_model_wildcards(role, model_statements)
        return role

    def _batch_statements(self) -> list[iam.PolicyStatement]:
        """Create, read and tag the job's batch job, pass Bedrock the batch role, complete the wait."""
        stack = Stack.of(self)
        jobs = stack.format_arn(service="bedrock", resource="model-invocation-job", resource_name="*")
        models = granted_model_arns(stack, self._config)
        return [
            iam.PolicyStatement(
                sid="RunBatchJobs",
                actions=[
                    "bedrock:CreateModelInvocationJob",
                    "bedrock:GetModelInvocationJob",
                    "bedrock:TagResource",
                ],
                resources=[jobs, *models],
            ),
            iam.PolicyStatement(
                sid="PassBatchRole",
                actions=["iam:PassRole"],
                resources=[self.batch_role.role_arn],
                conditions={"StringEquals": {"iam:PassedToService": "bedrock.amazonaws.com"}},
            ),
            # SendTaskSuccess names a task token, not a resource (service authorization reference: no
            # resource type for a token of a service integration).
            iam.PolicyStatement(sid="CompleteBatchWait", actions=["states:SendTaskSuccess"], resources=["*"]),
        ]

    def _function(
        self,
        spec: FunctionSpec,
        *,
        code: lambda_.Code,
        layers: tuple[lambda_.ILayerVersion, ...],
        environment: Mapping[str, str],
    ) -> lambda_.Function:
        log_group = retained_log_group(
            self, f"{spec.construct_id}LogGroup", retention_days=self._config.log_retention_days
        )
        role = self._role(spec, log_group_arn=log_group.log_group_arn)
        function = lambda_.Function(
            self,
            spec.construct_id,
            description=spec.description,
            code=code,
            handler=spec.handler,
            runtime=RUNTIME,
            architecture=self.architecture,
            layers=list(layers),
            timeout=Duration.seconds(int(getattr(self._config, spec.timeout_setting))),
            memory_size=self._config.aggregate_memory_mb
            if spec.aggregates
            else self._config.function_memory_mb,
            environment=dict(environment),
            tracing=lambda_.Tracing.ACTIVE,
            log_group=log_group,
            # Immutable: the policy below is the whole story, CDK adds nothing behind our back.
            role=role.without_policy_updates(),
        )
        nag.acknowledge(
            function,
            "L1",
            f"Pinned to {RUNTIME.name} to match the Powertools layer "
            f"{powertools_layer_name(self._config.architecture)}; move both "
            "together when Powertools publishes a layer for a newer runtime.",
        )
        return function

    def _sources(self) -> tuple[list[str], list[str]]:
        """(object ARNs, other buckets' ARNs) of the configured source locations."""
        stack = Stack.of(self)
        objects: list[str] = []
        buckets: list[str] = []
        for location in self._config.source_locations:
            if not location.startswith("s3://"):
                objects.append(self._storage.bucket.arn_for_objects(f"{location}*"))
                continue
            name, _, prefix = location[len("s3://") :].partition("/")
            bucket_arn = stack.format_arn(service="s3", region="", account="", resource=name)
            objects.append(f"{bucket_arn}/{prefix}*")
            buckets.append(bucket_arn)
        return objects, sorted(set(buckets))

    def _role(self, spec: FunctionSpec, *, log_group_arn: str) -> iam.Role:
        bucket = self._storage.bucket
        source_objects, source_buckets = self._sources() if spec.reads_sources else ([], [])
        arns: dict[str, list[str]] = {
            "log_group": [log_group_arn],
            "any": ["*"],
            "job_bucket": [bucket.bucket_arn],
            "reads": [bucket.arn_for_objects(pattern) for pattern in spec.reads],
            "writes": [bucket.arn_for_objects(pattern) for pattern in spec.writes],
            "aborts_uploads": [bucket.arn_for_objects(pattern) for pattern in spec.aborts_uploads],
            "fault_firings": [bucket.arn_for_objects(keys.everything_under(keys.faults_root(keys.ANY_JOB)))]
            if self._config.fault_injection_enabled
            else [],
            "source_objects": source_objects,
            "source_buckets": source_buckets,
            "idempotency_table": [self._storage.idempotency_table.table_arn],
            "reference_table": [self._storage.reference_table.table_arn],
            "targets": [],  # the action targets' and the batch job's statements' ARNs, when they apply
            "batch_jobs": [],
            "batch_models": [],
        }
        statements = granted(FUNCTION_GRANTS, spec, arns)
        if spec.reaches_action_targets:
            targets_statements = action_statements(Stack.of(self), self._config, sends=spec.sends_actions)
            statements += targets_statements
            arns["targets"] = [arn for statement in targets_statements for arn in statement.resources]
        if spec.runs_batch_jobs:
            batch_statements = self._batch_statements()
            statements += batch_statements
            arns["batch_jobs"] = [
                arn
                for statement in batch_statements
                for arn in statement.resources
                if "model-invocation-job" in arn
            ]
            arns["batch_models"] = granted_model_arns(Stack.of(self), self._config)
        model_statements: list[iam.PolicyStatement] = []
        if spec.invokes_model and self._config.model_provider == "bedrock":
            model_statements = model_invoke_statements(Stack.of(self), self._config)
            statements += model_statements
        role = iam.Role(
            self,
            f"{spec.construct_id}Role",
            description=f"docagent {spec.module}: least privilege, written by hand",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            inline_policies={"LeastPrivilege": iam.PolicyDocument(statements=statements)},
        )
        acknowledge(role, FUNCTION_WILDCARDS, arns, module=spec.module)
        _acknowledge_model_wildcards(role, model_statements)
        return role


def action_statements(stack: Stack, config: DocAgentConfig, *, sends: bool) -> list[iam.PolicyStatement]:
    """What the deployment's ``actions`` allow, as IAM: PutEvents on the buses, Publish to the topics (when
    the function ``sends``), and reading the secrets and SSM parameters actions name by reference."""
    allowed = config.actions
    grants: list[tuple[str, str, list[str]]] = []
    if sends:
        buses = [
            bus
            if bus.startswith("arn:")
            else stack.format_arn(service="events", resource="event-bus", resource_name=bus)
            for bus in allowed.event_buses
        ]
        grants += [
            ("PutActionEvents", "events:PutEvents", buses),
            ("PublishActionMessages", "sns:Publish", allowed.topics),
        ]
    ssm = [entry.removeprefix(SSM_PREFIX) for entry in allowed.secrets if entry.startswith(SSM_PREFIX)]
    grants += [
        (
            "ReadActionSecrets",
            "secretsmanager:GetSecretValue",
            [entry for entry in allowed.secrets if not entry.startswith(SSM_PREFIX)],
        ),
        (
            "ReadActionParameters",
            "ssm:GetParameter",
            [
                stack.format_arn(service="ssm", resource="parameter", resource_name=f"{p.lstrip('/')}*")
                for p in ssm
            ],
        ),
    ]
    return [
        iam.PolicyStatement(sid=sid, actions=[action], resources=resources)
        for sid, action, resources in grants
        if resources
    ]


def _acknowledge_model_wildcards(role: iam.Role, statements: list[iam.PolicyStatement]) -> None:
    nag.acknowledge_wildcard_resources(
        role,
        [arn for statement in statements for arn in statement.resources if "*" in arn],
        "A geographic cross-Region inference profile routes to its foundation model in the Regions of its "
        "geography: the model in any Region, conditioned on that profile and on the geography's Regions "
        "(stacks/model_grants.py), this model id only.",
    )


def function_environment(
    config: DocAgentConfig, storage: Storage, *, code_version: str, batch_role_arn: str = ""
) -> dict[str, str]:
    """The one environment every function gets (docs/design.md, "Environment variables")."""
    return {
        "BUCKET_NAME": storage.bucket.bucket_name,
        "IDEMPOTENCY_TABLE_NAME": storage.idempotency_table.table_name,
        "REFERENCE_TABLE_NAME": storage.reference_table.table_name,
        "MODEL_PROVIDER": config.model_provider,
        "MODEL_ID": config.model_id,
        "MODEL_MAX_TOKENS": str(config.model_max_tokens),
        "MODEL_TEMPERATURE": str(config.model_temperature),
        "MODEL_BREAKER_SECONDS": str(config.model_breaker_seconds),
        "DEFAULT_MAX_COST_USD": str(config.default_max_cost_usd),
        "DEFAULT_DEFINITION": config.default_definition,
        "CODE_VERSION": code_version,
        "MAX_DOCUMENT_BYTES": str(config.max_document_bytes),
        "MAX_DOCUMENTS": str(config.max_documents),
        "ITEMS_PART_MIN_BYTES": str(config.items_part_min_bytes),
        "LISTING_PAGE_SIZE": str(config.listing_page_size),
        "IDEMPOTENCY_TTL_SECONDS": str(config.idempotency_ttl_seconds),
        "ACTIONS_ALLOWED": config.actions.model_dump_json(),
        # model_id and at most 10 extra_model_ids: a few hundred bytes of the 4 KB a function's
        # environment may hold (Lambda quotas, as of 2026-12-04:
        # https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html)
        "MODELS_ALLOWED": json.dumps(config.model_ids()),
        "FAULT_INJECTION_ENABLED": "true" if config.fault_injection_enabled else "false",
        "SOURCE_LOCATIONS": ",".join(config.source_locations),
        "BATCH_ROLE_ARN": batch_role_arn,
        "BATCH_RECORDS_PER_JOB": str(config.batch_records_per_job),
        "POWERTOOLS_SERVICE_NAME": "docagent",
        "POWERTOOLS_METRICS_NAMESPACE": "DocAgent",
        "POWERTOOLS_LOG_LEVEL": config.log_level,
    }
