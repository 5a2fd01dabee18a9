"""The docagent context is checked at synth, and a bad value names its field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app import build_app
from functions.inference.converse import MAX_READ_TIMEOUT_SECONDS, READ_TIMEOUT_SHARE
from functions.payloads.common import MAX_SOURCE_DOCUMENT_BYTES
from stacks.config import CONTEXT_KEY, ConfigError, DocAgentConfig, cdk_json_context, load_config


def test_cdk_json_context_is_a_valid_config() -> None:
    config = load_config(cdk_json_context()[CONTEXT_KEY])
    assert isinstance(config, DocAgentConfig)


def test_missing_context_means_defaults() -> None:
    assert load_config(None) == DocAgentConfig()


@pytest.mark.parametrize(
    ("context", "field"),
    [
        ({"max_concurrency": -1}, "max_concurrency"),
        ({"max_concurrency": 10_001}, "max_concurrency"),
        ({"tolerated_failure_percentage": 101}, "tolerated_failure_percentage"),
        ({"max_concurency": 5}, "max_concurency"),
        ({"actions": {"destinations": {"tickets": "ftp://tickets"}}}, "destinations.tickets"),
        ({"actions": {"topics": ["arn:aws:sqs:us-east-1:123456789012:q"]}}, "not an SNS topic ARN"),
        ({"actions": {"secrets": ["docagent/token"]}}, "neither a Secrets Manager secret ARN"),
        ({"actions": {"hostz": []}}, "actions"),
        ({"child_execution_type": "FOO"}, "child_execution_type"),
        ({"model_provider": "openai"}, "model_provider"),
        ({"function_timeout_seconds": 901}, "function_timeout_seconds"),
        ({"log_retention_days": 10}, "log_retention_days"),
        ({"log_level": "TRACE"}, "log_level"),
        ({"stack_name": "1-starts-with-a-digit"}, "stack_name"),
        ({"map_label": "has spaces"}, "map_label"),
        ({"approval_timeout_seconds": 0}, "approval_timeout_seconds"),
        ({"approval_timeout_seconds": 366 * 24 * 3600}, "approval_timeout_seconds"),
    ],
)
def test_bad_value_is_refused_naming_the_field(context: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError, match=field) as raised:
        load_config(context)
    assert CONTEXT_KEY in str(raised.value)


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(ConfigError) as raised:
        load_config({"max_concurrency": -1, "child_execution_type": "FOO"})
    assert "max_concurrency" in str(raised.value)
    assert "child_execution_type" in str(raised.value)


def test_build_app_refuses_a_bad_context_before_building_anything(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="child_execution_type"):
        build_app({CONTEXT_KEY: {"child_execution_type": "FOO"}}, outdir=str(tmp_path))


def test_action_destinations_take_a_url_a_deploy_time_reference_or_the_ledger() -> None:
    destinations = {
        "crm": "https://crm.example.com/hooks",
        "local": "{{resolve:ssm:/docagent/local/ticket-api-url}}/tickets",
        "tickets": "ledger",
    }
    config = load_config({"actions": {"destinations": destinations}})
    assert config.actions.destinations == destinations


def test_max_concurrency_is_capped_by_the_model_quotas() -> None:
    # 5,500 quota tokens per document (1,500 in, 800 maxTokens burned down 5 times): 100,000 TPM carries 18
    # documents a minute (the 500 RPM do not bind); 18 a minute at 3 s each is 0.9 in flight: 1 child.
    tight = load_config({"max_concurrency": 10, "model_tokens_per_minute": 100_000})
    assert (tight.quota_concurrency, tight.effective_max_concurrency) == (1, 1)
    # Requests bind: 60 a minute at 10 s each is 10 in flight, 8 with headroom.
    by_requests = load_config(
        {"max_concurrency": 50, "model_requests_per_minute": 60, "seconds_per_document": 10}
    )
    assert by_requests.effective_max_concurrency == 8
    # Quotas that carry more than max_concurrency leave it; 0 ("service maximum") takes the quota bound.
    roomy = load_config({"max_concurrency": 10})
    assert roomy.quota_concurrency > 10 and roomy.effective_max_concurrency == 10
    assert load_config({"max_concurrency": 0}).effective_max_concurrency == roomy.quota_concurrency
    # The output burndown counts: 2,000,000 TPM at 5,500 tokens a document is 14 children, at 2,300 (a
    # model whose output burns 1:1) 41 (the 500 RPM bind: 500 x 3 / 60 x 0.8 = 20).
    assert roomy.quota_tokens_per_document == 1_500 + 800 * 5 and roomy.quota_concurrency == 14
    assert load_config({"model_output_token_burndown": 1}).quota_concurrency == 20


def test_documents_per_child_defaults_to_one_document_per_child() -> None:
    assert DocAgentConfig().documents_per_child == 1


def test_a_batch_that_fits_the_function_timeout_is_accepted() -> None:
    config = load_config(
        {"documents_per_child": 10, "document_budget_seconds": 6, "function_timeout_seconds": 60}
    )
    assert config.documents_per_child == 10


def test_a_batch_that_cannot_finish_in_the_function_timeout_is_refused_with_the_fix() -> None:
    with pytest.raises(ConfigError) as raised:
        load_config({"documents_per_child": 20, "document_budget_seconds": 6, "function_timeout_seconds": 60})
    message = str(raised.value)
    assert "120 s does not fit function_timeout_seconds 60" in message
    assert "lower documents_per_child to 10 or raise function_timeout_seconds to 120" in message


@pytest.mark.parametrize("documents_per_child", [0, 101])
def test_documents_per_child_outside_the_item_batcher_bounds_is_refused(documents_per_child: int) -> None:
    with pytest.raises(ConfigError, match="documents_per_child"):
        load_config({"documents_per_child": documents_per_child, "function_timeout_seconds": 900})


def test_the_default_timeout_gives_a_call_on_the_largest_document_its_whole_read_timeout() -> None:
    """A document near the model's context window is the slowest call: the first call of an invocation gets
    min(60 s, 70% of the time left), so the default function timeout leaves it the whole 60 s after the S3
    read and the hash of the largest document read (50 MB: ~0.5 s for a 4 MB PDF on the local cloud;
    docs/scale.md)."""
    config = load_config({})
    assert config.max_document_bytes == MAX_SOURCE_DOCUMENT_BYTES
    time_left_at_the_call = config.function_timeout_seconds - 5  # generous for reading and hashing
    assert READ_TIMEOUT_SHARE * time_left_at_the_call >= MAX_READ_TIMEOUT_SECONDS
