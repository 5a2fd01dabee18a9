"""The HTTP Task (``arn:aws:states:::http:invoke``) on the local cloud, against a 127.0.0.1 server.

Sources (looked up 2026-12-04): developer guide "Call HTTPS APIs in Step Functions workflows" (fields,
connection merge, the headers Step Functions sets and refuses, URL-encoded bodies, unsupported responses,
``Events.ConnectionResource.*`` errors, ``States.Http.StatusCode.<code>`` in its Retry/Catch example, the
result's ``Headers``/``ResponseBody``/``StatusCode``/``StatusText``), "Handling errors in Step Functions
workflows" (``States.Http.Socket``), API reference "TestState" (TRACE shows the HTTP request and response;
``revealSecrets``: "a secret includes the data that an EventBridge connection adds"),
"InspectionDataRequest" and "InspectionDataResponse" (their fields)."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
import pytest
from botocore.config import Config

from docagent.localcloud.server import REGION
from tests.integration.conftest import run_to_end

pytestmark = pytest.mark.integration

ROLE = "arn:aws:iam::123456789012:role/local"


class _Api:
    """A 127.0.0.1 HTTP server that records each request and answers by path."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode() if length else ""
                api.requests.append({"method": self.command, "path": self.path, "headers": dict(self.headers),
                                     "body": body})  # fmt: skip
                status, content_type, payload = {
                    "/teapot": (418, "application/json", b'{"why": "short and stout"}'),
                    "/image": (200, "image/png", b"\x89PNG"),
                    "/text": (200, "text/plain", b"plain words"),
                }.get(self.path.split("?")[0], (200, "application/json", b'{"ok": true}'))
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _answer  # noqa: N815

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def last(self) -> dict[str, Any]:
        return self.requests[-1]


@pytest.fixture(scope="module")
def api() -> Iterator[_Api]:
    server = _Api()
    server.thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()
    server.thread.join()


def _connection(aws: Any, kind: str = "API_KEY", **extra: Any) -> str:
    auth: dict[str, Any] = (
        {"ApiKeyAuthParameters": {"ApiKeyName": "x-api-key", "ApiKeyValue": "key_value"}}
        if kind == "API_KEY"
        else {"BasicAuthParameters": {"Username": "user", "Password": "pass"}}
    )
    arn: str = aws("events").create_connection(
        Name=f"conn-{uuid.uuid4().hex[:8]}", AuthorizationType=kind, AuthParameters={**auth, **extra}
    )["ConnectionArn"]
    return arn


def _task(api: _Api, connection: str, path: str = "/items", **parameters: Any) -> dict[str, Any]:
    return {"Type": "Task", "Resource": "arn:aws:states:::http:invoke",
            "Parameters": {"ApiEndpoint": f"{api.url}{path}", "Method": "GET",
                           "Authentication": {"ConnectionArn": connection}, **parameters}}  # fmt: skip


def _run(aws: Any, state: dict[str, Any], payload: Any = None) -> dict[str, Any]:
    done, _ = run_to_end(aws, {"StartAt": "T", "States": {"T": {**state, "End": True}}}, payload)
    return done


def test_a_get_answers_with_awss_result_shape(aws: Any, api: _Api) -> None:
    done = _run(aws, _task(api, _connection(aws), QueryParameters={"currency": "usd", "q": "a b"}))
    assert done["status"] == "SUCCEEDED", done.get("cause")
    output = json.loads(done["output"])
    assert list(output) == ["Headers", "ResponseBody", "StatusCode", "StatusText"]
    assert (output["ResponseBody"], output["StatusCode"], output["StatusText"]) == ({"ok": True}, 200, "OK")
    assert output["Headers"]["Content-Type"] == ["application/json"]
    sent = api.last()
    assert (sent["method"], sent["path"]) == ("GET", "/items?currency=usd&q=a%20b")
    assert sent["headers"]["User-Agent"] == "Amazon|StepFunctions|HttpInvoke|us-east-1"
    assert sent["headers"]["Range"] == "bytes=0-262144"
    assert sent["headers"]["x-api-key"] == "key_value"  # the connection's API key


