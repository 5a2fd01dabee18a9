"""Issue #49, items 5 and 6, on the session's local cloud (the synthesized workflow, tolerance 0): a document
never fails the job. A 5,000-page PDF beside three claims is refused with its figure before any model call; a
model endpoint that answers HTML, ``[1,2,3]``, a 50 MB body or nothing fails each of its documents with the
reason, and no call is recorded above the request's maxTokens. Each job SUCCEEDS."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfWriter

from docagent.drills.synthetic import generate_documents
from docagent.localcloud.bedrock.backends import ModelChoice, set_model
from docagent.localcloud.server import LocalCloud
from functions import storage
from functions.reading.block_limits import DEFAULT_MAX_PAGES
from tests.fake_openai import FakeServer, question_of, serve
from tests.support import EXAMPLES

MAX_TOKENS = 800  # cdk.json's model_max_tokens, which the local profile keeps
# The claims beside the long PDF: a PDF and two DOCX files, both classes. (The job had all ten
# samples; the scan, the photo and the fax added OCR to every run and nothing to the refusal, which is the
# long PDF's alone.)
BESIDE = ("claim-form/claim-0001.pdf", "claim-form/claim-0004.docx", "repair-estimate/estimate-0002.docx")


def blank_pdf(pages: int) -> bytes:
    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(612, 792)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def test_a_5000_page_pdf_is_refused_with_its_figure_and_the_others_finish(
    docagent: Any, tmp_path: Path
) -> None:
    claims = tmp_path / "claims"
    shutil.copytree(EXAMPLES / "claims", claims)
    definition = json.loads((claims / "job.json").read_text())
    assert definition["split"] == "pages" and "max_pages" not in definition  # the job.json
    code, published = docagent("definition", "publish", str(claims))
    assert code == 0, published
    folder = tmp_path / "documents"
    folder.mkdir()
    for sample in BESIDE:
        document = claims / "samples" / sample
        shutil.copy(document, folder / document.name)
        fields = json.loads(document.with_suffix(".label.json").read_text())  # a flat folder's label
        label = {"class": document.parent.name, "fields": fields}  # names its class
        (folder / document.with_suffix(".label.json").name).write_text(json.dumps(label))
    (folder / "long.pdf").write_bytes(blank_pdf(5000))

    code, started = docagent(
        "start", "--job-id", "long-5000", "--from-dir", str(folder), "--definition", "claims", "--wait"
    )

    assert code == 0 and started["final"]["status"] == "SUCCEEDED", started
    code, report = docagent("inspect", "long-5000", "--all")
    assert code == 0, report
    details = {detail["document_id"]: detail for detail in report["document_details"]}
    results = {document_id: detail["result"] for document_id, detail in details.items()}
    assert len(results) == len(BESIDE) + 1 and all(result is not None for result in results.values())
    long = results.pop("long.pdf")
    assert (long["status"], long["error"]) == ("rejected", "DocumentTooLarge")
    assert long["reason"].startswith(f"the PDF has 5000 pages, over the job's ceiling of {DEFAULT_MAX_PAGES}")
    assert details["long.pdf"]["model_calls"] == [], "refused before any model call"
    assert {result["error"] for result in results.values()} <= {None, "UnknownPolicy", "AboveDeskLimit"}


# -------------------------------------------------------------------------------- a misbehaving model

MODES = {"html": "html", "list": "list", "huge": "huge", "hang": "hang", "many": "many_tokens"}


@pytest.fixture
def misbehaving(
    cloud: LocalCloud, customers: list[str], tmp_path: Path
) -> Iterator[tuple[FakeServer, dict[str, str], Path]]:
    """Five invoices in a folder, and the session cloud's model calls going to a fake endpoint answering
    each in its own bad mode (the endpoint's timeout 1 s, so a hang costs seconds), then back to the
    labels."""
    documents = generate_documents(len(MODES), seed=49, customer_ids=customers)
    folder = tmp_path / "invoices"
    folder.mkdir()
    for document in documents:
        (folder / f"{document.document_id}.txt").write_text(document.text)
    number_mode = {
        document.truth.invoice_number: mode for document, mode in zip(documents, MODES.values(), strict=True)
    }
    truths = {document.truth.invoice_number: document.truth for document in documents}

    def invoice_of(body: dict[str, Any]) -> str:
        user, _ = question_of(body)
        return next(number for number in number_mode if number in user)

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        return truths[invoice_of(body)].model_dump(mode="json")

    with serve(answer, behave=lambda body: number_mode[invoice_of(body)]) as fake:
        set_model(cloud.endpoint, ModelChoice(kind="openai", url=fake.url, timeout_seconds=1.0))
        try:
            modes = {
                f"{document.document_id}.txt": mode for document, mode in zip(documents, MODES, strict=True)
            }
            yield fake, modes, folder
        finally:
            set_model(cloud.endpoint, ModelChoice())


def test_a_misbehaving_model_fails_each_document_with_its_reason_and_the_job_succeeds(
    docagent: Any, aws: Any, deployed: Any, misbehaving: tuple[FakeServer, dict[str, str], Path]
) -> None:
    fake, modes, folder = misbehaving
    # one model misbehaving: the invoice definition without the default's cascade (issue #54), whose strong
    # model would be asked again for each document the cheap one failed
    single = folder.parent / "one-model"
    shutil.copytree(EXAMPLES / "invoices", single)
    definition = json.loads((single / "job.json").read_text())
    definition.pop("models")
    (single / "job.json").write_text(json.dumps({**definition, "name": "one-model"}))

    code, started = docagent(
        "start", "--job-id", "misbehaving-model", "--from-dir", str(folder), "--job", str(single), "--wait"
    )

    assert code == 0 and started["final"]["status"] == "SUCCEEDED", started  # tolerance 0
    code, report = docagent("inspect", "misbehaving-model", "--all")
    assert code == 0, report
    results = {detail["document_id"]: detail["result"] for detail in report["document_details"]}
    by_mode = {modes[document_id]: result for document_id, result in results.items()}
    for mode, said in (
        ("html", "a body that is not JSON (text/html"),
        ("list", "JSON that is not an object: a list"),
        ("huge", "more than 1,048,576 bytes"),
    ):
        result = by_mode[mode]
        assert (result["status"], result["error"]) == ("rejected", "ModelReplyInvalid"), result
        assert said in result["reason"], result["reason"]
        assert fake.modes.count(MODES[mode]) == 1, f"{mode}: one call, never retried"
    hang = by_mode["hang"]
    assert (hang["status"], hang["error"]) == ("rejected", "ModelUnavailable"), hang
    assert "did not answer within 1 s" in hang["reason"]
    assert fake.modes.count("hang") == 7, "ModelUnavailable's six retries, then the document is given up"
    assert by_mode["many"]["error"] != "ModelReplyInvalid"

    bucket = deployed.outputs["BucketName"]
    listed = aws("s3").list_objects_v2(Bucket=bucket, Prefix=storage.model_calls_root("misbehaving-model"))
    calls = [
        json.loads(aws("s3").get_object(Bucket=bucket, Key=item["Key"])["Body"].read())
        for item in listed.get("Contents", [])
    ]
    assert len(calls) == 4  # html, list, huge, many: finished calls (the hang never finished one)
    assert all(call["output_tokens"] <= MAX_TOKENS for call in calls), calls
    [many] = [call for call in calls if modes[call["document_id"]] == "many"]
    assert many["output_tokens"] == MAX_TOKENS
    assert many["tokens_clamped"] == (
        f"output tokens 10,000,000 reported, clamped at the request's maxTokens {MAX_TOKENS}"
    )
