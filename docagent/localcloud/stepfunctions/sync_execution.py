"""StartSyncExecution: run an Express state machine and answer with its result.

AWS API reference "StartSyncExecution" (looked up 2026-12-04): "Starts a Synchronous Express state machine
execution. StartSyncExecution is not available for STANDARD workflows"; it answers 200 OK even when the
execution fails (``status`` SUCCEEDED | FAILED | TIMED_OUT, ``error``, ``cause``; ``output`` only when it
succeeded), with ``executionArn``, ``stateMachineArn``, ``name``, ``startDate``, ``stopDate``, ``input``,
``traceHeader`` and ``billingDetails``. Express executions are not listed by ListExecutions, so the
execution is not kept with the state machine's. An Express workflow runs at most five minutes ("Choosing
workflow type", developer guide); a run still going then is TIMED_OUT.

moto has the execution class (``SyncExecution``) but no backend method or handler; this is them.
"""

from __future__ import annotations

import copy
import datetime
import threading
import uuid
from typing import Any

from moto.core.responses import ActionResult
from moto.stepfunctions.parser.api import StateMachineType, SyncExecutionStatus
from moto.stepfunctions.parser.backend.execution import SyncExecution, SyncExecutionWorkerCommunication
from moto.stepfunctions.responses import StepFunctionResponse

from docagent.localcloud.stepfunctions.executions import (
    AwsError,
    checked_input,
    validate_name,
    validate_state_machine_arn,
)

EXPRESS_LIMIT_SECONDS = 300.0


class _Communication(SyncExecutionWorkerCommunication):
    finished: threading.Event

    def terminated(self) -> None:
        super().terminated()
        self.finished.set()


class _WaitedSyncExecution(SyncExecution):
    finished: threading.Event

    def _get_start_execution_worker_comm(self) -> SyncExecutionWorkerCommunication:
        communication = _Communication(self)
        communication.finished = self.finished
        return communication


def _start_sync_execution(self: StepFunctionResponse) -> ActionResult:
    backend = self.stepfunction_backend
    arn = self._get_param("stateMachineArn") or ""
    validate_state_machine_arn(arn)
    state_machine = backend.describe_state_machine(arn)
    if (state_machine.type or "STANDARD") != "EXPRESS":
        raise AwsError(
            "StateMachineTypeNotSupported", "This operation is not supported by this type of state machine"
        )
    name = self._get_param("name") or str(uuid.uuid4())
    validate_name(name)
    raw_input = checked_input(self._get_param("input"))
    snapshot = copy.deepcopy(
        state_machine, {id(state_machine.executions): [], id(state_machine.backend): state_machine.backend}
    )
    prefix = f"arn:{backend.partition}:states:{backend.region_name}:{backend.account_id}"
    execution = _WaitedSyncExecution(
        name=name, sm_type=StateMachineType.EXPRESS, role_arn=snapshot.roleArn,
        exec_arn=f"{prefix}:express:{state_machine.name}:{name}:{uuid.uuid4()}",
        account_id=backend.account_id, region_name=backend.region_name, state_machine=snapshot,  # type: ignore[arg-type]  # the parser's own machine
        start_date=datetime.datetime.now(tz=datetime.UTC), cloud_watch_logging_session=None,
        input_data=raw_input, trace_header=self._get_param("traceHeader"), activity_store={},
    )  # fmt: skip
    execution.finished = threading.Event()
    started = datetime.datetime.now(tz=datetime.UTC)
    execution.start()
    if not execution.finished.wait(EXPRESS_LIMIT_SECONDS):
        execution.stop(datetime.datetime.now(tz=datetime.UTC), "States.Timeout", None)
        execution.sync_execution_status = SyncExecutionStatus.TIMED_OUT
    answer: dict[str, Any] = dict(execution.to_start_sync_execution_output())
    answer.pop("inputDetails", None)
    answer.pop("outputDetails", None)
    elapsed_ms = (datetime.datetime.now(tz=datetime.UTC) - started).total_seconds() * 1000
    # Billed in 100 ms steps at the smallest memory size, 64 MB (developer guide "Express Workflows" pricing).
    answer["billingDetails"] = {
        "billedMemoryUsedInMB": 64,
        "billedDurationInMilliseconds": max(100, int(-(-elapsed_ms // 100) * 100)),
    }
    return ActionResult({key: value for key, value in answer.items() if value is not None})


def install() -> None:
    StepFunctionResponse.start_sync_execution = _start_sync_execution  # type: ignore[attr-defined]
