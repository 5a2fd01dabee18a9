"""TestState on the local endpoint: run one state, mocked or for real, and say what it did.

As of 2026-11, AWS API reference "TestState", "MockInput", "TestStateConfiguration", "InspectionData":
the request carries ``definition`` (one state, or a whole state machine with ``stateName``), ``input``,
``variables``, ``context`` (with a mock), ``inspectionLevel`` (INFO | DEBUG | TRACE), ``revealSecrets``,
``mock`` (``result`` or ``errorOutput``; ``fieldValidationMode``) and ``stateConfiguration``
(``retrierRetryCount``, ``errorCausedByState``, ``mapIterationFailureCount``, ``mapItemReaderData``).
The answer has ``status`` (SUCCEEDED | FAILED | RETRIABLE | CAUGHT_ERROR), ``output``, ``error``,
``cause``, ``nextState`` and, from DEBUG on, ``inspectionData``.

The state runs in moto's interpreter inside a throw-away execution: its transitions lead to stub
states, so the state runs exactly once; its Retry is decided here (TestState never waits or retries:
a matching retrier with attempts left is RETRIABLE). A Task that is not mocked calls the local cloud's
real service, so a Lambda task runs the project's own handler. The mock is checked first
(teststate_mock.py: which states take one, the result against the service's output shape). ``inspectionData``
is the interpreter's own data flow (teststate_inspect.py); at TRACE an HTTP Task's ``request`` and
``response`` (http_task.py).
"""

from __future__ import annotations

import datetime
import json
import threading
import uuid
from types import SimpleNamespace
from typing import Any

from moto.core.responses import ActionResult
from moto.stepfunctions.parser.api import ExecutionStatus
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.backend.execution import BaseExecutionWorkerCommunication, Execution
from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker
from moto.stepfunctions.responses import StepFunctionResponse

from docagent.localcloud.stepfunctions import (
    teststate_context,
    teststate_inspect,
    teststate_map,
    teststate_mock,
    validation,
)
from docagent.localcloud.stepfunctions.executions import AwsError
from docagent.localcloud.stepfunctions.http_task import HTTP_ERRORS
from docagent.localcloud.stepfunctions.mock_config import CaseMocks, ThrowSpec, to_moto

STUB_PREFIX = "TestStateNext:"
RUN_LIMIT_SECONDS = 300.0


class _TestStateWorker(ExecutionWorker):
    """An execution worker that starts with the request's variables and context."""

    variables: dict[str, Any]
    context: dict[str, Any] | None
    role_given: bool

    def _get_evaluation_environment(self) -> Environment:
        env = super()._get_evaluation_environment()
        teststate_inspect.watch(env)
        for name, value in self.variables.items():
            env.variable_store.set(name, value)
        if self.context is not None:
            teststate_context.fix(env, self.context)
        else:
            teststate_context.as_aws_gives_it(env, self.role_given)
        return env


def _json_field(raw: str | None, field: str, default: Any) -> Any:
    if raw is None:
        return default
    try:
        return json.loads(raw)
    except ValueError as error:
        raise AwsError("ValidationException", f"{field} is not valid JSON: {error}") from None


def _targets(state: dict[str, Any]) -> list[str]:
    found = [state.get("Next"), state.get("Default")]
    found += [
        rule.get("Next")
        for rule in state.get("Choices", []) + state.get("Catch", [])
        if isinstance(rule, dict)
    ]
    return [target for target in dict.fromkeys(found) if isinstance(target, str)]


def _find(machine: Any, name: str, language: str) -> tuple[dict[str, Any], str] | None:
    """State ``name`` of ``machine`` or of a Map's or Parallel's machine inside it, with its query language
    (AWS tests a state of a Map's ItemProcessor by its name, as recorded in LocalStack's AWS-validated
    snapshot test_state/test_test_state_machine_scenarios, BASE_MAP_STATE_MACHINE, read 2026-12-04)."""
    if not isinstance(machine, dict):
        return None
    language = str(machine.get("QueryLanguage", language))
    found_states = machine.get("States")
    states: dict[str, Any] = found_states if isinstance(found_states, dict) else {}
    if isinstance(states.get(name), dict):
        return dict(states[name]), language
    for state in (item for item in states.values() if isinstance(item, dict)):
        inner = [state.get("ItemProcessor"), state.get("Iterator"), *(state.get("Branches") or [])]
        for found in (_find(part, name, str(state.get("QueryLanguage", language))) for part in inner):
            if found is not None:
                return found
    return None


