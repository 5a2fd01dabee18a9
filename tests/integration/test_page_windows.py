"""A 300-page PDF through the local cloud (the real ASL, Lambda workers, the local Bedrock over HTTP): read in
page windows, each answered from the source document's label, merged into one result (docs/design.md, "Page
windows")."""

from __future__ import annotations

import json

from fpdf import FPDF

from functions.storage import result_key

PAGES = 300


def invoice_pdf(customer: str) -> bytes:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for page in range(1, PAGES + 1):
        pdf.add_page()
        if page == 1:
            text = (
                f"Invoice INV-2026-77001\nCustomer {customer}\nInvoice date 2026-03-14\n"
                "Category: hardware\nCurrency EUR"
            )
        elif page == PAGES:
            text = "Total due: EUR 1234.56"
        else:
            text = f"Delivery schedule, page {page}: items are shipped as listed."
        pdf.multi_cell(0, 6, text)
    return bytes(pdf.output())


def test_a_300_page_pdf_is_read_in_windows_and_merged_through_the_local_cloud(
    docagent, aws, deployed, customers, tmp_path
):
    folder = tmp_path / "long"
    folder.mkdir()
    label = {
        "customer_id": customers[0],
        "invoice_number": "INV-2026-77001",
        "invoice_date": "2026-03-14",
        "amount": "1234.56",
        "currency": "EUR",
        "category": "hardware",
        "summary": "Hardware delivered over several months.",
    }
    (folder / "long.pdf").write_bytes(invoice_pdf(customers[0]))
    (folder / "long.label.json").write_text(json.dumps(label))

    code, started = docagent("start", "--job-id", "long-windows", "--from-dir", str(folder), "--wait")

    assert code == 0 and started["final"]["status"] == "SUCCEEDED", started
    code, report = docagent("inspect", "long-windows", "--all")
    assert code == 0, report
    [detail] = report["document_details"]
    assert (detail["result"]["status"], detail["result"]["error"]) == ("extracted", None), detail
    assert report["external_effects"]["model_calls"]["repeated"] == 0, "a window's call is its own step's"
    assert not detail["flags"], detail["flags"]
    stored = aws("s3").get_object(
        Bucket=deployed.outputs["BucketName"], Key=result_key("long-windows", detail["document_id"])
    )
    result = json.loads(stored["Body"].read())
    assert result["fields"] == label
    assert [window["pages"] for window in result["windows"]] == [[f, f + 19] for f in range(1, PAGES, 20)]
    assert result["evidence"]["amount"]["page"] == PAGES, "the total is quoted from the last window's page"
