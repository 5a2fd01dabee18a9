"""Published definitions in a deployment's job bucket (docs/design.md, S3 layout): each version written once
under its content hash (definitions/{name}/versions/{sha}.json), and the pointer new jobs pin
(definitions/{name}/current.json). Publishing needs no deploy: a definition is data the functions read."""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from docagent import project
from docagent.kit.loader import DefinitionInvalid, read_bundle
from docagent.kit.validate import validate
from functions import s3_json, storage
from functions.actions.allowed import AllowedTargets
from functions.definition.job_spec import (
    DEFINITION_FILE,
    DefinitionBundle,
    DefinitionPointer,
    canonical_json,
    short_version,
)
from functions.payloads.common import utc_now
from functions.payloads.job import JobVersions

EXAMPLES_DIR = "examples"
EXAMPLE_PUBLISHER = "docagent local deploy"  # published_by of the examples a local deploy publishes
PREVIOUS_KEPT = 50  # versions a pointer lists as earlier ones (every version stays in S3)


@dataclass(frozen=True)
class Published:
    """What one publish did: ``written`` (a new version's bundle), ``moved`` (the pointer now names it)."""

    bundle: DefinitionBundle
    pointer: DefinitionPointer
    written: bool
    moved: bool


def checked_bundle(
    folder: str | Path,
    allowed: AllowedTargets | None = None,
    models_allowed: list[str] | None = None,
    *,
    calibrating: bool = False,
) -> DefinitionBundle:
    """The folder's bundle, or DefinitionInvalid listing every problem (validate's, one line each); against
    the deployment's action targets and models when given (``calibrating``: validate's)."""
    problems = validate(folder, allowed, models_allowed, calibrating=calibrating)
    if problems:
        raise DefinitionInvalid(Path(folder), [problem.line() for problem in problems])
    return read_bundle(folder)


def get_pointer(s3: Any, bucket: str, name: str) -> DefinitionPointer | None:
    raw = s3_json.get_json_or_none(storage.definition_current_key(name), bucket=bucket, client=s3)
    return None if raw is None else DefinitionPointer.model_validate(raw)


def get_bundle(s3: Any, bucket: str, name: str, sha256: str) -> DefinitionBundle | None:
    raw = s3_json.get_json_or_none(storage.definition_key(name, sha256), bucket=bucket, client=s3)
    return None if raw is None else DefinitionBundle.model_validate(raw)


def current_bundle(s3: Any, bucket: str, name: str) -> DefinitionBundle | None:
    """The version of definition ``name`` new jobs pin, or None when it is not published."""
    pointer = get_pointer(s3, bucket, name)
    return None if pointer is None else get_bundle(s3, bucket, name, pointer.sha256)


def _put_once(s3: Any, bucket: str, key: str, body: bytes) -> bool:
    """Write ``key`` unless it exists (IfNoneMatch: a version is written once); False when it existed."""
    try:
        s3.put_object(Bucket=bucket, Key=key, Body=body, ContentType="application/json", IfNoneMatch="*")
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") in {
            "PreconditionFailed",
            "ConditionalRequestConflict",
        }:
            return False
        raise
    return True


def publish(s3: Any, bucket: str, bundle: DefinitionBundle, *, by: str | None = None) -> Published:
    """Put the bundle (once) and point the definition's current version at it; the same files again change
    nothing."""
    sha = bundle.sha256
    body = canonical_json(bundle.model_dump(mode="json", by_alias=True))
    written = _put_once(s3, bucket, storage.definition_key(bundle.name, sha), body)
    current = get_pointer(s3, bucket, bundle.name)
    if current is not None and current.sha256 == sha:
        return Published(bundle=bundle, pointer=current, written=written, moved=False)
    previous = ([current.sha256, *current.previous] if current is not None else [])[:PREVIOUS_KEPT]
    pointer = DefinitionPointer(
        name=bundle.name,
        sha256=sha,
        published_at=utc_now(),
        published_by=by or getpass.getuser(),
        previous=[version for version in previous if version != sha],
    )
    s3_json.put_json(storage.definition_current_key(bundle.name), pointer, bucket=bucket, client=s3)
    return Published(bundle=bundle, pointer=pointer, written=written, moved=True)


def publish_example(s3: Any, bucket: str, name: str) -> Published | None:
    """The deployment's default definition, when it is one of the project's examples (examples/NAME): what a
    local deploy does so the default works out of the box. A version someone else published stays current;
    None when there is no such example or it was left as it is."""
    folder = project.ROOT / EXAMPLES_DIR / name
    if not (folder / DEFINITION_FILE).is_file():
        return None
    current = get_pointer(s3, bucket, name)
    if current is not None and current.published_by != EXAMPLE_PUBLISHER:
        return None
    return publish(s3, bucket, checked_bundle(folder), by=EXAMPLE_PUBLISHER)


def names(s3: Any, bucket: str) -> list[str]:
    """The published definitions' names (those with a current version)."""
    found: list[str] = []
    paginator = s3.get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=bucket, Prefix=storage.DEFINITIONS_ROOT, Delimiter="/"):
        for prefix in page.get("CommonPrefixes", []):
            found.append(prefix["Prefix"][len(storage.DEFINITIONS_ROOT) :].rstrip("/"))
    return sorted(found)


def pinned_view(s3: Any, bucket: str, versions: JobVersions | None) -> dict[str, Any] | None:
    """A job's pinned definition as inspect and redrive show it: ``{"name", "sha256", "version", "present"
    (its bundle is in the bucket), "current_sha256", "current" (new jobs would pin the same)}``; None for a
    job without a definition."""
    if versions is None or versions.definition is None or versions.definition_sha256 is None:
        return None
    name, sha = versions.definition, versions.definition_sha256
    pointer = get_pointer(s3, bucket, name)
    present = get_bundle(s3, bucket, name, sha) is not None
    return {
        "name": name,
        "sha256": sha,
        "version": label(name, sha),
        "present": present,
        "current_sha256": pointer.sha256 if pointer else None,
        "current": pointer is not None and pointer.sha256 == sha,
    }


def definition_notes(pinned: dict[str, Any] | None) -> tuple[str | None, str | None]:
    """(why a redrive is refused, what it warns of) for a job's pinned definition (pinned_view): a redrive
    keeps the pinned version, so its bundle must be there; a newer current version is only news."""
    if not pinned:
        return None, None
    if not pinned["present"]:
        key = storage.definition_key(pinned["name"], pinned["sha256"])
        return (
            f"the job's pinned definition {pinned['version']} is not in the bucket ({key}): publish the same "
            "files again (`docagent definition publish PATH` writes that version back), then redrive",
            None,
        )
    if not pinned["current"]:
        return None, (
            f"the job keeps its pinned definition {pinned['version']}; the current version of "
            f"{pinned['name']} differs (new jobs use it)"
        )
    return None, None


def label(name: str, sha256: str) -> str:
    """How a pinned version is shown: ``invoices@3f2a9c01b7de``."""
    return f"{name}@{short_version(sha256)}"
