"""The S3 layout is a contract (docs/design.md): these keys are what the state machine, the local cloud and
the operators read."""

from __future__ import annotations

import fnmatch

import pytest
from botocore.exceptions import PaginationError

from functions import s3_json, storage
from tests.moto_state import put_straight
from tests.support import BUCKET


def test_s3_layout_matches_the_design():
    assert storage.request_key("j1") == "jobs/j1/request.json"
    assert storage.manifest_key("j1") == "jobs/j1/manifest.json"
    assert storage.items_key("j1") == "jobs/j1/items/items.jsonl"
    assert storage.items_part_key("j1", 3) == "jobs/j1/items/part-00003.jsonl"
    assert storage.listing_part_key("j1", 3) == "jobs/j1/listing/part-00003.json"
    assert storage.legacy_items_key("j1") == "jobs/j1/items.json"
    assert storage.result_key("j1", "d1") == "jobs/j1/results/d1.json"
    assert storage.model_call_key("j1", "d1", "c1") == "jobs/j1/model-calls/d1/c1.json"
    assert storage.report_key("j1") == "jobs/j1/report.json"
    assert storage.action_attempt_key("j1", "notify") == "jobs/j1/actions/notify/attempt.json"
    assert storage.action_done_key("j1", "notify") == "jobs/j1/actions/notify/done.json"
    assert storage.export_key("j1", "results", "csv") == "jobs/j1/exports/results/results.csv"
    assert storage.ledger_key("docagent-j1-notify") == "action-ledger/docagent-j1-notify.json"


def test_every_key_a_map_reads_its_items_from_is_in_the_workflow_grant():
    """The ItemReaders' keys (the documents Map's items or legacy items.json, the BatchJobs Map's parts) match
    the patterns the workflow role is granted (issue #50 B1: the batch parts were not)."""
    patterns = storage.map_item_key_patterns(storage.ANY_JOB)
    read = [storage.items_key("j1"), storage.items_part_key("j1", 2), storage.legacy_items_key("j1")]
    for key in [*read, storage.batch_parts_key("j1")]:
        assert any(fnmatch.fnmatchcase(key, pattern) for pattern in patterns), key
    assert not any(fnmatch.fnmatchcase(storage.batch_plan_key("j1"), pattern) for pattern in patterns)


def test_json_round_trip_and_missing_objects(cloud):
    s3_json.put_json("jobs/j1/x.json", {"b": 1, "a": [1, 2]})
    assert s3_json.get_json("jobs/j1/x.json") == {"a": [1, 2], "b": 1}
    assert s3_json.exists("jobs/j1/x.json")
    assert not s3_json.exists("jobs/j1/nothing.json")
    assert s3_json.get_json_or_none("jobs/j1/nothing.json") is None
    assert s3_json.get_manifest("j1") is None
    assert s3_json.get_result("j1", "d1") is None


def test_list_objects_paginates(cloud):
    for index in range(1003):  # straight into moto: 1,003 API puts would be slow
        put_straight(BUCKET, f"many/{index:05d}.json", b"{}")
    keys = [obj["Key"] for obj in s3_json.list_objects("many/")]
    assert len(keys) == 1003
    assert keys == sorted(keys)


class _RepeatingListing:
    """An S3 client whose listing says "truncated" with the same token every page."""

    def __init__(self) -> None:
        self.requests: list[dict[str, str]] = []

    def list_objects_v2(self, **params: str) -> dict[str, object]:
        self.requests.append(params)
        return {
            "Contents": [{"Key": f"k{len(self.requests)}"}],
            "IsTruncated": True,
            "NextContinuationToken": "t",
        }


def test_a_listing_that_repeats_its_continuation_token_fails_instead_of_looping():
    client = _RepeatingListing()
    listed = s3_json.list_objects("p/", bucket="b", client=client, start_after="p/a")
    with pytest.raises(PaginationError, match="the same continuation token twice"):
        [obj["Key"] for obj in listed]
    assert client.requests == [
        {"Bucket": "b", "Prefix": "p/", "StartAfter": "p/a"},
        {"Bucket": "b", "Prefix": "p/", "StartAfter": "p/a", "ContinuationToken": "t"},
    ]


def test_a_version_listing_goes_on_from_its_markers(cloud):
    for index in range(5):
        put_straight(BUCKET, f"v/{index}.txt", b"x")
    first = s3_json.list_versions_page("v/", max_keys=2)
    assert [version["Key"] for version in first.versions] == ["v/0.txt", "v/1.txt"]
    assert first.next_key_marker is not None
    rest = s3_json.list_versions_page(
        "v/", key_marker=first.next_key_marker, version_id_marker=first.next_version_id_marker, max_keys=10
    )
    assert [version["Key"] for version in rest.versions] == ["v/2.txt", "v/3.txt", "v/4.txt"]
    assert (rest.next_key_marker, rest.next_version_id_marker) == (None, None)  # the last page
