"""A job of 1,000,000 documents (docs/scale.md, "A million documents"), without a million S3 objects: the cap
is 1,000,000 (config and functions alike); one ListDocuments step over a million-document inbox's pages
writes a whole part of the items within its page bound, so the listing of a million is that step ~50 times,
its parts joinable by S3; the listing refuses the 1,000,001st document; and ``docagent start`` on a prefix of
a million documents lists them and reads a bounded sample, not a million HeadObjects."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pytest

from docagent.operations import sources
from docagent.operations.context import RefusedError
from docagent.operations.sources import HEAD_SAMPLE, Limits, head_sample, source_from_prefix
from functions import s3_json
from functions.errors import InvalidJobRequest
from functions.logic import list_documents
from functions.logic.list_documents import MAX_PAGES_PER_STEP, _list_pages
from functions.payloads.common import DEFAULT_ITEMS_PART_MIN_BYTES, MAX_DOCUMENTS_CAP
from functions.payloads.job import ListingPart
from functions.settings import load_settings
from stacks.config import ConfigError, load_config

MILLION = 1_000_000
PREFIX = "incoming/archive-2016/"
# S3 multipart upload: at most 10,000 parts (as of 2026-11, https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html).
S3_MAX_PARTS = 10_000
# A Standard execution's history (docs/scale.md "Execution history"): 25,000 events; ~7 a listing step.
HISTORY_EVENTS, EVENTS_PER_LISTING_STEP = 25_000, 7


def key_of(index: int) -> str:
    return f"{PREFIX}box-{index // 1000:04d}/scan-{index:07d}.pdf"


def versions_page(prefix: str, *, key_marker: str | None = None, max_keys: int = 1000, **_: Any) -> Any:
    """A page of a million-document versioned inbox, made up on the fly (ListObjectVersions' shape)."""
    first = 0 if key_marker is None else int(key_marker.rsplit("-", 1)[-1].removesuffix(".pdf")) + 1
    last = min(first + max_keys, MILLION)
    versions = [
        {
            "Key": key_of(i),
            "VersionId": f"v{i:032d}",
            "IsLatest": True,
            "Size": 180_000,
            "ETag": f'"{i:032x}"',
        }
        for i in range(first, last)
    ]
    more = last < MILLION
    return s3_json.VersionsPage(
        versions=versions,  # type: ignore[arg-type]
        next_key_marker=key_of(last - 1) if more else None,
        next_version_id_marker=f"v{last - 1:032d}" if more else None,
    )


def settings(max_documents: int = MILLION) -> Any:
    return load_settings(
        {
            "BUCKET_NAME": "docagent-test-bucket",
            "IDEMPOTENCY_TABLE_NAME": "docagent-idempotency",
            "REFERENCE_TABLE_NAME": "docagent-references",
            "MODEL_PROVIDER": "bedrock",
            "MODEL_ID": "fake-model",
            "CODE_VERSION": "test",
            "MAX_DOCUMENTS": str(max_documents),
        }
    )


def test_the_cap_is_a_million_in_the_config_and_the_functions():
    assert MAX_DOCUMENTS_CAP == MILLION
    assert load_config({"max_documents": MILLION}).max_documents == MILLION
    with pytest.raises(ConfigError, match="max_documents: Input should be less than or equal to 1000000"):
        load_config({"max_documents": MILLION + 1})
    assert settings().max_documents == MILLION


def test_one_listing_step_over_a_million_document_inbox_writes_a_whole_part(monkeypatch):
    monkeypatch.setattr(s3_json, "list_versions_page", versions_page)
    start = ListingPart(part=0, first_index=0, count=0, bytes=0, pages=0, complete=False, last=False)
    record, body = _list_pages(PREFIX, "inbox", start, b"", settings())
    # The step stopped at S3's minimum part size, well within its page bound: the part is complete.
    assert record.complete and not record.last and record.bytes == len(body) >= DEFAULT_ITEMS_PART_MIN_BYTES
    assert record.pages <= MAX_PAGES_PER_STEP and record.next_key_marker == key_of(record.count - 1)
    # So the listing of a million is ceil(1,000,000 / documents a part) such steps, one part each: parts S3
    # joins (at most 10,000), a parent history far from its 25,000 events, and the items the Map reads.
    parts = math.ceil(MILLION / record.count)
    assert 40 <= parts <= 60 and parts <= S3_MAX_PARTS
    assert parts * EVENTS_PER_LISTING_STEP < HISTORY_EVENTS // 10
    items_bytes = MILLION * len(body) / record.count
    print(f"a part: {record.count:,} documents, {record.pages} pages; a million: {parts} parts, "
          f"{items_bytes / 1e6:,.0f} MB of items")  # fmt: skip


def test_the_listing_refuses_the_document_after_the_millionth(monkeypatch):
    monkeypatch.setattr(s3_json, "list_versions_page", versions_page)
    near_the_end = ListingPart(
        part=49,
        first_index=MILLION - 500,
        count=0,
        bytes=0,
        pages=0,
        complete=False,
        last=False,
        next_key_marker=key_of(MILLION - 501),
        next_version_id_marker="v",
    )
    record, _ = _list_pages(PREFIX, "inbox", near_the_end, b"", settings())
    assert record.last and record.first_index + record.count == MILLION  # the millionth is listed
    with pytest.raises(InvalidJobRequest, match="more than MAX_DOCUMENTS=999999"):
        _list_pages(PREFIX, "inbox", near_the_end, b"", settings(MILLION - 1))
    assert list_documents.MAX_PAGES_PER_STEP == MAX_PAGES_PER_STEP


@dataclass
class FakeS3:
    """A prefix of ``documents`` documents for ``docagent start``: list_objects_v2 pages made up on the fly,
    and every HeadObject counted."""

    documents: int
    heads: int = 0

    def get_paginator(self, name: str) -> Any:
        assert name == "list_objects_v2"
        fake = self

        class Pages:
            def paginate(self, **_: Any) -> Any:
                for first in range(0, fake.documents, 1000):
                    last = min(first + 1000, fake.documents)
                    yield {"Contents": [{"Key": key_of(i), "Size": 180_000} for i in range(first, last)]}

        return Pages()

    def head_object(self, **_: Any) -> dict[str, Any]:
        self.heads += 1
        return {"ContentLength": 180_000}


@dataclass
class FakeContext:
    s3: FakeS3
    bucket: str = "docagent-jobs"

    def client(self, service: str) -> Any:
        assert service == "s3"
        return self.s3


def test_start_on_a_prefix_of_a_million_lists_them_and_reads_a_sample():
    s3 = FakeS3(MILLION)
    limits = Limits(max_document_bytes=4_500_000, max_documents=MILLION)
    source = source_from_prefix(FakeContext(s3), PREFIX, limits)  # type: ignore[arg-type]
    assert len(source.documents) == MILLION and source.documents[-1].size == 180_000
    assert s3.heads == HEAD_SAMPLE  # not a million HeadObjects from the operator's machine
    assert source.request_fields() == {"bucket": "docagent-jobs", "prefix": PREFIX}
    # one more than the deployed MAX_DOCUMENTS is refused before anything starts (at 2,000: the same code)
    small = Limits(max_document_bytes=4_500_000, max_documents=2_000)
    with pytest.raises(RefusedError, match="2001 documents is more than the deployed MAX_DOCUMENTS=2000"):
        source_from_prefix(FakeContext(FakeS3(2_001)), PREFIX, small)  # type: ignore[arg-type]


def test_a_small_prefix_is_read_in_full_and_a_large_one_evenly():
    keys = [key_of(i) for i in range(25_000)]
    assert head_sample(keys[: sources.HEAD_ALL_DOCUMENTS]) == keys[: sources.HEAD_ALL_DOCUMENTS]
    sample = head_sample(keys)
    assert len(sample) == HEAD_SAMPLE == len(set(sample)) and (sample[0], sample[-1]) == (keys[0], keys[-1])
