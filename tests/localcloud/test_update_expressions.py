"""A DynamoDB update expression is parsed once a process and its tree copied without ``deepcopy``
(docagent/localcloud/update_expressions.py): every caller gets a tree of its own equal to moto's parse, the
same requests leave the same items and answers as unpatched moto, and a refused text or request is refused
every time with moto's error."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

# moto's parsing modules are untyped (``# type: ignore`` at their top): their classes are Any here.
from moto.dynamodb.parsing.ast_nodes import DepthFirstTraverser, Node  # type: ignore[attr-defined]
from moto.dynamodb.parsing.expressions import UpdateExpressionParser  # type: ignore[attr-defined]
from moto.dynamodb.parsing.validators import Validator

from docagent.localcloud import update_expressions
from tests.localcloud.test_condition_lexing import records_table

# Powertools' idempotency record update (aws_lambda_powertools/utilities/idempotency/persistence/dynamodb.py)
POWERTOOLS = "SET #response_data = :response_data, #expiry = :expiry, #status = :status"
EXPRESSIONS = [
    POWERTOOLS,
    "SET a.b[2].c = :v, n = n + :one REMOVE old[1], old[3]",
    "SET l = list_append(if_not_exists(l, :empty), :items) ADD counter :one DELETE tags :gone",
    "REMOVE #x, y ADD s :set",
]


def shape(node: Any, parent: Any = None) -> Any:
    """A tree as data: each node's class, attributes and children, and whether its parent is its holder."""
    if not isinstance(node, Node):
        return node
    attributes = {key: value for key, value in vars(node).items() if key not in {"children", "parent"}}
    children = [shape(child, node) for child in node.children or []]
    return (type(node).__name__, attributes, node.parent is parent, children)


def nodes(node: Any) -> list[Node]:
    if not isinstance(node, Node):
        return []
    return [node] + [found for child in node.children or [] for found in nodes(child)]


@pytest.fixture
def parsed_once(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The patch installed (undone after the test), with each text moto's own parser is given."""
    parsed: list[str] = []
    real = update_expressions._moto_make

    def counting(cls: type, expression: str) -> Any:
        parsed.append(expression)
        return real(cls, expression)

    update_expressions._parsed.cache_clear()
    monkeypatch.setattr(update_expressions, "_moto_make", counting)
    monkeypatch.setattr(UpdateExpressionParser, "make", classmethod(update_expressions._make))
    monkeypatch.setattr(Validator, "__init__", update_expressions._validator_init)
    monkeypatch.setattr(
        DepthFirstTraverser, "nodes_to_be_processed", update_expressions._nodes_to_be_processed
    )
    monkeypatch.setattr(DepthFirstTraverser, "process", update_expressions._process)
    monkeypatch.setattr(
        DepthFirstTraverser, "traverse_node_recursively", update_expressions._traverse_node_recursively
    )
    monkeypatch.setattr(Node, "find_clauses", update_expressions._find_clauses)
    yield parsed
    update_expressions._parsed.cache_clear()


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_the_copy_is_moto_s_tree_and_shares_no_node(expression: str) -> None:
    tree = update_expressions._moto_make(UpdateExpressionParser, expression)
    copied = update_expressions.copy_tree(tree)
    assert shape(copied) == shape(tree) == shape(copy.deepcopy(tree))
    assert not {id(node) for node in nodes(copied)} & {id(node) for node in nodes(tree)}


def test_a_tree_holding_more_than_plain_leaves_is_deep_copied() -> None:
    tree = update_expressions._moto_make(UpdateExpressionParser, POWERTOOLS)
    value = nodes(tree)[-1]
    value.children = [{"S": "a dict"}]  # as the validator's typed values hold DynamoType
    copied = update_expressions.copy_tree(tree)
    assert shape(copied) == shape(tree)
    assert nodes(copied)[-1].children[0] is not value.children[0]


def story(client: Any) -> list[Any]:
    """Updates of new and existing items (every expression above), and refused ones: each answer or error."""
    values: dict[str, Any] = {
        ":response_data": {"S": "{}"},
        ":expiry": {"N": "10"},
        ":status": {"S": "COMPLETED"},
    }
    names = {"#response_data": "data", "#expiry": "expiration", "#status": "status"}
    requests: list[dict[str, Any]] = [
        {
            "UpdateExpression": POWERTOOLS,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        },
        {
            "UpdateExpression": POWERTOOLS,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        },
        {
            "UpdateExpression": "SET l = list_append(if_not_exists(l, :empty), :items) ADD hits :one",
            "ExpressionAttributeValues": {
                ":empty": {"L": []},
                ":items": {"L": [{"S": "a"}]},
                ":one": {"N": "1"},
            },
        },
        {
            "UpdateExpression": "SET l = list_append(if_not_exists(l, :empty), :items) ADD hits :one",
            "ExpressionAttributeValues": {
                ":empty": {"L": []},
                ":items": {"L": [{"S": "b"}]},
                ":one": {"N": "1"},
            },
        },
        {"UpdateExpression": "REMOVE l[0], #x", "ExpressionAttributeNames": {"#x": "data"}},
        {"UpdateExpression": "SET a = :missing, b = :v", "ExpressionAttributeValues": {":v": {"S": "x"}}},
        {"UpdateExpression": "SET a = ", "ExpressionAttributeValues": {":v": {"S": "x"}}},
        {"UpdateExpression": "SET a = :v REMOVE a", "ExpressionAttributeValues": {":v": {"S": "x"}}},
        {"UpdateExpression": "SET id = :v", "ExpressionAttributeValues": {":v": {"S": "x"}}},
    ]
    answers: list[Any] = []
    for key in ("step-1", "step-2"):
        for request in requests:
            try:
                answer = client.update_item(
                    TableName="records", Key={"id": {"S": key}}, ReturnValues="ALL_NEW", **request
                )
                answers.append(answer["Attributes"])
            except ClientError as refused:
                answers.append((refused.response["Error"]["Code"], refused.response["Error"]["Message"]))
    answers.append(sorted(str(item) for item in client.scan(TableName="records")["Items"]))
    return answers


def test_updates_answer_as_moto_does_and_each_text_is_parsed_once(parsed_once: list[str]) -> None:
    with mock_aws():
        patched = story(records_table())
    assert parsed_once.count(POWERTOOLS) == 1  # four updates, moto parses each twice
    assert parsed_once.count("SET a =") == 2  # refused at every request (moto strips it), never kept
    with mock_aws(), pytest.MonkeyPatch.context() as unpatched:
        unpatched.setattr(UpdateExpressionParser, "make", classmethod(update_expressions._moto_make))
        unpatched.setattr(Validator, "__init__", update_expressions._moto_validator_init)
        unpatched.setattr(DepthFirstTraverser, "nodes_to_be_processed", update_expressions._moto_nodes)
        unpatched.setattr(DepthFirstTraverser, "process", update_expressions._moto_process)
        unpatched.setattr(DepthFirstTraverser, "traverse_node_recursively", update_expressions._moto_traverse)
        unpatched.setattr(Node, "find_clauses", update_expressions._moto_find_clauses)
        assert story(records_table()) == patched
    refusals = [answer for answer in patched[:-1] if isinstance(answer, tuple)]
    assert [code for code, _ in refusals] == ["ValidationException"] * 8
    assert any("Syntax error" in message for _, message in refusals)
    assert any(":missing" in message for _, message in refusals)
    assert patched[2]["l"] == {"L": [{"S": "a"}]} and patched[3]["l"] == {"L": [{"S": "a"}, {"S": "b"}]}
