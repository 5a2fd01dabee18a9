"""moto's table of a service's error shapes, built once per service instead of once per error answered.

To answer an error (an S3 GetObject of a key that is not there: ``NoSuchKey``, which the steps' reads of a
stored result get for every new document; a DynamoDB ``ConditionalCheckFailedException``), moto's serializer
calls ``get_error_model``, which makes a new ``ErrorLookupFactory()`` for each service it checks; the
factory keeps the table it builds (every error shape of the service, by code, name and alias) in its own
``_error_lut_cache``, so the cache never served a second error and each error answer built the table again:
5 % of the endpoint's request-serving CPU in a profile of the 200-document demo (py-spy, 2026-12-02; moto
5.2.5, moto/core/errors.py). Here every factory shares one cache. A table is built from the service's
model (``get_service_model``, itself cached for the process) and only read afterwards, so one serves every
thread; two threads that build the same table at once store equal tables.
"""

from __future__ import annotations

from moto.core import errors

_SHARED: dict[str, errors.ErrorLookup] = {}


def _shared_cache(factory: errors.ErrorLookupFactory) -> None:
    factory._error_lut_cache = _SHARED


def install() -> None:
    errors.ErrorLookupFactory.__init__ = _shared_cache  # type: ignore[method-assign,assignment]
