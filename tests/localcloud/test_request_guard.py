"""What the local cloud's endpoint answers (docagent/localcloud/request_guard.py): its middleware against a
WSGI application that records what reaches it (issue #49: no web page can reach the local cloud)."""

from __future__ import annotations

import io
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from typing import Any

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from docagent.localcloud.request_guard import access_key, allowed_origins, guard, signed
from docagent.served_hosts import served_hosts

PORT = 4566
HOSTS = served_hosts(PORT, ["cloud.internal"])
SIGNED = (
    "AWS4-HMAC-SHA256 Credential=local/20261207/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=ab"
)


class Served:
    """The application behind the guard: what reached it."""

    def __init__(self) -> None:
        self.reached: list[str] = []

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        self.reached.append(str(environ.get("PATH_INFO")))
        start_response("200 OK", [("Content-Type", "application/xml")])
        return [
            b"<ListAllMyBucketsResult><Buckets><Bucket><Name>documents</Name></Bucket></Buckets></ListAllMyBucketsResult>"
        ]


def call(
    origins: Iterable[str] = (), method: str = "GET", path: str = "/", query: str = "", **headers: str
) -> tuple[str, dict[str, str], bytes, list[str]]:
    """(status, headers, body, what reached the application) of one request through the guard."""
    served = Served()
    app = guard(HOSTS, allowed_origins(origins, environ={}))(served)
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "wsgi.input": io.BytesIO(b""),
        **{"HTTP_" + name.upper(): value for name, value in headers.items()},
    }
    answer: list[Any] = []
    body = b"".join(app(environ, lambda status, sent, *_: answer.extend([status, dict(sent)])))
    return answer[0], answer[1], body, served.reached


def test_the_local_clients_request_is_served() -> None:
    for host in (f"127.0.0.1:{PORT}", f"localhost:{PORT}", f"LOCALHOST:{PORT}", f"cloud.internal:{PORT}"):
        status, _, body, reached = call(host=host, authorization=SIGNED)
        assert status == "200 OK" and reached == ["/"] and b"documents" in body, host


@pytest.mark.parametrize(
    "host", [f"evil.example:{PORT}", "127.0.0.1", f"127.0.0.1:{PORT + 1}", f"cloud.internal.evil:{PORT}", ""]
)
def test_a_host_it_does_not_serve_is_refused_and_lists_nothing(host: str) -> None:
    """A page of another site whose name resolves to 127.0.0.1 (DNS rebinding) sends its own name."""
    status, headers, body, reached = call(host=host, authorization=SIGNED)
    assert status.startswith("421") and reached == [] and b"documents" not in body
    assert b"not a host this local cloud serves" in body and "Access-Control-Allow-Origin" not in headers


def test_a_cross_origin_request_and_its_preflight_are_refused() -> None:
    host = f"127.0.0.1:{PORT}"
    status, headers, body, reached = call(host=host, origin="http://evil.example", authorization=SIGNED)
    assert status.startswith("403") and reached == [] and b"documents" not in body
    assert b"<Code>AccessDenied</Code>" in body and "Access-Control-Allow-Origin" not in headers
    preflight = {"access_control_request_method": "PUT", "access_control_request_headers": "x-amz-target"}
    status, headers, body, reached = call(
        method="OPTIONS", host=host, origin="http://evil.example", **preflight
    )
    assert status.startswith("403") and reached == []
    assert not any(name.lower().startswith("access-control") for name in headers)
    # the literal "null" origin of a sandboxed frame or a file: page is a cross origin too
    assert call(host=host, origin="null", authorization=SIGNED)[3] == []


def test_a_browsers_request_from_another_site_without_origin_is_refused() -> None:
    """An <img> or a link sends no Origin; the browser marks it as sent from another site."""
    query = "X-Amz-Credential=local%2F20261207%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=ab"
    for site in ("cross-site", "same-site"):
        status, _, _, reached = call(host=f"127.0.0.1:{PORT}", query=query, sec_fetch_site=site)
        assert status.startswith("403") and reached == [], site


