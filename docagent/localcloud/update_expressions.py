"""A DynamoDB update expression parsed once a process, copied cheaply, and validated without rebuilding
each validator pass's table for every node.

moto (5.2.5) parses an UpdateItem's ``UpdateExpression`` twice a request (``DynamoHandler.update_item`` for
the names and values it uses, ``DynamoDBBackend.update_item`` for its errors), then its validator deep-copies
the tree (twice for a new item) and walks it ten times; each walk asked every node's pass for a new table
of the node classes it handles (``DepthFirstTraverser.nodes_to_be_processed``, ``process``). The durable
steps send the same few texts every time (Powertools' idempotency: ``SET #response_data = :response_data,
#expiry = :expiry, #status = :status``): UpdateItem was 3.3 of the endpoint's 26 CPU-s in a profiled
100-document demo (2026-12-07), parsing 0.65 s of it and the validator's walks 1.1 s.

Here:

- ``UpdateExpressionParser.make``: each text parsed once (the last ``KEPT`` texts) and every caller given
  its own copy of the tree (the validator changes the copy it walks). A text moto refuses is never kept:
  its error is raised at every request, as moto raises it.
- ``Validator.__init__``: the tree it walks copied by ``copy_tree`` (a parsed tree's nodes and their plain
  leaves) instead of ``copy.deepcopy``; any other content goes to ``deepcopy`` as before.
- ``DepthFirstTraverser``: a pass's table of node classes built once per pass (a pass is made for one
  validation; its table is a constant of its class), and which of them a node's class is looked up once
  per pass and class; ``Node.find_clauses`` likewise once a process per class. moto's nodes are ``abc``
  classes, whose ``isinstance`` is a Python-level check: half a million of them for 300 updates.
  ``isinstance(node, kinds)`` of these classes depends only on the node's class (nothing is registered
  with them), so the answer for a class is the answer for its nodes.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

# moto's parsing modules are untyped (``# type: ignore`` at their top): their classes are Any here.
from moto.dynamodb.parsing.ast_nodes import (  # type: ignore[attr-defined]
    DepthFirstTraverser,
    Expression,
    Node,
    UpdateExpressionFunction,
)
from moto.dynamodb.parsing.expressions import UpdateExpressionParser  # type: ignore[attr-defined]
from moto.dynamodb.parsing.validators import Validator

KEPT = 64
_moto_make = UpdateExpressionParser.make.__func__
_moto_validator_init = Validator.__init__
_moto_nodes = DepthFirstTraverser.nodes_to_be_processed
_moto_process = DepthFirstTraverser.process
_moto_traverse = DepthFirstTraverser.traverse_node_recursively
_moto_find_clauses = Node.find_clauses
_PLAIN = (str, int, float, bool, type(None))
_TABLE = "_docagent_processing_map"
_PROCESSED = "_docagent_processed_kinds"
_IS_NODE: dict[type, bool] = {}
_DESCENDS: dict[type, bool] = {}


class _NotPlainError(Exception):
    """A tree holds something other than nodes and plain leaves: copied by ``deepcopy``."""


def _copied(node: Node, parent: Node | None) -> Node:
    twin = object.__new__(type(node))
    vars(twin).update(vars(node))
    twin.parent = parent
    children = node.children
    if children is not None:
        copies = []
        for child in children:
            if isinstance(child, Node):
                copies.append(_copied(child, twin))
            elif isinstance(child, _PLAIN):
                copies.append(child)
            else:
                raise _NotPlainError
        twin.children = copies
    for name, value in vars(node).items():
        if name not in {"children", "parent"} and not isinstance(value, _PLAIN):
            raise _NotPlainError
    return twin


def copy_tree(tree: Any) -> Any:
    """``copy.deepcopy(tree)``, made by walking a parsed tree (nodes, their children, plain leaves)."""
    if not isinstance(tree, Node) or tree.parent is not None:
        return copy.deepcopy(tree)
    try:
        return _copied(tree, None)
    except _NotPlainError:
        return copy.deepcopy(tree)


@functools.lru_cache(maxsize=KEPT)
def _parsed(expression: str) -> Node:
    return _moto_make(UpdateExpressionParser, expression)


def _make(cls: type[UpdateExpressionParser], expression_str: str) -> Node:
    if cls is not UpdateExpressionParser:  # a subclass parses as it does
        return _moto_make(cls, expression_str)
    return copy_tree(_parsed(expression_str))


def _validator_init(self: Validator, expression: Node, *args: Any, **kwargs: Any) -> None:
    _moto_validator_init(self, None, *args, **kwargs)
    self.node_to_validate = copy_tree(expression)


def _processing_table(self: DepthFirstTraverser) -> tuple[dict[type, Any], tuple[type, ...]]:
    """The pass's table (its ``_processing_map``) and its node classes, made at the pass's first node."""
    made: tuple[dict[type, Any], tuple[type, ...]] | None = vars(self).get(_TABLE)
    if made is None:
        table = self._processing_map()
        made = (table, tuple(table))
        vars(self)[_TABLE] = made
    return made


def _nodes_to_be_processed(self: DepthFirstTraverser) -> tuple[type, ...]:
    return _processing_table(self)[1]


def _processor(self: DepthFirstTraverser, kind: type) -> Any:
    """The pass's function for nodes of class ``kind`` (moto's ``process`` order), None when it has none."""
    known: dict[type, Any] | None = vars(self).get(_PROCESSED)
    if known is None:
        known = vars(self)[_PROCESSED] = {}
    if kind not in known:
        table, kinds = _processing_table(self)
        found = None
        if issubclass(kind, kinds):
            found = next(processor for class_key, processor in table.items() if issubclass(kind, class_key))
        known[kind] = found
    return known[kind]


def _process(self: DepthFirstTraverser, node: Node) -> Any:
    processor = _processor(self, type(node))
    return None if processor is None else processor(node)


def _is_node(kind: type) -> bool:
    found = _IS_NODE.get(kind)
    if found is None:
        found = _IS_NODE[kind] = issubclass(kind, Node)
    return found


def _traverse_node_recursively(self: DepthFirstTraverser, node: Any, child_id: int = -1) -> Any:
    """moto's depth-first walk, each class's answers looked up (above) instead of asked of each node."""
    if _is_node(type(node)):
        parent_node = node.parent
        if node.children is not None:
            for i, child_node in enumerate(node.children):
                self.pre_processing_of_child(node, i)
                self.traverse_node_recursively(child_node, i)
        processor = _processor(self, type(node))
        if processor is not None:
            node = processor(node)
            node.parent = parent_node
            if parent_node:
                parent_node.children[child_id] = node
    return node


def _descends(kind: type) -> bool:
    found = _DESCENDS.get(kind)
    if found is None:
        found = _DESCENDS[kind] = issubclass(kind, (Expression, UpdateExpressionFunction))
    return found


def _find_clauses(self: Node, clause_types: list[type]) -> list[Any]:
    clauses: list[Any] = []
    for child in self.children or []:
        if type(child) in clause_types:
            clauses.append(child)
        elif _descends(type(child)):
            clauses.extend(child.find_clauses(clause_types))
    return clauses


def install() -> None:
    UpdateExpressionParser.make = classmethod(_make)
    Validator.__init__ = _validator_init  # type: ignore[method-assign]
    DepthFirstTraverser.nodes_to_be_processed = _nodes_to_be_processed
    DepthFirstTraverser.process = _process
    DepthFirstTraverser.traverse_node_recursively = _traverse_node_recursively
    Node.find_clauses = _find_clauses
