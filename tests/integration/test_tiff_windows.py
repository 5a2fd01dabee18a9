"""A 21-page TIFF fax through the local cloud (the real ASL, Lambda workers, the local Bedrock over HTTP):
read in page windows of 20 pages (one page over a request's 20 images makes a second window: the page count
is not the point, and each page is OCR'd), its worker killed after the first window's model call was
journalled; the retry reuses that call and reads the other window, so no model call is made twice
(docs/design.md, "Page windows", "TIFF windows")."""

from __future__ import annotations

import json

from functions.storage import result_key
from tests.images import fax

PAGES = 21  # windows 1-20 and 21-21 (45 pages, three windows, cost twice the OCR for no other check)


def test_a_long_tiff_is_read_in_windows_and_a_kill_between_windows_repeats_no_call(
    docagent, aws, deployed, customers, tmp_path
):
    folder = tmp_path / "fax"
    folder.mkdir()
    label = {
        "customer_id": customers[0],
        "invoice_number": "INV-2026-77045",
        "invoice_date": "2026-03-14",
        "amount": "1234.56",
        "currency": "EUR",
        "category": "hardware",
        "summary": "Hardware delivered over several months.",
    }
    (folder / "fax.tif").write_bytes(fax(PAGES))
    (folder / "fax.label.json").write_text(json.dumps(label))
    # the worker exits (137) once the first window's call is journalled, before its step completes
    kill = {"point": "after_model_call", "document_index": 0, "mode": "exit", "times": 1}

    code, started = docagent(
        "start", "--job-id", "fax-windows", "--from-dir", str(folder), "--fault", json.dumps(kill), "--wait"
    )

    assert code == 0 and started["final"]["status"] == "SUCCEEDED", started
    code, report = docagent("inspect", "fax-windows", "--all")
    assert code == 0, report
    [detail] = report["document_details"]
    # its pages hold no text (rows of black): read by OCR, its label's values are found nowhere, so it goes to
    # review (#52) where, unverified, it was accepted on the model's word
    assert (detail["result"]["status"], detail["result"]["error"]) == ("review", None), detail
    assert "is not grounded in the document" in detail["result"]["reason"], detail["result"]["reason"]
    calls = sorted((call["window"], call["retry_count"]) for call in detail["model_calls"])
    assert [window for window, _ in calls] == ["p0001-0020", "p0021-0021"], "none made twice"
    # the first window's call made on an earlier attempt than the second's: the attempt that made it was
    # killed (on a loaded machine an attempt before it may time out before any call: its count is not 0 then)
    assert calls[0][1] < calls[1][1], "killed after the first window's call"
    assert report["external_effects"]["model_calls"]["repeated"] == 0 and not detail["flags"], detail["flags"]
    stored = aws("s3").get_object(
        Bucket=deployed.outputs["BucketName"], Key=result_key("fax-windows", detail["document_id"])
    )
    result = json.loads(stored["Body"].read())
    assert (result["format"], result["fields"]) == ("tiff", label)
    assert [window["pages"] for window in result["windows"]] == [[1, 20], [21, 21]]
