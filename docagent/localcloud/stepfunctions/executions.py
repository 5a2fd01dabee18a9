"""StartExecution as Step Functions answers it: generated names, validated names and ARNs, AWS error codes.

As of 2026-11, AWS API reference "StartExecution": without a name, Step Functions generates a UUID as the
execution name; a name is 1-80 characters and must not contain white space, brackets ``< > { } [ ]``,
wildcards ``? *``, the special characters ``" # % \\ ^ | ~ ` $ & , ; : /``, control characters
(U+0000-001F, U+007F-009F, U+FFFE-FFFF), surrogates or U+10FFFF. Breaking a rule is ``InvalidName``;
a malformed state machine ARN is ``InvalidArn``.

The same rules hold for state machine names (CreateStateMachine). Step Functions Local's test-case
suffix (``stateMachineArn#TestCase``) is split off here and handed to the mock configuration.
"""

from __future__ import annotations

import datetime
import inspect
import json
import re
import threading
import uuid
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

from moto.core.exceptions import AWSError as ServiceException
from moto.core.exceptions import JsonRESTError
from moto.core.responses import ActionResult
from moto.core.utils import iso_8601_datetime_with_milliseconds
from moto.logs.models import logs_backends
from moto.stepfunctions.models import StepFunctionBackend
from moto.stepfunctions.parser import api as parser_api
from moto.stepfunctions.parser.asl.component.state import state as state_module
from moto.stepfunctions.parser.asl.eval.evaluation_details import ExecutionDetails
from moto.stepfunctions.parser.backend.execution import Execution
from moto.stepfunctions.parser.models import StepFunctionsParserBackend
from moto.stepfunctions.responses import StepFunctionResponse

from docagent.localcloud.stepfunctions import json_errors

NAME_MAX = 80
_FORBIDDEN = set(' <>{}[]?*"#%\\^|~`$&,;:/')
_STATE_MACHINE_ARN = re.compile(
    r"^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:stateMachine:(?P<name>[^:#]+)(?::(?P<qualifier>[^:#]+))?$"
)


class AwsError(JsonRESTError):
    """An error with its AWS error code, rendered as Step Functions renders it (HTTP 400, JSON body)."""

    code = 400

    def __init__(self, error_code: str, message: str) -> None:
        super().__init__(error_code, message)


def _forbidden_char(char: str) -> bool:
    point = ord(char)
    return (
        char in _FORBIDDEN
        or char.isspace()
        or point <= 0x1F
        or 0x7F <= point <= 0x9F
        or 0xD800 <= point <= 0xDFFF
        or point in (0xFFFE, 0xFFFF, 0x10FFFF)
    )


def name_problem(name: str) -> str | None:
    """Why ``name`` is not a valid Step Functions name (execution or state machine), or None."""
    if not 1 <= len(name) <= NAME_MAX:
        return f"Invalid Name: '{name}' (a name is 1 to {NAME_MAX} characters long)"
    bad = sorted({char for char in name if _forbidden_char(char)})
    if bad:
        shown = ", ".join(repr(char) for char in bad)
        return f"Invalid Name: '{name}' (it must not contain {shown})"
    return None


def validate_name(name: str) -> None:
    problem = name_problem(name)
    if problem:
        raise AwsError("InvalidName", problem)


def checked_input(raw: str | None) -> str:
    """An execution's input text ("{}" when absent), refused with InvalidExecutionInput unless it is JSON,
    in AWS's frame ("Invalid State Machine Execution Input: '...'") and, where recorded, words
    (json_errors.py)."""
    if raw is None:
        return "{}"
    if not raw.strip():  # as recorded on AWS (test_sfn_api ``test_invalid_start_execution_input``)
        raise AwsError(
            "InvalidExecutionInput", "Invalid State Machine Execution Input: 'Invalid execution input.'"
        )
    try:
        json.loads(raw)
    except json.JSONDecodeError as error:
        reason = json_errors.parse_error(raw, error).reason
        raise AwsError(
            "InvalidExecutionInput", f"Invalid State Machine Execution Input: '{reason}'"
        ) from None
    return raw


