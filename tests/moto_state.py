"""A copy of moto's in-process S3 and DynamoDB state, taken once and put back before each test that needs it.

Building the unit tests' cloud (a bucket, two tables, 50 reference rows, a published definition) through the
APIs costs ~20 request round trips, ~40 ms a test; putting back a copy taken after the first build costs ~2
ms. The copy is moto's own pickled form of its backends (moto's S3 keys pickle their bodies, see
``moto.s3.models.FakeKey.__getstate__``), so each test gets objects of its own: what one test writes never
reaches the next. tests/unit/test_moto_state.py checks that a restored cloud answers as the built one did.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from moto.core import DEFAULT_ACCOUNT_ID
from moto.dynamodb.models import dynamodb_backends
from moto.s3.models import s3_backends

T = TypeVar("T")

# moto keeps S3 in one backend per partition; DynamoDB per Region.
S3_PARTITION = "aws"


@dataclass(frozen=True)
class MotoState:
    """The pickled S3 and DynamoDB backends of moto's default account, and S3's bucket-to-account map."""

    region: str
    blob: bytes

    @classmethod
    def capture(cls, region: str) -> MotoState:
        state = (
            s3_backends[DEFAULT_ACCOUNT_ID][S3_PARTITION].__dict__,
            dynamodb_backends[DEFAULT_ACCOUNT_ID][region].__dict__,
            dict(s3_backends.bucket_accounts),
        )
        return cls(region, pickle.dumps(state))

    def restore(self) -> None:
        """Put the copy back into a fresh mock (inside ``mock_aws``, before anything else is created)."""
        s3, dynamodb, bucket_accounts = pickle.loads(self.blob)
        s3_backends[DEFAULT_ACCOUNT_ID][S3_PARTITION].__dict__.update(s3)
        dynamodb_backends[DEFAULT_ACCOUNT_ID][self.region].__dict__.update(dynamodb)
        s3_backends.bucket_accounts.update(bucket_accounts)


def put_straight(bucket: str, key: str, body: bytes) -> None:
    """An object put straight into moto's S3 backend: no botocore request, no moto response (about a tenth of
    the CPU of a PutObject), for a test's seed; what the code under test reads of it goes through the API."""
    s3_backends[DEFAULT_ACCOUNT_ID][S3_PARTITION].put_object(bucket, key, body)


def environment() -> frozenset[tuple[str, str]]:
    """The process environment as a key, without ``PYTEST_CURRENT_TEST`` (pytest sets it to each test's name
    and phase, so with it no two tests would ever share a key)."""
    return frozenset((name, value) for name, value in os.environ.items() if name != "PYTEST_CURRENT_TEST")


_built: dict[tuple[str, frozenset[tuple[str, str]]], tuple[MotoState, bytes]] = {}


def build_once(name: str, build: Callable[[], T]) -> T:
    """What ``build`` leaves in moto (and returns), built once per process and environment: the first time,
    ``build`` runs through the APIs and the cloud it leaves and its result are copied; later, both are
    restored, and each test gets a result of its own (unpickled). Keyed by the name and the whole
    environment, since what ``build`` creates (names, Region) may depend on it; for builds that depend on
    nothing else (seeded documents, fixed job ids), never on the test. Inside a ``mock_aws``: the ``cloud``
    fixture's own build is the base every fixture's build starts from."""
    key = (name, environment())
    if (hit := _built.get(key)) is not None:
        state, result = hit
        state.restore()
        restored: T = pickle.loads(result)
        return restored
    built = build()
    _built[key] = (MotoState.capture(os.environ["AWS_DEFAULT_REGION"]), pickle.dumps(built))
    return built