def test_the_connection_is_merged_and_wins(aws: Any, api: _Api) -> None:
    """The guide's merge example: the connection's header, query and body parameters are added, and on a
    clash the connection's value is used; the body is JSON."""
    invocation = {"InvocationHttpParameters": {
        "HeaderParameters": [{"Key": "Header-Param", "Value": "connection_header_param"}],
        "QueryStringParameters": [{"Key": "QueryParam", "Value": "connection_query_param"}],
        "BodyParameters": [{"Key": "BodyParam", "Value": "connection_body_param"}]}}  # fmt: skip
    connection = _connection(aws, "BASIC", **invocation)
    state = _task(api, connection, "/path", Method="POST",
                  Headers={"Request-Id": "my_request_id", "Header-Param": "state_machine_header_param"},
                  RequestBody={"Job": "Software Engineer", "Company": "AnyCompany",
                               "BodyParam": "state_machine_body_param"},
                  QueryParameters={"QueryParam": "state_machine_query_param"})  # fmt: skip
    done = _run(aws, state)
    assert done["status"] == "SUCCEEDED", done.get("cause")
    sent = api.last()
    assert sent["path"] == "/path?QueryParam=connection_query_param"
    assert sent["headers"]["Header-Param"] == "connection_header_param"
    assert sent["headers"]["Request-Id"] == "my_request_id"
    assert sent["headers"]["Authorization"] == "Basic dXNlcjpwYXNz"  # user:pass
    assert sent["headers"]["Content-Type"] == "application/json; charset=UTF-8"
    assert (
        sent["body"]
        == '{"Job":"Software Engineer","Company":"AnyCompany","BodyParam":"connection_body_param"}'
    )


@pytest.mark.parametrize(
    ("array_format", "expected"),
    [
        ("INDICES", "array%5B0%5D=a&array%5B1%5D=b"),
        ("REPEAT", "array=a&array=b"),
        ("COMMAS", "array=a%2Cb"),
        ("BRACKETS", "array%5B%5D=a&array%5B%5D=b"),
    ],
)
def test_a_url_encoded_body(aws: Any, api: _Api, array_format: str, expected: str) -> None:
    """The guide's encodings of ``{"array": ["a", "b"]}`` and of a nested object (``metadata[...]``)."""
    state = _task(api, _connection(aws), Method="POST",
                  Headers={"Content-Type": "application/x-www-form-urlencoded"},
                  RequestBody={"description": "Monthly subscription", "array": ["a", "b"],
                               "metadata": {"order_details": "monthly report data"}},
                  Transform={"RequestBodyEncoding": "URL_ENCODED",
                             "RequestEncodingOptions": {"ArrayFormat": array_format}})  # fmt: skip
    done = _run(aws, state)
    assert done["status"] == "SUCCEEDED", done.get("cause")
    assert api.last()["body"] == (
        f"description=Monthly%20subscription&{expected}&metadata%5Border_details%5D=monthly%20report%20data"
    )


def test_a_status_outside_2xx_is_a_states_http_status_code_error(aws: Any, api: _Api) -> None:
    state = _task(api, _connection(aws), "/teapot")
    state["Catch"] = [
        {"ErrorEquals": ["States.Http.StatusCode.418"], "ResultPath": "$.error", "Next": "Caught"}
    ]
    state["End"] = True
    machine = {"StartAt": "T", "States": {"T": state, "Caught": {"Type": "Pass", "End": True}}}
    done, _ = run_to_end(aws, machine)
    assert json.loads(done["output"])["error"] == {
        "Error": "States.Http.StatusCode.418",
        "Cause": "I'm a Teapot",
    }


@pytest.mark.parametrize(
    ("parameters", "error", "cause_part"),
    [
        ({"Headers": {"Authorization": "Bearer x"}}, "States.Runtime", "Authorization"),
        ({"Headers": {"x-amz-date": "now"}}, "States.Runtime", "x-amz-date"),
        ({"Method": "TRACE"}, "States.Runtime", "Method"),
        ({"RequestBody": "text", "Method": "POST"}, "States.Runtime", "string RequestBody"),
    ],
)
def test_what_aws_refuses_fails_the_task(
    aws: Any, api: _Api, parameters: dict[str, Any], error: str, cause_part: str
) -> None:
    connection = _connection(aws, "API_KEY", InvocationHttpParameters={
        "BodyParameters": [{"Key": "k", "Value": "v"}]})  # fmt: skip
    before = len(api.requests)
    done = _run(aws, _task(api, connection, **parameters))
    assert (done["status"], done["error"]) == ("FAILED", error)
    assert cause_part in done["cause"]
    assert len(api.requests) == before  # nothing was sent


