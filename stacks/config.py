"""The deployment settings, read from the ``docagent`` object in cdk.json context and checked at synth."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from functions import storage
from functions.actions.allowed import LEDGER_DESTINATION, SSM_PREFIX, AllowedTargets
from functions.batch_inference.facts import BATCH_MAX_JOBS_IN_FLIGHT, BATCH_MAX_RECORDS, BATCH_MIN_RECORDS
from functions.payloads.common import (
    DEFAULT_ITEMS_PART_MIN_BYTES,
    DEFAULT_MAX_DOCUMENT_BYTES,
    DEFAULT_MAX_DOCUMENTS,
    MAX_DOCUMENTS_CAP,
    MAX_SOURCE_DOCUMENT_BYTES,
)
from stacks.outputs import STACK_NAME

CONTEXT_KEY = "docagent"
# The CDK CLI passes cdk.json's context to the app; app.py (which owns the app) and the stacks' own scripts
# (document_layer.py's wheels) read it from here, so no module of stacks/ imports app.py.
CDK_JSON = Path(__file__).resolve().parents[1] / "cdk.json"
# A CloudFormation dynamic reference to a plain SSM parameter (optionally a version): resolved at deploy time.
SSM_DYNAMIC_REFERENCE = r"\{\{resolve:ssm:[A-Za-z0-9_./-]{1,2048}(:[0-9]+)?\}\}"
SECRET_ARN_PATTERN = r"^(arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@*-]+)?$"
SNS_TOPIC_ARN = r"^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$"

# The retention periods CloudWatch Logs accepts; anything else fails at deploy, so refuse it at synth.
# The default model: an Active model through a cross-Region inference profile. As of 2026-11, AWS docs
# (https://docs.aws.amazon.com/bedrock/latest/userguide/model-card-anthropic-claude-haiku-4-5.html) list
# Claude Haiku 4.5 with "Model lifecycle: Active" and its inference profile ids; the earlier default,
# anthropic.claude-3-haiku-20240307-v1:0, is past its end of life (Model lifecycle (Legacy) page,
# https://docs.aws.amazon.com/bedrock/latest/userguide/model-lifecycle-legacy.html). Lifecycles move:
# `docagent preflight --aws` reads the live status (GetFoundationModel's modelLifecycle) before a deploy.
# The default is the *global* cross-Region profile, callable from any commercial Region ("The destination
# Regions for Global cross-Region inference profiles include all commercial Regions", AWS docs, "Supported
# Regions and models for inference profiles", looked up 2026-12-04): a stack deployed in Europe or Asia calls
# it as one in the US does. Until 2026-12-04 the default was the US-only `us.` profile, which a stack in
# another Region deployed and then failed every model call with. For data residency pick the geography's
# profile (`eu.`, `apac.`, `jp.`, `au.`, ...): synth and preflight refuse one the stack's Region cannot call.
DEFAULT_MODEL_ID = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
# The cheap model of the default cascade (job.json ``models: [CHEAP, DEFAULT_MODEL_ID]``, docs/cost.md "The
# default: cheap first"): Amazon Nova Lite, one of the cheapest current Bedrock models that reads what a
# job reads through Converse (text, images, and PDF/DOCX document blocks: AWS "Supported models and model
# features" and the Nova user guide's "Multimodal support", looked up 2026-12-07; Nova Micro reads text). Its
# profiles are geographic only (us./eu./apac.; the model card lists no global profile, looked up 2026-12-07):
# the US one here, callable from us-east-* and us-west-* (a stack elsewhere names its geography's, e.g.
# eu.amazon.nova-lite-v1:0, in extra_model_ids and the definition's models; preflight names the problem).
DEFAULT_CHEAP_MODEL_ID = "us.amazon.nova-lite-v1:0"

# Cross-Region inference profile ids carry a geography prefix: `us.anthropic.claude-...` (as of 2026-11, AWS
# docs: "Supported Regions and models for inference profiles", inference-profiles-support.html).
INFERENCE_PROFILE_PREFIXES = frozenset({"us", "us-gov", "eu", "apac", "jp", "au", "ca", "global"})
# The source Regions a geography's profiles can be called from, by Region name prefix (AWS docs, "Supported
# Regions and models for inference profiles", looked up 2026-12-04; per model the list is narrower, which
# preflight's GetInferenceProfile reads live). `global` is callable from every commercial Region.
PROFILE_SOURCE_REGIONS: dict[str, tuple[str, ...]] = {
    "us": ("us-east-", "us-west-"),
    "us-gov": ("us-gov-",),
    "ca": ("ca-",),
    "eu": ("eu-",),
    "apac": ("ap-",),
    "jp": ("ap-northeast-1", "ap-northeast-3"),
    "au": ("ap-southeast-2", "ap-southeast-4"),
}


def profile_region_problem(model_id: str, region: str | None) -> str | None:
    """Why a stack in ``region`` cannot call the inference profile ``model_id``, or None (a foundation model
    id, a global profile, or an unknown Region: preflight checks those live)."""
    prefix = model_id.split(".", 1)[0] if "." in model_id and not model_id.startswith("arn:") else ""
    sources = PROFILE_SOURCE_REGIONS.get(prefix)
    if not region or sources is None or region.startswith(sources):
        return None
    base = model_id.split(".", 1)[1]
    return (
        f"model_id {model_id!r} is a {prefix}. inference profile, which a stack in {region} cannot call: "
        f"use 'global.{base}' (any commercial Region) or the profile of {region}'s geography, in cdk.json"
    )


# A foundation model id (`anthropic.claude-haiku-4-5-20251001-v1:0`, `amazon.nova-lite-v1:0`), the same with a
# geography prefix (an inference profile id), or the ARN of a foundation model or (application) inference
# profile. Checked at synth, so a typo fails `cdk synth` instead of every model call.
BEDROCK_MODEL_ID_PATTERN = re.compile(
    r"^(?:(?:" + "|".join(sorted(INFERENCE_PROFILE_PREFIXES)) + r")\.)?"
    r"[a-z0-9-]+\.[a-z0-9][a-z0-9.-]*(?::[0-9]+){0,2}$"
    r"|^arn:aws[a-z-]*:bedrock:[a-z0-9-]+:[0-9]{0,12}:"
    r"(?:foundation-model|inference-profile|application-inference-profile)/[A-Za-z0-9.:-]+$"
)

# Key prefixes of the job bucket the product writes (docs/design.md, "S3 layout"): never a document source.
PRODUCT_PREFIXES = (
    storage.JOBS_ROOT,
    f"{storage.MAP_RUNS_PREFIX}/",
    storage.LEDGER_PREFIX,
    storage.LEDGER_INDEX_PREFIX,
    storage.BATCH_JOBS_INDEX_PREFIX,
)
_BUCKET_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def actions_problems(allowed: AllowedTargets) -> list[str]:
    """Why the deployment's ``actions`` allow-list is not acceptable (empty: it is)."""
    problems = [
        f"destinations.{name} must be an http(s) URL, '{{{{resolve:ssm:<name>}}}}...' or "
        f"'{LEDGER_DESTINATION}'"
        for name, url in allowed.destinations.items()
        if not (
            url == LEDGER_DESTINATION
            or url.startswith(("https://", "http://"))
            or re.match(SSM_DYNAMIC_REFERENCE, url)
        )
    ]
    problems += [
        f"topics: {arn} is not an SNS topic ARN" for arn in allowed.topics if not re.match(SNS_TOPIC_ARN, arn)
    ]
    problems += [
        f"secrets: {entry} is neither a Secrets Manager secret ARN nor ssm:/<prefix>"
        for entry in allowed.secrets
        if not (entry.startswith(f"{SSM_PREFIX}/") or (entry and re.match(SECRET_ARN_PATTERN, entry)))
    ]
    return problems


