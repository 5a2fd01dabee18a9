"""S3 listings by prefix over the sorted key index answer exactly what moto's full scan answers."""

from __future__ import annotations

import itertools
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.s3.models import s3_backends

from docagent.localcloud.s3 import key_index as s3_key_index

ACCOUNT = "123456789012"
PREFIXES = ["", "a/", "a/b", "a/b/", "b/", "jobs/j1/", "jobs/j1/calls/d00", "zz", "nothing/"]


@pytest.fixture
def buckets() -> Any:
    s3_key_index.install()
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        for bucket in ("plain", "versioned"):
            client.create_bucket(Bucket=bucket)
        client.put_bucket_versioning(Bucket="versioned", VersioningConfiguration={"Status": "Enabled"})
        names = [f"a/{i}" for i in range(7)] + [f"a/b/{i}.json" for i in range(5)] + ["b/x", "b/y/z", "zz"]
        names += [f"jobs/j1/calls/d{i:03d}/c{j}" for i in range(12) for j in range(2)]
        for bucket in ("plain", "versioned"):
            for name in names:
                client.put_object(Bucket=bucket, Key=name, Body=b"1")
            for name in names[::4]:  # a second version (or an overwrite)
                client.put_object(Bucket=bucket, Key=name, Body=b"2")
            for name in names[1::5]:  # a delete marker (or a delete)
                client.delete_object(Bucket=bucket, Key=name)
        client.put_object(Bucket="plain", Key="a/late", Body=b"3")  # added after the index was built
        yield client, s3_backends[ACCOUNT]["aws"]


def _names(result: Any) -> Any:
    keys, folders, truncated, marker = result
    return [key.name for key in keys], list(folders), truncated, marker


def _versions(result: Any) -> Any:
    versions, prefixes, markers, next_key, next_version = result
    listed = [(v.name, v.version_id, v.is_latest) for v in versions]
    deleted = [(m.name, m.version_id, m.is_latest) for m in markers]
    return listed, list(prefixes), deleted, next_key, next_version


def test_object_listings_match_moto_for_every_prefix_delimiter_and_page(buckets):
    client, backend = buckets
    client.list_objects_v2(Bucket="plain", Prefix="a/")  # builds the index before the next change
    client.put_object(Bucket="plain", Key="a/after-index", Body=b"4")
    client.delete_object(Bucket="plain", Key="a/0")
    for name in ("plain", "versioned"):
        bucket = backend.get_bucket(name)
        for prefix, delimiter, marker, max_keys in itertools.product(
            PREFIXES, [None, "/"], [None, "a/3", "jobs/j1/calls/d005/c0"], [None, 1, 3, 1000]
        ):
            arguments = (bucket, prefix, delimiter, marker, max_keys)
            expected = s3_key_index._original_list_objects(backend, *arguments)
            assert _names(backend.list_objects(*arguments)) == _names(expected)


def test_v2_listings_match_moto_from_every_start_and_token(buckets):
    client, backend = buckets
    client.put_object(Bucket="plain", Key="a/after-index", Body=b"4")
    for name in ("plain", "versioned"):
        bucket = backend.get_bucket(name)
        for prefix, delimiter, start_after, max_keys in itertools.product(
            PREFIXES,
            [None, "/"],
            [None, "a/3", "a/b/2.json", "jobs/j1/calls/d005/c0", "a/9"],
            [0, 1, 3, 1000],
        ):
            arguments = (bucket, prefix, delimiter, None, start_after, max_keys)
            expected = s3_key_index._original_list_objects_v2(backend, *arguments)
            listed = backend.list_objects_v2(*arguments)
            assert [k.name if hasattr(k, "name") else k for k in listed[0]] == [
                k.name if hasattr(k, "name") else k for k in expected[0]
            ]
            assert listed[1] == expected[1]
    # Page by page with continuation tokens: every key under the prefix once, in order.
    pages, token, seen = 0, None, []
    while True:
        answer = client.list_objects_v2(
            Bucket="plain", Prefix="jobs/j1/", MaxKeys=5, **({"ContinuationToken": token} if token else {})
        )
        seen += [item["Key"] for item in answer.get("Contents", [])]
        pages += 1
        if not answer.get("IsTruncated"):
            break
        token = answer["NextContinuationToken"]
    everything = client.list_objects_v2(Bucket="plain", Prefix="jobs/j1/", MaxKeys=1000)["Contents"]
    assert seen == [item["Key"] for item in everything] and pages == -(-len(everything) // 5) > 1


def test_version_listings_match_moto_page_by_page(buckets):
    _, backend = buckets
    for name, prefix, delimiter, max_keys in itertools.product(
        ("plain", "versioned"), PREFIXES, [None, "/"], [1, 2, 5, 1000]
    ):
        key_marker, version_marker, pages = None, None, 0
        while True:
            arguments = (name, delimiter, key_marker, max_keys, prefix, version_marker)
            expected = _versions(s3_key_index._original_list_object_versions(backend, *arguments))
            assert _versions(backend.list_object_versions(*arguments)) == expected
            key_marker, version_marker = expected[3], expected[4]
            pages += 1
            if key_marker is None or pages > 60:
                break


def test_paging_through_a_prefix_with_the_aws_client_lists_each_key_once(buckets):
    client, _ = buckets
    paginator = client.get_paginator("list_objects_v2")
    pages = paginator.paginate(Bucket="plain", Prefix="jobs/j1/calls/", PaginationConfig={"PageSize": 5})
    listed = [obj["Key"] for page in pages for obj in page.get("Contents", [])]
    deleted = {f"jobs/j1/calls/d{i:03d}/c{j}" for i in range(12) for j in range(2)} - set(listed)
    assert listed == sorted(listed) and len(listed) == len(set(listed))
    assert len(listed) + len(deleted) == 24 and len(deleted) == 5
