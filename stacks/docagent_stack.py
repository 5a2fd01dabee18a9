"""The DocAgent stack: storage, functions, the workflow and its observability, wired together."""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Stack
from constructs import Construct

from stacks import outputs
from stacks.config import DocAgentConfig
from stacks.lambdas import Functions
from stacks.observability import Observability
from stacks.storage import Storage
from stacks.workflow import Workflow


class DocAgentStack(Stack):
    """Crash-proof document review: a Distributed Map over documents with durable, idempotent steps."""

    def __init__(self, scope: Construct, construct_id: str, *, config: DocAgentConfig, **kwargs: Any) -> None:
        super().__init__(
            scope,
            construct_id,
            description="docagent: AI document review on Step Functions (Distributed Map, redrivable)",
            **kwargs,
        )
        self.config = config
        self.storage = Storage(self, "Storage")
        self.functions = Functions(self, "Functions", config=config, storage=self.storage)
        self.workflow = Workflow(
            self, "Workflow", config=config, storage=self.storage, functions=self.functions.by_id
        )
        self.observability = Observability(
            self,
            "Observability",
            config=config,
            state_machine=self.workflow.state_machine,
            functions=self.functions.by_id,
        )

        CfnOutput(self, outputs.BUCKET, value=self.storage.bucket.bucket_name)
        CfnOutput(self, outputs.STATE_MACHINE, value=self.workflow.state_machine.state_machine_arn)
        CfnOutput(self, outputs.IDEMPOTENCY_TABLE, value=self.storage.idempotency_table.table_name)
        CfnOutput(self, outputs.REFERENCE_TABLE, value=self.storage.reference_table.table_name)
        CfnOutput(self, outputs.ALERT_TOPIC, value=self.observability.topic.topic_arn)
        CfnOutput(self, outputs.DASHBOARD, value=self.observability.dashboard.dashboard_name)
        for function_id, function in self.functions.by_id.items():
            CfnOutput(self, outputs.function_name_output(function_id), value=function.function_name)
