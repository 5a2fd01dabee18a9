"""The report's counts right (issue 53): totals sum only the outcomes a total counts (default extracted; a
packet's sections each by its own status, held back while its case is not decided), and a row carries only
its own class's columns (functions/logic/build_report.py counts_of, functions/checks/fields.py
row_columns)."""

from __future__ import annotations

from typing import Any

from functions.checks.fields import row_columns
from functions.definition.job_spec import DefinitionBundle, Totals
from functions.logic.build_report import counts_of
from functions.payloads.report import CaseOutcome, ReportRow, SectionRow
from tests.support import example_bundle


def claims(**total: Any) -> DefinitionBundle:
    """The claims example with one total: the claimed amounts by currency (``total``: its other settings)."""
    bundle = example_bundle("claims")
    totals = [Totals.model_validate({"name": "by-currency", "sum": "total", "by": "currency", **total})]
    definition = bundle.definition.model_copy(update={"totals": totals})
    return bundle.model_copy(update={"definition": definition})


def section(number: int, status: str, class_name: str = "claim-form", total: str = "100.00") -> SectionRow:
    return SectionRow.model_validate({
        "section_id": f"s{number:04d}-{number:04d}", "pages": [number, number], "status": status,
        "class_name": class_name, "fields": {"total": total, "currency": "EUR"},
    })  # fmt: skip


def packet(index: int, sections: list[SectionRow], case: str | None = None) -> ReportRow:
    statuses = [part.status for part in sections]
    status = "rejected" if "rejected" in statuses else "review" if "review" in statuses else "extracted"
    return ReportRow(
        document_id=f"packet-{index}.pdf",
        index=index,
        key=f"k/packet-{index}.pdf",
        status=status,  # type: ignore[arg-type]
        sections=sections,
        case=None if case is None else CaseOutcome(status=case),  # type: ignore[arg-type]
    )


def document(index: int, status: str, total: str) -> ReportRow:
    return ReportRow.model_validate({
        "document_id": f"doc-{index}.pdf", "index": index, "key": f"k/doc-{index}.pdf", "status": status,
        "class_name": "claim-form", "fields": {"total": total, "currency": "EUR"},
    })  # fmt: skip


ROWS = [
    document(0, "extracted", "1.00"),
    document(1, "review", "20.00"),  # a claim waiting for an adjuster
    document(2, "rejected", "300.00"),
    packet(
        3, [section(1, "extracted", total="4000.00"), section(2, "review", "repair-estimate", "50000.00")]
    ),
    packet(4, [section(1, "rejected", total="600000.00"), section(2, "extracted", total="7000000.00")]),
    # every section extracted, but the case waits for review: none of it counts yet
    packet(5, [section(1, "extracted", total="80000000.00")], case="review"),
]


def test_by_default_a_total_sums_only_what_was_extracted() -> None:
    counts = counts_of(ROWS, [], claims())
    assert counts.totals == {"by-currency": {"EUR": "7004001.00"}}  # 1 + 4,000 + 7,000,000


def test_a_total_names_the_outcomes_it_counts() -> None:
    counts = counts_of(ROWS, [], claims(counts=["extracted", "review"]))
    # the review document, the review section and the packet whose case is in review count now
    assert counts.totals == {"by-currency": {"EUR": "87054021.00"}}
    assert counts_of(ROWS, [], claims(counts=["rejected"])).totals == {"by-currency": {"EUR": "600300.00"}}


def test_a_row_carries_its_own_classes_columns_and_only_the_totals_fields_its_class_has() -> None:
    bundle = claims()
    incident = Totals(name="by-incident", sum="total", by="incident_type")  # a claim form's field only
    definition = bundle.definition.model_copy(update={"totals": [incident]})
    bundle = bundle.model_copy(update={"definition": definition})
    assert "incident_type" in row_columns(bundle, "claim-form")
    estimate = row_columns(bundle, "repair-estimate")
    assert "incident_type" not in estimate
    assert estimate == [
        "policy_number",
        "estimate_number",
        "repairer.name",
        "estimate_date",
        "total",
        "currency",
    ]
    assert row_columns(bundle, None) == []  # no class: no columns, no other class's field
