"""The HTTP Task (``arn:aws:states:::http:invoke``): an HTTP call to ``ApiEndpoint`` through an EventBridge
connection, answered as AWS answers it.

Developer guide "Call HTTPS APIs in Step Functions workflows" (looked up 2026-12-04):
- ``Parameters``: ``ApiEndpoint`` and ``Method`` (GET, POST, PUT, DELETE, PATCH, OPTIONS or HEAD) are
  required; the connection is ``Authentication.ConnectionArn`` or ``InvocationConfig.ConnectionArn``;
  ``Headers``, ``QueryParameters`` (URL-encoded), ``RequestBody`` (sent as JSON) and ``Transform``
  (``RequestBodyEncoding`` ``URL_ENCODED`` with ``RequestEncodingOptions.ArrayFormat`` INDICES (the
  default), REPEAT, COMMAS or BRACKETS) are optional.
- Step Functions sets ``User-Agent: Amazon|StepFunctions|HttpInvoke|<region>``, ``Range: bytes=0-262144``
  and ``Host``; a definition's header among the listed ones (``Authorization``, ``Host``, ``x-amz-*``, ...)
  fails the task with ``States.Runtime``.
- The connection's authorization (Basic, API key) and its invocation headers, query parameters and body
  parameters are merged into the request, the connection's values winning; a string ``RequestBody`` with
  connection body parameters fails with ``States.Runtime``.
- "HTTP task requests will timeout after 60 seconds"; the error-handling page names that
  ``States.Http.Socket``. A response with a content-type of ``application/octet-stream``, ``image/*``,
  ``video/*`` or ``audio/*``, or one that is not a valid string, fails with ``States.Runtime``.
- Connection errors are ``Events.ConnectionResource.*`` (``ResourceNotFound``, ``InvalidConnectionState``,
  ...); a status outside 2xx is ``States.Http.StatusCode.<code>`` (the examples' Retry and Catch).
- The result has ``Headers``, ``ResponseBody``, ``StatusCode`` and ``StatusText``.

What the documentation leaves open, and the local choice: the connection is read from the local
EventBridge (moto's events keeps its authorization parameters); an OAuth connection is not served (the
local cloud does not fetch tokens: ``States.Runtime`` saying so); a plain ``http://`` endpoint is accepted
(AWS calls HTTPS only) so that tests can answer from 127.0.0.1; a status outside 2xx has the status text
as its cause (as a user observed on AWS; not documented); ``Headers`` holds each header with a list of
values (as the API Gateway integration's documented result does); a JSON content type's body is parsed.
TestState's TRACE inspection (``inspectionData.request``/``response``) is noted for teststate.py.
"""

from __future__ import annotations

import base64
import http
import json
import urllib.parse
from typing import Any, NamedTuple