def split_test_case(state_machine_arn: str) -> tuple[str, str | None]:
    """``arn...:stateMachine:NAME#CASE`` (Step Functions Local's mocked test cases) into ARN and case."""
    arn, separator, case = state_machine_arn.partition("#")
    return arn, (case if separator else None)


def validate_state_machine_arn(arn: str) -> None:
    if not _STATE_MACHINE_ARN.match(arn or ""):
        raise AwsError("InvalidArn", f"Invalid Arn: 'Resource type not valid in this context: {arn}'")


# Called with (backend, ARN, name, input, trace header) as StartExecution starts: an answer (not None) is the
# execution started (versions.py starts a version's or an alias's ARN).
QUALIFIED_STARTERS: list[Callable[..., Any]] = []

# Called with (execution ARN, test case) before an execution with a ``#TestCase`` suffix starts.
TestCaseListener = Callable[[str, str, str], None]
_test_case_listeners: list[TestCaseListener] = []


def on_test_case(listener: TestCaseListener) -> None:
    if listener not in _test_case_listeners:
        _test_case_listeners.append(listener)


START_LOCK = threading.Lock()


def _start_execution(
    self: StepFunctionsParserBackend,
    state_machine_arn: str,
    name: str | None = None,
    execution_input: str | None = None,
    trace_header: str | None = None,
) -> Any:
    arn, test_case = split_test_case(state_machine_arn)
    validate_state_machine_arn(arn)
    name = name if name is not None else str(uuid.uuid4())
    validate_name(name)
    checked_input(execution_input)
    if test_case is not None:
        state_machine = self.describe_state_machine(arn)
        prefix = f"arn:{self.partition}:states:{self.region_name}:{self.account_id}"
        execution_arn = f"{prefix}:execution:{state_machine.name}:{name}"
        for listener in _test_case_listeners:
            listener(execution_arn, state_machine.name, test_case)
    # One StartExecution at a time: moto checks "same name exists?" and then adds the execution, so concurrent
    # starts of one name could each create it. Step Functions starts it once: the others get the running
    # execution (same name and input) or ExecutionAlreadyExists.
    with START_LOCK:
        for starter in QUALIFIED_STARTERS:  # a version's or alias's ARN (versions.py)
            started = starter(self, arn, name, execution_input, trace_header)
            if started is not None:
                return started
        return _original_start_execution(self, arn, name, execution_input, trace_header)  # type: ignore[arg-type]


def _create_state_machine(self: StepFunctionsParserBackend, name: str, *args: Any, **kwargs: Any) -> Any:
    """CreateStateMachine's refusals (API reference "CreateStateMachine", looked up 2026-12-01): it is
    idempotent on the name, definition and type (and logging and tracing configuration: not compared
    here); "a different roleArn or tags" are ignored; a different definition is StateMachineAlreadyExists.
    The logging configuration is checked as AWS checks it (``check_logging``); Express workflows support
    neither ``.sync`` nor ``.waitForTaskToken`` ("Choosing workflow type")."""
    validate_name(name or "")
    asked = inspect.signature(_original_create_state_machine).bind(self, name, *args, **kwargs).arguments
    check_logging(self, asked.get("loggingConfiguration"))
    if (asked.get("sm_type") or "STANDARD") == "EXPRESS":
        for where, refused in express_refusals(_parsed(asked.get("definition"))):
            raise AwsError(
                "InvalidDefinition",
                f"Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: {refused} at {where}'",
            )
    for existing in self.state_machines:
        if existing.name == name and _differs(existing, asked):
            raise AwsError("StateMachineAlreadyExists", f"State Machine Already Exists: '{existing.arn}'")
    return _original_create_state_machine(self, name, *args, **kwargs)


