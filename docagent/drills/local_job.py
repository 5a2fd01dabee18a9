"""A job on a local cloud, seen the way the drills see it: its clients, its execution, its one reader of
records (docagent/operations/records.py), its tickets."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from typing import Any

from docagent.localcloud.deploy import LocalStack
from docagent.operations.context import OperatorContext
from docagent.operations.records import JobRecords
from functions import storage
from functions.actions.allowed import LEDGER_DESTINATION, AllowedTargets
from stacks import outputs as names


class LocalJob:
    """A job on a local cloud's deployment: started here, read through the operator's one reader of a job's
    records (docagent/operations/records.py)."""

    def __init__(self, ctx: OperatorContext, job_id: str) -> None:
        self.ctx = ctx
        self.job_id = job_id
        self.records = JobRecords(ctx, job_id)

    @classmethod
    def on(cls, endpoint: str, stack: LocalStack, job_id: str) -> LocalJob:
        return cls(OperatorContext.of_local_stack(endpoint, stack.stack_name, stack.outputs), job_id)

    def renamed(self, job_id: str) -> LocalJob:
        """Another job on the same deployment (the same clients)."""
        return LocalJob(self.ctx, job_id)

    @property
    def s3(self) -> Any:
        return self.ctx.client("s3")

    @property
    def sfn(self) -> Any:
        return self.ctx.client("stepfunctions")

    @property
    def dynamodb(self) -> Any:
        return self.ctx.client("dynamodb")

    @property
    def bucket(self) -> str:
        return self.ctx.bucket

    @property
    def execution_arn(self) -> str:
        return self.records.execution_arn

    def start(self, request: dict[str, Any]) -> None:
        self.sfn.start_execution(
            stateMachineArn=self.ctx.state_machine_arn, name=self.job_id, input=json.dumps(request)
        )

    def status(self) -> str:
        """The execution's status now (the reader's cached records are dropped first)."""
        self.records.refresh()
        return self.records.status

    def map_run_counts(self) -> dict[str, int] | None:
        self.records.refresh()
        return self.records.map_run_counts()

    def map_run_entries(self, group: str) -> list[dict[str, Any]]:
        """One group (SUCCEEDED, FAILED, PENDING) of the Map Run's ResultWriter files."""
        self.records.refresh()
        return list((self.records.map_run_files or {}).get(group, []))

    def model_path(self) -> str:
        """How the deployed ProcessDocument reaches its model: "bedrock-converse" or "offline"."""
        configuration = self.records.function_configuration(
            names.function_name_output(names.PROCESS_DOCUMENT)
        )
        environment = configuration["Environment"]["Variables"]
        return "bedrock-converse" if environment.get("MODEL_PROVIDER") == "bedrock" else "offline"

    def tickets(self, destination: str = "tickets") -> list[dict[str, Any]]:
        """The job's records at an http destination of the deployed RunActions function (the invoice example's
        tickets: destination ``tickets``), looked up by the job's reference."""
        configuration = self.records.function_configuration(names.function_name_output(names.RUN_ACTIONS))
        allowed = AllowedTargets.model_validate_json(
            configuration["Environment"]["Variables"].get("ACTIONS_ALLOWED") or "{}"
        )
        url = allowed.destinations.get(destination)
        if url is None:
            return []
        if url != LEDGER_DESTINATION:
            query = urllib.parse.urlencode({"reference": self.job_id})
            with urllib.request.urlopen(f"{url}?{query}", timeout=10) as response:
                found: list[dict[str, Any]] = json.loads(response.read())["tickets"]
            return found
        records = self.records.read_many(self.records.keys(storage.LEDGER_PREFIX))
        return [record for record in records if record and record.get("reference") == self.job_id]
