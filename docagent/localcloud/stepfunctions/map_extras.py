"""A Distributed Map's settings that moto's grammar cannot read: EXPRESS children and ItemBatcher (D1, D4).

They are taken out of the definition before moto parses it and attached to the parsed Map state, where
the Map Run (distributed_map.py) reads them: EXPRESS children run at-least-once (``deliver_twice``),
ItemBatcher groups items into batches and evaluates BatchInput.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from moto.stepfunctions.parser.asl.component.state.exec.state_map.state_map import StateMap
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser
from moto.stepfunctions.parser.asl.utils.json_path import extract_json

from docagent.localcloud.stepfunctions import jsonata_functions as jsonata
from docagent.localcloud.stepfunctions.parse_cache import parse

_BATCH_DEFAULT_BYTES = 256 * 1024


@dataclass(frozen=True)
class MapExtras:
    """A Distributed Map's settings that are read here instead of by moto's parser."""

    express: bool = False
    batcher: dict[str, Any] | None = None
    language: str = "JSONPath"


class AtLeastOnce:
    """EXPRESS children are at-least-once on AWS; this switch delivers chosen items twice, at once."""

    deliver_twice: set[int] = set()


def deliver_twice(indexes: set[int]) -> None:
    """Deliver these item indexes twice to EXPRESS children (empty: exactly once)."""
    AtLeastOnce.deliver_twice = set(indexes)


def _strip_extras(states: dict[str, Any], language: str = "JSONPath") -> dict[str, MapExtras]:
    """Remove what moto cannot parse from every (nested) Map state; return it by state name path."""
    extras: dict[str, MapExtras] = {}
    for name, state in states.items():
        processor = state.get("ItemProcessor") if state.get("Type") == "Map" else None
        if processor is None:
            continue
        state_language = str(state.get("QueryLanguage", language))
        config = processor.get("ProcessorConfig", {})
        express = config.get("ExecutionType") == "EXPRESS"
        if express:
            config["ExecutionType"] = "STANDARD"
        batcher = state.pop("ItemBatcher", None)
        if express or batcher:
            extras[name] = MapExtras(express=express, batcher=batcher, language=state_language)
        inner_language = str(processor.get("QueryLanguage", state_language))
        for inner, value in _strip_extras(processor.get("States", {}), inner_language).items():
            extras[f"{name}/{inner}"] = value
    return extras


def _attach_extras(states: Any, extras: dict[str, MapExtras], path: str = "") -> None:
    for name, state in states.states.items():
        if isinstance(state, StateMap):
            key = f"{path}{name}"
            if key in extras:
                vars(state.iteration_component)["docagent_extras"] = extras[key]
            inner = getattr(state.iteration_component, "_states", None)
            if inner is not None:
                _attach_extras(inner, extras, f"{key}/")


def _parse(definition: str) -> Any:
    try:
        document = json.loads(definition)
    except ValueError:
        return parse(definition)
    extras = (
        _strip_extras(document.get("States", {}), str(document.get("QueryLanguage", "JSONPath")))
        if isinstance(document, dict)
        else {}
    )
    if not extras:
        return parse(definition)
    program, context = parse(json.dumps(document))
    states = getattr(program, "states", None)
    if states is not None:
        _attach_extras(states, extras)
    return program, context


def batches(items: list[Any], batcher: dict[str, Any]) -> list[list[Any]]:
    """Group items by MaxItemsPerBatch and MaxInputBytesPerBatch (D4)."""
    max_items = int(batcher.get("MaxItemsPerBatch") or len(items) or 1)
    max_bytes = int(batcher.get("MaxInputBytesPerBatch") or _BATCH_DEFAULT_BYTES)
    batches: list[list[Any]] = [[]]
    size = 0
    for item in items:
        item_size = len(json.dumps(item))
        if batches[-1] and (len(batches[-1]) >= max_items or size + item_size > max_bytes):
            batches.append([])
            size = 0
        batches[-1].append(item)
        size += item_size
    return [batch for batch in batches if batch]


def batch_input(template: Any, language: str, map_input: Any, env: Environment) -> Any:
    """ItemBatcher.BatchInput evaluated against the Map state's input, as AWS does ("ItemBatcher":
    JSONPath fields ending in ``.$`` (``$$.`` reads the context object), or JSONata ``{% %}``)."""
    context = env.states.context_object.context_object_data
    if isinstance(template, dict):
        evaluated: dict[str, Any] = {}
        for key, value in template.items():
            if language == "JSONPath" and key.endswith(".$") and isinstance(value, str):
                source = context if value.startswith("$$") else map_input
                evaluated[key[:-2]] = extract_json(value[1:] if value.startswith("$$") else value, source)
            else:
                evaluated[key] = batch_input(value, language, map_input, env)
        return evaluated
    if isinstance(template, list):
        return [batch_input(value, language, map_input, env) for value in template]
    if (
        language == "JSONata"
        and isinstance(template, str)
        and template.startswith("{%")
        and template.endswith("%}")
    ):
        bindings = {"states": {"input": map_input, "context": context}}
        value = jsonata.evaluate(template[2:-2].strip(), bindings)
        return None if value is jsonata.UNDEFINED else value
    return template


_VARIABLE = re.compile(r"^\$(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<rest>.*)$", re.DOTALL)


def batch_limits(batcher: dict[str, Any], language: str, map_input: Any, env: Environment) -> dict[str, Any]:
    """``batcher`` with its limits as numbers (developer guide "ItemBatcher", looked up 2026-12-04):
    ``MaxItemsPerBatch``/``MaxInputBytesPerBatch`` may be JSONata expressions, and in JSONPath their
    ``...Path`` forms read the state input, the context object (``$$.``) or a variable (``$name``)."""
    limits = dict(batcher)
    for field in ("MaxItemsPerBatch", "MaxInputBytesPerBatch"):
        if field in batcher:
            limits[field] = batch_input(batcher[field], language, map_input, env)
        path = batcher.get(f"{field}Path")
        if isinstance(path, str):
            variable = _VARIABLE.match(path)
            if path.startswith("$$"):
                limits[field] = extract_json(path[1:], env.states.context_object.context_object_data)
            elif variable is not None:
                value = env.variable_store.get(variable["name"])
                limits[field] = extract_json("$" + variable["rest"], value) if variable["rest"] else value
            else:
                limits[field] = extract_json(path, map_input)
    return limits


def item_weight(items: list[Any], index: int, extras: MapExtras) -> int:
    """Items in child ``index``: with ItemBatcher a child's batch counts its items in the Map Run's itemCounts
    and in the tolerated-failure threshold (AWS counts items; executionCounts counts children)."""
    return len(items[index]) if extras.batcher else 1


def item_weights(items: list[Any], extras: MapExtras) -> list[int]:
    """Every child's ``item_weight`` (a child's own step uses ``item_weight``: it must not cost O(N))."""
    return [item_weight(items, index, extras) for index in range(len(items))]


def install() -> None:
    AmazonStateLanguageParser.parse = staticmethod(_parse)  # type: ignore[method-assign]
