"""What ``docagent definition validate`` says of job.json's ``case`` (docs/defining-a-job.md, "Cases";
functions/checks/cases.py): a required class that is no section's class, two case rules of one name, and a
case rule's expression that does not compile or is refused, each one problem naming ``$.case...``."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from docagent.kit.problems import Problem, json_path
from functions.checks.expressions import expression_problem
from functions.definition.case_spec import CaseSpec
from functions.definition.job_spec import DEFINITION_FILE, ClassSpec
from functions.definition.job_spec import case_problems as where_wrong


def case_block_problems(raw: Any, classes: dict[str, ClassSpec]) -> list[Problem]:
    """job.json ``case`` (functions/definition/job_spec.py ``case_problems``, functions/checks/cases.py): each
    required class a section's class, each case rule's expression one that compiles and is not refused."""
    try:
        case = CaseSpec.model_validate(raw)
    except ValidationError:
        return []  # reported with job.json's other problems
    sections = ", ".join(sorted(name for name, spec in classes.items() if spec.split is None))
    problems = [
        Problem(
            file=DEFINITION_FILE,
            where=json_path(path),
            message=message,
            fix=f"name one of the classes a packet's sections are of: {sections}"
            if path[1] == "requires"
            else "give each case check its own name",
        )
        for path, message in where_wrong(case, classes)
    ]
    for index, rule in enumerate(case.checks):
        problem = expression_problem(rule.expression)
        if problem:
            problems.append(
                Problem(
                    file=DEFINITION_FILE,
                    where=json_path(("case", "checks", index, "expression")),
                    message=f"case rule {rule.name!r}: {problem}",
                    fix="write a JSONata expression over the case's sections that gives true when the rule "
                    "holds (docs/defining-a-job.md, 'Cases')",
                )
            )
    return problems
