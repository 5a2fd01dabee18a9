"""State machine versions and aliases: publishing, listing and deleting versions, and running one.

AWS API reference "PublishStateMachineVersion", "ListStateMachineVersions", "DeleteStateMachineVersion",
"StartExecution" (looked up 2026-12-04): a version is an immutable snapshot ``arn:...:stateMachine:NAME:N``;
StartExecution accepts a version's or an alias's ARN (an alias routes to its versions by weight) and the
execution belongs to the state machine, naming its version (``stateMachineVersionArn``) and alias
(``stateMachineAliasArn``). As recorded on AWS in LocalStack's AWS-validated snapshot test_sfn_api_versioning
(read 2026-12-04): publishing an unchanged state machine again answers the same version
(``test_idempotent_publish``); versions are listed newest first; deleting a version that is gone is no
error (``test_list_delete_version``); an execution of a version is listed under its state machine with
``stateMachineVersionArn`` (``test_start_version_execution``).

moto keeps the versions (``publish`` on create and update) but served none of these actions and failed
(HTTP 500) to start a version or alias. ListStateMachineVersions and ListMapRuns (which moto answered in
one page) are paged as every Step Functions list is (paging.py). ``revisionId`` as recorded on AWS
(``test_publish_state_machine_version``, ``test_empty_revision_with_publish_and_no_publish_on_creation``):
none until an update changes the machine, a new one for each such update, kept by a version published
from it; PublishStateMachineVersion with another revision is a ConflictException in the recorded words.
"""

from __future__ import annotations

import copy
import datetime
import json
import random
import re
import uuid
from typing import Any

from moto.core.responses import ActionResult
from moto.stepfunctions.parser.backend.execution import Execution
from moto.stepfunctions.responses import StepFunctionResponse

from docagent.localcloud.stepfunctions import executions, paging
from docagent.localcloud.stepfunctions.executions import AwsError
from docagent.localcloud.stepfunctions.variable_references import variable_references

_QUALIFIED = re.compile(
    r"^(?P<base>arn:[^:]+:states:[^:]+:\d{12}:stateMachine:[^:#]+):(?P<qualifier>[^:#]+)$"
)


def qualified(arn: str) -> tuple[str, str] | None:
    """(state machine ARN, version number or alias name) of a version's or alias's ARN (None: neither)."""
    found = _QUALIFIED.match(arn or "")
    return (found["base"], found["qualifier"]) if found else None


def _missing(arn: str) -> AwsError:
    return AwsError("StateMachineDoesNotExist", f"State Machine Does Not Exist: '{arn}'")


def _version_of(machine: Any, qualifier: str, arn: str) -> tuple[Any, str | None]:
    """(the version to run, the alias's ARN when ``qualifier`` is an alias)."""
    if qualifier.isdigit():
        version = machine.versions.get(int(qualifier))
        if version is None:
            raise _missing(arn)
        return version, None
    alias = machine.aliases.get(qualifier)
    if alias is None:
        raise _missing(arn)
    routes = alias.routing_configuration or []
    chosen = random.choices(routes, weights=[float(route.get("weight", 0)) for route in routes])[0]
    version = machine.versions.get(int(str(chosen["stateMachineVersionArn"]).rsplit(":", 1)[1]))
    if version is None:
        raise _missing(arn)
    return version, alias.arn


def start(backend: Any, arn: str, name: str, execution_input: str | None, trace_header: str | None) -> Any:
    """StartExecution of a version's or alias's ARN: the version's definition, run under its machine."""
    base, qualifier = qualified(arn) or (arn, "")
    machine = backend.describe_state_machine(base)
    version, alias_arn = _version_of(machine, qualifier, arn)
    existing = machine._handle_name_input_idempotency(name, execution_input)
    if existing is not None:
        return existing
    execution = Execution(
        name=name, sm_type=machine.type, role_arn=version.roleArn,
        exec_arn=f"arn:{backend.partition}:states:{backend.region_name}:{backend.account_id}:execution:{machine.name}:{name}",
        account_id=backend.account_id, region_name=backend.region_name, state_machine=copy.deepcopy(version),
        start_date=datetime.datetime.now(tz=datetime.UTC), cloud_watch_logging_session=None,
        input_data=execution_input or "{}", trace_header=trace_header, activity_store={},
    )  # fmt: skip
    vars(execution)["alias_arn"] = alias_arn
    machine.executions.append(execution)
    execution.start()
    return execution


