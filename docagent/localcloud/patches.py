"""Extensions around moto's Step Functions interpreter and Lambda service, installed at run time.

moto is pinned to an exact version (pyproject.toml); nothing on disk is changed. Each patch is a
small, named replacement of one seam, so a moto upgrade shows exactly what to re-check. The full list,
with the behaviour each one fixes, its test, and whether the fix belongs in moto itself:

- ``LambdaBackend.invoke`` (here): Lambda runs the project's handlers in local workers, not Docker.
  Test: integration/test_lambda_runtime.py. Belongs in moto: no (local runtime).
- ``WaitFunction``, retrier ``time``, ``execute_state`` timeouts (here): ``--time-scale`` for Wait
  states, Retry intervals and TimeoutSeconds.
  Test: integration/test_conformance.py. Belongs in moto: no.
- ``send_task_failure`` (here): SendTaskFailure keeps its ``cause``.
  Test: integration/test_approval.py. Belongs in moto: yes.
- ``StateChoice`` (here): a Choice's default Output/Assign only when no rule matched.
  Test: integration/test_sfn_cli.py (JSONata Pass and Choice). Belongs in moto: yes.
- ``boto_client_for`` (here): one boto3 client per service, not one per call.
  Test: the whole suite. Belongs in moto: yes.
- distributed_map.py (with map_run_memory.py, map_extras.py, result_writer.py): threshold, ResultWriter
  files, Map Run redrive, EXPRESS children, ItemBatcher.
  Test: integration/test_conformance.py. Belongs in moto: yes.
- redrive.py: RedriveExecution (docs/semantics.md R1-R7), variables kept.
  Test: integration/test_conformance.py, test_sfn_cli.py. Belongs in moto: yes.
- stop.py: StopExecution as documented (ABORTED at once with error and cause, Map Runs aborted, the
  execution's task tokens closed). Test: integration/test_sfn_stop.py. Belongs in moto: yes.
- map_children.py: a Distributed Map's children are executions: ListExecutions --map-run-arn,
  DescribeExecution, GetExecutionHistory, DescribeStateMachineForExecution; redrive by the parent.
  Test: integration/test_sfn_map_children.py. Belongs in moto: yes.
- sfn_api.py: the actions and parameters served (docs/sfn-api-coverage.md, from botocore's model); a
  refused parameter or an action not served is answered with an error that names it.
  Test: unit/test_sfn_api_coverage.py, integration/test_sfn_stop.py. Belongs in moto: partly.
- history.py: GetExecutionHistory honours maxResults, nextToken, reverseOrder, includeExecutionData.
  Test: integration/test_sfn_stop.py. Belongs in moto: yes.
- executions.py: UUID names, InvalidName/InvalidArn, parser errors with their codes, ``#TestCase``,
  CreateStateMachine's refusals (StateMachineAlreadyExists, logging, EXPRESS callbacks), StartTime as text.
  Test: integration/test_sfn_cli.py. Belongs in moto: yes.
- validation.py: definitions validated; ValidateStateMachineDefinition; each parse keeps its own
  QueryLanguage scopes (``Preprocessor``).
  Test: integration/test_sfn_cli.py, integration/test_sfn_parser_isolation.py. Belongs in moto: yes.
- jsonata.py: the JSONata evaluator and the Step Functions functions; jsonata_location.py: the field
  path (``Output/result``) AWS names in a failed expression's cause and ``EvaluationFailed`` event.
  Test: unit/test_jsonata.py, integration/test_sfn_cli.py, integration/test_sfn_integrations.py.
  Belongs in moto: yes.
- assign.py: an Assign string's escapes decoded; assignedVariables as JSON text; assignments take effect
  when the state leaves.
  Test: integration/test_sfn_jsonata_errors.py. Belongs in moto: yes.
- heartbeat.py: a heartbeat timeout is ``States.HeartbeatTimeout`` (and ``States.Timeout`` matches it);
  ``HeartbeatEndpoint`` (here): HeartbeatSeconds scaled by ``--time-scale``.
  Test: integration/test_heartbeat.py. Belongs in moto: yes (the name), no (the scale).
- mock_config.py: Step Functions Local mock files, one counter per state.
  Test: unit/test_mock_config.py, integration/test_sfn_local_suite.py. Belongs in moto: yes.
- runtime_errors.py: a Map's items that are not an array printed as JSON; a JSONata Wait Timestamp that is
  not one is States.QueryEvaluationError in AWS's words; every States.QueryEvaluationError recorded as an
  EvaluationFailed event. Test: integration/test_sfn_integrations.py. Belongs in moto: yes.
- sdk_integration.py: AWS SDK and Step Functions integrations translate requests and results by
  botocore's model (``StateMachineArn``, ``s3:getObject``'s Body); errors named as AWS names them
  (``S3.NoSuchBucketException``).
  Test: integration/test_sfn_integrations.py. Belongs in moto: yes.
- sync_execution.py: StartSyncExecution runs an Express state machine and answers with its result.
  Test: integration/test_sfn_sync_execution.py. Belongs in moto: yes.
- test_state.py: the TestState API.
  Test: integration/test_sfn_test_state.py. Belongs in moto: yes.
- item_reader.py: the ItemReader reads JSONL (InputType JSONL).
  Test: localcloud/test_item_reader.py. Belongs in moto: yes.
- s3_listing.py: ListObjectVersions honours EncodingType=url (keys with control characters).
  Test: localcloud/test_item_reader.py. Belongs in moto: yes.
- s3_key_index.py: S3 listings by prefix cost what the prefix holds, not the whole bucket (sorted key index).
  Test: localcloud/test_s3_key_index.py. Belongs in moto: yes.
- s3/default_encryption.py: every new object is SSE-S3 encrypted (``AES256``) unless asked otherwise.
  Test: integration/test_sfn_integrations.py. Belongs in moto: yes.
- s3/path_style.py: whether a request names its bucket in the host decided once per host, not 3-5 times a
  request. Test: localcloud/test_s3_path_style.py. Belongs in moto: yes.
- request_ids.py: moto's random strings (every answer's request id) drawn in one loop, the same draws.
  Test: localcloud/test_request_ids.py, localcloud/test_endpoint_answers.py. Belongs in moto: yes.
- serializer_aliases.py: the serializer's alias keys for a plain dict's member kept per (key, shape, parent),
  and a ``...Z`` timestamp's parse kept. Test: localcloud/test_serializer_aliases.py. Belongs in moto: yes.
- error_lookup.py: a service's table of error shapes built once, not for every error answered.
  Test: localcloud/test_error_lookup.py. Belongs in moto: yes.
- flask_form_helper.py: no class made per request by Flask's debug-mode form aid (moto runs debug apps).
  Test: localcloud/test_flask_form_helper.py. Belongs in moto: yes (debug mode off).
- condition_lexing.py: a DynamoDB condition expression's text lexed once a process, not at every request.
  Test: localcloud/test_condition_lexing.py. Belongs in moto: yes.
- update_expressions.py: a DynamoDB update expression parsed once a process (each caller its own copy), its
  tree copied without ``deepcopy``, each validator pass's table of node classes built once.
  Test: localcloud/test_update_expressions.py. Belongs in moto: yes.
- condition_parsing.py: a request's DynamoDB condition expression parsed once, not by both the handler and
  the backend. Test: localcloud/test_condition_parsing.py. Belongs in moto: yes.
- model_loader.py: moto reads its service models through one loader a process, not a new one each time.
  Test: localcloud/test_model_loader.py. Belongs in moto: yes.
- region_lists.py: the Bedrock Runtime backend's regions (EC2's) without reading EC2's model.
  Test: localcloud/test_model_loader.py. Belongs in moto: yes.
- url_builders.py: werkzeug makes a URL rule's builders at the first URL built, not for every rule added.
  Test: localcloud/test_url_builders.py. Belongs in moto: no (werkzeug's; moto never builds a URL).
- secret_names.py: CreateSecret refuses a name Secrets Manager refuses (ValidationException, AWS's words).
  Test: integration/test_sfn_integrations.py. Belongs in moto: yes.
- action_lookup.py: a request's action checked by its name, not by listing the response class's members.
  Test: localcloud/test_action_lookup.py. Belongs in moto: yes.
- iam/enforcement.py: a bucket policy is evaluated by the local IAM (moto's S3 took a condition not met as a
  deny: the template's TLS-only statement refused every request). Test: integration/test_local_iam.py.
  Belongs in moto: yes (condition semantics).
"""

