"""``docagent console`` in a real browser: headless Debian Chromium (``make browser``) driven by Playwright's
Python API, against a local cloud of its own (``docagent local up`` in its own process, so that it can be
killed with ``kill -9`` and started again) running the claims example (docs/console.md).

One local cloud and one console for the module; three jobs: ``crashy`` (its worker dies storing document 1
until the first redrive, then waits for approval), ``steady`` (waits for approval) and ``waity`` (waits for
its review queue before its report). Each test goes on from where the one before left the jobs, in file
order. DOCAGENT_SCREENSHOTS=1 saves the main pages to
docs/console/*.png.
"""

from __future__ import annotations

import json
import os
import shutil
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright import sync_api

from docagent import project
from docagent.console.app import ConsoleServer, ReviewConsole, serve
from docagent.console.views import item_path
from docagent.drills.cloud_crash import CloudProcess
from docagent.drills.job_folder import JobFolder
from docagent.drills.local_job import LocalJob
from docagent.localcloud.bedrock.model_faults import parse_model_faults, set_model_faults
from docagent.localcloud.deploy import LocalStack, deploy
from docagent.localcloud.server import free_port
from docagent.localcloud.synth import synth_local
from docagent.operations.context import OperatorContext
from docagent.operations.records import JobRecords
from docagent.operations.review import export_labels
from functions import storage
from functions.evidence.quote_matching import date_candidates
from tests.support import host_request, wait_until

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CLAIMS = project.ROOT / "examples" / "claims"
CRASH = {"point": "before_store_result", "document_index": 1, "mode": "exit", "until_redrive": 1}
SCREENSHOTS = project.ROOT / "docs" / "console"

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium: run `make browser`")


class Setting:
    """The module's local cloud, deployment, console and browser page."""

    def __init__(self, cloud: CloudProcess, stack: LocalStack, server: ConsoleServer, page: Any) -> None:
        self.cloud, self.stack, self.server, self.page = cloud, stack, server, page

    def job(self, job_id: str) -> LocalJob:
        return LocalJob.on(self.cloud.endpoint, self.stack, job_id)

    def open(self, path: str) -> Any:
        self.page.goto(f"{self.server.url}{path}")
        return self.page

    def execution(self, job_id: str) -> dict[str, Any]:
        job = self.job(job_id)
        described: dict[str, Any] = job.sfn.describe_execution(executionArn=job.execution_arn)
        return described

    def approval(self, job_id: str) -> dict[str, Any] | None:
        data: dict[str, Any] | None = self.job(job_id).records.read_json(storage.approval_key(job_id))
        return data

    def shoot(self, name: str, *, full_page: bool = True) -> None:
        if os.environ.get("DOCAGENT_SCREENSHOTS") == "1":
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            self.page.wait_for_timeout(2000)  # the pages' images load (pictures only, never asserted)
            self.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=full_page)


def start_claims(job: LocalJob, folder: JobFolder, options: dict[str, Any]) -> None:
    prefix = f"incoming/{job.job_id}/"
    folder.seed(job, prefix)
    job.start({"job_id": job.job_id, "prefix": prefix, **folder.request(), "options": options})


@pytest.fixture(scope="module")
def setting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setting]:
    root = tmp_path_factory.mktemp("console")
    # Free ports, as the other suites take theirs: `make test` runs this suite beside the own_cloud tests.
    cloud = CloudProcess(root / "cloud", free_port(), time_scale=0.25)
    cloud.start(fresh=True)
    server: ConsoleServer | None = None
    try:
        stack = deploy(synth_local(), "DocAgent", cloud.endpoint)
        ctx = OperatorContext.of_local_stack(cloud.endpoint, stack.stack_name, stack.outputs)
        server = serve(ReviewConsole(ctx, "rita"), 0)
        folder = JobFolder.read(CLAIMS)
        start_claims(LocalJob(ctx, "crashy"), folder, {"fault": CRASH, "require_approval": True})
        start_claims(LocalJob(ctx, "steady"), folder, {"require_approval": True})
        start_claims(LocalJob(ctx, "waity"), folder, {"wait_for_review": True})
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch_persistent_context(
                str(root / "profile"),
                executable_path=str(CHROMIUM),
                headless=True,
                args=CHROMIUM_FLAGS,
                viewport={"width": 1280, "height": 900},
            )
            try:
                yield Setting(cloud, stack, server, browser.new_page())
            finally:
                browser.close()
    finally:
        if server is not None:
            server.shutdown()
            server.server_close()
        cloud.stop()


