"""S3 listings by prefix that cost what the prefix holds, not what the bucket holds.

moto lists a bucket by copying and scanning every key it holds (``ListObjectsV2``), and lists versions by
deep-copying every version of every key (``ListObjectVersions``), for each page. A job lists a prefix per
document (ProcessDocument's model-call journal) and pages through its documents and results, so on a
bucket that grows with the job each listing grows too: O(N) per call, O(N²) per job. S3 itself lists a
prefix in time proportional to the page, whatever else the bucket holds.

Here each bucket's key store keeps a sorted index of its key names, updated as keys are added and removed
(and rebuilt if it ever disagrees with the store's size). A listing with a prefix hands moto's own listing
code only the keys under that prefix (and, for versions, only those from the page's key marker on), so
the answers are moto's, byte for byte, computed over the part of the bucket they can include.
Test: tests/localcloud/test_s3_key_index.py. Belongs in moto: yes.
"""

from __future__ import annotations

import bisect
import threading
from types import SimpleNamespace
from typing import Any

from moto.s3.models import FakeDeleteMarker, FakeTableStorageBucket, S3Backend
from moto.s3.utils import _VersionedKeyStore

_INDEX = "docagent_sorted_names"
_lock = threading.RLock()


def _index(store: _VersionedKeyStore) -> list[str]:
    """The store's key names, sorted (call with ``_lock`` held)."""
    names: list[str] | None = vars(store).get(_INDEX)
    if names is None or len(names) != dict.__len__(store):
        names = sorted(dict.keys(store))
        vars(store)[_INDEX] = names
    return names


def _added(store: _VersionedKeyStore, key: str) -> None:
    names: list[str] | None = vars(store).get(_INDEX)
    if names is not None:
        position = bisect.bisect_left(names, key)
        if position == len(names) or names[position] != key:
            names.insert(position, key)


def _removed(store: _VersionedKeyStore, key: str) -> None:
    names: list[str] | None = vars(store).get(_INDEX)
    if names is not None:
        position = bisect.bisect_left(names, key)
        if position < len(names) and names[position] == key:
            del names[position]


def names_from(
    store: _VersionedKeyStore, prefix: str, start: str = "", limit: int | None = None
) -> list[str]:
    """Key names that start with ``prefix`` and are not below ``start``, in order (at most ``limit``)."""
    with _lock:
        names = _index(store)
        position = bisect.bisect_left(names, max(prefix, start))
        found: list[str] = []
        while position < len(names) and names[position].startswith(prefix):
            if limit is not None and len(found) >= limit:
                break
            found.append(names[position])
            position += 1
        return found


def _narrowed(store: _VersionedKeyStore, names: list[str]) -> _VersionedKeyStore:
    """A key store holding only these names' versions (the versions themselves are shared, not copied)."""
    narrowed = _VersionedKeyStore()
    for name in names:
        versions = store.getlist(name)
        if versions:
            dict.__setitem__(narrowed, name, list(versions))
    return narrowed


# -- keeping the index -----------------------------------------------------------------------------------


def _setitem(self: _VersionedKeyStore, key: str, value: Any) -> None:
    with _lock:
        _original_setitem(self, key, value)
        _added(self, key)


def _setlist(self: _VersionedKeyStore, key: Any, list_: Any) -> None:
    with _lock:
        _original_setlist(self, key, list_)
        _added(self, key)


def _pop(self: _VersionedKeyStore, key: str) -> None:
    with _lock:
        _original_pop(self, key)
        _removed(self, key)


def _delitem(self: _VersionedKeyStore, key: str) -> None:
    with _lock:
        dict.__delitem__(self, key)
        _removed(self, key)


def _clear(self: _VersionedKeyStore) -> None:
    with _lock:
        dict.clear(self)
        vars(self).pop(_INDEX, None)


# -- the listings ----------------------------------------------------------------------------------------


def _list_objects(  # noqa: PLR0917 (moto's signature)
    self: S3Backend,
    bucket: Any,
    prefix: str | None,
    delimiter: str | None,
    marker: str | None,
    max_keys: int | None,
) -> Any:
    keys = getattr(bucket, "keys", None)
    if not prefix or isinstance(bucket, FakeTableStorageBucket) or not isinstance(keys, _VersionedKeyStore):
        return _original_list_objects(self, bucket, prefix, delimiter, marker, max_keys)
    only_prefix: Any = SimpleNamespace(keys=_narrowed(keys, names_from(keys, prefix)))
    return _original_list_objects(self, only_prefix, prefix, delimiter, marker, max_keys)


