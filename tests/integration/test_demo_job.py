"""`docagent demo --job PATH`: a definition folder (the claims example, and a fresh `docagent init`) runs on
the local cloud with a worker killed mid-job and a redrive, and ends SUCCEEDED with one result per sample, no
repeated model call, the outcomes its labels and checks give, and every action performed once. The claims
example's tests share one run (``claims_run``, the demo's job on the session cloud); `docagent init`'s folder
is test_walkthrough.py's (`docagent demo --job` as a user runs it, a subprocess with its own cloud)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docagent.drills.demo_crash import Crash
from docagent.drills.job_folder import JobFolder
from docagent.drills.local_job import LocalJob
from tests.integration.test_demo import session_demo
from tests.integration.test_evidence_demo import CLAIMS, operator, results_with_pages


def assert_recovered(summary: dict, documents: int) -> None:
    assert summary["status"] == "SUCCEEDED" and summary["verified"] is True
    assert summary["results"] == summary["documents"] == documents
    assert summary["repeated_model_calls"] == 0
    assert summary["redrive_count"] == 1 and summary["crash"]["attempts_killed"] >= 1
    definition = summary["definition"]
    assert definition["pinned"] == definition["version"]
    assert definition["fields_differing_from_label"] == []
    assert [action["name"] for action in definition["actions"]] == definition["actions_declared"]
    for action in definition["actions"]:
        assert action["outcome"] == "performed" and action["attempts"] == 1, action


@pytest.fixture(scope="module")
def claims_run(cloud, deployed, stack_file: Path) -> tuple[dict, dict, dict]:
    """The demo's job of examples/claims (``demo --job examples/claims --crash-at 6``) on the session cloud
    (tests/integration/test_demo.py ``session_demo``; `demo --job` itself, its own cloud, as a user runs it:
    test_walkthrough.py's), the worker dying as it stores the packet's first section
    (samples/packet-0001.pdf, document 6) until the job is redriven: its summary, each result read from the
    cloud and `eval --from-job JOB --job examples/claims` of it. One run for the tests below (it was a kept
    demo of its own: its cloud, deploy and detached cloud process cost about 15 s of CPU before the job)."""
    folder = JobFolder.read(CLAIMS)
    summary = session_demo(cloud, deployed, len(folder.documents), Crash(6, "redrive"), job_folder=folder)
    job_id = summary["job_id"]
    score = operator(cloud.endpoint, stack_file, "eval", "--from-job", job_id, "--job", str(CLAIMS))
    return summary, results_with_pages(LocalJob.on(cloud.endpoint, deployed, job_id).records), score


def test_demo_job_runs_the_claims_example(claims_run: tuple[dict, dict, dict]) -> None:
    summary, _, _ = claims_run
    assert_recovered(summary, 11)  # a scan, a phone photo, a two-page TIFF fax and a packet among them
    definition = summary["definition"]
    # the phone photo goes to review: the local OCR engine does not read its "£", so its currency (GBP) is
    # found nowhere on the page (docs/performance.md, "OCR")
    assert definition["results_by_status"] == {"extracted": 7, "rejected": 1, "review": 3}
    assert definition["results_by_class"] == {"claim-form": 7, "repair-estimate": 5}  # the packet's sections
    # the job splits PDFs and multi-page TIFFs (split: pages): their pages are classified (the two-page fax's
    # too), the other documents as before
    assert definition["model_calls_by_purpose"] == {"classify": 4, "classify-pages": 7, "extract": 12}
    assert definition["totals"]["total-by-currency"] == {"EUR": "6570.50", "GBP": "2970.00"}


def test_demo_job_crashed_inside_the_packet_recovers_each_section_once(
    claims_run: tuple[dict, dict, dict],
) -> None:
    """The redrive stores one result per section of the packet whose first section's store was killed, and
    repeats no model call (assert_recovered: none repeated, every action performed once)."""
    summary, _, _ = claims_run
    assert summary["crash"]["document_index"] == 6
    assert_recovered(summary, 11)
    definition = summary["definition"]
    assert (definition["sections"], definition["section_results"]) == (2, 2)


def test_every_extracted_field_has_evidence_whose_offsets_hold_its_quote(
    claims_run: tuple[dict, dict, dict],
) -> None:
    """#42's done-when: every extracted field of every result has evidence with a page, and its offsets in
    the page's text (functions/reading/page_texts.py) hold its quote (whitespace and case normalised)."""
    _, results, _ = claims_run
    assert len(results) == 11  # the packet's own result among them (its sections' fields are apart)
    # The seven born-digital samples; the scan, the photo and the fax have no text layer to hold offsets.
    extracted = {
        doc: result for doc, result in results.items() if result["fields"] is not None and result["pages"]
    }
    assert len(extracted) >= 6
    for document_id, result in extracted.items():
        evidence, pages = result["evidence"], result["pages"]
        for path, found in evidence.items():
            assert found["grounding"] == "grounded" and found["page"] >= 1, (document_id, path, found)
            span = pages[found["page"] - 1][found["start"] : found["end"]]
            assert " ".join(span.split()).lower() == " ".join(found["quote"].split()).lower(), (path, span)
        scalars = scalar_paths(result["fields"])
        assert set(evidence) == scalars, (document_id, scalars - set(evidence))


def test_the_claims_example_scores_every_sample_the_packets_sections_included(
    claims_run: tuple[dict, dict, dict],
) -> None:
    """#41's done-when: `eval --job examples/claims --json` scores the scans, the photo, the fax and each
    section of the packet (a sample of its own, matched by its pages), F1 1.0 in labels mode (here of the
    demo's job, `--from-job`: the same scoring as a run of its own)."""
    run = claims_run[2]["run"]
    assert run["mode"] == "labels"
    assert (run["samples"], run["results_matched"]) == (12, 12)  # eleven documents, the packet's two sections
    documents = {d["sample"]: d for d in run["documents"]}
    for sample, expected in (("packet-0001.pdf#s0001-0001", "claim-form"), ("packet-0001.pdf#s0002-0003",
                                                                             "repair-estimate")):  # fmt: skip
        found = documents[sample]
        assert (found["predicted_class"], found["score"], found["wrong"]) == (expected, 1.0, [])
    assert {c["name"]: c["rates"]["f1"] for c in run["classes"]} == {
        "claim-form": 1.0,
        "repair-estimate": 1.0,
    }
    assert all(field["rates"]["f1"] == 1.0 for field in run["fields"] if field["counts"]["tp"])


def scalar_paths(value: object, path: str = "") -> set[str]:
    if isinstance(value, dict):
        return {p for key, item in value.items() for p in scalar_paths(item, f"{path}.{key}".lstrip("."))}
    if isinstance(value, list):
        return {p for index, item in enumerate(value) for p in scalar_paths(item, f"{path}[{index}]")}
    return set() if value is None else {path}