from __future__ import annotations

import functools
import json
import sys
import threading
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config
from moto.awslambda.exceptions import LambdaClientError
from moto.awslambda.models import LambdaBackend
from moto.core.responses import EmptyResult
from moto.settings import moto_server_port
from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl
from moto.stepfunctions.parser.asl.component.common.timeouts.timeout import TimeoutSeconds
from moto.stepfunctions.parser.asl.component.state.choice.state_choice import StateChoice
from moto.stepfunctions.parser.asl.component.state.exec import execute_state
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_callback import (  # noqa: E501
    StateTaskServiceCallback,
)
from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import WaitFunction
from moto.stepfunctions.parser.asl.eval.callback.callback import HeartbeatEndpoint
from moto.stepfunctions.parser.asl.utils import boto_client
from moto.stepfunctions.parser.models import StepFunctionsParserBackend
from moto.stepfunctions.responses import StepFunctionResponse

from docagent.localcloud import (
    action_lookup,
    condition_lexing,
    condition_parsing,
    error_lookup,
    flask_form_helper,
    model_loader,
    region_lists,
    request_ids,
    secret_names,
    serializer_aliases,
    update_expressions,
    url_builders,
)
from docagent.localcloud.iam import enforcement as iam_enforcement
from docagent.localcloud.iam import role_tokens as iam
from docagent.localcloud.lambdas.runtime import RATE_EXCEEDED, FunctionSpec, TooManyRequestsError
from docagent.localcloud.lambdas.zygote import share_sdk_data
from docagent.localcloud.s3 import default_encryption as s3_default_encryption
from docagent.localcloud.s3 import key_index as s3_key_index
from docagent.localcloud.s3 import listing as s3_listing
from docagent.localcloud.s3 import path_style as s3_path_style
from docagent.localcloud.stepfunctions import api_coverage as sfn_api
from docagent.localcloud.stepfunctions import (
    assign,
    distributed_map,
    executions,
    heartbeat,
    history,
    item_reader,
    json_paths,
    jsonata_location,
    map_children,
    mock_config,
    runtime_errors,
    sdk_integration,
    sdk_metadata,
    sync_execution,
    validation,
)
from docagent.localcloud.stepfunctions import jsonata_functions as jsonata
from docagent.localcloud.stepfunctions import redrive_execution as redrive
from docagent.localcloud.stepfunctions import stop_execution as stop
from docagent.localcloud.stepfunctions import teststate as test_state