def _live_names_from(store: _VersionedKeyStore, prefix: str, start: str, wanted: int) -> list[str]:
    """Names under ``prefix`` from ``start`` on, until ``wanted`` of them are live (a name whose latest
    version is a delete marker lists nothing)."""
    with _lock:
        names = _index(store)
        position = bisect.bisect_left(names, max(prefix, start))
        found: list[str] = []
        live = 0
        while position < len(names) and names[position].startswith(prefix) and live < wanted:
            name = names[position]
            found.append(name)
            live += not isinstance(store.get(name), FakeDeleteMarker)
            position += 1
        return found


def _list_objects_v2(  # noqa: PLR0917 (moto's signature)
    self: S3Backend,
    bucket: Any,
    prefix: str | None,
    delimiter: str | None,
    continuation_token: str | None,
    start_after: str | None,
    max_keys: int,
) -> Any:
    """moto lists every key under the prefix for each page, then skips to the page's start: a listing of
    N keys in pages of 1,000 costs O(N²). Without a delimiter each name is one entry, so the page needs only
    the names from its start (the continuation token's name, or StartAfter: both exclusive) on, ``max_keys``
    of them and one more (to know there is a next page)."""
    keys = getattr(bucket, "keys", None)
    if (
        delimiter
        or not prefix
        or isinstance(bucket, FakeTableStorageBucket)
        or not isinstance(keys, _VersionedKeyStore)
    ):
        return _original_list_objects_v2(
            self, bucket, prefix, delimiter, continuation_token, start_after, max_keys
        )
    start = self._pagination_tokens.get(continuation_token) if continuation_token else start_after
    names = _live_names_from(keys, prefix, start or "", max_keys + 2)
    only_these: Any = SimpleNamespace(keys=_narrowed(keys, names))
    return _original_list_objects_v2(
        self, only_these, prefix, delimiter, continuation_token, start_after, max_keys
    )


class _OneBucket:
    """Stands in for the backend in moto's ``list_object_versions``, which reads only ``get_bucket``."""

    def __init__(self, bucket: Any) -> None:
        self.bucket = bucket

    def get_bucket(self, bucket_name: str) -> Any:
        return self.bucket


def _list_object_versions(  # noqa: PLR0917 (moto's signature)
    self: S3Backend,
    bucket_name: str,
    delimiter: str | None = None,
    key_marker: str | None = None,
    max_keys: int | None = 1000,
    prefix: str = "",
    version_id_marker: str | None = None,
) -> Any:
    bucket = self.get_bucket(bucket_name)
    keys = getattr(bucket, "keys", None)
    if not isinstance(keys, _VersionedKeyStore) or (key_marker and not key_marker.startswith(prefix or "")):
        return _original_list_object_versions(
            self, bucket_name, delimiter, key_marker, max_keys, prefix, version_id_marker
        )
    # moto skips every version before the key marker and stops once the page is full: without a
    # delimiter each name gives at least one entry, so the page needs the marker's name, ``max_keys``
    # names after it and one more (to know there is a next page).
    limit = max_keys + 2 if max_keys is not None and not delimiter else None
    names = names_from(keys, prefix or "", key_marker or "", limit)
    only_these: Any = _OneBucket(SimpleNamespace(keys=_narrowed(keys, names)))
    return _original_list_object_versions(
        only_these, bucket_name, delimiter, key_marker, max_keys, prefix, version_id_marker
    )


_original_setitem = _VersionedKeyStore.__setitem__
_original_setlist = _VersionedKeyStore.setlist
_original_pop = _VersionedKeyStore.pop
_original_list_objects = S3Backend.list_objects
_original_list_objects_v2 = S3Backend.list_objects_v2
_original_list_object_versions = S3Backend.list_object_versions


def install() -> None:
    _VersionedKeyStore.__setitem__ = _setitem  # type: ignore[method-assign]
    _VersionedKeyStore.setlist = _setlist  # type: ignore[method-assign]
    _VersionedKeyStore.pop = _pop  # type: ignore[method-assign]
    _VersionedKeyStore.__delitem__ = _delitem  # type: ignore[method-assign,assignment]
    _VersionedKeyStore.clear = _clear  # type: ignore[method-assign,assignment]
    S3Backend.list_objects = _list_objects  # type: ignore[method-assign]
    S3Backend.list_objects_v2 = _list_objects_v2  # type: ignore[method-assign]
    S3Backend.list_object_versions = _list_object_versions  # type: ignore[method-assign]