def test_the_crashed_job_shows_where_it_stopped_and_a_double_clicked_redrive_redrives_once(
    setting: Setting,
) -> None:
    wait_until(lambda: setting.execution("crashy")["status"] == "FAILED", "crashy failed", timeout=240)

    page = setting.open("/")
    assert page.get_by_role("link", name="crashy").is_visible()
    setting.shoot("jobs")
    page.get_by_role("link", name="crashy").click()
    page.wait_for_url("**/job/crashy")  # a click does not wait for the page it opens
    page.wait_for_load_state()
    assert "Where it stopped" in page.content()
    assert "ReviewDocuments" in page.locator("#stopped + p").inner_text()
    assert "would re-run" in page.content()
    setting.shoot("job-failed")

    page.locator("#redrive").dblclick()
    page.wait_for_url("**/job/crashy?said=*")
    assert "redriven" in page.locator("#said").inner_text()
    # Sent again without the page's script (a second tab, a resubmitted form): the server acts once too.
    token = setting.server.console.token
    again = page.request.post(f"{setting.server.url}/job/crashy/redrive", form={"token": token})
    assert again.ok and "already redriven" in again.text()
    page.reload()
    assert setting.execution("crashy")["redriveCount"] == 1
    assert page.locator("#redrive-count").inner_text() == "1"


def test_a_form_of_another_site_acts_on_nothing(setting: Setting) -> None:
    refused = setting.page.request.post(f"{setting.server.url}/job/crashy/redrive", form={"token": "guessed"})
    assert refused.status == 403
    assert setting.execution("crashy")["redriveCount"] == 1


def test_a_rebound_name_gets_no_page_no_token_and_approves_nothing(setting: Setting) -> None:
    """DNS rebinding (docs/security.md): evil.example re-resolved to 127.0.0.1 reads and posts as the
    console's own page would, with its own Host; the console answers 421 before reading or doing anything."""
    wait_until(lambda: (setting.approval("steady") or {}).get("status") == "pending", "steady waits")
    port = setting.server.server_address[1]
    token = setting.server.console.token
    status, page = host_request(port, "GET", "/job/steady", f"127.0.0.1:{port}")[::2]
    assert status == 200 and token in page  # the console's own name: the page and its form token
    evil = f"evil.example:{port}"
    status, page = host_request(port, "GET", "/job/steady", evil)[::2]
    assert status == 421 and token not in page
    status = host_request(port, "GET", "/", evil)[0]
    assert status == 421
    form = urllib.parse.urlencode({"token": token, "reason": "rebound"})
    status = host_request(port, "POST", "/job/steady/approve", evil, form, Origin=f"http://{evil}")[0]
    assert status == 421
    assert (setting.approval("steady") or {}).get("status") == "pending"
    assert setting.execution("steady")["status"] == "RUNNING"


def test_a_status_line_comes_from_the_console_never_from_the_url(setting: Setting) -> None:
    page = setting.open("/job/steady?said=Approved+by+your+bank&kind=ok")
    assert "Approved by your bank" not in page.content()
    assert page.locator("#said").count() == 0