def _the_state(definition: dict[str, Any], state_name: str | None) -> tuple[str, dict[str, Any], str]:
    """(name, state, query language) of the state to test."""
    if "States" in definition:
        name = state_name or definition.get("StartAt")
        found = _find(definition, name, "JSONPath") if isinstance(name, str) else None
        if found is None:
            raise AwsError("ValidationException", "State not found in definition")
        return str(name), found[0], found[1]
    if state_name:
        raise AwsError("ValidationException", "stateName needs a whole state machine as definition")
    return teststate_context.STATE_NAME, dict(definition), "JSONPath"


def _schema_refusal(definition: dict[str, Any], name: str, state: dict[str, Any], language: str) -> None:
    """Schema errors as CreateStateMachine's (validation.py): a whole definition's at their own path, a lone
    state's at ``/States/StateName/...`` (as recorded on AWS in LocalStack's AWS-validated snapshots
    test_state/test_test_state_machine_scenarios ``test_state_name_invalid_state_definition`` and
    test_state_mock_validation ``test_parallel_state_empty_branches``, read 2026-12-04)."""
    machine = definition if "States" in definition else _machine(name, state, language, keep_retry=True)
    errors = [
        item for item in validation.diagnose(json.dumps(machine)) if item.code == "SCHEMA_VALIDATION_FAILED"
    ]
    message = validation.refusal(errors)
    if message:
        raise AwsError("InvalidDefinition", message)


def _machine(name: str, state: dict[str, Any], language: str, *, keep_retry: bool = False) -> dict[str, Any]:
    run_state = {key: value for key, value in state.items() if key != "Retry" or keep_retry}
    states: dict[str, Any] = {name: run_state}
    for target in _targets(state):
        if target != name:
            states[target] = (
                {"Type": "Succeed", "QueryLanguage": language}
                if language == "JSONata"
                else {"Type": "Succeed"}
            )
    return {"QueryLanguage": language, "StartAt": name, "States": states}


def _run(
    machine: dict[str, Any],
    input_value: Any,
    *,
    mocks: CaseMocks | None,
    variables: dict[str, Any],
    context: dict[str, Any] | None,
    role_arn: str | None,
    backend: Any,
) -> tuple[Execution, _TestStateWorker]:
    name = f"test-state-{uuid.uuid4()}"
    prefix = f"arn:{backend.partition}:states:{backend.region_name}:{backend.account_id}"
    state_machine = SimpleNamespace(
        arn=f"{prefix}:stateMachine:{name}", name=name, definition=json.dumps(machine), sm_type="STANDARD",
    )  # fmt: skip
    execution = Execution(
        name=name, sm_type="STANDARD", role_arn=role_arn or "", exec_arn=f"{prefix}:express:{name}:{name}",  # type: ignore[arg-type]
        account_id=backend.account_id, region_name=backend.region_name,
        state_machine=state_machine,  # type: ignore[arg-type]
        start_date=datetime.datetime.now(tz=datetime.UTC), cloud_watch_logging_session=None,
        activity_store={}, input_data=json.dumps(input_value),
    )  # fmt: skip
    worker = _TestStateWorker(
        evaluation_details=execution._get_start_execution_worker()._evaluation_details,
        exec_comm=BaseExecutionWorkerCommunication(execution),
        cloud_watch_logging_session=None,
        activity_store={},
        mock_test_case=mocks,  # type: ignore[arg-type]
    )
    worker.variables, worker.context, worker.role_given = variables, context, role_arn is not None
    finished = threading.Event()
    execution.exec_worker = worker
    execution.exec_status = ExecutionStatus.RUNNING
    original_terminated = worker._execution_communication.terminated

    def terminated() -> None:
        original_terminated()
        finished.set()

    worker._execution_communication.terminated = terminated  # type: ignore[method-assign]
    worker.start()  # type: ignore[no-untyped-call]
    if not finished.wait(RUN_LIMIT_SECONDS):
        raise AwsError("ValidationException", f"the state did not finish within {RUN_LIMIT_SECONDS:.0f} s")
    return execution, worker


def _events(worker: _TestStateWorker) -> list[dict[str, Any]]:
    return (
        [dict(event) for event in worker.env.event_manager.get_event_history()]
        if worker.env is not None
        else []
    )


def _first_error(events: list[dict[str, Any]]) -> tuple[str | None, str | None]:
    for event in events:
        for key, details in event.items():
            if (
                key.endswith("EventDetails")
                and isinstance(details, dict)
                and "error" in details
                and event["type"] != "ExecutionFailed"
            ):
                return details.get("error"), details.get("cause")
    return None, None


def _matches(rule: dict[str, Any], error: str) -> bool:
    names = rule.get("ErrorEquals") or []
    return (
        error in names
        or "States.ALL" in names
        or (
            "States.TaskFailed" in names
            and (not error.startswith("States.") or error.startswith(HTTP_ERRORS))
        )
    )


