from __future__ import annotations

import pytest

from functions.errors import ConfigurationError
from functions.settings import ENV_VARS, get_settings


def test_settings_read_every_documented_variable():
    settings = get_settings()
    assert settings.bucket_name == "docagent-test-bucket"
    assert settings.model_provider == "bedrock"
    assert (settings.reference_table_name, settings.default_definition) == ("docagent-references", "invoices")
    assert settings.max_document_bytes == 16000
    assert settings.fault_injection_enabled is False
    assert set(ENV_VARS) == {
        "BUCKET_NAME", "IDEMPOTENCY_TABLE_NAME", "REFERENCE_TABLE_NAME", "MODEL_PROVIDER", "MODEL_ID",
        "CODE_VERSION", "MAX_DOCUMENT_BYTES", "MAX_DOCUMENTS", "IDEMPOTENCY_TTL_SECONDS",
        "ACTIONS_ALLOWED", "FAULT_INJECTION_ENABLED",
        "MODEL_MAX_TOKENS", "MODEL_TEMPERATURE", "MODEL_BREAKER_SECONDS", "SOURCE_LOCATIONS",
        "ITEMS_PART_MIN_BYTES", "LISTING_PAGE_SIZE", "DEFAULT_DEFINITION", "DEFAULT_MAX_COST_USD",
        "BATCH_ROLE_ARN", "BATCH_RECORDS_PER_JOB", "MODELS_ALLOWED",
    }  # fmt: skip
    assert settings.models_allowed is None  # unset: not checked before a call


def test_models_allowed_is_a_json_list_of_model_ids(env):
    env.setenv("MODELS_ALLOWED", '["a.model-v1:0", "b.model-v1:0"]')
    assert get_settings().models_allowed == ["a.model-v1:0", "b.model-v1:0"]
    get_settings.cache_clear()
    env.setenv("MODELS_ALLOWED", '"a.model-v1:0"')
    with pytest.raises(ConfigurationError, match="MODELS_ALLOWED"):
        get_settings()


def test_missing_variable_fails_fast_naming_it(env):
    env.delenv("BUCKET_NAME")
    with pytest.raises(ConfigurationError, match="BUCKET_NAME is not set"):
        get_settings()


def test_invalid_variable_is_named_with_the_reason(env):
    env.setenv("MAX_DOCUMENT_BYTES", "lots")
    env.setenv("MODEL_PROVIDER", "gpt")
    with pytest.raises(ConfigurationError) as raised:
        get_settings()
    message = str(raised.value)
    assert "MAX_DOCUMENT_BYTES" in message
    assert "MODEL_PROVIDER" in message
    assert "BUCKET_NAME" not in message


def test_the_actions_allow_list_is_read_as_json(env):
    assert get_settings().actions_allowed.destinations == {"tickets": "ledger"}
    env.setenv("ACTIONS_ALLOWED", '{"destinations": {}, "hostz": []}')
    get_settings.cache_clear()
    with pytest.raises(ConfigurationError, match="ACTIONS_ALLOWED"):
        get_settings()


def test_settings_are_cached_until_the_cache_is_cleared(env):
    assert get_settings().model_id == "fake-model"
    env.setenv("MODEL_ID", "anthropic.claude-3-haiku-20240307-v1:0")
    assert get_settings().model_id == "fake-model"
    get_settings.cache_clear()
    assert get_settings().model_id == "anthropic.claude-3-haiku-20240307-v1:0"
