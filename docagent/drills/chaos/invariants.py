"""The invariants every crash-matrix job must keep, checked against the crash-free baseline: one result per
document equal to the baseline's, no finished model call repeated, every action done once, a report covering
every document, a verified execution, and no idempotency record left in progress."""

from __future__ import annotations

from docagent.drills.chaos.observed import Observed
from docagent.drills.chaos.outcome import (
    IGNORED_REPORT_FIELDS,
    IGNORED_RESULT_FIELDS,
    canonical,
    differing_fields,
)


def check(seen: Observed, baseline: Observed | None, documents: int) -> dict[str, str | None]:
    """Every invariant of a finished job (None: holds; a string: what is wrong), against the baseline's."""
    checks: dict[str, str | None] = {}
    expected_ids = sorted(seen.manifest_ids)
    if len(expected_ids) != documents or sorted(seen.results) != expected_ids:
        missing = sorted(set(expected_ids) - set(seen.results))
        extra = sorted(set(seen.results) - set(expected_ids))
        checks["one_result_per_document"] = (
            f"{len(seen.results)} results for {len(expected_ids)} documents"
            + (f"; missing {missing}" if missing else "")
            + (f"; unexpected {extra}" if extra else "")
        )
    else:
        checks["one_result_per_document"] = None
    if baseline is not None:
        differing = {
            document_id: differing_fields(
                seen.results.get(document_id), baseline.results.get(document_id), IGNORED_RESULT_FIELDS
            )
            for document_id in expected_ids
        }
        differing = {document_id: fields for document_id, fields in differing.items() if fields}
        checks["results_match_baseline"] = (
            "differ from the baseline: "
            + "; ".join(f"{document_id} ({', '.join(fields)})" for document_id, fields in differing.items())
            if differing
            else None
        )
    else:
        checks["results_match_baseline"] = "no baseline to compare with (the baseline job did not finish)"
    linked = [
        document_id
        for document_id, result in seen.results.items()
        if result.get("model_call_id") and result["model_call_id"] not in seen.calls.get(document_id, [])
    ]
    checks["no_completed_call_repeated"] = (
        "; ".join(
            ([f"more than one journalled call: {seen.repeats}"] if seen.repeats else [])
            + ([f"results name a call missing from the journal: {linked}"] if linked else [])
        )
        or None
    )
    checks["actions_done_once"] = actions_problem(seen)
    checks["report_covers_every_document"] = report_problem(seen, baseline)
    verification = seen.output.get("verification") or {}
    checks["verified"] = (
        None if verification.get("verified") is True else f"execution output verification: {verification}"
    )
    problems = []
    if seen.in_progress:
        problems.append(f"left INPROGRESS: {seen.in_progress}")
    if seen.missing_records:
        problems.append(f"no idempotency record for: {seen.missing_records}")
    checks["nothing_in_progress"] = "; ".join(problems) or None
    return checks


def actions_problem(seen: Observed) -> str | None:
    undone = sorted(name for name, outcome in seen.actions.items() if outcome is None)
    if undone:
        return f"actions without done.json: {undone}"
    outcomes = list(seen.actions.values())
    http = sorted(
        str(outcome["reference"])
        for outcome in outcomes
        if outcome and outcome["type"] == "http" and outcome["outcome"] != "skipped"
    )
    held = sorted(str(record["id"]) for record in seen.tickets)
    if held != http:
        return (
            f"the local http service holds {held} with reference {seen.job_id}; the http actions' "
            f"done.json name {http}"
        )
    output = (seen.output.get("actions") or {}).get("actions") or []
    if sorted(output, key=lambda item: str(item.get("name"))) != sorted(
        outcomes, key=lambda item: str((item or {}).get("name"))
    ):
        return f"the execution output's actions ({output}) differ from the actions' done.json"
    return None


def report_problem(seen: Observed, baseline: Observed | None) -> str | None:
    report = seen.report
    if report is None:
        return "no report.json"
    rows = sorted(row["document_id"] for row in report.get("rows", []))
    if rows != sorted(seen.manifest_ids) or report.get("failed") != 0:
        return f"report rows {rows}, failed {report.get('failed')}"
    expected = baseline.report if baseline is not None else None
    if expected is not None and canonical(report, IGNORED_REPORT_FIELDS) != canonical(
        expected, IGNORED_REPORT_FIELDS
    ):
        return "the report differs from the baseline's"
    return None


# -- cells ----------------------------------------------------------------------------------------
