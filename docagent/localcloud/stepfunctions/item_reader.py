"""The Distributed Map's ItemReader reads JSON Lines (``"ReaderConfig": {"InputType": "JSONL"}``).

As of 2026-11 the AWS docs list InputType as one of CSV, JSON, JSONL, PARQUET, MANIFEST
(https://docs.aws.amazon.com/step-functions/latest/dg/input-output-itemreader.html); moto's interpreter knows
only CSV and JSON (its ``InputTypeValue`` enum) and refuses the definition. Here ``JSONL`` is accepted and
read as the docs describe it: one JSON value per line, each line an item, ``MaxItems`` honoured; a line that
is not JSON fails the Map Run with ``States.ItemReaderFailed``, as a non-array JSON file does. Blank lines
(the newline that ends the last item) are no items. PARQUET and MANIFEST stay unsupported (not used here).

A source the reader may not read (S3 ``AccessDenied`` from the local IAM, ``NoSuchKey``, ``NoSuchBucket``)
fails the Map Run with ``States.ItemReaderFailed`` and the S3 error in the cause, as on AWS; moto's
interpreter let the botocore error through as ``States.Runtime``.

Test: tests/integration/test_item_reader_jsonl.py. Belongs in moto: yes.
"""

from __future__ import annotations

import json
from typing import Any, cast

from botocore.exceptions import ClientError
from moto.stepfunctions.parser.api import HistoryEventType, MapRunFailedEventDetails
from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
    FailureEvent,
    FailureEventException,
)
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name import StatesErrorName
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name_type import (
    StatesErrorNameType,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.item_reader import item_reader_decl
from moto.stepfunctions.parser.asl.component.state.exec.state_map.item_reader.eval.resource_output_transformer.transformer import (  # noqa: E501
    ResourceOutputTransformer,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.item_reader.reader_config.input_type import (  # noqa: E501
    InputType,
)
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails

JSONL = "JSONL"


class ResourceOutputTransformerJsonl(ResourceOutputTransformer):
    """Each non-blank line of the object is one item."""

    def _eval_body(self, env: Any) -> None:
        reader_config = env.stack.pop()
        resource_value: str = env.stack.pop()
        items: list[Any] = []
        for number, line in enumerate(resource_value.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as error:
                _fail(env, f"Line {number} of the JSONL file is not valid JSON: {error.msg}.")
        env.stack.append(items[: reader_config["MaxItemsValue"]])


def _fail(env: Any, cause: str) -> None:
    error_name = StatesErrorName(typ=StatesErrorNameType.StatesItemReaderFailed)
    raise FailureEventException(
        failure_event=FailureEvent(
            env=env,
            error_name=error_name,
            event_type=HistoryEventType.TaskFailed,
            event_details=cast(
                "EventDetails",
                {
                    "mapRunFailedEventDetails": MapRunFailedEventDetails(
                        error=error_name.error_name, cause=cause
                    )
                },
            ),
        )
    )


class _Installed:
    done = False


def install() -> None:
    """Accept ``InputType: JSONL`` and give it the JSONL transformer (idempotent)."""
    if _Installed.done:
        return
    original_init = InputType.__init__
    original_factory = item_reader_decl.resource_output_transformer_for  # type: ignore[attr-defined]
    original_eval_body = item_reader_decl.ItemReader._eval_body

    def init(self: InputType, input_type: str) -> None:
        if input_type == JSONL:
            self.input_type_value = JSONL  # type: ignore[misc, assignment]
            return
        original_init(self, input_type)

    def transformer_for(input_type: InputType) -> ResourceOutputTransformer:
        if input_type.input_type_value == JSONL:  # type: ignore[comparison-overlap]
            return ResourceOutputTransformerJsonl()
        return original_factory(input_type)

    def eval_body(self: item_reader_decl.ItemReader, env: Any) -> None:
        try:
            original_eval_body(self, env)
        except ClientError as error:  # the source could not be read: the reader's failure, not the runtime's
            _fail(env, str(error))

    InputType.__init__ = init  # type: ignore[method-assign]
    item_reader_decl.ItemReader._eval_body = eval_body  # type: ignore[method-assign]
    item_reader_decl.resource_output_transformer_for = transformer_for  # type: ignore[attr-defined]
    _Installed.done = True
