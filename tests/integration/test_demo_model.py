"""`docagent demo --job PATH --model openai=URL` (#40): the local cloud's model steps go to an
OpenAI-compatible chat-completions server (a fake one on 127.0.0.1, started and stopped here), the job ends
with the server's values; with `--record` the replies are kept beside the samples, and a run without the
server replays them."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docagent.localcloud.bedrock.openai_request import rendered_pages
from functions.reading.documents import document_input
from tests.fake_openai import FakeServer, question_of, serve

CLAIMS = Path(__file__).resolve().parents[2] / "examples" / "claims"
KEPT = {"claim-form": "claim-0001", "repair-estimate": "estimate-0001"}
SERVED_NAME = "Served By The Fake Model"


def _label(class_name: str) -> dict[str, Any]:
    label: dict[str, Any] = json.loads(
        (CLAIMS / "samples" / class_name / f"{KEPT[class_name]}.label.json").read_text()
    )
    return label


def _answer(body: dict[str, Any]) -> dict[str, Any]:
    """Classifies by the document's text, extracts the sample's label with one value of its own (so the
    job's results show where they came from)."""
    user, question = question_of(body)
    estimate = "REPAIR ESTIMATE" in user
    if question is not None and question.kind == "classify":
        return {"class": "repair-estimate" if estimate else "claim-form"}
    if estimate:
        reply = {**_label("repair-estimate")}
        reply["repairer"] = {**reply["repairer"], "name": SERVED_NAME}
        return reply
    return {**_label("claim-form"), "claimant": {**_label("claim-form")["claimant"], "name": SERVED_NAME}}


@pytest.fixture
def fake_model() -> Iterator[FakeServer]:
    with serve(_answer) as server:
        yield server


@pytest.fixture
def small_claims(tmp_path: Path) -> Path:
    """The claims example with one claim form and one estimate (both born-digital PDFs), each one document:
    no packet and no page split (the fake server classifies whole documents)."""
    folder = tmp_path / "claims"
    shutil.copytree(CLAIMS, folder)
    for class_name, kept in KEPT.items():
        for path in (folder / "samples" / class_name).iterdir():
            if not path.name.startswith(f"{kept}."):
                path.unlink()
    for path in (folder / "samples").glob("packet-*"):
        path.unlink()
    job = json.loads((folder / "job.json").read_text())
    job.pop("split", None)
    (folder / "job.json").write_text(json.dumps(job))
    return folder


def demo(tmp_path: Path, folder: Path, *options: str) -> dict[str, Any]:
    command = [sys.executable, "-m", "docagent.cli", "demo", "--job", str(folder), "--no-crash", "--json"]
    completed = subprocess.run(
        [*command, "--time-scale", "0.1", *options],
        env={**os.environ, "DOCAGENT_STATE_DIR": str(tmp_path / "state")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    summary: dict[str, Any] = json.loads(completed.stdout)
    return summary


def test_chaos_with_a_real_model_asks_it_once_per_document_and_the_cells_replay_its_replies(
    tmp_path: Path, small_claims: Path, fake_model: FakeServer
) -> None:
    """`docagent chaos --job PATH --model openai=URL`: the baseline runs against the model, every cell
    replays its replies (a cell is checked against the baseline, which a model answering anew would not
    allow); without --record nothing is written beside the samples."""
    command = [sys.executable, "-m", "docagent.cli", "chaos", "--job", str(small_claims), "--json"]
    command += ["--model", f"openai={fake_model.url}", "--points", "after_model_call", "--modes", "exit"]
    command += ["--recoveries", "retry", "--no-at-least-once", "--parallel", "1"]
    completed = subprocess.run(
        command,
        env={**os.environ, "DOCAGENT_STATE_DIR": str(tmp_path / "state")},
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    matrix = json.loads(completed.stdout)
    assert matrix["passed"] and matrix["counts"]["pass"] == 1, matrix["cells"]
    assert matrix["model"] == f"openai ({fake_model.url})"
    # a classify and an extract call per document, by the baseline alone: the cell replayed them
    assert matrix["real_model_calls"] == len(fake_model.requests) == 4
    assert not list(small_claims.rglob("*.recording.json"))


SCANS = {  # the samples a model reads only as images: a scanned PDF, a phone photo, a two-page TIFF fax
    "claim-form/claim-0005.pdf": "claim-form",
    "claim-form/claim-0006.jpg": "claim-form",
    "repair-estimate/estimate-0004.tif": "repair-estimate",
}


def _first_image(path: Path) -> str:
    """The data URL of the first image the model is sent of a sample: its first image block, or a visually
    read PDF's first page as rendered for an OpenAI-compatible model."""
    document = document_input(path.read_bytes(), "document-00001")
    if document.images:
        image = document.images[0]
        return f"data:image/{image.format};base64,{base64.b64encode(image.data).decode()}"
    return f"data:image/png;base64,{base64.b64encode(rendered_pages(document.data)[0]).decode()}"


def test_a_real_model_answers_and_its_recorded_replies_replay_offline(
    tmp_path: Path, small_claims: Path
) -> None:
    """`demo --model openai=URL --record` on the two born-digital samples and the scan, the photo and the fax
    (#41: those reach the model as data-URL image parts only, no document text, and it answers from the pixels
    it was sent, here which sample's first image it is); then the recorded replies replay offline."""
    for name in SCANS:  # beside the two born-digital samples: the three the model reads only as images
        for source in (CLAIMS / "samples" / name).parent.glob(f"{Path(name).stem}.*"):
            shutil.copyfile(source, small_claims / "samples" / Path(name).parent / source.name)
    seen = {_first_image(small_claims / "samples" / name): name for name in SCANS}

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        if not _image_parts(body):  # a born-digital sample: read by its text
            return _answer(body)
        content = body["messages"][-1]["content"]
        name = seen[next(part["image_url"]["url"] for part in content if part["type"] == "image_url")]
        question = question_of(body)[1]
        if question is not None and question.kind == "classify":
            return {"class": SCANS[name]}
        label: dict[str, Any] = json.loads(
            (small_claims / "samples" / name).with_suffix(".label.json").read_text()
        )
        return label

    with serve(answer) as fake_model:
        served = demo(tmp_path, small_claims, "--model", f"openai={fake_model.url}", "--record")
    assert served["status"] == "SUCCEEDED" and served["model"] == f"openai ({fake_model.url})"
    assert len(fake_model.requests) == 10  # a classify and an extract call per document
    assert all(request["response_format"] == {"type": "json_object"} for request in fake_model.requests)
    differing = served["definition"][
        "fields_differing_from_label"
    ]  # the samples whose fields are not the label's: the scans were answered with their labels
    assert differing == ["samples/claim-form/claim-0001.pdf", "samples/repair-estimate/estimate-0001.pdf"]
    assert served["definition"]["results_by_class"] == {"claim-form": 3, "repair-estimate": 2}
    read = [request for request in fake_model.requests if "<document>" in question_of(request)[0]]
    assert len(read) == 4 and not any(_image_parts(request) for request in read)  # the others: no text
    images = sorted(_image_parts(request) for request in fake_model.requests if request not in read)
    assert images == [1, 1, 1, 1, 2, 2]  # the scan's page, the photo, the fax's two pages; in both calls
    recordings = sorted(small_claims.rglob("*.recording.json"))
    kept = [path for path in recordings if path.name.startswith(tuple(KEPT.values()))]
    assert len(recordings) == 5 and len(kept) == 2
    for path in recordings:  # the server's replies, classify and extract, as the server gave them
        replies = json.loads(path.read_text())["replies"]
        assert sorted(reply["purpose"] for reply in replies) == ["classify", "extract"]
    for path in kept:
        replies = json.loads(path.read_text())["replies"]
        assert SERVED_NAME in next(reply["reply"] for reply in replies if reply["purpose"] == "extract")

    asked_before = len(fake_model.requests)
    replayed = demo(tmp_path, small_claims)  # no --model: the labels' mode, which replays the recordings
    assert len(fake_model.requests) == asked_before  # the server was not asked again
    assert replayed["status"] == "SUCCEEDED" and replayed["model"] == "labels"
    assert replayed["definition"]["fields_differing_from_label"] == differing


def _image_parts(request: dict[str, Any]) -> int:
    """The image parts of the request's user message (its content is a text when it has none)."""
    content = request["messages"][-1]["content"]
    return 0 if isinstance(content, str) else sum(part["type"] == "image_url" for part in content)