def test_approve_of_one_job_acts_on_that_job_only(setting: Setting) -> None:
    for job_id in ("crashy", "steady"):
        wait_until(lambda j=job_id: (setting.approval(j) or {}).get("status") == "pending", f"{job_id} waits")
    steady_before = setting.approval("steady")
    crashy_record = setting.approval("crashy")
    assert steady_before is not None and crashy_record is not None

    # crashy's record holding steady's token (a copied record): approving crashy sends nothing to steady.
    swapped = {**crashy_record, "task_token": steady_before["task_token"]}
    setting.job("crashy").records.ctx.write_json(storage.approval_key("crashy"), swapped)
    page = setting.open("/job/crashy")
    setting.shoot("job-approval")
    page.locator("#approve").click()
    page.wait_for_url("**said=*")
    assert "nothing sent" in page.locator("#said").inner_text()
    assert setting.approval("steady") == steady_before
    assert setting.execution("steady")["status"] == "RUNNING"

    setting.job("crashy").records.ctx.write_json(storage.approval_key("crashy"), crashy_record)
    page = setting.open("/job/crashy")
    page.locator("#approve").dblclick()
    page.wait_for_url("**said=*")
    assert "approved by rita" in page.locator("#said").inner_text()
    assert (setting.approval("crashy") or {})["status"] == "approved"
    assert setting.approval("steady") == steady_before
    wait_until(lambda: setting.execution("crashy")["status"] == "SUCCEEDED", "crashy finished", timeout=120)
    assert setting.execution("steady")["status"] == "RUNNING"


def _first_for_review(job_id: str, setting: Setting) -> str:
    records = setting.job(job_id).records
    records.refresh()
    waiting = sorted(result.document_id for result in records.results.values() if result.status == "review")
    assert waiting, "the claims example sends claims above the desk limit to review"
    return waiting[0]


def test_a_reviewers_correction_is_recorded_once_survives_kill_9_and_is_exported(
    setting: Setting, tmp_path: Path
) -> None:
    document_id = _first_for_review("crashy", setting)
    page = setting.open("/job/crashy/review")
    setting.shoot("review-queue")
    page.get_by_role("link", name=document_id).click()
    setting.shoot("document")
    claimant = page.get_by_label("incident_type", exact=True)
    claimant.fill("corrected by rita")
    page.get_by_label("Reviewer").fill("rita")
    page.locator("#accept").dblclick()
    page.wait_for_url("**said=*")
    assert "accepted (recorded)" in page.locator("#said").inner_text()
    page.reload()  # a reload of the answer shows the page again and sends nothing
    assert "Accepted by rita" in page.locator("#decision").inner_text()
    key = storage.review_key("crashy", document_id)
    assert setting.job("crashy").records.keys(key) == [key]

    setting.cloud.kill()  # kill -9: the cloud's process group and its workers
    setting.cloud.start()
    page = setting.open(f"/job/crashy/document/{document_id}")
    assert "Accepted by rita" in page.locator("#decision").inner_text()
    assert "corrected by rita" in page.locator("td.reviewed").all_inner_texts()

    records = JobRecords(setting.job("crashy").ctx, "crashy")
    exported = export_labels(records, tmp_path / "labels")
    assert [item["document_id"] for item in exported] == [document_id]
    label = json.loads(Path(exported[0]["label"]).read_text())
    assert label["incident_type"] == "corrected by rita"
    shutil.rmtree(tmp_path / "labels")


def test_reviewing_the_whole_queue_in_the_page_lets_the_waiting_job_finish(setting: Setting) -> None:
    def wait_record() -> dict[str, Any] | None:
        data: dict[str, Any] | None = setting.job("waity").records.read_json(storage.review_wait_key("waity"))
        return data

    wait_until(
        lambda: (wait_record() or {}).get("status") == "waiting", "waity waits for review", timeout=240
    )
    record = wait_record()
    assert record is not None and record["documents"], "the claims example sends claims to review"
    page = setting.open("/job/waity")
    assert "Waiting for review" in page.content()
    assert setting.job("waity").records.keys(storage.report_key("waity")) == []

    queue = record["documents"]  # its items: a document, or a packet's section (its own page)
    for number, item in enumerate(queue, start=1):
        page = setting.open(item_path("waity", item))
        page.get_by_label("Reviewer").fill("rita")
        page.locator("#accept").dblclick()
        page.wait_for_url("**said=*")
        said = page.locator("#said").inner_text()
        assert "accepted (recorded)" in said
        assert ("the job continues" if number == len(queue) else "more review decision") in said, said

    wait_until(lambda: setting.execution("waity")["status"] == "SUCCEEDED", "waity finished", timeout=180)
    page = setting.open("/job/waity")
    assert "Waiting for review" not in page.content()
    assert "released" in page.locator("#review-wait-line").inner_text()
    report = setting.job("waity").records.read_json(storage.report_key("waity"))
    assert report["review"] == 0 and report["extracted"] >= len(queue)


