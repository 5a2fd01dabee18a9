"""Whether an S3 request names its bucket in the host, decided once per host (localcloud/s3/path_style.py):
moto's own answer for every kind of host and setting, asked of moto once per host."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from moto import settings
from moto.core.request import Request

from docagent.localcloud.s3 import path_style

MOTO = path_style._moto_subdomain_based_buckets
HOSTS = [
    "127.0.0.1:5000",
    "localhost:5000",
    "documents.s3.amazonaws.com",
    "s3.amazonaws.com",
    "s3.us-east-1.amazonaws.com",
    "documents.s3.us-east-1.amazonaws.com",
    "my-cloud:5000",
    "[::1]:5000",
    "custom.example.com",
]


def _request(host: str | None) -> Request:
    headers = [("Host", host)] if host else []
    request = Request.from_values(
        base_url="http://fallback.s3.amazonaws.com", path="/documents/key", headers=headers
    )
    if not host:
        request.environ.pop("HTTP_HOST", None)
    return request


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    hosts: list[str] = []

    def counted(request: Request) -> bool:
        hosts.append(str(request.headers.get("Host")))
        return bool(MOTO(request))

    monkeypatch.setattr(path_style, "_moto_subdomain_based_buckets", counted)
    monkeypatch.setattr(path_style, "_answers", {})
    yield hosts


@pytest.mark.parametrize("custom", [None, "http://custom.example.com"])
def test_each_host_gets_moto_s_answer_asked_once(
    custom: str | None, asked: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if custom is None:
        monkeypatch.delenv("MOTO_S3_CUSTOM_ENDPOINTS", raising=False)
    else:
        monkeypatch.setenv("MOTO_S3_CUSTOM_ENDPOINTS", custom)
    expected = [bool(MOTO(_request(host))) for host in HOSTS]
    assert True in expected and False in expected  # both kinds of host are here
    for _ in range(3):
        assert [path_style.subdomain_based_buckets(_request(host)) for host in HOSTS] == expected
    assert asked == HOSTS  # once each


def test_the_custom_endpoints_and_the_ignore_setting_are_read_at_each_call(
    asked: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    request = _request("custom.example.com")
    monkeypatch.delenv("MOTO_S3_CUSTOM_ENDPOINTS", raising=False)
    assert path_style.subdomain_based_buckets(request) is True
    monkeypatch.setenv("MOTO_S3_CUSTOM_ENDPOINTS", "http://custom.example.com")
    assert path_style.subdomain_based_buckets(request) is False
    monkeypatch.setattr(settings, "S3_IGNORE_SUBDOMAIN_BUCKETNAME", True)
    assert path_style.subdomain_based_buckets(_request("documents.s3.amazonaws.com")) is False


def test_a_request_without_a_host_is_answered_by_moto_each_time(asked: list[str]) -> None:
    for _ in range(2):
        assert path_style.subdomain_based_buckets(_request(None)) is True  # from its URL's host
    assert len(asked) == 2