def _update_state_machine(self: StepFunctionsParserBackend, arn: str, *args: Any, **kwargs: Any) -> Any:
    asked = inspect.signature(_original_update_state_machine).bind(self, arn, *args, **kwargs).arguments
    check_logging(self, asked.get("logging_configuration"))
    return _original_update_state_machine(self, arn, *args, **kwargs)


def check_logging(backend: StepFunctionsParserBackend, configuration: Any) -> None:
    """A logging configuration as CreateStateMachine and UpdateStateMachine check it: a level other than
    OFF, or any destination at all, needs exactly one destination; the destination's log group must exist.
    AWS's words (InvalidLoggingConfiguration, as recorded on AWS in LocalStack's AWS-validated snapshot
    tests/aws/services/stepfunctions/v2/test_sfn_api_logs, read 2026-12-04; API reference
    "LoggingConfiguration": "destinations: An array of objects that describes where your execution history
    events will be logged. Limited to size 1. Required, if your log level is not set to OFF.")."""
    configuration = configuration or {}
    destinations = configuration.get("destinations") or []
    if len(destinations) > 1 or (configuration.get("level", "OFF") != "OFF" and not destinations):
        raise AwsError(
            "InvalidLoggingConfiguration", _LOGGING_REFUSED + "Must specify exactly one Log Destination."
        )
    for destination in destinations:
        arn = ((destination or {}).get("cloudWatchLogsLogGroup") or {}).get("logGroupArn") or ""
        found = _LOG_GROUP_ARN.match(arn)
        groups = logs_backends[backend.account_id][found["region"] if found else backend.region_name].groups
        if found is None or found["name"] not in groups:
            raise AwsError("InvalidLoggingConfiguration", _LOGGING_REFUSED + "Log Destination not found.")


_LOGGING_REFUSED = "Invalid Logging Configuration: "
_LOG_GROUP_ARN = re.compile(
    r"^arn:aws[a-z-]*:logs:(?P<region>[a-z0-9-]+):\d{12}:log-group:(?P<name>[^:]+)(:\*)?$"
)


# What an EXPRESS state machine may not hold, in AWS's words as recorded in LocalStack's AWS-validated
# snapshots test_sfn_api_express and test_sfn_api_validation (read 2026-12-04); the .waitForTaskToken one
# ends with a space (two before " at " in CreateStateMachine's message).
EXPRESS_REFUSED = {
    "activity": "Activity ARN",
    ".sync": "'.sync' service integration",
    ".waitForTaskToken": "'.waitForTaskToken' service integration ",
}


def express_refusals(machine: Any) -> Iterator[tuple[str, str]]:
    """(JSON pointer, message) of what an EXPRESS state machine may not hold."""
    for where, pattern in callback_patterns(machine, ""):
        yield f"{where}/Resource", f"Express state machine does not support {EXPRESS_REFUSED[pattern]}"


def _parsed(definition: Any) -> Any:
    try:
        return json.loads(definition) if isinstance(definition, str) else None
    except ValueError:
        return None  # the definition checks name what is wrong with it


def _differs(existing: Any, asked: dict[str, Any]) -> bool:
    """Whether a create with ``asked`` is not an idempotent repeat of ``existing``."""
    same_definition = _parsed(existing.definition) == _parsed(asked.get("definition"))
    same_type = (existing.type or "STANDARD") == (asked.get("sm_type") or "STANDARD")
    return not (same_definition and same_type)  # "a different roleArn or tags" are ignored, as on AWS


def callback_patterns(machine: Any, at: str) -> Iterator[tuple[str, str]]:
    """(state's JSON pointer, pattern) of every ``.sync``/``.waitForTaskToken`` Resource in ``machine``."""
    states = machine.get("States") if isinstance(machine, dict) else None
    for state_name, state in (states or {}).items():
        if not isinstance(state, dict):
            continue
        where = f"{at}/States/{state_name}"
        resource = state.get("Resource")
        if isinstance(resource, str):
            if ":activity:" in resource:
                yield where, "activity"
            for pattern in (".waitForTaskToken", ".sync"):
                if pattern in resource:
                    yield where, pattern
        for index, branch in enumerate(state.get("Branches") or []):
            yield from callback_patterns(branch, f"{where}/Branches/{index}")
        for key in ("ItemProcessor", "Iterator"):
            yield from callback_patterns(state.get(key), f"{where}/{key}")


