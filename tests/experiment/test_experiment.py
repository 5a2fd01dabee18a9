"""`docagent experiment` without the local cloud: real worker processes, SIGKILLed at the kill point and
recovered (small jobs), the aggregation, the table and the plots. LangGraph and matplotlib are the experiment
extra: their tests are skipped when it is not installed."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from docagent.cli import main
from docagent.drills.experiment import report
from docagent.drills.experiment.cloud import batched_definition
from docagent.drills.experiment.measures import Run, repeats_of, strategy_rows
from docagent.drills.experiment.processes import HAND_WRITTEN, PEER, WorkerStrategy, _Worker, run_worker
from docagent.drills.experiment.runner import run_experiment, select_strategies
from docagent.drills.synthetic import generate_documents

DOCUMENTS = 6


def strategy(name: str) -> WorkerStrategy:
    return next(s for s in (*HAND_WRITTEN, *PEER) if s.name == name)


def crash_and_recover(tmp_path: Path, name: str, kill_at: int) -> tuple[Run, Run]:
    clean, expected = run_worker(strategy(name), tmp_path / "clean", DOCUMENTS, None, None)
    killed, _ = run_worker(strategy(name), tmp_path / "killed", DOCUMENTS, kill_at, expected)
    return clean, killed


def test_none_repeats_every_document_up_to_the_kill_point(tmp_path):
    clean, killed = crash_and_recover(tmp_path, "none", kill_at=3)
    assert (clean.model_calls, clean.repeated_model_calls, clean.tickets) == (DOCUMENTS, 0, 1)
    # Documents 0..3 had their model call before the SIGKILL; the restart calls all six again.
    assert killed.repeated_model_calls == killed.repeated_documents == 4
    assert killed.model_calls == 4 + DOCUMENTS
    assert (killed.results, killed.correct, killed.tickets) == (DOCUMENTS, True, 1)
    assert killed.recovery_seconds is not None and killed.recovery_seconds > 0
    assert clean.storage_bytes == 0, "'none' keeps nothing durable"


def test_a_kill_after_the_ticket_opens_a_second_ticket_without_an_idempotency_key(tmp_path):
    _, killed = crash_and_recover(tmp_path, "at exit", kill_at=DOCUMENTS)
    # "at exit" stored every result when the loop ended, so nothing is reviewed again, but the naive ticket
    # request is repeated.
    assert killed.repeated_model_calls == 0
    assert killed.tickets == 2
    assert killed.correct and killed.results == DOCUMENTS


def test_the_worker_results_match_the_ground_truth(tmp_path):
    run_worker(strategy("async"), tmp_path / "run", DOCUMENTS, None, None)
    report_file = json.loads((tmp_path / "run" / "report.json").read_text())["results"]
    truth = {d.document_id: d.truth for d in generate_documents(DOCUMENTS, seed=7)}
    assert [r["document_id"] for r in report_file] == sorted(truth)
    for result in report_file:
        assert result["facts"]["invoice_number"] == truth[result["document_id"]].invoice_number


def test_job_time_is_when_the_worker_said_it_not_when_the_parent_read_it(tmp_path):
    # The parent reads the pipe only after the worker has exited, as a busy machine may schedule it: "start"
    # and "end" then arrive in one read. The job's time is still the worker's own, from the lines' stamps.
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    worker = _Worker(strategy("none").command(run_dir, DOCUMENTS, None, resume=False), run_dir)
    try:
        worker.process.wait(timeout=120)
        exited = time.monotonic()
        _, started = worker.until("start")
        _, ended = worker.until("end")
    finally:
        worker.close()
    calls = [line for line in worker.lines if line.startswith("call")]
    assert len(calls) == DOCUMENTS
    assert started < ended <= exited, "both happened before the worker exited, and the loop took some time"
    assert worker.lines[0] == "start" and worker.lines[-1] == "end", "the stamps are not part of the message"


def test_repeats_count_calls_and_documents():
    assert repeats_of(["a", "b", "a", "c", "a", "b"]) == (6, 3, 2)
    assert repeats_of([]) == (0, 0, 0)


def _run(name: str, kill_at: int | None, seconds: float, repeated: int = 0, tickets: int = 1) -> Run:
    return Run(
        strategy=name,
        documents=10,
        kill_at=kill_at,
        job_seconds=seconds,
        recovery_seconds=None if kill_at is None else seconds / 2,
        model_calls=10 + repeated,
        repeated_model_calls=repeated,
        repeated_documents=repeated,
        tickets=tickets,
        results=10,
        correct=True,
        storage_bytes=0 if name == "none" else 1000,
        checkpoint_records=0 if name == "none" else 10,
    )


def test_rows_give_min_and_median_over_repeats_and_overhead_against_none():
    runs = [
        _run("none", None, 1.0),
        _run("none", None, 3.0),
        _run("async", None, 4.0),
        _run("async", 5, 6.0, repeated=1),
        _run("async", 5, 8.0, repeated=3, tickets=2),
        _run("async", 5, 10.0, repeated=5),
    ]
    (row,) = strategy_rows(runs, baseline_seconds=2.0)
    assert (row["name"], row["kill_at"], row["repeats"]) == ("async", 5, 3)
    assert row["repeated_model_calls"] == 3 and row["min"]["repeated_model_calls"] == 1
    assert row["duplicate_tickets"] == 0 and row["median"]["duplicate_tickets"] == 0
    assert row["overhead_ratio"] == 2.0, "crash-free async 4 s against crash-free none 2 s"
    assert row["median"]["crash_cost_ratio"] == 2.0, "killed 8 s against its own crash-free 4 s"
    assert row["storage_bytes_per_document"] == 100
    assert row["complete"] is True


def test_strategy_names_are_checked():
    assert select_strategies(["langgraph"]) == [s.name for s in PEER]
    assert select_strategies(["per document", "none"]) == ["none", "per document"]
    with pytest.raises(ValueError, match="unknown strategy 'sometimes'"):
        select_strategies(["sometimes"])


def test_bad_kill_points_are_refused_before_anything_runs(tmp_path, monkeypatch, capsys):
    # In-process through the CLI's own entry point (the same parser, refusal and --json error object as
    # `python -m docagent.cli`): a refusal needs no interpreter of its own, whose imports alone cost seconds.
    monkeypatch.setenv("DOCAGENT_STATE_DIR", str(tmp_path))
    code = main(["experiment", "--documents", "10", "--kill-at", "11", "--json"])
    assert code == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error == "--kill-at must be a document index from 0 to 9, or 10 for after the ticket: [11]"


def test_the_batched_workflow_adds_an_item_batcher_and_hands_the_batch_to_the_batch_function():
    definition = {
        "StartAt": "ReviewDocuments",
        "States": {
            "ReviewDocuments": {
                "Type": "Map",
                "ItemProcessor": {
                    "StartAt": "ProcessDocument",
                    "States": {"ProcessDocument": {"Type": "Task", "Parameters": {"FunctionName": "x"}}},
                },
                "End": True,
            }
        },
    }
    batched = json.loads(batched_definition(json.dumps(definition), "arn:batch", 7))
    review = batched["States"]["ReviewDocuments"]
    assert review["ItemBatcher"] == {"MaxItemsPerBatch": 7}
    parameters = review["ItemProcessor"]["States"]["ProcessDocument"]["Parameters"]
    assert parameters["FunctionName"] == "arn:batch"
    assert parameters["Payload"]["items.$"] == "$.Items"


def test_the_experiment_writes_its_table_and_plots(tmp_path):
    pytest.importorskip("matplotlib")
    summary = run_experiment(
        documents=DOCUMENTS,
        kill_points=[2],
        repeat=1,
        strategies=["none", "async"],
        growth=[2 * DOCUMENTS],
        work_dir=tmp_path / "work",
    )
    rows = {(row["name"], row["kill_at"]): row for row in summary["strategies"]}
    assert set(rows) == {("none", 2), ("async", 2)}
    assert rows[("none", 2)]["repeated_model_calls"] == 3
    assert rows[("none", 2)]["overhead_ratio"] == 1.0
    assert all(row["complete"] for row in rows.values())
    assert {(row["name"], row["documents"]) for row in summary["storage_growth"]} >= {
        ("async", 2 * DOCUMENTS)
    }
    written = report.write_outputs(summary, tmp_path / "out")
    assert "| none | 2 | 3 |" in (tmp_path / "out" / report.TABLE_FILE).read_text()
    for path in written:
        if path.suffix == ".png":
            assert path.read_bytes().startswith(b"\x89PNG"), path


def test_langgraph_loop_resumes_from_its_checkpoint_with_none_input(tmp_path):
    pytest.importorskip("langgraph.checkpoint.sqlite")
    _, killed = crash_and_recover(tmp_path, "langgraph loop sync", kill_at=3)
    # Every step's checkpoint is saved before the next step starts, so invoke(None) on the same thread resumes
    # at document 3, killed after its model call inside its step: the only call made again.
    assert killed.repeated_model_calls == 1
    assert killed.correct and killed.results == DOCUMENTS and killed.tickets == 1
    assert "restarted" not in killed.recovery
