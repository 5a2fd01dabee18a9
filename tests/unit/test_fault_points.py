"""The fault-point registry (functions/durability/fault_points.py) is the one list: it names exactly the
points a job's options can name, its steps are the workflow's Task states, the functions honour its scopes,
and the crash matrix reads it."""

from __future__ import annotations

import json
import typing
from typing import Any

import pytest

from docagent.drills import chaos
from docagent.project import ROOT as REPO_ROOT
from functions.durability.fault_points import FAULT_POINTS, UNFAULTED_STEPS, fault_point_named
from functions.durability.faults import fault_point
from functions.errors import InjectedFault
from functions.payloads.common import FaultPointName
from functions.payloads.job import FaultSpec, JobOptions
from functions.settings import get_settings


def task_states(states: dict[str, Any]) -> set[str]:
    """Every Task state of a workflow, the Map's item processor's included."""
    found = set()
    for name, state in states.items():
        if state["Type"] == "Task":
            found.add(name)
        if "ItemProcessor" in state:
            found |= task_states(state["ItemProcessor"]["States"])
    return found


def test_the_registry_names_every_point_a_job_can_name_in_the_same_order():
    assert tuple(point.name for point in FAULT_POINTS) == typing.get_args(FaultPointName)


def test_the_registry_steps_and_the_unfaulted_steps_are_the_workflows_task_states():
    asl = json.loads((REPO_ROOT / "statemachines" / "document_review.asl.json").read_text(encoding="utf-8"))
    tasks = task_states(asl["States"])
    steps = {point.step for point in FAULT_POINTS}
    assert steps <= tasks, f"fault points in states the workflow does not have: {steps - tasks}"
    assert steps.isdisjoint(UNFAULTED_STEPS)
    assert steps | set(UNFAULTED_STEPS) == tasks, "a new Task state needs its fault points or a reason"


def test_points_reached_once_are_per_document_or_per_action_and_say_why():
    for point in FAULT_POINTS:
        assert point.kill_means.strip()
        if point.reached_once is not None:
            assert point.scope in {"document", "action"} and point.reached_once.strip()
        if point.scope == "document":
            assert point.step == "ProcessDocument"


def test_an_unknown_name_is_no_fault_point():
    assert fault_point_named("after_report").step == "BuildReport"
    with pytest.raises(KeyError, match="no fault point 'after_lunch'"):
        fault_point_named("after_lunch")


def test_the_crash_matrix_reads_the_registry():
    # The matrix's jobs run on-demand: the points only a batch job passes are drilled by the batch demo.
    on_demand = [point for point in FAULT_POINTS if not point.batch_only]
    assert chaos.BATCH_POINTS == {point.name for point in FAULT_POINTS if point.batch_only} != set()
    assert tuple(point.name for point in on_demand) == chaos.POINTS
    assert {point.name: point.step for point in on_demand} == chaos.POINT_STATES
    assert {point.name for point in FAULT_POINTS if point.scope == "document"} == chaos.DOCUMENT_POINTS
    assert set(chaos.REACHED_ONCE) == {point.name for point in FAULT_POINTS if point.reached_once}
    assert {point.name for point in FAULT_POINTS if point.in_durable_step} == chaos.IN_STEP_POINTS


@pytest.fixture
def enabled(env):
    env.setenv("FAULT_INJECTION_ENABLED", "true")
    get_settings.cache_clear()


@pytest.mark.parametrize("point", FAULT_POINTS, ids=lambda point: point.name)
def test_a_point_is_narrowed_by_document_or_action_only_at_its_scope(enabled, point):
    spec = JobOptions(fault=FaultSpec(point=point.name, mode="raise", document_index=5, action="ticket"))
    elsewhere = {"document_index": 4 if point.scope == "document" else None}
    elsewhere["action"] = "notify" if point.scope == "action" else None
    if point.scope == "job":
        with pytest.raises(InjectedFault):  # a job-level point ignores the spec's document and action
            fault_point(point.name, spec, 0, job_id="job-1", document_index=None, action=None)
        return
    fault_point(
        point.name,
        spec,
        0,
        job_id="job-1",
        document_index=elsewhere["document_index"],
        action=elsewhere["action"],
    )
    with pytest.raises(InjectedFault, match=point.name):
        fault_point(
            point.name,
            spec,
            0,
            job_id="job-1",
            document_index=5 if point.scope == "document" else None,
            action="ticket" if point.scope == "action" else None,
        )
