"""A drill's documents are uploaded several at once: every object arrives whole, and a failed upload is
raised."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError

from docagent.drills.uploads import put_objects
from tests.support import BUCKET


def test_every_object_arrives_with_its_body(cloud):
    s3 = boto3.client("s3")
    objects = [(f"incoming/up/{n:03d}.txt", f"document {n}".encode() * (n + 1)) for n in range(40)]
    put_objects(s3, BUCKET, objects)
    for key, body in objects:
        assert s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == body


def test_a_failed_upload_is_raised(cloud):
    with pytest.raises(ClientError, match="NoSuchBucket"):
        put_objects(boto3.client("s3"), "no-such-bucket", [("incoming/up/a.txt", b"a")])