if TYPE_CHECKING:
    from docagent.localcloud.lambdas.runtime import LambdaRuntime

LOG_GROUP_TAG = "docagent:log-group"


class _TooManyRequestsError(LambdaClientError):
    """Lambda's throttle as Invoke answers it: 429, "Rate Exceeded.", Type User and the Reason; the local
    runtime's detail (what ran, which cap), which Lambda does not give, stays in its exception and its
    ``throttled`` count (lambdas/runtime.py)."""

    code = 429

    def __init__(self, reason: str) -> None:
        super().__init__("TooManyRequestsException", RATE_EXCEEDED)
        self.description = json.dumps(
            {"__type": self.error_type, "Type": "User", "message": RATE_EXCEEDED, "Reason": reason}
        )


class _Installed:
    runtime: LambdaRuntime | None = None
    time_scale: float = 1.0
    done = False
    lock = threading.Lock()


def _function_spec(function: Any, backend: LambdaBackend) -> FunctionSpec:
    # The function acts as its execution role, in a session named after it, as on Lambda (iam/enforcement.py).
    credentials = iam.role_credentials(str(function.role), function.function_name)
    try:
        deployed = list(backend.list_functions())
    except RuntimeError:  # a function created meanwhile (moto lists its dictionary as it is): none shared
        deployed = []
    sharing = {str(f.handler) for f in deployed if f.code_sha_256 == function.code_sha_256}
    return FunctionSpec(
        name=function.function_name,
        arn=function.function_arn,
        handler=function.handler,
        timeout_seconds=float(function.timeout),
        memory_mb=int(function.memory_size),
        environment={**(function.environment_vars or {}), **credentials},
        code_sha256=function.code_sha_256,
        log_group=(function.tags or {}).get(LOG_GROUP_TAG, f"/aws/lambda/{function.function_name}"),
        code_handlers=tuple(sorted(sharing | {str(function.handler)})),
    )


