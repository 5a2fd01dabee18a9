"""``docagent preflight``'s model checks, for every model a job may call: the deployment's ``model_id`` and
``extra_model_ids`` and the models of the job definition it deploys (job.json ``models``, a cheap and a strong
one): each model's lifecycle, that the Region offers it, access (``--invoke``: one tiny Converse call, which
for a third-party model also starts the account's AWS Marketplace subscription, something the functions'
roles cannot do), the quotas of ``model_id``, and whether batch inference accepts the model batch jobs use.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from docagent.operations.preflight_check import Check, combined, error_code, skipped
from functions.batch_inference.facts import BATCH_MIN_RECORDS, batch_acceptance
from functions.inference.converse import model_access_fix
from stacks.config import INFERENCE_PROFILE_PREFIXES, DocAgentConfig, profile_region_problem


def base_model_id(model_id: str) -> str:
    """The foundation model of an inference profile id (``us.anthropic.x`` → ``anthropic.x``)."""
    geography, _, rest = model_id.partition(".")
    return rest if rest and geography in INFERENCE_PROFILE_PREFIXES else model_id


def is_profile(model_id: str) -> bool:
    return base_model_id(model_id) != model_id


class ModelChecks:
    """The model checks of ``Preflight`` (docagent/operations/preflight.py), which sets these attributes."""

    config: DocAgentConfig
    client: Callable[[str], Any]
    region: str | None
    on_aws: bool
    invoke: bool
    # Every model a job may call, model_id first; batch_model: the one a batch job calls (the definition's
    # cheap model, else model_id: functions/batch_inference/invocation_jobs.py).
    models: list[str]
    batch_model: str

    def _each_model(self, name: str, check: Callable[[str], Check]) -> Check:
        if self.config.model_provider != "bedrock":
            return skipped(name, f"model_provider is {self.config.model_provider}")
        if not self.on_aws:
            return skipped(name, "the local Bedrock serves any model id")
        return combined(name, (check(model) for model in self.models))

    def _foundation_model(self, model_id: str) -> dict[str, Any]:
        details: dict[str, Any] = self.client("bedrock").get_foundation_model(
            modelIdentifier=base_model_id(model_id)
        )["modelDetails"]
        return details

    def model_lifecycle(self) -> Check:
        return self._each_model("model_lifecycle", self._lifecycle)

    def _lifecycle(self, model: str) -> Check:
        name, base = "model_lifecycle", base_model_id(model)
        fix = "pick an Active model (Bedrock console, Model catalog) and set it in cdk.json or job.json"
        try:
            lifecycle = self._foundation_model(model).get("modelLifecycle", {})
        except ClientError as error:
            if error_code(error) in {"ResourceNotFoundException", "ValidationException"}:
                return Check(name, "fail", f"{model}: not offered in {self.region}", fix)
            raise
        status = str(lifecycle.get("status", "unknown"))
        if status == "ACTIVE":
            return Check(name, "ok", f"{base} is ACTIVE")
        if status == "LEGACY":
            end = lifecycle.get("endOfLifeTime")
            when = end.date().isoformat() if isinstance(end, dt.datetime) else str(end or "not announced")
            return Check(name, "warn", f"{base} is LEGACY; end of life {when}", fix)
        return Check(name, "fail", f"{base} lifecycle is {status}", fix)

    def model_offered(self) -> Check:
        return self._each_model("model_offered", self._offered)

    def _offered(self, model: str) -> Check:
        name = "model_offered"
        problem = profile_region_problem(model, self.region)
        if problem:  # known before any call: the profile's geography is not the Region's
            return Check(name, "fail", problem, "set the model id in cdk.json (or job.json), deploy")
        if is_profile(model):
            try:
                profile = self.client("bedrock").get_inference_profile(inferenceProfileIdentifier=model)
            except ClientError as error:
                return Check(
                    name,
                    "fail",
                    f"inference profile {model}: {error_code(error)} in {self.region}",
                    "use the profile of this region's geography (us., eu., apac., ...) or global.",
                )
            regions = sorted({m["modelArn"].split(":")[3] for m in profile.get("models", [])})
            if profile.get("status") != "ACTIVE":
                return Check(name, "fail", f"profile {model} is {profile.get('status')}", "")
            return Check(name, "ok", f"profile {model} routes to {', '.join(regions) or '-'}")
        types = self._foundation_model(model).get("inferenceTypesSupported", [])
        if "ON_DEMAND" not in types:
            return Check(
                name,
                "fail",
                f"{model} is not offered on demand in {self.region} ({', '.join(types) or 'no types'})",
                "use its cross-Region inference profile id (e.g. us." + model + ")",
            )
        return Check(name, "ok", f"{model} on demand in {self.region}")

    def model_access(self) -> Check:
        """One tiny Converse call per model (``--invoke``): proves access, and for a third-party model starts
        the account's Marketplace subscription, which the functions' roles cannot (docs/deploying.md)."""
        if self.config.model_provider != "bedrock":
            return skipped("model_access", f"model_provider is {self.config.model_provider}")
        if not self.invoke:
            return skipped("model_access", "add --invoke for one tiny Converse call per model")
        return combined("model_access", (self._access(model) for model in self.models))

    def _access(self, model: str) -> Check:
        try:
            answer = self.client("bedrock-runtime").converse(
                modelId=model,
                messages=[{"role": "user", "content": [{"text": "Reply OK."}]}],
                inferenceConfig={"maxTokens": 5, "temperature": 0.0},
            )
        except ClientError as error:
            code = error_code(error)
            if code in {"ThrottlingException", "ServiceUnavailableException"}:
                return Check("model_access", "warn", f"{model}: {code} (access not proven)", "retry later")
            fix = (
                model_access_fix(model)
                if code == "AccessDeniedException"
                else f"pick a model offered in this region instead of {model} (cdk.json or job.json)"
            )
            return Check("model_access", "fail", f"{model}: {code}: {error}", fix)
        usage = answer.get("usage", {})
        return Check(
            "model_access", "ok", f"{model} answered ({usage.get('inputTokens', '?')} tokens in, one call)"
        )

    def batch_inference(self) -> Check:
        """Whether batch inference accepts the model a batch job calls, from this Region (the table of
        functions/batch_inference/facts.py): where it does not, a job with ``inference: batch`` (or ``auto``
        from its minimum of documents) runs on-demand, at twice the batch price, and preflight says so."""
        name, model = "batch_inference", self.batch_model
        if self.config.model_provider != "bedrock":
            return skipped(name, f"model_provider is {self.config.model_provider}")
        if not self.on_aws:
            return skipped(name, "the local Bedrock runs batch jobs of any model id")
        accepted, why = batch_acceptance(model, self.region or "")
        if accepted:
            return Check(name, "ok", f"{model}: {why}")
        on_demand = (
            f"jobs with inference batch (or auto, from {BATCH_MIN_RECORDS} documents) would run on-demand, "
            "at the on-demand price (twice the batch estimate)"
        )
        if accepted is None:
            return Check(
                name,
                "warn",
                f"{model}: {why}; if it does not, {on_demand}",
                'see docs/batch.md, "Models"',
            )
        return Check(
            name,
            "warn",
            f"{model}: {why}; {on_demand}",
            'for batch, use a geographic profile batch inference lists (docs/batch.md, "Models") as '
            "model_id (or the definition's first model), or run such jobs with inference on-demand",
        )

    def bedrock_quotas(self) -> Check:
        """The account's real quotas through the stack's own function (DocAgentConfig.quota_concurrency):
        the MaxConcurrency they carry, against the one the configured stack uses."""
        if self.config.model_provider != "bedrock":
            return skipped("bedrock_quotas", f"model_provider is {self.config.model_provider}")
        if not self.on_aws:
            return skipped("bedrock_quotas", "the local Bedrock has no quotas (throttle faults stand in)")
        rpm, tpm = self._model_quotas()
        kind = "Cross-Region" if is_profile(self.config.model_id) else "On-demand"
        if tpm is None:
            return Check(
                "bedrock_quotas",
                "warn",
                f"no tokens-per-minute quota found for {self.config.model_id}",
                f'see Service Quotas > Amazon Bedrock: "{kind} InvokeModel tokens per minute for <model>"',
            )
        real = self.config.model_copy(
            update={"model_tokens_per_minute": tpm}
            | ({"model_requests_per_minute": rpm} if rpm is not None else {})
        )
        carried, configured = real.effective_max_concurrency, self.config.effective_max_concurrency
        detail = (
            f"{kind} {tpm:,} tokens per minute"
            + (f", {rpm:,} requests per minute" if rpm is not None else "")
            + f"; {real.quota_tokens_per_document:,} quota tokens a document "
            f"({real.model_input_tokens_per_document:,} in + {real.model_max_output_tokens:,} out x "
            f"{real.model_output_token_burndown} burndown): "
            f"MaxConcurrency {carried} with these quotas; the configured stack uses {configured}"
        )
        if configured > carried:
            settings = f"model_tokens_per_minute={tpm}" + (
                f", model_requests_per_minute={rpm}" if rpm is not None else ""
            )
            return Check(
                "bedrock_quotas",
                "warn",
                detail + ": expect throttling, ridden out by Retry (ModelThrottled)",
                f"set {settings} in cdk.json and deploy (MaxConcurrency {carried}), or raise the quota",
            )
        return Check("bedrock_quotas", "ok", detail)

    def _model_quotas(self) -> tuple[int | None, int | None]:
        """(requests, tokens) per minute of the model's on-demand or cross-Region quota, found by name:
        "Cross-Region InvokeModel tokens per minute for Anthropic Claude Haiku 4.5" (the names of 2026-12;
        older accounts may list "Cross-region model inference requests per minute for ..." too). None where
        there is none."""
        words = [w for w in re.split(r"[-.:]", base_model_id(self.config.model_id)) if w and not w.isdigit()]
        family = [w for w in words if not re.fullmatch(r"v\d+|\d{8}", w)][1:]  # drop the provider
        version = ".".join(re.findall(r"-(\d)(?=-|$)", base_model_id(self.config.model_id))[:2])
        kind = "cross-region" if is_profile(self.config.model_id) else "on-demand"
        rpm = tpm = None
        paginator = self.client("service-quotas").get_paginator("list_service_quotas")
        for page in paginator.paginate(ServiceCode="bedrock"):
            for quota in page.get("Quotas", []):
                name = str(quota.get("QuotaName", "")).lower()
                if kind not in name or not all(word in name for word in family):
                    continue
                if version and version not in name:
                    continue
                if "requests per minute" in name and rpm is None:
                    rpm = int(quota["Value"])
                elif "tokens per minute" in name and tpm is None:
                    tpm = int(quota["Value"])
        return rpm, tpm