def alias_arn(execution: Any) -> str | None:
    found: str | None = vars(execution).get("alias_arn")
    return found


def _machine(self: StepFunctionResponse, arn: str) -> Any:
    if not (arn or "").startswith("arn:"):
        raise AwsError("InvalidArn", f"Invalid Arn: 'Invalid ARN prefix: {arn}'")
    return self.stepfunction_backend.describe_state_machine(arn)


def publish_state_machine_version(self: StepFunctionResponse) -> ActionResult:
    machine = _machine(self, str(self._get_param("stateMachineArn") or ""))
    asked, current = self._get_param("revisionId"), _revision(machine)
    if asked is not None and asked != current:
        raise AwsError(
            "ConflictException",
            f"Failed to publish the State Machine version for revision {asked}. "
            f"The current State Machine revision is {current}.",
        )
    latest = machine.latest_version
    if latest is None or not _same(latest, machine):
        machine.publish(self._get_param("description"))
        latest = machine.latest_version
        _stamp(machine)
    return ActionResult({"creationDate": latest.creation_date, "stateMachineVersionArn": latest.arn})


_REVISION = "docagent_revision"


def _revision(instance: Any) -> str | None:
    """A state machine's (or version's) revision: none until an update changes it (as recorded on AWS)."""
    found = vars(instance).get(_REVISION)
    return str(found) if found else None


def _content(machine: Any) -> tuple[Any, ...]:
    return tuple(json.dumps(getattr(machine, name, None), sort_keys=True, default=str) for name in _CONTENT)


_CONTENT = (
    "definition",
    "roleArn",
    "loggingConfiguration",
    "tracingConfiguration",
    "encryptionConfiguration",
)


def _same(version: Any, machine: Any) -> bool:
    """Whether ``version`` is what ``machine`` is now (publishing it again makes no new version)."""
    return bool((version.definition, version.roleArn) == (machine.definition, machine.roleArn))


def _stamp(machine: Any) -> None:
    """The version just published records the revision it was published from."""
    if machine.latest_version is not None and _revision(machine):
        setattr(machine.latest_version, _REVISION, _revision(machine))


def update_state_machine(self: StepFunctionResponse) -> ActionResult:
    """UpdateStateMachine answering ``revisionId``: a new one when the update changes the machine, none
    while no update has (both as recorded on AWS)."""
    try:
        machine = self.stepfunction_backend.describe_state_machine(str(self._get_param("stateMachineArn")))
    except Exception:
        return _original_update_state_machine(self)  # its own refusal
    before, versions, latest = _content(machine), machine.latest_version_number, machine.latest_version
    result = _original_update_state_machine(self)
    if latest is not None and machine.latest_version_number != versions and _same(latest, machine):
        # Publishing what the latest version already is answers that version (as PublishStateMachineVersion
        # does; recorded on AWS, test_empty_revision_with_publish_and_*): moto published another.
        machine.versions.pop(machine.latest_version_number, None)
        machine.latest_version, machine.latest_version_number = latest, versions
        answered: dict[str, Any] = dict(result.result)  # type: ignore[call-overload]
        result = ActionResult({**answered, "stateMachineVersionArn": latest.arn})
    if _content(machine) != before:
        # Derived from what the update made (not random): the journal replays updates after a restart and
        # the revision handed out before it must stay the machine's.
        made = json.dumps([machine.arn, _revision(machine), *_content(machine)])
        setattr(machine, _REVISION, str(uuid.uuid5(uuid.NAMESPACE_URL, made)))
        if machine.latest_version_number != versions:
            _stamp(machine)
    return _with_revision(result, _revision(machine))


