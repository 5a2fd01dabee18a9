"""Publishing a definition (a version written once under its hash, the current pointer moved) and PrepareJob
pinning it: the request's definition, else DEFAULT_DEFINITION, at its current version; an unpublished one is
refused before anything is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import boto3
import pytest

from docagent.kit import registry
from functions import s3_json, storage
from functions.definition.job_spec import DefinitionPointer, short_version
from functions.errors import InvalidJobRequest
from functions.logic.prepare_job import prepare_job
from functions.payloads.job import JobVersions
from functions.settings import get_settings
from tests.fakes import FakeLambdaContext
from tests.support import BUCKET, PREFIX, list_and_seal, prepare, seed_documents, unpublish_definitions

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "invoices"


@pytest.fixture(autouse=True)
def _nothing_published(cloud: None) -> None:
    """These tests publish themselves: remove the default definition the unit cloud publishes."""
    unpublish_definitions()


def _publish(folder: Path) -> registry.Published:
    return registry.publish(boto3.client("s3"), BUCKET, registry.checked_bundle(folder), by="tester")


def _changed_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "invoices"
    shutil.copytree(EXAMPLE, copy)
    prompt = copy / "classes" / "invoice.prompt.txt"
    prompt.write_text(prompt.read_text() + "\nBe brief.\n")
    return copy


def test_a_version_is_written_once_and_the_pointer_keeps_earlier_ones(cloud: None, tmp_path: Path) -> None:
    first = _publish(EXAMPLE)
    assert (first.written, first.moved) == (True, True)
    again = _publish(EXAMPLE)
    assert (again.written, again.moved) == (False, False)  # the same files: nothing changes

    second = _publish(_changed_copy(tmp_path))
    assert (second.written, second.moved) == (True, True)
    assert second.pointer.sha256 != first.pointer.sha256
    assert second.pointer.previous == [first.pointer.sha256]
    back = _publish(EXAMPLE)  # an earlier version made current again: its bundle is not rewritten
    assert (back.written, back.moved) == (False, True)
    assert back.pointer.previous == [second.pointer.sha256]  # each version once, the current one apart

    s3 = boto3.client("s3")
    stored = registry.get_bundle(s3, BUCKET, "invoices", first.pointer.sha256)
    assert stored is not None and stored.sha256 == first.pointer.sha256
    assert registry.names(s3, BUCKET) == ["invoices"]


def test_a_job_pins_the_current_version_of_the_default_definition(
    cloud: None, env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    env.setenv("DEFAULT_DEFINITION", "invoices")
    get_settings.cache_clear()
    published = _publish(EXAMPLE)
    seed_documents(2)

    first = prepare("job-pin-1")
    _publish(_changed_copy(tmp_path))
    second = prepare("job-pin-2")

    sha = published.pointer.sha256
    assert first.versions.definition == "invoices"
    assert first.versions.definition_sha256 == sha
    assert first.versions.prompt_version == f"invoices@{short_version(sha)}"
    assert first.versions.prompt_sha256 == sha
    assert second.versions.definition_sha256 not in {None, sha}
    manifest = s3_json.get_manifest("job-pin-1")
    assert manifest is not None and manifest.versions == first.versions  # the manifest holds the pin


def test_the_pin_is_taken_when_the_job_is_prepared_not_when_it_is_sealed(
    cloud: None, env: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    env.setenv("DEFAULT_DEFINITION", "invoices")
    get_settings.cache_clear()
    published = _publish(EXAMPLE)
    seed_documents(1)
    request = {"job_id": "job-pin-3", "prefix": PREFIX}
    started = prepare_job({"request": request, "execution_name": "job-pin-3"}, FakeLambdaContext())
    _publish(_changed_copy(tmp_path))  # published while the job lists its documents

    job = list_and_seal(started.job_id, started.listing)

    assert job.versions.definition_sha256 == published.pointer.sha256


def test_a_request_naming_an_unpublished_definition_is_refused_before_anything_is_written(
    cloud: None,
) -> None:
    seed_documents(1)
    with pytest.raises(InvalidJobRequest, match="docagent definition publish"):
        prepare("job-pin-4", definition="contracts")
    assert s3_json.get_json_or_none(storage.request_key("job-pin-4")) is None


def test_a_request_naming_no_definition_without_a_default_is_refused(
    cloud: None, env: pytest.MonkeyPatch
) -> None:
    env.setenv("DEFAULT_DEFINITION", "")
    get_settings.cache_clear()
    seed_documents(1)
    with pytest.raises(InvalidJobRequest, match="names no job definition"):
        prepare("job-pin-5")
    assert s3_json.get_json_or_none(storage.request_key("job-pin-5")) is None


def test_the_pointer_is_a_definition_pointer(cloud: None) -> None:
    _publish(EXAMPLE)
    raw = json.loads(
        boto3.client("s3")
        .get_object(Bucket=BUCKET, Key=storage.definition_current_key("invoices"))["Body"]
        .read()
    )
    pointer = DefinitionPointer.model_validate(raw)
    assert pointer.published_by == "tester"


def test_a_redrive_keeps_the_pinned_version_and_needs_its_bundle(cloud: None, tmp_path: Path) -> None:
    s3 = boto3.client("s3")
    first = _publish(EXAMPLE).pointer.sha256
    versions = JobVersions(
        model_id="m",
        prompt_version=f"invoices@{short_version(first)}",
        prompt_sha256=first,
        code_version="c",
        created_at="2026-12-01T00:00:00Z",
        definition="invoices",
        definition_sha256=first,
    )
    pinned = registry.pinned_view(s3, BUCKET, versions)
    assert pinned is not None and (pinned["present"], pinned["current"]) == (True, True)
    assert registry.definition_notes(pinned) == (None, None)

    _publish(_changed_copy(tmp_path))
    pinned = registry.pinned_view(s3, BUCKET, versions)
    refusal, note = registry.definition_notes(pinned)
    assert refusal is None and note is not None and f"invoices@{short_version(first)}" in note

    s3.delete_object(Bucket=BUCKET, Key=storage.definition_key("invoices", first))
    refusal, _ = registry.definition_notes(registry.pinned_view(s3, BUCKET, versions))
    assert refusal is not None and "docagent definition publish" in refusal
    assert registry.pinned_view(s3, BUCKET, None) is None