def source_location_problem(location: str) -> str | None:
    """Why a source location is not acceptable, or None: "prefix/" of the job bucket,
    "s3://bucket/prefix/"."""
    if location.startswith("s3://"):
        bucket, _, prefix = location[len("s3://") :].partition("/")
        if not _BUCKET_NAME.match(bucket):
            return f"{location!r}: {bucket!r} is not an S3 bucket name"
        if prefix and not prefix.endswith("/"):
            return f"{location!r}: a prefix must end with '/'"
        return None
    if not location.endswith("/"):
        return f"{location!r}: a job-bucket prefix must end with '/' (another bucket: 's3://bucket/prefix/')"
    overlap = [p for p in PRODUCT_PREFIXES if p.startswith(location) or location.startswith(p)]
    if overlap:
        return (
            f"{location!r} overlaps {overlap[0]!r}, which docagent writes: documents cannot come from there"
        )
    return None


LogRetentionDays = Literal[
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653
]


QUOTA_HEADROOM = 0.8

# Batching (docs/scale.md, "Batching"). As of 2026-11, AWS docs: ItemBatcher
# (input-output-itembatcher.html) takes MaxItemsPerBatch and MaxInputBytesPerBatch, "up to 256 KiB": a
# child's input (Items plus BatchInput) is at most 256 KiB (state-map-distributed.html; docs/semantics.md
# D3, D6).
# The tolerated-failure percentage is failed (or timed-out) items / all items (maprun-fail-threshold.html):
# a failed batch child counts every item in it.
# A manifest entry is ~300-500 bytes (a key of up to 1,024 bytes, a version id): 100 of the usual size are
# ~50 KB; MaxInputBytesPerBatch (240 KiB, room left for BatchInput) makes a batch of unusually long entries
# smaller instead of failing it.
MAX_DOCUMENTS_PER_CHILD = 100
BATCH_MAX_INPUT_BYTES = 240 * 1024


