"""Uploads of a drill's documents, several at once.

The local cloud answers a PutObject only once its journal record is on disk, and the records that
concurrent requests write meanwhile share one ``fdatasync`` (group commit, in
docagent/localcloud/state/persistence.py).
One upload after another pays a sync each; eight at a time share them, and the demo's seed phase
(200 documents) no longer waits for 200 syncs in a row (docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

UPLOADS_AT_ONCE = 8  # below botocore's default pool of 10 connections per client


def put_objects(s3: Any, bucket: str, objects: Sequence[tuple[str, bytes]]) -> None:
    """PutObject of every ``(key, body)``; the first failure is raised once every upload has ended."""
    with ThreadPoolExecutor(max_workers=UPLOADS_AT_ONCE, thread_name_prefix="upload") as pool:
        futures = [pool.submit(s3.put_object, Bucket=bucket, Key=key, Body=body) for key, body in objects]
    for future in futures:
        future.result()