def _describe_state_machine(self: StepFunctionResponse, arn: str) -> ActionResult:
    """DescribeStateMachine (of a machine or a version, and for an execution) with its ``revisionId``, its
    ``variableReferences`` (variable_references.py), and
    ``loggingConfiguration.includeExecutionData`` false when not set (as recorded on AWS, test_sfn_api and
    test_sfn_api_versioning: ``{"includeExecutionData": false, "level": "OFF"}``)."""
    result = _original_describe_state_machine(self, arn)
    try:
        revision = _revision(self.stepfunction_backend.describe_state_machine(arn))
    except Exception:
        revision = None
    answered: dict[str, Any] = dict(_with_revision(result, revision).result)  # type: ignore[call-overload]
    logging = answered.get("loggingConfiguration")
    if isinstance(logging, dict):
        answered["loggingConfiguration"] = {"includeExecutionData": False, **logging}
    try:
        references = variable_references(json.loads(str(answered.get("definition"))))
    except ValueError:
        references = {}
    return ActionResult({**answered, "variableReferences": references} if references else answered)


def _with_revision(result: ActionResult, revision: str | None) -> ActionResult:
    answered: dict[str, Any] = dict(result.result)  # type: ignore[call-overload]
    return ActionResult({**answered, "revisionId": revision} if revision else answered)


_original_update_state_machine = StepFunctionResponse.update_state_machine
_original_describe_state_machine = StepFunctionResponse._describe_state_machine


def list_state_machine_versions(self: StepFunctionResponse) -> ActionResult:
    machine = _machine(self, str(self._get_param("stateMachineArn") or ""))
    listed = [{"stateMachineVersionArn": version.arn, "creationDate": version.creation_date}
              for _, version in sorted(machine.versions.items(), reverse=True)]  # fmt: skip
    return ActionResult(_paged(self, "stateMachineVersions", listed, {"stateMachineArn": machine.arn}))


def _paged(self: StepFunctionResponse, key: str, items: list[Any], scope: dict[str, Any]) -> dict[str, Any]:
    """``items`` paged as paging.py pages every Step Functions list (``maxResults``, ``nextToken``)."""
    shown, token = paging.page(items, paging.page_size(self._get_param("maxResults")),
                               self._get_param("nextToken"), scope)  # fmt: skip
    return {key: shown, **({"nextToken": token} if token else {})}


def list_map_runs(self: StepFunctionResponse) -> ActionResult:
    """ListMapRuns with paging (moto answers every Map Run at once)."""
    arn = self._get_param("executionArn")
    runs = self.stepfunction_backend.list_map_runs(arn)["mapRuns"]
    return ActionResult(_paged(self, "mapRuns", list(runs), {"executionArn": arn}))


def delete_state_machine_version(self: StepFunctionResponse) -> ActionResult:
    arn = str(self._get_param("stateMachineVersionArn") or "")
    found = qualified(arn)
    if found is None or not found[1].isdigit():
        raise AwsError("InvalidArn", f"Invalid Arn: 'Invalid ARN prefix: {arn}'" if not arn.startswith("arn:")
                       else f"Invalid Arn: '{arn}'")  # fmt: skip
    try:
        machine = self.stepfunction_backend.describe_state_machine(found[0])
    except Exception:
        return ActionResult({})
    machine.versions.pop(int(found[1]), None)
    return ActionResult({})


def start_if_qualified(backend: Any, arn: str, name: str, execution_input: str | None,
                       trace_header: str | None) -> Any:  # fmt: skip
    """executions.py's StartExecution hook: a version's or alias's ARN starts here (None: neither)."""
    return start(backend, arn, name, execution_input, trace_header) if qualified(arn) else None


def install() -> None:
    executions.QUALIFIED_STARTERS.append(start_if_qualified)
    StepFunctionResponse.publish_state_machine_version = publish_state_machine_version  # type: ignore[attr-defined]
    StepFunctionResponse.list_state_machine_versions = list_state_machine_versions  # type: ignore[attr-defined]
    StepFunctionResponse.delete_state_machine_version = delete_state_machine_version  # type: ignore[attr-defined]
    StepFunctionResponse.list_map_runs = list_map_runs  # type: ignore[method-assign]
    StepFunctionResponse.update_state_machine = update_state_machine  # type: ignore[method-assign]
    StepFunctionResponse._describe_state_machine = _describe_state_machine  # type: ignore[method-assign,assignment]