class DocAgentConfig(BaseModel):
    """Every knob of the DocAgent stack. Unknown keys are refused so a typo never passes silently."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stack_name: str = Field(STACK_NAME, pattern=r"^[A-Za-z][A-Za-z0-9-]{0,63}$")
    model_provider: Literal["bedrock"] = "bedrock"
    model_id: str = Field(DEFAULT_MODEL_ID, min_length=1)
    # Further models the functions may call: those job definitions name (job.json ``models``: a cheap model
    # first, docs/defining-a-job.md). The functions' and the batch role's InvokeModel grants cover them too.
    # By default the cheap model of the default cascade (DEFAULT_CHEAP_MODEL_ID).
    extra_model_ids: list[str] = Field(default_factory=lambda: [DEFAULT_CHEAP_MODEL_ID], max_length=10)
    # The Converse inferenceConfig: an extraction is well under 800 tokens; temperature 0 repeats best.
    model_max_tokens: int = Field(800, ge=1, le=64_000)
    model_temperature: float = Field(0.0, ge=0.0, le=1.0)
    # How long the job's model breaker stays open after a permanent refusal (docs/design.md, "Model calls").
    model_breaker_seconds: int = Field(300, ge=0, le=86_400)
    # The budget of a job whose request sets no max_cost_usd, in US dollars; 0: none (docs/cost.md).
    default_max_cost_usd: float = Field(0.0, ge=0)
    # The published job definition (docs/defining-a-job.md) a request without ``definition`` runs; "" = none.
    default_definition: str = Field("", pattern=r"^([a-z0-9][a-z0-9-]{0,62})?$")
    child_execution_type: Literal["STANDARD", "EXPRESS"] = "STANDARD"
    max_concurrency: int = Field(10, ge=0, le=10_000)
    tolerated_failure_percentage: int = Field(0, ge=0, le=100)
    # MaxConcurrency of the fan-in Maps (ReportPartitions, VerifyPartitions): children that each read one
    # part of the job's results, a BuildReport or VerifyJob invocation each. They count against the account's
    # Lambda concurrency as the documents' children do (`docagent preflight --aws` adds them up); a new
    # account's reduced concurrency throttles them, and a throttled invocation is retried for about 30 s.
    fan_in_max_concurrency: int = Field(40, ge=1, le=10_000)
    map_label: str = Field("documents", pattern=r"^[A-Za-z0-9_-]{1,40}$")
    # Sized for the largest document (4.5 MB, up to the model's 200,000-token window): a model call's read
    # timeout is 70% of the invocation's remaining time, at most 60 s (functions/inference/converse.py), so
    # 120 s
    # gives the first call of an invocation the whole 60 s, and the S3 read, hashing and storing their share
    # (measured for a 4 MB PDF on the local cloud: docs/scale.md, "One large document").
    function_timeout_seconds: int = Field(120, ge=3, le=900)
    # RunActions' own timeout. A worker that dies mid-action leaves the step's in-progress record until the
    # invocation's deadline (Powertools expires it then: stacks/in_progress_polling.py), and the retry
    # reconciles only after it: with the documents' 120 s a kill right after an http request cost 61 polls and
    # 122 s. An http call is bounded at 10 s a request (functions/actions/http_call.py) and an export streams
    # the report's rows, so 60 s holds the job's actions and halves that wait.
    actions_timeout_seconds: int = Field(60, ge=10, le=900)
    # VerifyJob's own timeout (its VerifyPartitions children and its merge). A child's work is one manifest
    # part whatever the job's size (the part, one ranged read of rows.jsonl, two listings of ~part / 1,000
    # pages each, 16 sampled results): it cannot be split without splitting the part it verifies, and its time
    # is listing pages, which stretch when many children list at once (at 1,000,000 documents on the local
    # cloud one child took 107 s: docs/scale.md). The merge verifies in place any partition without a verdict,
    # one after another. 300 s keeps both well inside (at most 900, Lambda's limit).
    verify_timeout_seconds: int = Field(300, ge=30, le=900)
    function_memory_mb: int = Field(512, ge=128, le=10_240)
    # The functions' instruction set, and so their layers': the document layer's wheels are built for it
    # (stacks/document_layer.py) and the Powertools layer is the one published for it (stacks/powertools.py).
    architecture: Literal["x86_64", "arm64"] = "x86_64"
    # PrepareJob, BuildReport, VerifyJob hold a job's listing or result files (about 1.5 KB per document in
    # the ResultWriter's files: ~150 MB of JSON at 100,000 documents) in memory: docs/scale.md.
    aggregate_memory_mb: int = Field(2048, ge=128, le=10_240)
    # Larger documents are rejected unread, each in its own result (DocumentTooLarge); each block kind's own
    # Converse limit applies once the format is known (functions/reading/block_limits.py).
    max_document_bytes: int = Field(DEFAULT_MAX_DOCUMENT_BYTES, ge=1, le=MAX_SOURCE_DOCUMENT_BYTES)
    max_documents: int = Field(DEFAULT_MAX_DOCUMENTS, ge=1, le=MAX_DOCUMENTS_CAP)
    # Each listing step's part of the items ends at this size (docs/scale.md); below S3's 5 MiB minimum part
    # size the parts cannot be joined (S3 and moto refuse them), so only tests lower it.
    items_part_min_bytes: int = Field(DEFAULT_ITEMS_PART_MIN_BYTES, ge=1, le=5 * 1024**3)
    listing_page_size: int = Field(1000, ge=1, le=1000)  # ListObjectVersions MaxKeys (at most 1,000)
    idempotency_ttl_seconds: int = Field(7 * 24 * 3600, ge=60)
    # What job-level actions may reach (docs/actions.md): http destinations by name (an http(s) URL, one
    # starting with a CloudFormation dynamic reference to an SSM parameter resolved at deploy time, as the
    # local profile's are, or "ledger": the built-in ledger in the job bucket), hosts of literal URLs,
    # EventBridge buses, SNS topics, and the secrets (ARNs) and SSM parameter prefixes (ssm:/prefix/) actions
    # may read. RunActions' IAM policy grants exactly these.
    actions: AllowedTargets = Field(default_factory=AllowedTargets)
    log_retention_days: LogRetentionDays = 30
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    fault_injection_enabled: bool = False
    # The model's quotas in this account and Region, as Service Quotas names them (looked up 2026-12-01,
    # docs.aws.amazon.com/bedrock/latest/userguide/quotas-runtime.html): a cross-Region inference profile (the
    # default model) is bounded by "Cross-Region InvokeModel tokens per minute for <model>", a model called in
    # one Region by "On-demand InvokeModel tokens per minute for <model>" (input + output together, shared by
    # Converse and InvokeModel, maxTokens reserved at request start), and "Model invocation max tokens per day
    # for <model>"; accounts that still list a requests-per-minute quota ("Cross-region model inference
    # requests per minute for <model>") are bounded by it too. `docagent preflight --aws` reads the real
    # values. The defaults are placeholders: set the account's own.
    model_requests_per_minute: int = Field(500, ge=1)
    # The account's Lambda concurrency in the Region (1,000 by default, a soft limit shared by every function
    # of the account; looked up 2026-12-04: AWS Lambda Operator Guide "Scaling and concurrency in Lambda",
    # serverlessland.com, and the Lambda API's AccountLimit.ConcurrentExecutions, "the default limit is
    # 1000"). `docagent preflight --documents N` paces a job by it; `--aws` reads the account's own.
    lambda_concurrency: int = Field(1000, ge=1)
    model_tokens_per_minute: int = Field(2_000_000, ge=1)
    # How many quota tokens one output token burns (AWS docs "How tokens are counted in Amazon Bedrock",
    # quotas-token-burndown.html, looked up 2026-12-01: 5 for Anthropic Claude 3.7 and later, Claude 4.x and
    # Haiku 4.5 included; 1 for most other models). It counts against the TPM quota, never the bill.
    model_output_token_burndown: int = Field(5, ge=1, le=10)
    # What one document costs: the prompt plus a real document of a few pages (~1,000 tokens of text for
    # three; docs/cost.md "Token counting"). The demo's one-page documents bill ~500 input and ~55 output
    # tokens (the local model counts as Bedrock bills: docagent/localcloud/bedrock/billed_tokens.py).
    model_input_tokens_per_document: int = Field(1_500, ge=1)
    model_max_output_tokens: int = Field(800, ge=1)  # maxTokens of functions/inference/converse.py
    seconds_per_document: float = Field(3.0, gt=0)
    # Documents per Distributed Map child (ItemBatcher; 1: no batcher, one child per document). A batch runs
    # its documents one after another in one ProcessDocument invocation, each with its own durable steps, so
    # documents_per_child x document_budget_seconds (the most one document may take: read, model call near
    # maxTokens, lookup, store) must fit function_timeout_seconds.
    documents_per_child: int = Field(1, ge=1, le=MAX_DOCUMENTS_PER_CHILD)
    document_budget_seconds: int = Field(6, ge=1, le=900)
    # Where documents may come from: prefixes of the job bucket, or "s3://bucket/prefix/" elsewhere (each
    # granted read-only to PrepareJob and ProcessDocument). Anything else is refused as InvalidJobRequest.
    source_locations: tuple[str, ...] = Field((storage.INCOMING_ROOT,), min_length=1)
    # How long RequestApproval waits for `docagent approve`/`reject`, and WaitForReview for the review queue's
    # last decision (States.Timeout after); at most the one year a Standard execution may run.
    approval_timeout_seconds: int = Field(86_400, ge=1, le=365 * 24 * 3600)
    # The job's overall limit: the execution ends TIMED_OUT after this (the ExecutionsTimedOut alarm and the
    # job alert). Longer than the approval wait; at most the one year a Standard execution may run.
    job_timeout_seconds: int = Field(3 * 86_400, ge=60, le=365 * 24 * 3600)
    # Batch inference (docs/batch.md): how often WaitForBatchJob asks Bedrock for the batch job's status when
    # no state-change event came (its TimeoutSeconds; each timeout is retried, the retry polls).
    batch_poll_seconds: int = Field(900, ge=1, le=86_400)
    # The account's batch inference quotas for the model (functions/batch_inference/facts.py, looked up
    # 2026-12-04; both adjustable): "Records per batch inference job" (a job with more documents is split
    # into several batch jobs) and "Sum of in-progress and submitted batch inference jobs using a base model
    # for <model>" (the BatchJobs Map's MaxConcurrency: shared with every other batch job of the account on
    # that model, so set it to what this stack may use).
    batch_records_per_job: int = Field(BATCH_MAX_RECORDS, ge=BATCH_MIN_RECORDS)
    batch_jobs_in_flight: int = Field(BATCH_MAX_JOBS_IN_FLIGHT, ge=1)
    # Observability (stacks/observability.py): job alerts by email when set (the SNS topic exists either way).
    alert_email: str = Field("", pattern=r"^([^@\s]+@[^@\s]+\.[^@\s]+)?$")
    # Alarms: model throttles (AWS/Bedrock InvocationThrottles) per 5 minutes, function errors per 5 minutes.
    model_throttle_alarm_threshold: int = Field(5, ge=1)
    function_error_alarm_threshold: int = Field(1, ge=1)
    # An approval pending longer than this alarms (CloudWatch evaluates at most one day of data).
    approval_alarm_seconds: int = Field(4 * 3600, ge=300, le=86_400)
    # Documents reviewed but none extracted within this window alarms (the silent failure: jobs that succeed
    # with every document rejected, e.g. an empty reference table).
    silent_failure_window_minutes: int = Field(360, ge=5, le=1440)

    @model_validator(mode="after")
    def _bedrock_model_id_has_a_valid_form(self) -> DocAgentConfig:
        named = [("model_id", self.model_id)] + [("extra_model_ids", m) for m in self.extra_model_ids]
        for setting, model_id in named:
            if self.model_provider == "bedrock" and not BEDROCK_MODEL_ID_PATTERN.match(model_id):
                raise ValueError(
                    f"{setting} {model_id!r} is not a Bedrock model id: use a foundation model id "
                    "('anthropic.claude-haiku-4-5-20251001-v1:0'), a cross-Region inference profile id "
                    f"('{DEFAULT_MODEL_ID}') or an inference profile ARN"
                )
        return self

    def model_ids(self) -> list[str]:
        """Every model the functions may call: ``model_id``, then ``extra_model_ids``."""
        return list(dict.fromkeys([self.model_id, *self.extra_model_ids]))

    @model_validator(mode="after")
    def _source_locations_are_valid(self) -> DocAgentConfig:
        problems = [p for p in map(source_location_problem, self.source_locations) if p]
        if problems:
            raise ValueError("source_locations: " + "; ".join(problems))
        return self

    @model_validator(mode="after")
    def _action_targets_are_valid(self) -> DocAgentConfig:
        problems = actions_problems(self.actions)
        if problems:
            raise ValueError("actions: " + "; ".join(problems))
        return self

    @model_validator(mode="after")
    def _job_outlasts_its_approval(self) -> DocAgentConfig:
        if self.job_timeout_seconds <= self.approval_timeout_seconds:
            raise ValueError(
                f"job_timeout_seconds {self.job_timeout_seconds} must exceed approval_timeout_seconds "
                f"{self.approval_timeout_seconds}: a job that waits for approval would time out first"
            )
        return self

    @model_validator(mode="after")
    def _batch_fits_the_function_timeout(self) -> DocAgentConfig:
        k, budget = self.documents_per_child, self.document_budget_seconds
        if k > 1 and k * budget > self.function_timeout_seconds:
            raise ValueError(
                f"documents_per_child {k} x document_budget_seconds {budget} = {k * budget} s does not fit "
                f"function_timeout_seconds {self.function_timeout_seconds}: lower documents_per_child to "
                f"{max(1, self.function_timeout_seconds // budget)} or raise function_timeout_seconds to "
                f"{k * budget} (at most 900)"
            )
        return self

    @property
    def quota_concurrency(self) -> int:
        """The most children that keep the model under its quotas (docs/scale.md, "Bedrock quotas").

        Bedrock reserves input + maxTokens against the tokens-per-minute quota when a request starts, and an
        output token burns ``model_output_token_burndown`` quota tokens, so a document costs
        ``quota_tokens_per_document`` of it. Documents per minute = min(requests quota, tokens quota / tokens
        per document); children in flight = that rate times the seconds one document takes, with 20% headroom
        for retries. At least 1. ``docagent preflight --aws`` calls it with the account's real quotas.
        """
        per_minute = min(
            self.model_requests_per_minute, self.model_tokens_per_minute / self.quota_tokens_per_document
        )
        return max(1, int(per_minute * self.seconds_per_document / 60 * QUOTA_HEADROOM))

    @property
    def functions_in_flight(self) -> int:
        """The Lambda invocations jobs of this stack may run at once: the documents Map's children, the
        fan-in Maps' children (another job may be reporting while one processes documents), and the job-level
        steps beside them."""
        return self.effective_max_concurrency + self.fan_in_max_concurrency + 2

    @property
    def quota_tokens_per_document(self) -> int:
        """What one document takes of the tokens-per-minute quota (input, plus maxTokens burned down)."""
        return (
            self.model_input_tokens_per_document
            + self.model_max_output_tokens * self.model_output_token_burndown
        )

    @property
    def effective_max_concurrency(self) -> int:
        """MaxConcurrency of the Distributed Map: ``max_concurrency`` capped by the model's quotas (0 in
        max_concurrency means "the service maximum", so the quota bound alone)."""
        if self.max_concurrency == 0:
            return self.quota_concurrency
        return min(self.max_concurrency, self.quota_concurrency)


def cdk_json_context() -> dict[str, Any]:
    """cdk.json's context, which only the CDK CLI would otherwise pass to the app."""
    context: dict[str, Any] = json.loads(CDK_JSON.read_text(encoding="utf-8")).get("context", {})
    return context


class ConfigError(ValueError):
    """The cdk.json context is not a valid DocAgent configuration."""


def load_config(context: dict[str, Any] | None) -> DocAgentConfig:
    """Validate the context object, turning pydantic's report into one readable message."""
    try:
        return DocAgentConfig.model_validate(context or {})
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in issue['loc']) or CONTEXT_KEY}: {issue['msg']}"
            for issue in error.errors()
        )
        raise ConfigError(f"invalid '{CONTEXT_KEY}' context in cdk.json: {problems}") from None