def test_a_field_clicked_shows_its_evidence_highlighted_on_its_page(setting: Setting) -> None:
    """Issue #42: a field's evidence button scrolls to its page and highlights the quote's span there; the
    evidence lists the least certain first with each confidence."""

    def results() -> dict[str, Any]:
        found: dict[str, Any] = JobRecords(setting.job("steady").ctx, "steady").results
        return found

    samples = len(JobFolder.read(CLAIMS).documents)
    wait_until(lambda: len(results()) == samples, "every result of steady", timeout=240)
    pdf = next(  # a born-digital claim form: its evidence has offsets in a page's text (a scan has none)
        r
        for r in results().values()
        if r.format == "pdf"
        and r.class_name == "claim-form"
        and r.evidence["incident_date"].start is not None
    )
    evidence = pdf.evidence["incident_date"]
    page = setting.open(f"/job/steady/document/{pdf.document_id}")
    confidences = [float(text) for text in page.locator("td.confidence").all_inner_texts()]
    assert confidences and confidences == sorted(confidences)
    page.locator('.evidence-link[data-path="incident_date"]').click()
    mark = page.locator(f"#page-{evidence.page} mark#evidence-highlight")
    assert mark.count() == 1
    assert " ".join(mark.inner_text().split()).lower() == " ".join(str(evidence.quote).split()).lower()
    assert pdf.fields is not None and pdf.fields["incident_date"] in set(date_candidates(mark.inner_text()))
    page.locator('.evidence-link[data-path="total"]').click()  # another field: one highlight at a time
    assert page.locator("mark#evidence-highlight").count() == 1
    assert page.locator("mark#evidence-highlight").get_attribute("data-path") == "total"
    setting.shoot("evidence")


def test_a_scanned_pages_image_shows_the_chosen_fields_box_on_it(setting: Setting) -> None:
    """Issue #52: the claims example's image-only PDF (no text layer) is shown as its page's image, not in the
    browser's PDF viewer; its incident_date grounded on the page's OCR text carries the box the OCR words
    give (ratios of the page, Textract's BoundingBox shape), and choosing the field draws that box over page 1
    at that place and scrolls it into view."""
    records = JobRecords(setting.job("steady").ctx, "steady")

    def stored_results() -> int:
        records.refresh()
        return len(records.results)

    samples = len(JobFolder.read(CLAIMS).documents)
    wait_until(lambda: stored_results() == samples, "every result of steady", timeout=240)
    scan = next(result for result in records.results.values() if result.key.endswith("/claim-0005.pdf"))
    evidence = scan.evidence["incident_date"]
    assert scan.ocr is not None and evidence.grounding in {"grounded", "approximate"}, evidence
    assert evidence.box is not None, "a scan's field is placed by the OCR words of its quote"
    box = evidence.box.model_dump()

    page = setting.open(f"/job/steady/document/{scan.document_id}")
    assert page.locator("iframe").count() == 0
    image = page.locator("#page-image-1 img")
    image.scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelector('#page-image-1 img').complete")
    assert image.evaluate("img => [img.naturalWidth, img.naturalHeight]") == [1132, 1600]
    served = page.request.get(f"{setting.server.url}/job/steady/document/{scan.document_id}/page/1")
    assert served.ok and served.headers["content-type"] == "image/png"
    page.evaluate("window.scrollTo(0, 0)")

    page.locator('.evidence-link[data-path="incident_date"]').click()
    drawn = page.locator("#page-image-1 #evidence-box")
    assert drawn.count() == 1 and drawn.get_attribute("data-path") == "incident_date"
    shown, frame = drawn.bounding_box(), image.bounding_box()
    assert shown is not None and frame is not None
    placed = {
        "left": (shown["x"] - frame["x"]) / frame["width"],
        "top": (shown["y"] - frame["y"]) / frame["height"],
        "width": shown["width"] / frame["width"],
        "height": shown["height"] / frame["height"],
    }
    assert all(abs(placed[side] - box[side]) < 0.005 for side in box), (placed, box)
    viewport = page.viewport_size
    assert viewport is not None and shown["y"] >= 0 and shown["y"] + shown["height"] <= viewport["height"]
    setting.shoot("evidence-box", full_page=False)

    page.locator('.evidence-link[data-path="incident_date"]').click()  # again: still one box
    assert page.locator("#evidence-box").count() == 1