def _invoke(  # noqa: PLR0917 - moto's LambdaBackend.invoke signature
    self: LambdaBackend,
    function_name: str,
    qualifier: str | None,
    body: Any,
    headers: Any,
    response_headers: dict[str, str],
) -> bytes:
    """Replaces moto's Docker-based invoke: run the function's own handler in a local worker."""
    runtime = _Installed.runtime
    if runtime is None:
        raise RuntimeError("the local Lambda runtime is not running")
    function = self.get_function(function_name, qualifier)
    spec = _function_spec(function, self)
    event = json.loads(body) if body else {}
    if headers.get("X-Amz-Invocation-Type") == "Event":
        threading.Thread(target=runtime.invoke, args=(spec, function.code_bytes, event), daemon=True).start()
        return b""
    try:
        outcome = runtime.invoke(spec, function.code_bytes, event)
    except TooManyRequestsError as error:
        raise _TooManyRequestsError(error.reason) from None
    if outcome.function_error:
        response_headers["x-amz-function-error"] = outcome.function_error
    response_headers["x-amz-executed-version"] = "$LATEST"
    return outcome.payload


def _scaled_wait_interval(self: WaitFunction, env: Any, wait_seconds: int) -> None:
    if wait_seconds > 0:
        env.program_state_event.wait(wait_seconds * _Installed.time_scale)


def _scaled_sleep(seconds: float) -> None:
    threading.Event().wait(seconds * _Installed.time_scale)


class _ScaledEvent(threading.Event):
    """moto waits for a state's TimeoutSeconds on an Event in ``execute_state``: scale that wait."""

    def wait(self, timeout: float | None = None) -> bool:
        return super().wait(None if timeout is None else timeout * _Installed.time_scale)


def _scaled_task_token_wait(
    self: StateTaskServiceCallback, timeout_seconds: int, callback_endpoint: Any
) -> Any:
    """A .waitForTaskToken task's TimeoutSeconds, scaled like every other wait."""
    return _original_task_token_wait(self, timeout_seconds * _Installed.time_scale, callback_endpoint)  # type: ignore[arg-type]


_original_task_token_wait = StateTaskServiceCallback._wait_for_task_token_timeout


def _scaled_heartbeat(self: HeartbeatEndpoint, heartbeat_seconds: int) -> None:
    """A .waitForTaskToken task's HeartbeatSeconds (the longest wait between heartbeats), scaled likewise."""
    _original_heartbeat_init(self, heartbeat_seconds * _Installed.time_scale)  # type: ignore[arg-type]


_original_heartbeat_init = HeartbeatEndpoint.__init__


