"""Cases (job.json ``case``; docs/design.md, "Packets"): a packet of several sections is a case. Once every
section is stored, its case is checked as the durable step ``case``: each required class counted among the
sections (``requires``), then each case rule, a JSONata expression over all the sections
(functions/checks/expressions.py, with its bounds), evaluated on

    {"sections": {CLASS: [{"section_id", "pages": [FIRST, LAST], "status", "fields", "attached"}, ...]},
     "pages": N}

(a section of no class is left out; ``attached``: the rows its lookups found, by their ``attach`` name), the
same object also bound as ``$case`` and its sections as ``$sections``. The outcomes are the packet's
``checks``; their decision (functions/checks/outcomes.py ``decide``) is its ``case``, which makes the packet's
status with its sections' (functions/reading/sections.py ``packet_status``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from pydantic import BaseModel, Field, JsonValue

from functions.checks.expressions import expression_failure
from functions.checks.outcomes import decide
from functions.definition.case_spec import CaseRequirement, CaseRule, CaseSpec
from functions.payloads.common import StrictModel
from functions.payloads.document import DocumentResult
from functions.payloads.model_calls import CheckOutcome
from functions.payloads.report import CaseOutcome

CASE_STEP = "case"

ResultT = TypeVar("ResultT", bound=BaseModel)
Step = Callable[[str, Callable[[], ResultT], type[ResultT]], ResultT]


class CaseChecks(StrictModel):
    """The durable ``case`` step's result: each requirement's and each rule's outcome, in job.json's order."""

    checks: list[CheckOutcome] = Field(default_factory=list)


def case_input(results: Sequence[DocumentResult], pages: int) -> dict[str, JsonValue]:
    """What a case rule's expression reads: the sections of a class by their class, in page order."""
    by_class: dict[str, list[JsonValue]] = {}
    for result in results:
        if result.class_name is None or result.pages is None:
            continue
        section: dict[str, JsonValue] = {
            "section_id": result.section_id,
            "pages": list(result.pages),
            "status": result.status,
            "fields": result.fields,
            "attached": dict(result.attached),
        }
        by_class.setdefault(result.class_name, []).append(section)
    return {"sections": dict(by_class), "pages": pages}


def _outcome(name: str, kind: str, on_fail: str, error: str, failure: str | None) -> CheckOutcome:
    return CheckOutcome.model_validate(
        {
            "name": name,
            "type": kind,
            "passed": failure is None,
            "on_fail": on_fail,
            "error": None if failure is None else error,
            "reason": failure,
        }
    )


def requirement_outcome(requirement: CaseRequirement, found: int) -> CheckOutcome:
    """A required class counted: ``found`` sections of it against ``min`` and ``max``."""
    name = requirement.class_name
    failure = None
    if found < requirement.min:
        failure = f"the case has {found} {name} section(s); it requires at least {requirement.min}"
        if found == 0:
            failure = f"the case has no {name}: it requires at least {requirement.min}"
    elif requirement.max is not None and found > requirement.max:
        failure = f"the case has {found} {name} sections; it allows at most {requirement.max}"
    reason = None if failure is None else f"case requires {name}: {failure}"
    return _outcome(name, "requires", requirement.on_fail, requirement.error, reason)


def rule_outcome(rule: CaseRule, case: dict[str, JsonValue]) -> CheckOutcome:
    """A case rule's expression on the case (its ``message`` the reason when it fails, else why not)."""
    failure = expression_failure(rule.expression, case, {"case": case, "sections": case["sections"]})
    said = rule.message or failure
    reason = None if failure is None else f"case rule {rule.name}: {said}"
    return _outcome(rule.name, "rule", rule.on_fail, rule.error, reason)


def check_case(spec: CaseSpec, results: Sequence[DocumentResult], pages: int) -> CaseChecks:
    """Every requirement, then every rule, of ``spec`` on a packet's stored section results."""
    counts: dict[str, int] = {}
    for result in results:
        if result.class_name is not None:
            counts[result.class_name] = counts.get(result.class_name, 0) + 1
    case = case_input(results, pages)
    return CaseChecks(
        checks=[requirement_outcome(r, counts.get(r.class_name, 0)) for r in spec.requires]
        + [rule_outcome(rule, case) for rule in spec.checks]
    )


def case_of(
    spec: CaseSpec | None, results: Sequence[DocumentResult], pages: int, step: Step[CaseChecks]
) -> tuple[list[CheckOutcome], CaseOutcome | None]:
    """A packet's case checked as the durable step ``case`` (``step``: the run's, journalled and never
    repeated once done): its outcomes and their decision; nothing when the definition has no ``case``."""
    if spec is None:
        return [], None
    checks = step(CASE_STEP, lambda: check_case(spec, results, pages), CaseChecks).checks
    decision = decide(checks)
    return checks, CaseOutcome(status=decision.status, error=decision.error, reason=decision.reason)
