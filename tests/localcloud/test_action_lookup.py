"""A request's action is checked by its name (docagent/localcloud/action_lookup.py): the same answer as
moto's listing of the response class, for every name of every response class the local cloud serves, and
no listing of the class per request."""

from __future__ import annotations

import inspect

import boto3
import pytest
from moto import mock_aws
from moto.awslambda.responses import LambdaResponse
from moto.core import responses
from moto.core.utils import method_names_from_class
from moto.dynamodb.responses import DynamoHandler
from moto.s3.responses import S3Response
from moto.stepfunctions.responses import StepFunctionResponse

from docagent.localcloud import action_lookup

SERVED = [DynamoHandler, S3Response, StepFunctionResponse, LambdaResponse]


@pytest.mark.parametrize("owner", SERVED, ids=lambda owner: owner.__name__)
def test_every_name_gets_the_answer_of_motos_listing(owner: type) -> None:
    listed = set(method_names_from_class(owner))
    names = set(dir(owner)) | {"no_such_action", "", "region"}  # and names that are not there
    assert {name for name in names if name in action_lookup.FunctionNames(owner)} == listed
    assert listed & {"put_item", "get_object", "start_execution", "invoke"}  # the class's actions are there


def test_a_method_added_to_a_response_class_later_is_an_action_at_once() -> None:
    class Late(StepFunctionResponse):
        pass

    assert "brand_new_action" not in action_lookup.FunctionNames(Late)
    Late.brand_new_action = lambda self: None  # type: ignore[attr-defined]
    assert "brand_new_action" in action_lookup.FunctionNames(Late)


def test_a_request_does_not_list_the_response_class(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(responses, "method_names_from_class", responses.method_names_from_class)
    action_lookup.install()

    def listing(*_: object, **__: object) -> None:
        raise AssertionError("inspect.getmembers called while serving a request")

    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        monkeypatch.setattr(inspect, "getmembers", listing)
        assert client.list_tables()["TableNames"] == []