def _retry(state: dict[str, Any], error: str, retried: int) -> dict[str, Any] | None:
    """The retrier that matches ``error`` after ``retried`` retries: its index and, with attempts left, the
    backoff (an exhausted retrier is only its index: FAILED, as recorded on AWS in LocalStack's
    AWS-validated snapshot test_state/test_state_configuration ``..._retrier_retry_count``, read
    2026-12-04)."""
    for index, rule in enumerate(state.get("Retry") or []):
        if _matches(rule, error):
            if retried >= int(rule.get("MaxAttempts", 3)):
                return {"retryIndex": index}
            interval = float(rule.get("IntervalSeconds", 1)) * float(rule.get("BackoffRate", 2.0)) ** retried
            if "MaxDelaySeconds" in rule:
                interval = min(interval, float(rule["MaxDelaySeconds"]))
            return {"retryIndex": index, "retryBackoffIntervalSeconds": int(interval)}
    return None


def _entered(events: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    found = []
    for event in events:
        details = event.get("stateEnteredEventDetails")
        if details:
            found.append((details["name"], json.loads(details.get("input") or "null")))
    return found


def _inspection(
    events: list[dict[str, Any]],
    worker: _TestStateWorker,
    state: dict[str, Any],
    state_input: Any,
    language: str,
) -> dict[str, Any]:
    data: dict[str, Any] = {"input": json.dumps(state_input)}
    noted = teststate_inspect.notes(worker.env) if worker.env is not None else {}
    if language == "JSONata":
        for event in events:  # a Task's arguments as scheduled (also when its mock throws)
            scheduled = event.get("taskScheduledEventDetails") or {}
            if scheduled.get("parameters") and "afterArguments" not in noted:
                noted["afterArguments"] = json.loads(scheduled["parameters"])
        if "afterArguments" in noted:
            data["afterArguments"] = json.dumps(noted["afterArguments"])
        for event in events:
            done = event.get("taskSucceededEventDetails") or event.get("lambdaFunctionSucceededEventDetails")
            if done and "output" in done:
                data["result"] = done["output"]
    else:
        for event in events:  # a Task's parameters as scheduled (its service's own, cast as it sends them)
            scheduled = event.get("taskScheduledEventDetails") or event.get(
                "lambdaFunctionScheduledEventDetails"
            )
            if scheduled and scheduled.get("parameters"):
                noted["afterParameters"] = json.loads(scheduled["parameters"])
        data |= teststate_inspect.jsonpath_inspection(noted, state, state_input)
    if state.get("Type") == "Map":
        effective = json.loads(data.get("afterInputPath", "null")) if language == "JSONPath" else state_input
        data |= teststate_map.map_inspection(state, effective, language)
    if state.get("Type") in ("Map", "Parallel"):
        data = teststate_map.mocked_inspection(data, state, language)
    if worker.env is not None:
        store = worker.env.variable_store
        variables = {**store._outer_scope, **store._inner_scope}
        if variables:  # AWS leaves the field out when the state has no variables
            data["variables"] = json.dumps(variables)
    return data


def _http_trace(worker: _TestStateWorker, reveal_secrets: Any) -> dict[str, Any]:
    """An HTTP Task's raw ``request`` and ``response`` (API reference "TestState": TRACE "Shows the HTTP
    request and response for an HTTP Task"); the connection's additions to the request only with
    ``revealSecrets`` ("a secret includes the data that an EventBridge connection adds to modify the HTTP
    request headers, query parameters, and body"). http_task.py notes both."""
    noted = (teststate_inspect.http_notes(worker.env) if worker.env is not None else None) or {}
    found: dict[str, Any] = {}
    if "request" in noted:
        found["request"] = noted["request"] if reveal_secrets else noted["hiddenRequest"]
    if "response" in noted:
        found["response"] = noted["response"]
    return found


def _mocked(  # noqa: PLR0917 - the request's parts the mock depends on
    name: str,
    state: dict[str, Any],
    mock: dict[str, Any],
    config: dict[str, Any],
    state_input: Any,
    language: str,
    reveal_secrets: Any,
) -> tuple[dict[str, Any], CaseMocks | None]:
    """(the state to run, its mocks): the mock checked as AWS checks it; a mocked Map or Parallel runs as
    a Task given the mocked result (teststate_map.py)."""
    if "mapIterationFailureCount" in config and not mock:  # AWS's words (test_state_mock_validation)
        raise AwsError(
            "ValidationException",
            "TestState does not support MapIterationFailureCount when a mock is not specified.",
        )
    mocked_result = teststate_mock.check(state, mock, bool(reveal_secrets))
    run_state = state
    if state.get("Type") in ("Map", "Parallel") and mock:
        run_state = teststate_map.as_mocked_task(state)
        reader_data = _json_field(config.get("mapItemReaderData"), "mapItemReaderData", None)
        failures = int(config.get("mapIterationFailureCount") or 0)
        teststate_map.check_failure_count(state, state_input, language, failures, reader_data, mocked_result)
        # A mocked error is the Map's error whatever the failure count (as recorded on AWS: LocalStack's
        # AWS-validated snapshot test_state/test_state_configuration, ``..._item_reader_with_error``).
        exceeded = teststate_map.threshold_exceeded(state, state_input, language, failures, reader_data)
        if exceeded and "errorOutput" not in mock:
            error, cause = teststate_map.EXCEEDED
            mock = {"errorOutput": {"error": error, "cause": cause}}
    if "result" not in mock and "errorOutput" not in mock:
        return run_state, None
    thrown = mock.get("errorOutput")
    mocked = to_moto(
        mocked_result,
        ThrowSpec(Error=thrown.get("error", ""), Cause=thrown.get("cause", "")) if thrown else None,
    )
    return run_state, CaseMocks("TestState", {name: {0: mocked}})


def _definition(raw: str | None) -> dict[str, Any]:
    problems = [
        item
        for item in validation.diagnose(raw)
        if item.code == "INVALID_JSON_DESCRIPTION" or item.message == validation.NOT_AN_OBJECT
    ]
    if problems:
        raise AwsError("InvalidDefinition", problems[0].message)
    found: dict[str, Any] = json.loads(raw or "{}")
    return found


def test_state(self: StepFunctionResponse) -> ActionResult:
    definition = _definition(self._get_param("definition"))
    name, state, language = _the_state(definition, self._get_param("stateName"))
    if teststate_context.STATE_NAME not in _targets(state):
        name = teststate_context.STATE_NAME  # the name AWS runs the state under (teststate_context.py)
    _schema_refusal(definition, name, state, str(state.get("QueryLanguage", language)))
    language = str(state.get("QueryLanguage", language))
    state_input = _json_field(self._get_param("input"), "input", {})
    variables = _json_field(self._get_param("variables"), "variables", {})
    given_context = _json_field(self._get_param("context"), "context", None)
    mock = self._get_param("mock") or {}
    config = self._get_param("stateConfiguration") or {}
    run_state, mocks = _mocked(
        name, state, mock, config, state_input, language, self._get_param("revealSecrets")
    )
    if mocks is None and given_context is not None:
        raise AwsError("ValidationException", "context is only accepted together with a mock")
    context = None if given_context is None else teststate_context.checked(given_context, state)
    if mocks is None:
        teststate_mock.check_unmocked(state, self._get_param("roleArn"))
    role = self._get_param("roleArn")
    execution, worker = _run(
        _machine(name, run_state, language),
        state_input,
        mocks=mocks,
        variables=variables,
        context=context,
        role_arn=role,
        backend=self.stepfunction_backend,
    )
    events = _events(worker)
    entered = _entered(events)
    error, cause = _first_error(events)
    answer: dict[str, Any] = {}
    next_entries = [(entered_name, value) for entered_name, value in entered[1:] if entered_name != name]
    retry = _retry(state, error, int(config.get("retrierRetryCount", 0))) if error is not None else None
    if retry is not None and "retryBackoffIntervalSeconds" in retry:
        answer = {"status": "RETRIABLE", "error": error, "cause": cause or "", "errorDetails": retry}
    elif error is not None and next_entries:
        catch_index = next((i for i, rule in enumerate(state.get("Catch") or []) if _matches(rule, error)), 0)
        caught_by, caught_output = next_entries[0]
        answer = {"status": "CAUGHT_ERROR", "error": error, "cause": cause or "", "nextState": caught_by}
        answer |= {"output": json.dumps(caught_output), "errorDetails": {"catchIndex": catch_index}}
    elif execution.exec_status != ExecutionStatus.SUCCEEDED:
        answer = {
            "status": "FAILED",
            "error": execution.error or error or "States.Runtime",
            "cause": execution.cause or cause or "",
        } | ({"errorDetails": retry} if retry else {})
    else:
        answer = {"status": "SUCCEEDED"}
        if next_entries:
            answer |= {"nextState": next_entries[0][0], "output": json.dumps(next_entries[0][1])}
        else:
            answer["output"] = json.dumps(execution.output)
    details = answer.pop("errorDetails", None)
    level = self._get_param("inspectionLevel") or "INFO"
    if level in ("DEBUG", "TRACE"):
        inspection = _inspection(events, worker, state, state_input, language)
        inspection |= {"errorDetails": details} if details else {}
        inspection |= _http_trace(worker, self._get_param("revealSecrets")) if level == "TRACE" else {}
        answer["inspectionData"] = inspection
    return ActionResult(answer)


def install() -> None:
    StepFunctionResponse.test_state = test_state  # type: ignore[attr-defined]
    teststate_inspect.install()
    teststate_context.install()