def test_an_origin_the_operator_allows_by_name_is_served() -> None:
    allowed = ["http://localhost:3000/", "HTTPS://Tools.Internal"]
    for origin in ("http://localhost:3000", "https://tools.internal"):
        status, _, _, reached = call(allowed, host=f"127.0.0.1:{PORT}", origin=origin, authorization=SIGNED)
        assert status == "200 OK" and reached == ["/"], origin
    preflight = {"origin": "http://localhost:3000", "access_control_request_method": "PUT"}
    status, _, _, reached = call(allowed, method="OPTIONS", host=f"127.0.0.1:{PORT}", **preflight)
    assert status == "200 OK" and reached == ["/"]  # a preflight carries no signature
    assert call(allowed, method="GET", host=f"127.0.0.1:{PORT}", origin="http://localhost:3000")[3] == []
    for origin in ("http://localhost:3001", "http://tools.internal", "https://tools.internal.evil"):
        assert call(allowed, host=f"127.0.0.1:{PORT}", origin=origin, authorization=SIGNED)[3] == [], origin
    with pytest.raises(ValueError, match="not an origin"):
        allowed_origins(["*"], environ={})
    with pytest.raises(ValueError, match="not an origin"):
        allowed_origins(["http://a.example/path"], environ={})
    assert allowed_origins(
        (), environ={"DOCAGENT_LOCAL_ALLOW_ORIGINS": "http://a.example, http://b.example:8"}
    ) == {
        "http://a.example",
        "http://b.example:8",
    }


def test_an_unsigned_request_or_another_key_is_refused_in_the_protocols_wording() -> None:
    host = f"127.0.0.1:{PORT}"
    status, headers, body, reached = call(host=host)  # ListBuckets, unsigned
    assert status.startswith("403") and reached == [] and b"<Code>AccessDenied</Code>" in body
    assert headers["x-amzn-ErrorType"] == "AccessDenied"
    status, _, body, reached = call(
        method="POST", host=host, x_amz_target="AWSStepFunctions.ListStateMachines"
    )
    assert status.startswith("403") and reached == [] and b'"MissingAuthenticationTokenException"' in body
    other = SIGNED.replace("Credential=local/", "Credential=AKIAREALKEY/")
    status, _, body, reached = call(host=host, authorization=other)
    assert status.startswith("403") and reached == [] and b"<Code>InvalidAccessKeyId</Code>" in body
    status, _, _, reached = call(host=host, authorization="Basic bG9jYWw6bG9jYWw=")
    assert status.startswith("403") and reached == []
    # a presigned query needs its signature too
    assert call(host=host, query="X-Amz-Credential=local%2F20261207%2Fus-east-1%2Fs3%2Faws4_request")[3] == []


def test_the_projects_clients_sign_with_the_local_key() -> None:
    """boto3's header and presigned URLs, and the local cloud's own urllib callers (``signed``)."""
    request = AWSRequest(method="GET", url=f"http://127.0.0.1:{PORT}/", headers={})
    SigV4Auth(Credentials("local", "local"), "s3", "us-east-1").add_auth(request)
    assert access_key({"HTTP_AUTHORIZATION": request.headers["Authorization"]}) == "local"
    s3 = boto3.client(
        "s3",
        endpoint_url=f"http://127.0.0.1:{PORT}",
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    url = urllib.parse.urlsplit(s3.generate_presigned_url("get_object", {"Bucket": "b", "Key": "k"}))
    assert access_key({"QUERY_STRING": url.query}) == "local"
    sent = signed(
        urllib.request.Request(f"http://127.0.0.1:{PORT}/_docagent/bedrock/faults", method="DELETE")
    )
    assert access_key({"HTTP_AUTHORIZATION": sent.get_header("Authorization")}) == "local"
