"""Whether an S3 request names its bucket in the host (``bucket.s3.amazonaws.com``) or in the path, decided
once per host.

moto asks ``S3Response.subdomain_based_buckets(request)`` three to five times a request (the dispatch, the
bucket's name in ``setup_class`` and again in the handler, the key's name) and each time reads
``MOTO_S3_CUSTOM_ENDPOINTS`` from the environment and matches the host against its patterns (moto 5,
moto/s3/responses.py, read 2026-12-08). Its answer depends on nothing else: the host, that variable and
``settings.S3_IGNORE_SUBDOMAIN_BUCKETNAME`` (read at every call, as moto does). Here moto's answer is kept
per (host, variable); a request without a Host header is answered by moto each time.
"""

from __future__ import annotations

import os
from typing import Any

from moto import settings
from moto.s3.responses import S3Response

KEPT = 256  # hosts remembered (the local cloud serves a few: 127.0.0.1:PORT, localhost:PORT, --allow-host)
_moto_subdomain_based_buckets = vars(S3Response)["subdomain_based_buckets"].__func__
_answers: dict[tuple[str, str | None], bool] = {}


def subdomain_based_buckets(request: Any) -> bool:
    if settings.S3_IGNORE_SUBDOMAIN_BUCKETNAME:
        return False
    host = request.headers.get("host", request.headers.get("Host"))
    if not host:
        return bool(_moto_subdomain_based_buckets(request))
    key = (str(host), os.environ.get("MOTO_S3_CUSTOM_ENDPOINTS"))
    found = _answers.get(key)
    if found is None:
        found = bool(_moto_subdomain_based_buckets(request))
        if len(_answers) >= KEPT:
            _answers.clear()
        _answers[key] = found
    return found


def install() -> None:
    S3Response.subdomain_based_buckets = staticmethod(subdomain_based_buckets)  # type: ignore[method-assign]