def _give_parser_errors_their_codes() -> None:
    """moto's parser API errors (InvalidDefinition, ...) name their code in ``code``, which moto's
    rendering ignores (it reads ``TYPE``): they reached clients with an empty error code. Belongs in moto."""
    for value in vars(parser_api).values():
        if isinstance(value, type) and issubclass(value, ServiceException) and value is not ServiceException:
            declared = vars(value).get("code")
            if isinstance(declared, str) and not value.TYPE:
                value.TYPE = declared


def _start_execution_details(self: Execution) -> ExecutionDetails:
    """``$$.Execution.StartTime`` as AWS gives it, an ISO 8601 string ("2019-03-26T20:14:13.192Z", developer
    guide "Accessing execution data from the Context object", looked up 2026-12-01). moto put a datetime
    there: an output holding it failed DescribeExecution with HTTP 500 (and the status-change event)."""
    details = _original_start_execution_details(self)
    details.start_time = iso_8601_datetime_with_milliseconds(self.start_date)  # type: ignore[misc]
    return details


class _EnteredTime(datetime.datetime):
    """``$$.State.EnteredTime`` as AWS gives it, in milliseconds with ``Z`` (as ``StartTime`` above); moto's
    state entry wrote ``isoformat()`` (microseconds, ``+00:00``). Its module's only use of ``datetime``."""

    def isoformat(self, sep: str = "T", timespec: str = "auto") -> str:
        return str(iso_8601_datetime_with_milliseconds(self))


_original_start_execution = StepFunctionsParserBackend.start_execution
_original_create_state_machine = StepFunctionsParserBackend.create_state_machine
_original_update_state_machine = StepFunctionsParserBackend.update_state_machine
_original_start_execution_details = Execution.get_start_execution_details


def _start_execution_response(self: StepFunctionResponse) -> ActionResult:
    """StartExecution passing its ``traceHeader`` on (moto's response drops it): Step Functions keeps the
    header of the start that created the execution, and DescribeExecution returns it."""
    execution = self.stepfunction_backend.start_execution(  # type: ignore[call-arg]  # the parser backend takes it
        self._get_param("stateMachineArn"),
        self._get_param("name"),
        self._get_param("input", if_none="{}"),
        self._get_param("traceHeader"),
    )
    return ActionResult({"executionArn": execution.execution_arn, "startDate": execution.start_date})


def _with_trace_header(
    describe: Callable[[StepFunctionResponse], Any],
) -> Callable[[StepFunctionResponse], Any]:
    def describe_execution(self: StepFunctionResponse) -> Any:
        result = describe(self)
        try:
            execution = self.stepfunction_backend.describe_execution(self._get_param("executionArn"))
        except ServiceException:  # a Map Run child (map_children.py describes it): it has no header
            return result
        header = getattr(execution, "trace_header", None)
        if header:
            result.result["traceHeader"] = header
        if "output" in result.result and hasattr(execution, "exec_worker"):
            # The output is JSON text (API reference "DescribeExecution"); moto passed a string result as
            # it was ("R1" instead of "\"R1\""), and spaced objects that the history gives compact.
            result.result["output"] = json.dumps(getattr(execution, "output", None), separators=(",", ":"))
        version_of = getattr(execution, "state_machine", None)  # a version's execution (versions.py)
        source = getattr(version_of, "source_arn", None)
        if source:
            result.result["stateMachineVersionArn"] = result.result["stateMachineArn"]
            result.result["stateMachineArn"] = source
        alias = vars(execution).get("alias_arn")
        if alias:
            result.result["stateMachineAliasArn"] = alias
        return result

    return describe_execution


