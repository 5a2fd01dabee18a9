"""What the local cloud's endpoint answers: requests of this machine's AWS clients, never a web page's.

The endpoint holds the documents, drives Step Functions and (``--model bedrock``) spends the account's money,
on a well-known port of 127.0.0.1 that every browser on the machine can reach. Before anything is read or
done, a WSGI middleware in front of everything the endpoint serves (moto, the local Bedrock and its admin
routes) refuses:

- a ``Host`` it does not serve (421): ``127.0.0.1:PORT``, ``localhost:PORT`` and the names the operator
  gives (``docagent local up --allow-host NAME``); a page whose name is made to resolve to 127.0.0.1 (DNS
  rebinding) sends its own name;
- a browser's cross-origin request (403): any request with an ``Origin`` header (a CORS preflight, a
  ``fetch``, a form post) unless the operator allows that origin by name (``--allow-origin ORIGIN`` or
  ``DOCAGENT_LOCAL_ALLOW_ORIGINS``), and any request a browser marks as sent from another site
  (``Sec-Fetch-Site: cross-site`` or ``same-site``: an ``<img>`` or a link sends no ``Origin``);
- a request without a signature (403) made with the local access key: a SigV4 ``Authorization`` header
  ``AWS4-HMAC-SHA256 Credential=local/...`` or a presigned query (``X-Amz-Credential=local/...`` with its
  ``X-Amz-Signature``, or S3's ``AWSAccessKeyId=local`` with its ``Signature``). A browser cannot add
  ``Authorization`` to a cross-origin request without a preflight, which is refused above.

The signature itself is not recomputed: its secret (``local``) is public, so a correct one proves nothing a
present one does not, and recomputing it costs a hash of every body on the endpoint's hot path.
A refusal costs a few dictionary lookups and one precomputed answer (docs/security.md "The local cloud").
"""

from __future__ import annotations

import os
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from typing import Any

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from docagent.localcloud.request_counts import WsgiApp

LOCAL_ACCESS_KEY = "local"
LOCAL_SECRET_KEY = "local"
ALLOW_ORIGINS_VARIABLE = "DOCAGENT_LOCAL_ALLOW_ORIGINS"  # comma-separated, added to --allow-origin
_SIGV4 = "AWS4-HMAC-SHA256 Credential="
CROSS_SITE = frozenset({"cross-site", "same-site"})  # Sec-Fetch-Site of a request another site made

# AWS's codes and wording for an unsigned request and an unknown access key, in S3's REST XML and in the JSON
# protocols (moto 5: moto/s3/exceptions.py S3InvalidAccessKeyIdError, moto/core/exceptions.py
# InvalidClientTokenIdError; API Gateway's and the JSON services' "Missing Authentication Token"; looked up
# 2026-12-07).
_UNSIGNED = (
    "AccessDenied",
    "Access Denied",
    "MissingAuthenticationTokenException",
    "Missing Authentication Token",
)
_UNKNOWN_KEY = (
    "InvalidAccessKeyId",
    "The AWS Access Key Id you provided does not exist in our records.",
    "UnrecognizedClientException",
    "The security token included in the request is invalid.",
)
_CROSS_ORIGIN = (
    "AccessDenied",
    "Access Denied: a browser's cross-origin request (docagent local up --allow-origin ORIGIN allows one)",
    "AccessDeniedException",
    "Access Denied: a browser's cross-origin request (docagent local up --allow-origin ORIGIN allows one)",
)
_MISDIRECTED = "not a host this local cloud serves (docagent local up --allow-host NAME adds one)"

Refusal = tuple[str, list[tuple[str, str]], bytes]


def allowed_origins(named: Iterable[str] = (), environ: dict[str, str] | None = None) -> frozenset[str]:
    """The origins the operator allows (``--allow-origin`` and ``DOCAGENT_LOCAL_ALLOW_ORIGINS``), as a browser
    sends them (``scheme://host[:port]``, no path, compared without case); ``*`` is not an origin."""
    listed = (environ if environ is not None else os.environ).get(ALLOW_ORIGINS_VARIABLE, "")
    origins = set()
    for given in [*named, *listed.split(",")]:
        origin = given.strip().rstrip("/").lower()
        if not origin:
            continue
        parts = urllib.parse.urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path or parts.query:
            raise ValueError(
                f"not an origin: {given.strip()!r} (scheme://host[:port], as a browser sends it)"
            )
        origins.add(origin)
    return frozenset(origins)


