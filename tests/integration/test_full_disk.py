"""The local cloud on a disk that fills up while several clients write, then gets room again, then dies
(``kill -9``): every write answered 200 is there after the restart, none answered 500 ever was.

The full disk is an injected write error (deterministic, no loop device): the cloud runs behind a wrapper
whose ``os.write`` on the journal writes half of a record and raises ENOSPC, every other time, while a
flag file exists (what a nearly full disk does to concurrent appends: some fit, some are cut short); or
whose ``os.fdatasync`` on the journal fails once (the journal then refuses every write until a restart).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from docagent.drills.cloud_crash import CloudProcess
from docagent.localcloud.server import REGION, free_port

FULL_DISK_CLOUD = """
import errno, itertools, os, sys
from pathlib import Path

flag = Path(sys.argv[1])
real_write = os.write
calls = itertools.count()


real_fdatasync = os.fdatasync


def journal(fd):
    return os.readlink(f"/proc/self/fd/{fd}").endswith("journal.log")


def write(fd, data):
    if flag.exists() and flag.read_text() == "" and journal(fd) and next(calls) % 2 == 0:
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")
    return real_write(fd, data)


def fdatasync(fd):
    if flag.exists() and flag.read_text() == "sync" and journal(fd):
        flag.unlink()  # once: a later sync succeeds, as after a transient error on a network disk
        raise OSError(errno.ENOSPC, "No space left on device")
    return real_fdatasync(fd)


os.write = write
os.fdatasync = fdatasync
from docagent.cli import main

sys.exit(main(sys.argv[2:]))
"""
BUCKET = "full-disk"
TABLE = "full-disk"
WRITERS = 4
EACH = 5


@pytest.fixture
def cloud(tmp_path: Path) -> Iterator[CloudProcess]:
    flag = tmp_path / "disk-full"
    process = CloudProcess(
        tmp_path, free_port(), time_scale=0.25, launcher=(sys.executable, "-c", FULL_DISK_CLOUD, str(flag))
    )
    yield process
    process.stop()


def _client(cloud: CloudProcess, service: str) -> Any:
    session = boto3.session.Session(
        aws_access_key_id="local", aws_secret_access_key="local", region_name=REGION
    )
    no_retries = Config(retries={"max_attempts": 1, "mode": "standard"})  # each answer is the first one
    return session.client(service, endpoint_url=cloud.endpoint, config=no_retries)


def _write(cloud: CloudProcess, phase: str) -> dict[str, str | None]:
    """WRITERS clients at once, EACH object and item each: key -> the object's version id (None: refused)."""
    s3, dynamodb = _client(cloud, "s3"), _client(cloud, "dynamodb")

    def writer(number: int) -> dict[str, str | None]:
        answers: dict[str, str | None] = {}
        for index in range(EACH):
            key = f"{phase}-{number}-{index}"
            try:
                answers[key] = s3.put_object(Bucket=BUCKET, Key=key, Body=key.encode())["VersionId"]
            except ClientError as error:
                assert error.response["ResponseMetadata"]["HTTPStatusCode"] == 500, error
                answers[key] = None
            try:
                dynamodb.put_item(TableName=TABLE, Item={"id": {"S": f"item-{key}"}})
                answers[f"item-{key}"] = "200"
            except ClientError as error:
                assert error.response["ResponseMetadata"]["HTTPStatusCode"] == 500, error
                answers[f"item-{key}"] = None
        return answers

    with ThreadPoolExecutor(WRITERS) as pool:
        return {key: answer for part in pool.map(writer, range(WRITERS)) for key, answer in part.items()}


def _visible(cloud: CloudProcess) -> dict[str, str]:
    """What the cloud shows: object key -> version id, item id -> "200"."""
    s3, dynamodb = _client(cloud, "s3"), _client(cloud, "dynamodb")
    versions = s3.list_object_versions(Bucket=BUCKET)["Versions"]
    shown = {version["Key"]: version["VersionId"] for version in versions}
    assert all(s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == key.encode() for key in shown), (
        "every object holds what was written"
    )
    items = dynamodb.scan(TableName=TABLE)["Items"]
    return shown | {item["id"]["S"]: "200" for item in items}


def _start_with_bucket_and_table(cloud: CloudProcess) -> None:
    cloud.start(fresh=True)
    s3, dynamodb = _client(cloud, "s3"), _client(cloud, "dynamodb")
    s3.create_bucket(Bucket=BUCKET)
    s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    dynamodb.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


def _split(answers: dict[str, str | None]) -> tuple[dict[str, str], set[str]]:
    accepted = {key: answer for key, answer in answers.items() if answer is not None}
    return accepted, {key for key, answer in answers.items() if answer is None}


def test_full_disk_then_room_then_kill_keeps_every_200_and_no_500_and_a_failed_sync_refuses_until_a_restart(
    cloud: CloudProcess, tmp_path: Path
) -> None:
    """Both faults on one cloud (one start and two restarts; two clouds until 2026-12-07): the full disk,
    then, on the cloud restarted from that journal, the failed sync."""
    _start_with_bucket_and_table(cloud)
    answers = _write(cloud, "before")
    (tmp_path / "disk-full").touch()
    full = _write(cloud, "full")
    (tmp_path / "disk-full").unlink()  # room again
    answers |= full | _write(cloud, "after")

    accepted, refused = _split(answers)
    assert refused and any(full[key] for key in full), "the full disk refused some writes and took others"
    assert refused <= set(full), "only writes on the full disk were refused"
    assert _visible(cloud) == accepted, "while it runs: every 200 is visible (same version), no 500 is"

    cloud.kill()
    printed = cloud.start()

    assert "set aside" not in printed and "torn" not in printed, printed
    assert _visible(cloud) == accepted, "after kill -9 and restart: every 200 is there, no 500 is"

    # A failed disk sync: the journal refuses every write until a restart, and keeps only the 200s.
    answers |= _write(cloud, "synced")
    (tmp_path / "disk-full").write_text("sync")
    failed = _write(cloud, "failed")
    assert not (tmp_path / "disk-full").exists(), "the sync failed once"
    assert not any(failed.values()), "the journal refuses every write after a failed sync"
    accepted, _ = _split(answers)
    assert _visible(cloud) == accepted, "what was refused is not visible"

    cloud.kill()
    cloud.start()

    answers |= failed | _write(cloud, "restarted")
    accepted, refused_now = _split(answers)
    assert refused_now == refused | set(failed)
    assert _visible(cloud) == accepted, "after the restart: every 200 is there, no 500 is, writes work again"