def test_a_correction_records_the_evidence_the_reviewer_selected(setting: Setting) -> None:
    """Issue #42: the reviewer selects a value's text on its page and presses the field's Evidence button;
    the decision stores that page, text and span beside the corrected value."""
    records = setting.job("steady").records
    records.refresh()
    result = next(  # a claim in review whose date has a span in a page's text (a born-digital form)
        (
            r
            for r in sorted(records.results.values(), key=lambda r: r.document_id)
            if r.status == "review"
            and "incident_date" in r.evidence
            and r.evidence["incident_date"].start is not None
        ),
        None,
    )
    assert result is not None, "the claims example sends a born-digital claim form of steady to review"
    found = result.evidence["incident_date"]
    page = setting.open(f"/job/steady/document/{result.document_id}")
    page.evaluate(  # the reviewer's selection: the quote's span on its page
        """([page, start, end]) => {
          const text = document.getElementById(`page-${page}`).firstChild;
          const range = document.createRange();
          range.setStart(text, start); range.setEnd(text, end);
          window.getSelection().removeAllRanges(); window.getSelection().addRange(range);
        }""",
        [found.page, found.start, found.end],
    )
    page.get_by_label("Use the selected text as the evidence of incident_date").click()
    chosen = page.locator("output.evidence-chosen").all_inner_texts()
    assert any(text.startswith(f"page {found.page}:") for text in chosen), chosen
    page.get_by_label("incident_date", exact=True).fill("1999-01-01")
    page.get_by_label("Reviewer").fill("rita")
    page.locator("#accept").click()
    page.wait_for_url("**said=*")
    assert "accepted (recorded)" in page.locator("#said").inner_text()
    decision = records.review(result.document_id)
    assert decision is not None
    correction = next(c for c in decision.corrections if c.field == "incident_date")
    assert correction.corrected == "1999-01-01" and correction.evidence is not None
    assert (correction.evidence.page, correction.evidence.start, correction.evidence.end) == (
        found.page,
        found.start,
        found.end,
    )
    assert " ".join(correction.evidence.quote.split()).lower() == " ".join(str(found.quote).split()).lower()


def packet_job(setting: Setting, job_id: str, faults: str) -> tuple[LocalJob, Path]:
    """The claims packet alone in a job that waits for review, the local model misbehaving as ``faults``
    say until the job waits; the job and the packet's file."""
    folder = JobFolder.read(CLAIMS)
    job = setting.job(job_id)
    prefix = f"incoming/{job.job_id}/"
    packet = next(document for document in folder.documents if document.name == "packet-0001.pdf")
    set_model_faults(setting.cloud.endpoint, parse_model_faults(faults))
    try:  # the claims definition is published and its labels registered (the module's jobs)
        job.s3.put_object(Bucket=job.bucket, Key=folder.key(prefix, packet), Body=packet.read_bytes())
        options = {"wait_for_review": True}
        job.start({"job_id": job.job_id, "prefix": prefix, **folder.request(), "options": options})

        def waiting() -> bool:
            record = job.records.read_json(storage.review_wait_key(job.job_id)) or {}
            return bool(record.get("status") == "waiting")

        wait_until(waiting, f"{job_id} waits for review", timeout=240)
    finally:
        set_model_faults(setting.cloud.endpoint, None)
    return job, packet


