"""ListObjectVersions honours ``EncodingType=url``.

S3 URL-encodes Key, KeyMarker, NextKeyMarker, Prefix and Delimiter when asked (as of 2026-11, AWS docs
"ListObjectVersions", https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectVersions.html), which is
how a key holding characters XML 1.0 cannot carry (control characters) gets listed at all; botocore asks for
it on every listing and decodes the answer. moto's ListObjectVersions ignores the parameter and writes such a
key raw into its XML, which no client can parse. Here the answer is encoded as S3 encodes it.

Test: tests/integration/test_item_reader_jsonl.py (a key with a control character). Belongs in moto: yes.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

from moto.core.responses import ActionResult
from moto.s3.responses import S3Response

_ENCODED_TOP = ("KeyMarker", "NextKeyMarker", "Prefix", "Delimiter")
_ENCODED_NESTED = (("Versions", "Key"), ("DeleteMarkers", "Key"), ("CommonPrefixes", "Prefix"))


def _encode(value: Any) -> Any:
    return urllib.parse.quote(value) if isinstance(value, str) else value


def _encoded(result: dict[str, Any]) -> dict[str, Any]:
    encoded = dict(result)
    for name in _ENCODED_TOP:
        if encoded.get(name):
            encoded[name] = _encode(encoded[name])
    for top, child in _ENCODED_NESTED:
        if top in encoded:
            encoded[top] = [{**member, child: _encode(member.get(child))} for member in encoded[top]]
    encoded["EncodingType"] = "url"
    return encoded


class _Installed:
    done = False


def install() -> None:
    """Wrap moto's ListObjectVersions response (idempotent)."""
    if _Installed.done:
        return
    original = S3Response.list_object_versions

    def list_object_versions(self: S3Response) -> Any:
        if self.querystring.get("encoding-type", [None])[0] != "url":
            return original(self)
        serialize = self.serialized

        def serialized(action_result: ActionResult) -> Any:
            result = action_result.result
            if isinstance(result, dict):
                action_result = ActionResult(_encoded(result))
            return serialize(action_result)

        self.serialized = serialized  # type: ignore[method-assign]
        try:
            return original(self)
        finally:
            del self.serialized

    S3Response.list_object_versions = list_object_versions  # type: ignore[method-assign]
    _Installed.done = True