def _arn_prefix_checked(original: Callable[[Any, str], None]) -> Callable[[Any, str], None]:
    """A state machine, execution or activity ARN that does not start with ``arn:`` is "Invalid Arn: 'Invalid
    ARN prefix: ...'" (InvalidArn), as recorded on AWS in LocalStack's AWS-validated snapshots test_sfn_api
    (``test_describe_invalid_arn_sm``, ``test_list_execution_invalid_arn``,
    ``test_describe_execution_invalid_arn``) and test_sfn_api_activities (read 2026-12-04); moto's words
    were its own."""

    def validate(self: Any, arn: str) -> None:
        if not (arn or "").startswith("arn:"):
            raise AwsError("InvalidArn", f"Invalid Arn: 'Invalid ARN prefix: {arn}'")
        if arn.split(":")[5:6] == ["express"]:  # an Express execution (EXPRESS below)
            raise AwsError("InvalidArn", "Invalid Arn: 'Resource type not valid in this context: express'")
        original(self, arn)

    return validate


# An Express state machine's asynchronous executions are not kept by Step Functions (developer guide
# "Choosing workflow type": Express execution history goes to CloudWatch Logs): as recorded on AWS in
# LocalStack's AWS-validated snapshot test_sfn_api_express ``test_start_async_describe_history_execution``
# (read 2026-12-04), StartExecution answers an ``arn:...:express:MACHINE:NAME:ID`` ARN, ListExecutions is
# StateMachineTypeNotSupported and Describe/Stop/GetExecutionHistory answer InvalidArn.
NOT_FOR_EXPRESS = "This operation is not supported by this type of state machine"


def _express_arn(original: Callable[..., None]) -> Callable[..., None]:
    def init(self: Execution, *args: Any, **kwargs: Any) -> None:
        arn = str(kwargs.get("exec_arn") or "")
        machine_type = getattr(kwargs.get("state_machine"), "type", None)  # moto's sm_type is always STANDARD
        if machine_type == "EXPRESS" and ":execution:" in arn:
            kwargs["exec_arn"] = f"{arn.replace(':execution:', ':express:', 1)}:{uuid.uuid4()}"
        original(self, *args, **kwargs)

    return init


def _express_not_listed(original: Callable[..., Any]) -> Callable[..., Any]:
    def list_executions(
        self: StepFunctionsParserBackend, state_machine_arn: str, *args: Any, **kwargs: Any
    ) -> Any:
        if self.describe_state_machine(state_machine_arn).type == "EXPRESS":
            raise AwsError("StateMachineTypeNotSupported", NOT_FOR_EXPRESS)
        return original(self, state_machine_arn, *args, **kwargs)

    return list_executions


def install() -> None:
    vars(state_module)["datetime"] = SimpleNamespace(datetime=_EnteredTime, timezone=datetime.timezone)
    for name in ("_validate_machine_arn", "_validate_execution_arn", "_validate_activity_arn"):
        setattr(StepFunctionBackend, name, _arn_prefix_checked(getattr(StepFunctionBackend, name)))
    Execution.__init__ = _express_arn(Execution.__init__)  # type: ignore[method-assign]
    StepFunctionsParserBackend.list_executions = _express_not_listed(  # type: ignore[method-assign]
        StepFunctionsParserBackend.list_executions
    )
    Execution.get_start_execution_details = _start_execution_details  # type: ignore[method-assign]
    StepFunctionsParserBackend.start_execution = _start_execution  # type: ignore[method-assign]
    StepFunctionsParserBackend.create_state_machine = _create_state_machine  # type: ignore[method-assign]
    StepFunctionsParserBackend.update_state_machine = _update_state_machine  # type: ignore[method-assign]
    StepFunctionResponse.start_execution = _start_execution_response  # type: ignore[method-assign]
    # Wraps what is installed (redrive.py's redrive fields), once: patches.install runs this once per process.
    StepFunctionResponse.describe_execution = _with_trace_header(  # type: ignore[method-assign,assignment]
        StepFunctionResponse.describe_execution
    )
    _give_parser_errors_their_codes()
