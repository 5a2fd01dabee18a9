"""What each deployment setting means, in words: the one part of docs/reference/configuration.md the
settings model (stacks/config.py) cannot say itself. docagent/docs_gen.py refuses a setting without a meaning.
"""

from __future__ import annotations

CONFIG_MEANINGS: dict[str, str] = {
    "stack_name": "CloudFormation stack name",
    "model_provider": "`bedrock` (the Converse API; locally the local cloud's Bedrock endpoint answers)",
    "model_id": (
        "Bedrock model id, cross-Region inference profile id or ARN (form checked at synth), pinned per "
        "job; the default is Claude Haiku 4.5 (Active as of 2026-11) through the US inference profile: "
        "use `eu.`/`apac.`/`global.` for other geographies"
    ),
    "extra_model_ids": (
        "further Bedrock model ids (same forms as `model_id`) the functions may call: the models job "
        "definitions name (job.json `models`, a cheap model first; docs/defining-a-job.md); their "
        "InvokeModel grants and throttle alarms are added; the default is the default cascade's cheap model "
        "(Amazon Nova Lite, US profile: docs/cost.md)"
    ),
    "model_max_tokens": "Converse `maxTokens` (a reply cut off there is a rejected document)",
    "model_temperature": "Converse `temperature`",
    "model_breaker_seconds": (
        "how long the job's model breaker stays open after a permanent refusal (docs/design.md, Model calls)"
    ),
    "default_max_cost_usd": (
        "the budget in US dollars of a job whose request sets no `max_cost_usd` (docs/cost.md, Actual cost "
        "and budgets); `0`: none"
    ),
    "default_definition": (
        'the published job definition (docs/defining-a-job.md) a request without `definition` runs; `""`: '
        "none (such a request is refused)"
    ),
    "child_execution_type": "Distributed Map child type (`STANDARD` or `EXPRESS`)",
    "max_concurrency": (
        "Distributed Map MaxConcurrency (0 = service maximum), capped by what the model's quotas carry "
        "(below)"
    ),
    "fan_in_max_concurrency": (
        "MaxConcurrency of the fan-in Maps (ReportPartitions, VerifyPartitions); counted with "
        "max_concurrency in `docagent preflight --aws`'s Lambda concurrency check"
    ),
    "tolerated_failure_percentage": (
        "Distributed Map ToleratedFailurePercentage (AWS counts failed items: a failed batch counts each "
        "of its documents)"
    ),
    "map_label": "Map Run label",
    "actions_timeout_seconds": (
        "RunActions' own timeout: a worker killed mid-action is waited out this long (its in-progress "
        "record), then the retry reconciles; an http call is bounded at 10 s a request (docs/actions.md)"
    ),
    "verify_timeout_seconds": (
        "VerifyJob's own timeout, its VerifyPartitions children's and its merge's: a child lists one "
        'manifest part\'s results and journal (docs/scale.md, "The report and the verification by fan-in")'
    ),
    "function_timeout_seconds": (
        "every other function's timeout, sized so a model call on the largest document gets its whole 60 s "
        "read "
        'timeout (docs/scale.md, "One large document"); the in-progress retry polls for this + 5 s per crash '
        "retried (stacks/in_progress_polling.py)"
    ),
    "function_memory_mb": "memory of ProcessDocument, RequestApproval",
    "architecture": (
        "the functions' instruction set, `x86_64` or `arm64` (Graviton): the document layer's wheels are "
        "downloaded and installed for it (`make setup` fills build/lambda-wheels/ for the one cdk.json "
        "names) and the Powertools layer is the one published for it"
    ),
    "aggregate_memory_mb": (
        "memory of PrepareJob, BuildReport, RunActions, VerifyJob: they hold a job's listing or result files "
        "(docs/scale.md)"
    ),
    "max_document_bytes": (
        "larger documents are rejected unread (the document, not the job: DocumentTooLarge); at most 50 MB. "
        "Each block kind's Converse limit applies once the format is known (docs/design.md, Size limits by "
        "block kind)"
    ),
    "max_documents": (
        "larger jobs are refused by the listing step that passes it (docs/scale.md: what carries it)"
    ),
    "items_part_min_bytes": (
        "a listing step ends its part of the items at this size (S3's 5 MiB minimum multipart part, so "
        "the parts can be joined by UploadPartCopy); lower only in tests"
    ),
    "listing_page_size": (
        "versions per ListObjectVersions page (at most 1,000); a listing step lists at most 100 pages"
    ),
    "idempotency_ttl_seconds": "how long completed steps are remembered",
    "actions": (
        "| what job-level actions may reach (docs/actions.md): `destinations` (name -> http(s) URL, "
        "`{{resolve:ssm:NAME}}...` read at deploy, or `ledger`, the built-in ledger in the job bucket; "
        "`destination:NAME` in a definition), `hosts` (of literal URLs; `*.example.com` ok), `event_buses`, "
        "`topics` (SNS ARNs), `secrets` (Secrets Manager ARNs, `ssm:/prefix/`). RunActions' IAM policy "
        "grants exactly these; anything else is refused with ActionNotAllowed"
    ),
    "log_retention_days": "Lambda and state machine log retention",
    "log_level": "the functions' Powertools log level",
    "fault_injection_enabled": "lets a job arm named fault points (used by the local demo)",
    "model_requests_per_minute": (
        "the model's Bedrock requests-per-minute quota in the account, where the account has one (older "
        "accounts; Service Quotas names it per model): it caps MaxConcurrency (docs/scale.md)"
    ),
    "model_tokens_per_minute": (
        "the model's Bedrock tokens-per-minute quota in the account (Service Quotas \"Cross-Region "
        'InvokeModel tokens per minute for <model>" for an inference profile, "On-demand ..." otherwise; '
        "`docagent preflight --aws` reads yours and says what to set): MaxConcurrency <= min(RPM, TPM / "
        "(input + max output tokens x burndown)) x seconds per document / 60 x 0.8"
    ),
    "model_output_token_burndown": (
        "quota tokens one output token burns (5 for Claude 3.7 and later, Haiku 4.5 included, as looked up "
        "2026-12-01; 1 for most other models)"
    ),
    "model_input_tokens_per_document": (
        "input tokens one document takes (prompt and document), for the quota cap above and `docagent cost`"
    ),
    "model_max_output_tokens": (
        "output tokens reserved per document (Bedrock reserves maxTokens at request start), for the quota "
        "cap and `docagent cost`"
    ),
    "seconds_per_document": "how long one document takes, for the quota cap and `docagent cost`",
    "documents_per_child": (
        "documents per Distributed Map child (1: a child per document; K > 1: an ItemBatcher, each "
        'document still durable on its own, docs/scale.md "Batching"); K x `document_budget_seconds` must '
        "fit `function_timeout_seconds`"
    ),
    "document_budget_seconds": (
        "the most one document of a batch may take (read, model call near maxTokens, lookup, store)"
    ),
    "source_locations": (
        "where documents may come from: job-bucket prefixes, or `s3://bucket/prefix/` elsewhere (granted "
        'read-only to PrepareJob and ProcessDocument); never a prefix docagent writes (docs/design.md, "S3 '
        'layout")'
    ),
    "job_timeout_seconds": (
        "a job's overall limit (the execution's TimeoutSeconds): past it the job ends `TIMED_OUT` (alarm and "
        "alert); more than `approval_timeout_seconds`, at most a year"
    ),
    "approval_timeout_seconds": (
        "how long a job with `require_approval` waits for `docagent approve`/`reject`, and a job that waits "
        "for its review queue for the last decision (each then `States.Timeout`)"
    ),
    "batch_poll_seconds": (
        "how often a job on batch inference asks Bedrock for its batch job's status when no state-change "
        "event came (docs/batch.md); 1 to 86400"
    ),
    "lambda_concurrency": (
        "the account's Lambda concurrent executions in the Region (default 1,000): what `docagent preflight "
        "--documents N` paces a job by"
    ),
    "batch_records_per_job": (
        'records per Bedrock batch job, the account\'s quota "Records per batch inference job" for the '
        "model (default 50,000, adjustable): a job with more documents is split into several batch jobs "
        "(docs/batch.md); at least 100"
    ),
    "batch_jobs_in_flight": (
        "batch jobs of one job submitted or in progress at once (the BatchJobs Map's MaxConcurrency), at "
        "most the account's quota \"Sum of in-progress and submitted batch inference jobs using a base "
        'model" (default 20) less what other workloads use on that model'
    ),
    "alert_email": (
        "| an address subscribed (email) to the job alerts topic; empty: the topic has no subscription"
    ),
    "model_throttle_alarm_threshold": (
        "model throttles (AWS/Bedrock `InvocationThrottles`) per 5 minutes that alarm"
    ),
    "function_error_alarm_threshold": "errors per function per 5 minutes that alarm",
    "approval_alarm_seconds": "an approval pending longer than this alarms (300 to 86400)",
    "silent_failure_window_minutes": (
        "documents reviewed but none extracted within this window alarms (5 to 1440)"
    ),
}