import requests
from moto.events.models import events_backends
from moto.stepfunctions.parser.api import HistoryEventType, TaskFailedEventDetails
from moto.stepfunctions.parser.asl.component.common.error_name.custom_error_name import CustomErrorName
from moto.stepfunctions.parser.asl.component.common.error_name.error_name import ErrorName
from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import FailureEvent
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name import StatesErrorName
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name_type import (
    StatesErrorNameType,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task import state_task_factory
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service import (
    StateTaskService,
)

from docagent.localcloud.stepfunctions import teststate_inspect
from docagent.localcloud.stepfunctions.map_run_memory import event_details

TIMEOUT_SECONDS = 60.0
PARAMETERS = ("ApiEndpoint", "Method", "Authentication", "InvocationConfig", "Headers", "QueryParameters",
              "RequestBody", "Transform")  # fmt: skip
METHODS = {"GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"}
FORBIDDEN_HEADERS = {
    "a-im", "accept-charset", "accept-datetime", "accept-encoding", "authorization", "cache-control",
    "connection", "content-encoding", "content-md5", "date", "expect", "forwarded", "from", "host",
    "http2-settings", "if-match", "if-modified-since", "if-none-match", "if-range", "if-unmodified-since",
    "max-forwards", "origin", "pragma", "proxy-authorization", "referer", "server", "te", "trailer",
    "transfer-encoding", "upgrade", "via", "warning",
}  # fmt: skip
FORBIDDEN_PREFIXES = ("x-forwarded-", "x-amz-", "x-amzn-")
UNSUPPORTED_TYPES = ("application/octet-stream", "image/", "video/", "audio/")
PROTOCOL = "HTTP/1.1"


class TaskError(Exception):
    """A failure of the task with AWS's error name and a cause."""

    def __init__(self, error: str, cause: str) -> None:
        super().__init__(cause)
        self.error, self.cause = error, cause


HTTP_ERRORS = "States.Http."


class HttpErrorName(ErrorName):
    """An HTTP Task's ``States.Http.*`` error: named with the ``States.`` prefix, yet a task failure that
    ``States.TaskFailed`` and ``States.ALL`` match (moto reserves the prefix to its own names)."""


def _custom_error_name(self: CustomErrorName, error_name: str | None) -> None:
    """A Retry's or Catch's ``States.Http.*`` name is AWS's (the guide's example catches
    ``States.Http.StatusCode.404``); moto's parser refused every unknown ``States.`` name."""
    if error_name is not None and error_name.startswith(HTTP_ERRORS):
        ErrorName.__init__(self, error_name=error_name)
    else:
        _original_custom_init(self, error_name)


_original_custom_init = CustomErrorName.__init__


class Connection(NamedTuple):
    """What an EventBridge connection adds to a request."""

    headers: dict[str, str]
    query: dict[str, str]
    body: dict[str, Any]


def _runtime(cause: str) -> TaskError:
    return TaskError(StatesErrorNameType.StatesRuntime.to_name(), cause)


def connection_of(arn: str) -> Connection:
    """The connection ``arn`` names in the local EventBridge (``arn:aws:events:REGION:ACCOUNT:connection/
    NAME/ID``), as its authorization and invocation parameters add to a request."""
    parts = arn.split(":", 5)
    name = parts[5].split("/")[1] if len(parts) == 6 and parts[5].count("/") == 2 else ""
    try:
        found = events_backends[parts[4]][parts[3]].connections.get(name) if name else None
    except (KeyError, IndexError):
        found = None
    if found is None or found.arn != arn:
        raise TaskError("Events.ConnectionResource.ResourceNotFound", f"Connection '{arn}' does not exist.")
    if found.state != "AUTHORIZED":
        raise TaskError(
            "Events.ConnectionResource.InvalidConnectionState",
            f"Connection '{arn}' is in state {found.state}, not AUTHORIZED.",
        )
    parameters: dict[str, Any] = found.auth_parameters or {}
    headers: dict[str, str] = {}
    if basic := parameters.get("BasicAuthParameters"):
        pair = f"{basic.get('Username', '')}:{basic.get('Password', '')}".encode()
        headers["Authorization"] = f"Basic {base64.b64encode(pair).decode()}"
    elif key := parameters.get("ApiKeyAuthParameters"):
        headers[str(key.get("ApiKeyName"))] = str(key.get("ApiKeyValue"))
    elif "OAuthParameters" in parameters:
        raise _runtime("The local cloud does not fetch OAuth tokens: use a Basic or API key connection")
    invocation = parameters.get("InvocationHttpParameters") or {}

    def pairs(field: str) -> dict[str, Any]:
        return {str(item["Key"]): item.get("Value") for item in invocation.get(field) or []}

    return Connection({**headers, **pairs("HeaderParameters")}, pairs("QueryStringParameters"),
                      pairs("BodyParameters"))  # fmt: skip


def _checked_headers(given: Any) -> dict[str, str]:
    if given is None:
        return {}
    if not isinstance(given, dict):
        raise _runtime("The 'Headers' field must be a JSON object")
    for name in given:
        lower = str(name).lower()
        if lower in FORBIDDEN_HEADERS or lower.startswith(FORBIDDEN_PREFIXES):
            raise _runtime(f"The 'Headers' field contains unsupported values: {name}")
    return {str(name): str(value) for name, value in given.items()}


def _array_key(key: str, index: int, array_format: str) -> str:
    """An array element's field name: ``key`` (REPEAT), ``key[]`` (BRACKETS), ``key[index]`` (INDICES)."""
    return {"REPEAT": key, "BRACKETS": f"{key}[]"}.get(array_format, key + "[" + str(index) + "]")


def _form_pairs(value: Any, key: str, array_format: str) -> list[tuple[str, str]]:
    """``value`` under ``key`` as form fields (an object's members as ``key[member]``)."""
    if isinstance(value, dict):
        members = [(key + "[" + name + "]", item) for name, item in value.items()]
        return [pair for member, item in members for pair in _form_pairs(item, member, array_format)]
    if isinstance(value, list):
        texts = [item if isinstance(item, str) else json.dumps(item) for item in value]
        if array_format == "COMMAS":
            return [(key, ",".join(texts))]
        return [(_array_key(key, index, array_format), text) for index, text in enumerate(texts)]
    return [(key, value if isinstance(value, str) else json.dumps(value))]


def _url_encoded(body: dict[str, Any], array_format: str) -> str:
    pairs = [pair for name, value in body.items() for pair in _form_pairs(value, name, array_format)]
    return "&".join(f"{urllib.parse.quote(name, safe='')}={urllib.parse.quote(text, safe='')}"
                    for name, text in pairs)  # fmt: skip


def _body(given: Any, connection: Connection, transform: Any) -> str | None:
    """The request's body: the task's ``RequestBody`` merged with the connection's body parameters
    (theirs winning), as JSON or URL-encoded (``Transform``)."""
    if given is None and not connection.body:
        return None
    if isinstance(given, str):
        if connection.body:
            raise _runtime("A string RequestBody cannot be merged with the connection's body parameters")
        return given
    if given is not None and not isinstance(given, dict):
        return json.dumps(given, separators=(",", ":"))
    merged = {**(given or {}), **connection.body}
    transform = transform if isinstance(transform, dict) else {}
    if transform.get("RequestBodyEncoding") == "URL_ENCODED":
        options = transform.get("RequestEncodingOptions") or {}
        return _url_encoded(merged, str(options.get("ArrayFormat", "INDICES")))
    return json.dumps(merged, separators=(",", ":"))


def _query(given: Any) -> dict[str, Any]:
    if given is None:
        return {}
    if not isinstance(given, dict):
        raise _runtime("The 'QueryParameters' field must be a JSON object")
    return dict(given)


def _with_query(endpoint: str, query: dict[str, Any]) -> str:
    if not query:
        return endpoint
    encoded = urllib.parse.urlencode(query, doseq=True, quote_via=urllib.parse.quote)
    return f"{endpoint}{'&' if '?' in endpoint else '?'}{encoded}"


def _header_text(headers: Any) -> str:
    return "\n".join(f"{name}: {value}" for name, value in headers.items())


class Request(NamedTuple):
    method: str
    url: str
    headers: dict[str, str]
    body: str | None
    hidden_url: str  # without the connection's query parameters
    hidden_headers: dict[str, str]  # without the connection's headers
    hidden_body: str | None  # without the connection's body parameters


def build_request(parameters: dict[str, Any], region: str) -> Request:
    """The HTTP request an HTTP Task's resolved ``parameters`` make (refusals as ``TaskError``)."""
    endpoint, method = parameters.get("ApiEndpoint"), parameters.get("Method")
    if not isinstance(endpoint, str) or not endpoint.startswith(("https://", "http://")):
        raise _runtime("The 'ApiEndpoint' field must be an https:// URL")
    if not isinstance(method, str) or method.upper() not in METHODS:
        raise _runtime(f"The 'Method' field must be one of {', '.join(sorted(METHODS))}")
    holder = parameters.get("InvocationConfig") or parameters.get("Authentication") or {}
    arn = holder.get("ConnectionArn") if isinstance(holder, dict) else None
    if not isinstance(arn, str):
        raise _runtime(
            "An HTTP Task needs a connection: Authentication.ConnectionArn or InvocationConfig.ConnectionArn"
        )
    connection = connection_of(arn)
    own = _checked_headers(parameters.get("Headers"))
    given_body = parameters.get("RequestBody")
    body = _body(given_body, connection, parameters.get("Transform"))
    standard = {"User-Agent": f"Amazon|StepFunctions|HttpInvoke|{region}", "Range": "bytes=0-262144"}
    if body is not None and not any(name.lower() == "content-type" for name in own):
        standard["Content-Type"] = "application/json; charset=UTF-8"
    task_headers = {**own, **standard}
    secret_names = {name.lower() for name in connection.headers}
    kept = {name: value for name, value in task_headers.items() if name.lower() not in secret_names}
    query = _query(parameters.get("QueryParameters"))
    hidden_query = {name: value for name, value in query.items() if name not in connection.query}
    return Request(
        method=method.upper(),
        url=_with_query(endpoint, {**query, **connection.query}),
        headers={**kept, **connection.headers},
        body=body,
        hidden_url=_with_query(endpoint, hidden_query),
        hidden_headers=kept,
        hidden_body=_body(given_body, connection._replace(body={}), parameters.get("Transform")),
    )


def _inspection(request: Request, response: requests.Response | None) -> dict[str, Any]:
    """TestState's TRACE ``request``/``response`` (API reference "InspectionDataRequest",
    "InspectionDataResponse": protocol, method, url, headers, body; protocol, statusCode, statusMessage,
    headers, body, all strings; their format is ours), and the request with the connection's additions
    left out (shown unless ``revealSecrets``)."""
    noted: dict[str, Any] = {
        "request": {"protocol": PROTOCOL, "method": request.method, "url": request.url,
                    "headers": _header_text(request.headers), "body": request.body or ""},
        "hiddenRequest": {"protocol": PROTOCOL, "method": request.method, "url": request.hidden_url,
                          "headers": _header_text(request.hidden_headers), "body": request.hidden_body or ""},
    }  # fmt: skip
    if response is not None:
        noted["response"] = {
            "protocol": PROTOCOL,
            "statusCode": str(response.status_code),
            "statusMessage": response.reason or _phrase(response.status_code),
            "headers": _header_text(response.headers),
            "body": response.text,
        }
    return noted


def _phrase(code: int) -> str:
    try:
        return http.HTTPStatus(code).phrase
    except ValueError:
        return ""


def _result(response: requests.Response) -> dict[str, Any]:
    content_type = response.headers.get("Content-Type", "")
    if content_type.lower().startswith(UNSUPPORTED_TYPES):
        raise _runtime(f"The HTTP Task cannot read a response of content-type {content_type}")
    try:
        text = response.content.decode(response.encoding or "utf-8")
    except (UnicodeDecodeError, LookupError):
        raise _runtime("The response body is not a valid string") from None
    body: Any = text
    if "json" in content_type.lower():
        try:
            body = json.loads(text)
        except ValueError:
            body = text
    return {
        "Headers": {name: [value] for name, value in response.headers.items()},
        "ResponseBody": body,
        "StatusCode": response.status_code,
        "StatusText": response.reason or _phrase(response.status_code),
    }


def invoke(parameters: dict[str, Any], region: str, notes: dict[str, Any] | None) -> dict[str, Any]:
    """Make the call; the result as AWS gives it, or a ``TaskError``. ``notes`` (a TestState run's) gets
    the TRACE inspection."""
    request = build_request(parameters, region)
    response: requests.Response | None = None
    try:
        response = requests.request(request.method, request.url, headers=request.headers,
                                    data=request.body.encode() if request.body is not None else None,
                                    timeout=TIMEOUT_SECONDS)  # fmt: skip
    except requests.RequestException as error:
        raise TaskError("States.Http.Socket", f"{type(error).__name__}: {error}") from None
    finally:
        if notes is not None:
            notes.update(_inspection(request, response))
    if not 200 <= response.status_code < 300:
        raise TaskError(f"States.Http.StatusCode.{response.status_code}", response.reason or "")
    return _result(response)


class StateTaskServiceHttp(StateTaskService):
    """The ``http:invoke`` request-response integration."""

    def _get_supported_parameters(self) -> set[str] | None:
        return set(PARAMETERS) if self.resource.api_action == "invoke" else None

    def _from_error(self, env: Any, ex: Exception) -> FailureEvent:
        if not isinstance(ex, TaskError):
            return super()._from_error(env, ex)
        if ex.error == StatesErrorNameType.StatesRuntime.to_name():
            name: ErrorName = StatesErrorName(typ=StatesErrorNameType.StatesRuntime)
        elif ex.error.startswith(HTTP_ERRORS):
            name = HttpErrorName(ex.error)
        else:
            name = CustomErrorName(ex.error)
        return FailureEvent(
            env=env,
            error_name=name,
            event_type=HistoryEventType.TaskFailed,
            event_details=event_details(
                taskFailedEventDetails=TaskFailedEventDetails(
                    error=ex.error,
                    cause=ex.cause,
                    resource=self._get_sfn_resource(),
                    resourceType=self._get_sfn_resource_type(),
                )
            ),
        )

    def _eval_service_task(self, env: Any, resource_runtime_part: Any, normalised_parameters: dict[str, Any],
                           state_credentials: Any) -> None:  # fmt: skip
        notes = teststate_inspect.http_notes(env)
        env.stack.append(invoke(normalised_parameters, resource_runtime_part.region, notes))


_original_for = vars(state_task_factory)["state_task_service_for"]


def _service_for(service_name: str) -> StateTaskService:
    if service_name == "http":
        return StateTaskServiceHttp()  # type: ignore[no-untyped-call]
    found: StateTaskService = _original_for(service_name)
    return found


def install() -> None:
    vars(state_task_factory)["state_task_service_for"] = _service_for
    CustomErrorName.__init__ = _custom_error_name  # type: ignore[method-assign]