def test_an_unknown_connection_and_an_unreachable_endpoint(aws: Any, api: _Api) -> None:
    missing = "arn:aws:events:us-east-1:123456789012:connection/none/00000000-0000-0000-0000-000000000000"
    done = _run(aws, _task(api, missing))
    assert (done["status"], done["error"]) == ("FAILED", "Events.ConnectionResource.ResourceNotFound")
    unreachable = _task(api, _connection(aws))
    unreachable["Parameters"]["ApiEndpoint"] = "http://127.0.0.1:9/closed"  # the discard port: refused
    done = _run(aws, unreachable)
    assert (done["status"], done["error"]) == ("FAILED", "States.Http.Socket"), done["cause"]


def test_responses_aws_cannot_read_and_a_text_body(aws: Any, api: _Api) -> None:
    done = _run(aws, _task(api, _connection(aws), "/image"))
    assert (done["status"], done["error"]) == ("FAILED", "States.Runtime")
    assert "image/png" in done["cause"]
    text = _run(aws, _task(api, _connection(aws), "/text"))
    assert json.loads(text["output"])["ResponseBody"] == "plain words"


def test_the_history_names_the_http_resource(aws: Any, api: _Api) -> None:
    machine = {"StartAt": "T", "States": {"T": {**_task(api, _connection(aws)), "End": True}}}
    _, events = run_to_end(aws, machine)
    scheduled = next(event for event in events if event["type"] == "TaskScheduled")
    details = scheduled["taskScheduledEventDetails"]
    assert (details["resourceType"], details["resource"]) == ("http", "invoke")


@pytest.fixture(scope="module")
def sfn(cloud: Any) -> Any:
    """TestState's client: the AWS SDK sends it to a ``sync-`` host prefix a local endpoint cannot resolve."""
    return boto3.client(
        "stepfunctions", endpoint_url=cloud.endpoint, region_name=REGION,
        aws_access_key_id="local", aws_secret_access_key="local", config=Config(inject_host_prefix=False),
    )  # fmt: skip


def _test_state(sfn: Any, state: dict[str, Any], level: str = "TRACE", **extra: Any) -> dict[str, Any]:
    answer: dict[str, Any] = sfn.test_state(
        definition=json.dumps(state), roleArn=ROLE, inspectionLevel=level, **extra
    )
    return answer


def test_test_state_trace_shows_the_request_and_response(aws: Any, sfn: Any, api: _Api) -> None:
    invocation = {"InvocationHttpParameters": {
        "HeaderParameters": [{"Key": "X-Secret", "Value": "hidden"}],
        "QueryStringParameters": [{"Key": "token", "Value": "t0k"}]}}  # fmt: skip
    connection = _connection(aws, "API_KEY", **invocation)
    state = {**_task(api, connection, Method="POST", RequestBody={"a": 1}, QueryParameters={"q": "1"}),
             "End": True}  # fmt: skip
    answer = _test_state(sfn, state)
    assert answer["status"] == "SUCCEEDED", answer
    request, response = answer["inspectionData"]["request"], answer["inspectionData"]["response"]
    assert set(request) == {"protocol", "method", "url", "headers", "body"}
    assert (request["method"], request["url"], request["body"]) == ("POST", f"{api.url}/items?q=1", '{"a":1}')
    assert "User-Agent: Amazon|StepFunctions|HttpInvoke|us-east-1" in request["headers"]
    assert "X-Secret" not in request["headers"] and "key_value" not in request["headers"]
    assert set(response) == {"protocol", "statusCode", "statusMessage", "headers", "body"}
    assert (response["statusCode"], response["statusMessage"], response["body"]) == (
        "200",
        "OK",
        '{"ok": true}',
    )
    assert "Content-Type: application/json" in response["headers"]
    revealed = _test_state(sfn, state, revealSecrets=True)["inspectionData"]["request"]
    assert revealed["url"] == f"{api.url}/items?q=1&token=t0k"
    assert "X-Secret: hidden" in revealed["headers"] and "x-api-key: key_value" in revealed["headers"]


def test_test_state_debug_has_no_http_data_and_a_failure_keeps_the_response(
    aws: Any, sfn: Any, api: _Api
) -> None:
    state = {**_task(api, _connection(aws), "/teapot"), "End": True}
    debug = _test_state(sfn, state, "DEBUG")
    assert "request" not in debug["inspectionData"] and "response" not in debug["inspectionData"]
    trace = _test_state(sfn, state)
    assert (trace["status"], trace["error"]) == ("FAILED", "States.Http.StatusCode.418")
    assert trace["inspectionData"]["response"]["statusCode"] == "418"
