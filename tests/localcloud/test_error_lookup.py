"""moto builds a service's table of error shapes once, not for every error it answers
(docagent/localcloud/error_lookup.py), and the errors it answers are the same."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.core import errors

from docagent.localcloud import error_lookup


def missing_key_errors(times: int) -> list[dict[str, Any]]:
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="error-lookup")
        found = []
        for _ in range(times):
            with pytest.raises(ClientError) as raised:
                s3.get_object(Bucket="error-lookup", Key="not-there")
            found.append(
                {
                    **raised.value.response["Error"],
                    "status": raised.value.response["ResponseMetadata"]["HTTPStatusCode"],
                }
            )
        return found


def test_each_services_error_table_is_built_once_and_answers_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[str] = []
    create = errors.ErrorLookupFactory._create_error_lut

    def counting(service_model: Any) -> errors.ErrorLookup:
        built.append(service_model.service_name)
        return create(service_model)

    monkeypatch.setattr(errors.ErrorLookupFactory, "_create_error_lut", staticmethod(counting))
    # moto's own __init__ (a cache per factory), whether or not a local cloud installed ours already
    monkeypatch.setattr(
        errors.ErrorLookupFactory, "__init__", lambda factory: setattr(factory, "_error_lut_cache", {})
    )
    before = missing_key_errors(3)
    assert built.count("s3") == 3, "moto alone: one table per error answered"

    built.clear()
    monkeypatch.setattr(error_lookup, "_SHARED", {})
    error_lookup.install()
    after = missing_key_errors(3)
    assert built.count("s3") == 1
    assert after == before and after[0]["Code"] == "NoSuchKey" and after[0]["status"] == 404