def test_a_packets_section_in_review_is_decided_on_its_own_page(setting: Setting) -> None:
    """Issue #41: the claims packet alone, the local model moving every incident date a day (its claim form
    goes to review, its repair estimate does not), in a job that waits for review: the queue lists the
    section, its page's form decides it alone, the job goes on and the packet's page shows the decision."""
    job, packet = packet_job(setting, "packety", "corrupt=incident_date:1.0")
    item = f"{packet.name}#s0001-0001"
    page = setting.open("/job/packety/review")
    assert page.get_by_role("link").filter(has_text="#").all_inner_texts() == [item]
    page.get_by_role("link", name=item).click()
    assert "section s0001-0001" in page.locator("h1").inner_text()
    setting.shoot("section-review")
    page.get_by_label("incident_date", exact=True).fill("2025-10-17")
    page.get_by_label("Reviewer").fill("rita")
    page.locator("#accept").dblclick()
    page.wait_for_url("**said=*")
    said = page.locator("#said").inner_text()
    assert f"section s0001-0001 of document {packet.name} accepted (recorded)" in said, said
    assert "the job continues" in said, said
    key = storage.section_review_key("packety", packet.name, "s0001-0001")
    assert job.records.keys(key) == [key]

    wait_until(lambda: setting.execution("packety")["status"] == "SUCCEEDED", "packety finished", timeout=180)
    report = job.records.read_json(storage.report_key("packety"))
    [row] = report["rows"]
    assert row["status"] == "extracted" and row["sections"][0]["fields"]["incident_date"] == "2025-10-17"
    page = setting.open(f"/job/packety/document/{packet.name}")
    assert page.locator("td.section-review").all_inner_texts() == ["accepted by rita", ""]


def test_a_reviewer_gives_a_rejected_sections_pages_a_class_and_only_that_section_runs_again(
    setting: Setting,
) -> None:
    """Issue #53: the claims packet alone, the local model giving its last page no class
    (``split=unplace``): the estimate's first page alone is rejected (no labelled document), its last page
    waits for review. On the rejected section's page the reviewer gives pages 2-3 the estimate's class:
    only that section is extracted again (the journal), the job is released and its report shows the packet
    extracted."""
    job, packet = packet_job(setting, "splitty", "split=unplace")

    def extract_calls() -> list[str | None]:
        calls = JobRecords(job.records.ctx, job.job_id).model_calls.get(packet.name, [])
        return sorted(call.section_id or "" for call in calls if call.purpose == "extract")

    before = extract_calls()
    assert "s0001-0001" in before, before
    page = setting.open(f"/job/splitty/document/{packet.name}/section/s0002-0002")
    assert page.locator("#outcome").inner_text() == "rejected"
    assert page.get_by_label("First page").input_value() == "2"
    page.get_by_label("Last page").fill("3")
    page.get_by_label("Class", exact=True).select_option("repair-estimate")
    setting.shoot("section-resplit")
    page.locator("#resplit").dblclick()
    page.wait_for_url("**said=*")
    said = page.locator("#said").inner_text()
    assert f"packet {packet.name} re-split by rita (recorded): re-ran s0002-0003-r1" in said, said
    assert "the packet is extracted" in said and "the job continues" in said, said
    assert extract_calls() == sorted([*before, "s0002-0003-r1"])  # the changed section's call alone
    rows = page.locator("table").first.locator("tbody tr th").all_inner_texts()
    assert rows == ["s0001-0001", "s0002-0003-r1"], rows

    wait_until(lambda: setting.execution("splitty")["status"] == "SUCCEEDED", "splitty finished", timeout=180)
    [row] = job.records.read_json(storage.report_key("splitty"))["rows"]
    assert row["status"] == "extracted" and [s["section_id"] for s in row["sections"]] == [
        "s0001-0001",
        "s0002-0003-r1",
    ]
    page = setting.open(f"/job/splitty/document/{packet.name}/section/s0002-0002")
    assert "re-split by rita" in page.locator("#split-decision").inner_text()