def _send_task_failure(self: StepFunctionResponse) -> EmptyResult:
    """moto's handler drops SendTaskFailure's ``cause``; Step Functions reports it as the failure's cause."""
    self.stepfunction_backend.send_task_failure(  # type: ignore[call-arg]
        self._get_param("taskToken"), error=self._get_param("error"), cause=self._get_param("cause")
    )
    return EmptyResult()


def _choice_eval_state(self: StateChoice, env: Any) -> None:
    """Remember whether a rule matched: moto decided by name, so a rule whose Next equals the Default
    had the state's default Output and Assign applied over its own (AWS "Choice state": the state's
    Output and Assign apply only when no rule matches). Belongs in moto's ``StateChoice``."""
    for rule in self.choices_decl.rules:
        rule.eval(env)
        if env.stack.pop() is True:
            if not rule.next_stmt:
                raise RuntimeError(f"Missing Next in a choice rule of '{self.name}'")
            env.stack.append(rule.next_stmt.name)
            vars(env)[_TOOK_DEFAULT] = False
            return
    if self.default_state is None:
        raise RuntimeError(f"No choice rule matched in state '{self.name}' and it has no Default")
    vars(env)[_TOOK_DEFAULT] = True
    env.stack.append(self.default_state.state_name)


def _choice_eval_state_output(self: StateChoice, env: Any) -> None:
    next_state_name: str = env.stack.pop()
    if vars(env).pop(_TOOK_DEFAULT, False):
        if self.assign_decl:
            self.assign_decl.eval(env=env)
        if self.output:
            self.output.eval(env=env)
    if self._is_language_query_jsonpath():
        if self.output_path:
            self.output_path.eval(env=env)
        else:
            env.states.reset(input_value=env.stack.pop())
    env.next_state_name = next_state_name


_TOOK_DEFAULT = "_docagent_choice_took_default"


def _started(executions: list[Any]) -> list[Any]:
    """Executions whose run has its environment (a just-started one gets it a moment after StartExecution
    returns; moto's Map Run calls read it and failed with HTTP 500 in that moment)."""
    return [e for e in executions if e.exec_worker is not None and e.exec_worker.env is not None]


def _list_map_runs(self: StepFunctionsParserBackend, execution_arn: str) -> dict[str, Any]:
    execution = self.describe_execution(execution_arn=execution_arn)
    if not _started([execution]):
        return {"mapRuns": []}
    return _original_list_map_runs(self, execution_arn)


def _get_executions(self: StepFunctionsParserBackend, execution_status: Any = None) -> list[Any]:
    return _started(_original_get_executions(self, execution_status))


_original_list_map_runs = StepFunctionsParserBackend.list_map_runs
_original_get_executions = StepFunctionsParserBackend._get_executions


class AlreadyRunningError(RuntimeError):
    """moto's backends are process-wide, so one process serves one local cloud at a time."""


_client_lock = threading.Lock()