def _answer(status: str, codes: tuple[str, str, str, str]) -> tuple[Refusal, Refusal]:
    """The precomputed refusal in S3's REST XML and in the JSON protocols."""
    xml_code, xml_message, json_code, json_message = codes
    xml = f"<Error><Code>{xml_code}</Code><Message>{xml_message}</Message></Error>"
    json_body = f'{{"__type": "{json_code}", "message": "{json_message}"}}'
    return (
        (status, _headers("application/xml", xml_code, xml), xml.encode()),
        (status, _headers("application/x-amz-json-1.0", json_code, json_body), json_body.encode()),
    )


def _headers(content_type: str, code: str, body: str) -> list[tuple[str, str]]:
    return [
        ("Content-Type", content_type),
        ("Content-Length", str(len(body.encode()))),
        ("x-amzn-ErrorType", code),
        ("Connection", "close"),  # its body is never read
    ]


_REFUSE_UNSIGNED = _answer("403 Forbidden", _UNSIGNED)
_REFUSE_UNKNOWN_KEY = _answer("403 Forbidden", _UNKNOWN_KEY)
_REFUSE_CROSS_ORIGIN = _answer("403 Forbidden", _CROSS_ORIGIN)
_REFUSE_HOST: Refusal = (
    "421 Misdirected Request",
    [("Content-Type", "text/plain"), ("Content-Length", str(len(_MISDIRECTED))), ("Connection", "close")],
    _MISDIRECTED.encode(),
)


def access_key(environ: dict[str, Any]) -> str | None:
    """The access key a request was signed with: a SigV4 ``Authorization`` header, or a presigned query
    (SigV4's ``X-Amz-Credential`` or the ``AWSAccessKeyId`` of boto3's default S3 presigned URL, each with
    its signature); None: unsigned."""
    authorization = environ.get("HTTP_AUTHORIZATION")
    if authorization:
        if not authorization.startswith(_SIGV4):
            return None
        return str(authorization[len(_SIGV4) :].split("/", 1)[0])
    query = str(environ.get("QUERY_STRING") or "")
    if "X-Amz-Credential=" not in query and "AWSAccessKeyId=" not in query:
        return None
    fields = urllib.parse.parse_qs(query)
    if fields.get("X-Amz-Signature") and fields.get("X-Amz-Credential"):
        return fields["X-Amz-Credential"][0].split("/", 1)[0]
    if fields.get("Signature") and fields.get("AWSAccessKeyId"):
        return fields["AWSAccessKeyId"][0]
    return None


def refusal(environ: dict[str, Any], hosts: frozenset[str], origins: frozenset[str]) -> Refusal | None:
    """Why the endpoint refuses this request (its answer), or None: it may be served."""
    if str(environ.get("HTTP_HOST", "")).lower() not in hosts:
        return _REFUSE_HOST
    json_protocol = "HTTP_X_AMZ_TARGET" in environ or "json" in str(environ.get("CONTENT_TYPE", ""))
    origin = environ.get("HTTP_ORIGIN")
    if (origin is not None and origin.lower() not in origins) or environ.get(
        "HTTP_SEC_FETCH_SITE"
    ) in CROSS_SITE:
        return _REFUSE_CROSS_ORIGIN[json_protocol]
    if origin is not None and environ.get("REQUEST_METHOD") == "OPTIONS":
        return None  # an allowed origin's preflight: a browser sends it without credentials
    key = access_key(environ)
    if key is None:
        return _REFUSE_UNSIGNED[json_protocol]
    if key != LOCAL_ACCESS_KEY:
        return _REFUSE_UNKNOWN_KEY[json_protocol]
    return None


def guard(hosts: frozenset[str], origins: frozenset[str] = frozenset()) -> Callable[[WsgiApp], WsgiApp]:
    """The middleware: ``app`` serves what ``refusal`` lets through."""

    def wrap(app: WsgiApp) -> WsgiApp:
        def guarded(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            refused = refusal(environ, hosts, origins)
            if refused is None:
                return app(environ, start_response)
            status, headers, body = refused
            start_response(status, list(headers))
            return [body]

        return guarded

    return wrap


def signed(request: urllib.request.Request, region: str = "us-east-1") -> urllib.request.Request:
    """``request`` with a SigV4 ``Authorization`` made with the local credentials (the local cloud's own
    routes, called with urllib: ``docagent local model-faults``, ``labels``, ``--model``)."""
    body = request.data if isinstance(request.data, bytes) else b""
    aws = AWSRequest(
        method=request.get_method(), url=request.full_url, data=body, headers=dict(request.headers)
    )
    SigV4Auth(Credentials(LOCAL_ACCESS_KEY, LOCAL_SECRET_KEY), "docagent", region).add_auth(aws)
    for name, value in aws.headers.items():
        request.add_header(name, value)
    return request