@functools.cache
def _cached_client(region: str, service: str, port: int, role_arn: str) -> Any:
    credentials = iam.role_credentials(role_arn, iam.WORKFLOW_SESSION)
    with _client_lock:  # creating clients from boto3's default session is not thread-safe
        client = boto3.client(  # type: ignore[call-overload]
            aws_access_key_id=credentials["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=credentials["AWS_SECRET_ACCESS_KEY"],
            aws_session_token=credentials["AWS_SESSION_TOKEN"],
            region_name=region,
            service_name=service,
            endpoint_url=f"http://127.0.0.1:{port}",
            config=Config(
                parameter_validation=False,
                # Step Functions' SDK asks S3 for no checksum on reads: an aws-sdk s3:getObject result has
                # none (LocalStack's AWS-validated snapshot services/test_aws_sdk_task_service
                # test_s3_get_object, read 2026-12-04); botocore's default asks for one.
                response_checksum_validation="when_required",
                retries={"max_attempts": 0, "total_max_attempts": 1},
                max_pool_connections=64,
                connect_timeout=TimeoutSeconds.DEFAULT_TIMEOUT_SECONDS,
                read_timeout=TimeoutSeconds.DEFAULT_TIMEOUT_SECONDS,
            ),
        )
    sdk_metadata.watch(client)  # an optimized integration's result carries the answer's metadata
    return client


def _reused_client(region: str, service: str, state_credentials: Any = None) -> Any:
    """The interpreter builds a new boto3 client for every service call; reuse one per service and role. The
    calls act as the execution's role (its state machine's, or the state's ``Credentials``)."""
    role_arn = str(getattr(state_credentials, "role_arn", None) or "")
    return _cached_client(region, service, int(moto_server_port()), role_arn)


def install(runtime: LambdaRuntime, time_scale: float) -> None:
    """Route Lambda invocations to ``runtime`` and scale the interpreter's waits by ``time_scale``."""
    with _Installed.lock:
        if _Installed.runtime is not None and _Installed.runtime is not runtime:
            raise AlreadyRunningError("a local cloud already runs in this process; stop it first")
        _Installed.runtime = runtime
        _Installed.time_scale = time_scale
        if _Installed.done:
            return
        share_sdk_data()  # the SDK's data files read once for this process's sessions (lambdas/zygote.py)
        LambdaBackend.invoke = _invoke  # type: ignore[method-assign]
        WaitFunction._wait_interval = _scaled_wait_interval  # type: ignore[method-assign]
        StepFunctionResponse.send_task_failure = _send_task_failure  # type: ignore[method-assign]
        StateChoice._eval_state = _choice_eval_state  # type: ignore[method-assign]
        StateChoice._eval_state_output = _choice_eval_state_output  # type: ignore[method-assign]
        StepFunctionsParserBackend.list_map_runs = _list_map_runs  # type: ignore[method-assign]
        StepFunctionsParserBackend._get_executions = _get_executions  # type: ignore[method-assign]
        # Retry intervals: the retrier sleeps through its module's ``time``; give it a scaled one.
        vars(retrier_decl)["time"] = SimpleNamespace(sleep=_scaled_sleep)
        # TimeoutSeconds of Task, Parallel and Map states, and of .waitForTaskToken callbacks.
        vars(execute_state)["threading"] = SimpleNamespace(Event=_ScaledEvent)
        StateTaskServiceCallback._wait_for_task_token_timeout = _scaled_task_token_wait  # type: ignore[method-assign]
        HeartbeatEndpoint.__init__ = _scaled_heartbeat  # type: ignore[method-assign]
        distributed_map.install()
        redrive.install()
        map_children.install()
        stop.install()
        sfn_api.install()
        history.install()
        executions.install()
        validation.install()
        jsonata.install()
        jsonata_location.install()
        assign.install()
        json_paths.install()
        mock_config.install()
        test_state.install()
        sdk_integration.install()
        runtime_errors.install()
        sync_execution.install()
        item_reader.install()
        heartbeat.install()
        s3_listing.install()
        s3_key_index.install()
        s3_default_encryption.install()
        for module in (
            error_lookup,
            flask_form_helper,
            action_lookup,
            secret_names,
            condition_lexing,
            update_expressions,
            condition_parsing,
            request_ids,
            s3_path_style,
            serializer_aliases,
        ):
            module.install()
        model_loader.install()
        region_lists.install()
        url_builders.install()
        iam_enforcement.install()
        boto_client.boto_client_for = _reused_client
        for module in list(sys.modules.values()):  # modules that imported it already
            if module.__name__.startswith("moto.stepfunctions.parser") and hasattr(module, "boto_client_for"):
                vars(module)["boto_client_for"] = _reused_client
        _Installed.done = True


def uninstall(runtime: LambdaRuntime) -> None:
    with _Installed.lock:
        if _Installed.runtime is runtime:
            _Installed.runtime = None
